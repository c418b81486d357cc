package io.npulifecycle.api.upgrade.model;

/**
 * {@code spec.driver.upgradePolicy.drain} (and {@code spec.driver.recoveryPolicy.drain}): how a node is drained before
 * its reboot (docs/upgrade.md "Drain"). The words are {@code kubectl drain}'s: pods are evicted through the Eviction
 * API, so PodDisruptionBudgets decide, unless {@link #getDisableEviction()}. Every field is optional; the defaults are
 * the CRD schema's.
 */
public class DrainPolicy {
    private Boolean enable;
    private String scope;
    private String podSelector;
    private Integer timeoutSeconds;
    private Integer gracePeriodSeconds;
    private Boolean deleteEmptyDirData;
    private Boolean force;
    private Boolean disableEviction;
    private String onTimeout;

    /** @return cordon and drain before the reboot; default true */
    public Boolean getEnable() {
        return enable;
    }

    public void setEnable(Boolean enable) {
        this.enable = enable;
    }

    /**
     * @return {@code all} (default: every pod but DaemonSet and mirror pods) or {@code npu} (only pods requesting a
     *         {@code huawei.com/Ascend*} resource)
     */
    public String getScope() {
        return scope;
    }

    public void setScope(String scope) {
        this.scope = scope;
    }

    /** @return a label selector ({@code kubectl -l} syntax) that further restricts the pods drained; default none */
    public String getPodSelector() {
        return podSelector;
    }

    public void setPodSelector(String podSelector) {
        this.podSelector = podSelector;
    }

    /** @return seconds the drain may take, then {@link #getOnTimeout()}; default 300, at least 1 */
    public Integer getTimeoutSeconds() {
        return timeoutSeconds;
    }

    public void setTimeoutSeconds(Integer timeoutSeconds) {
        this.timeoutSeconds = timeoutSeconds;
    }

    /** @return the grace period of each eviction in seconds; -1 (default) = the pod's own */
    public Integer getGracePeriodSeconds() {
        return gracePeriodSeconds;
    }

    public void setGracePeriodSeconds(Integer gracePeriodSeconds) {
        this.gracePeriodSeconds = gracePeriodSeconds;
    }

    /** @return evict pods with emptyDir volumes (their data is lost); default false: such a pod blocks the drain */
    public Boolean getDeleteEmptyDirData() {
        return deleteEmptyDirData;
    }

    public void setDeleteEmptyDirData(Boolean deleteEmptyDirData) {
        this.deleteEmptyDirData = deleteEmptyDirData;
    }

    /**
     * @return drain pods without a controller too, through the Eviction API like the others (a PodDisruptionBudget
     *         that selects one still holds; nothing recreates it once evicted), as {@code kubectl drain --force};
     *         default false: such a pod blocks the drain
     */
    public Boolean getForce() {
        return force;
    }

    public void setForce(Boolean force) {
        this.force = force;
    }

    /**
     * @return delete the pods of the drain (a plain DELETE with the grace period) instead of evicting them, so no
     *         PodDisruptionBudget is consulted, as {@code kubectl drain --disable-eviction} (system-upgrade-controller's
     *         {@code disableEviction}); pods without a controller still need {@link #getForce()}; default false
     */
    public Boolean getDisableEviction() {
        return disableEviction;
    }

    public void setDisableEviction(Boolean disableEviction) {
        this.disableEviction = disableEviction;
    }

    /**
     * @return {@code fail} (default: the node is not rebooted, it is uncordoned and reported upgrade-failed) or
     *         {@code reboot} (go on to the reboot with the pods left)
     */
    public String getOnTimeout() {
        return onTimeout;
    }

    public void setOnTimeout(String onTimeout) {
        this.onTimeout = onTimeout;
    }
}
