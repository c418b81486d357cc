package io.npulifecycle.api.upgrade.spec;

import java.time.Duration;

/**
 * A validated {@code spec.driver.upgradePolicy.drain} or {@code spec.driver.recoveryPolicy.drain} ({@link SpecReader};
 * docs/upgrade.md "Drain"). The words are kubectl drain's: {@code force} admits pods without a controller, which are
 * still evicted through the Eviction API (their PodDisruptionBudgets hold); only {@code disableEviction} deletes
 * instead of evicting (system-upgrade-controller's name, kubectl's {@code --disable-eviction}).
 *
 * @param enable cordon and drain a node before its reboot
 * @param npuOnly scope {@code npu}: only pods requesting a {@code huawei.com/Ascend*} resource; else {@code all}
 * @param podSelector further restricts the pods drained; {@link PodSelector#ALL} when none
 * @param timeout how long the drain may take (at least 1 s)
 * @param gracePeriodSeconds the eviction's (or deletion's) grace period, -1 = the pod's own
 * @param deleteEmptyDirData evict pods with emptyDir volumes; else such a pod blocks the drain
 * @param force drain pods without a controller too (through the Eviction API); else such a pod blocks the drain
 * @param disableEviction delete the pods of the drain (plain DELETE) instead of evicting them: PodDisruptionBudgets
 *        are not consulted; pods without a controller still need {@code force}
 * @param rebootOnTimeout {@code onTimeout: reboot}; else {@code fail} (not rebooted, uncordoned, upgrade-failed)
 */
public record DrainSettings(boolean enable, boolean npuOnly, PodSelector podSelector, Duration timeout,
        long gracePeriodSeconds, boolean deleteEmptyDirData, boolean force, boolean disableEviction,
        boolean rebootOnTimeout) {

    /**
     * The defaults of the CRD schema: enabled, scope all, 300 s, the pod's grace period, through the Eviction API,
     * fail on timeout.
     */
    public static final DrainSettings DEFAULT = new DrainSettings(true, false, PodSelector.ALL, Duration.ofSeconds(300), -1,
            false, false, false, false);
}
