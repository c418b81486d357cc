package io.npulifecycle.api.upgrade.model;

/**
 * {@code spec.driver.upgradePolicy.deadlines}: seconds a node may stay in a state before it becomes
 * {@code upgrade-failed}; 0 = no deadline.
 */
public class Deadlines {
    private Long podRestartSeconds;
    private Long rebootRequiredSeconds;
    private Long rebootingSeconds;
    private Long validationSeconds;

    /** @return seconds in pod-restart-required (default 900) */
    public Long getPodRestartSeconds() {
        return podRestartSeconds;
    }

    public void setPodRestartSeconds(Long v) {
        this.podRestartSeconds = v;
    }

    /** @return seconds in reboot-required, i.e. waiting for approval (default 86400) */
    public Long getRebootRequiredSeconds() {
        return rebootRequiredSeconds;
    }

    public void setRebootRequiredSeconds(Long v) {
        this.rebootRequiredSeconds = v;
    }

    /** @return seconds in rebooting (default 1800) */
    public Long getRebootingSeconds() {
        return rebootingSeconds;
    }

    public void setRebootingSeconds(Long v) {
        this.rebootingSeconds = v;
    }

    /** @return seconds in validation-required (default 900) */
    public Long getValidationSeconds() {
        return validationSeconds;
    }

    public void setValidationSeconds(Long v) {
        this.validationSeconds = v;
    }
}
