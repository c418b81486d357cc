package io.npulifecycle.api.upgrade.model;

/** {@code spec.driver.recoveryPolicy} (read by the node agents; validated here). */
public class RecoveryPolicy {
    private Boolean autoRecover;
    private Integer maxReboots;
    private String window;
    private DrainPolicy drain;
    private io.fabric8.kubernetes.api.model.IntOrString maxUnavailable;

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

    /**
     * @return how a wedged node is cordoned and drained before its recovery reboot (the fields of
     *         {@code upgradePolicy.drain}); default enabled
     * @since 1.2
     */
    public DrainPolicy getDrain() {
        return drain;
    }

    /** @param drain see {@link #getDrain()} */
    public void setDrain(DrainPolicy drain) {
        this.drain = drain;
    }

    /**
     * @return storm protection: NPU nodes unavailable at once, recovery drains and reboots included (absolute, or a
     *         percentage rounded up, at least 1); default {@code 25%}
     * @since 1.2
     */
    public io.fabric8.kubernetes.api.model.IntOrString getMaxUnavailable() {
        return maxUnavailable;
    }

    /** @param maxUnavailable see {@link #getMaxUnavailable()} */
    public void setMaxUnavailable(io.fabric8.kubernetes.api.model.IntOrString maxUnavailable) {
        this.maxUnavailable = maxUnavailable;
    }
}
