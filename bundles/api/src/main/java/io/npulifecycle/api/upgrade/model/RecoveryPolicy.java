package io.npulifecycle.api.upgrade.model;

/** {@code spec.driver.recoveryPolicy} (read by the node agents; validated here). */
public class RecoveryPolicy {
    private Boolean autoRecover;
    private Integer maxReboots;
    private String window;

    /** @return reboot wedged nodes without approval; default false */
    public Boolean getAutoRecover() {
        return autoRecover;
    }

    public void setAutoRecover(Boolean autoRecover) {
        this.autoRecover = autoRecover;
    }

    /** @return recovery reboots allowed per window; default 3 */
    public Integer getMaxReboots() {
        return maxReboots;
    }

    public void setMaxReboots(Integer maxReboots) {
        this.maxReboots = maxReboots;
    }

    /** @return the window, e.g. {@code 24h}, {@code 90m}; default 24h */
    public String getWindow() {
        return window;
    }

    public void setWindow(String window) {
        this.window = window;
    }
}
