package io.npulifecycle.api.upgrade.spec;

import java.time.Duration;

/**
 * A validated {@code spec.driver.upgradePolicy.drain} ({@link SpecReader}; docs/upgrade.md "Drain").
 *
 * @param enable cordon and drain a node before its upgrade reboot
 * @param npuOnly scope {@code npu}: only pods requesting a {@code huawei.com/Ascend*} resource; else {@code all}
 * @param podSelector further restricts the pods drained; {@link PodSelector#ALL} when none
 * @param timeout how long the drain may take (at least 1 s)
 * @param gracePeriodSeconds the eviction's grace period, -1 = the pod's own
 * @param deleteEmptyDirData evict pods with emptyDir volumes; else such a pod blocks the drain
 * @param force delete pods without a controller; else such a pod blocks the drain
 * @param rebootOnTimeout {@code onTimeout: reboot}; else {@code fail} (not rebooted, uncordoned, upgrade-failed)
 */
public record DrainSettings(boolean enable, boolean npuOnly, PodSelector podSelector, Duration timeout,
        long gracePeriodSeconds, boolean deleteEmptyDirData, boolean force, boolean rebootOnTimeout) {

    /** The defaults of the CRD schema: enabled, scope all, 300 s, the pod's grace period, fail on timeout. */
    public static final DrainSettings DEFAULT = new DrainSettings(true, false, PodSelector.ALL, Duration.ofSeconds(300), -1,
            false, false, false);
}
