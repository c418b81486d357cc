package io.npulifecycle.api.upgrade.model;

import io.fabric8.kubernetes.api.model.IntOrString;

/** {@code spec.driver.upgradePolicy}. */
public class UpgradePolicy {
    private Boolean autoUpgrade;
    private Integer maxParallelUpgrades;
    private IntOrString maxUnavailable;
    private Deadlines deadlines;
    private DrainPolicy drain;

    /** @return true: reboot without approval; default false */
    public Boolean getAutoUpgrade() {
        return autoUpgrade;
    }

    public void setAutoUpgrade(Boolean autoUpgrade) {
        this.autoUpgrade = autoUpgrade;
    }

    /** @return nodes upgraded at once; default 1, 0 = unlimited */
    public Integer getMaxParallelUpgrades() {
        return maxParallelUpgrades;
    }

    public void setMaxParallelUpgrades(Integer maxParallelUpgrades) {
        this.maxParallelUpgrades = maxParallelUpgrades;
    }

    /** @return absolute count or percentage ({@code "25%"}, the default) of NPU nodes that may be unavailable */
    public IntOrString getMaxUnavailable() {
        return maxUnavailable;
    }

    public void setMaxUnavailable(IntOrString maxUnavailable) {
        this.maxUnavailable = maxUnavailable;
    }

    public Deadlines getDeadlines() {
        return deadlines;
    }

    public void setDeadlines(Deadlines deadlines) {
        this.deadlines = deadlines;
    }

    /** @return how a node is drained before its reboot; absent = the defaults (drain enabled) */
    public DrainPolicy getDrain() {
        return drain;
    }

    public void setDrain(DrainPolicy drain) {
        this.drain = drain;
    }
}
