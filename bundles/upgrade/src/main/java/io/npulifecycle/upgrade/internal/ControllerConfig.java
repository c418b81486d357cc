package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;

/**
 * Validated settings of the orchestrator (PID {@code io.npulifecycle.upgrade}).
 *
 * @param namespace namespace of the CR and of the Lease (default {@code npu-operator})
 * @param resourceName name of the NPUOperatorCtl (default {@code npuoperatorctl-sample})
 * @param registryCheck run the registry preflight
 * @param registryScheme {@code https} or {@code http}
 * @param pullSecret name of a dockerconfigjson secret in {@code namespace}, "" = anonymous
 * @param reconcileDelay debounce after an informer event
 * @param resync periodic reconcile (deadlines, informer health)
 * @param statusInterval minimum interval between two status writes
 * @param leaderElection use a Lease (false: always leader, single replica only)
 * @param leaseName Lease name
 * @param leaseDuration lease duration (default 15 s)
 * @param renewDeadline renew deadline (default 10 s)
 * @param retryPeriod retry period (default 2 s)
 * @param identity holder identity, "" = pod name (env POD_NAME) or hostname + random suffix
 */
public record ControllerConfig(String namespace, String resourceName, boolean registryCheck, String registryScheme,
        String pullSecret, Duration reconcileDelay, Duration resync, Duration statusInterval, boolean leaderElection,
        String leaseName, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, String identity) {

    /** @return the defaults */
    public static ControllerConfig defaults() {
        return new ControllerConfig(NpuOperatorCtlType.DEFAULT_NAMESPACE, NpuOperatorCtlType.DEFAULT_NAME, true, "https", "",
                Duration.ofMillis(200), Duration.ofSeconds(10), Duration.ofSeconds(2), true, "npu-lifecycle-upgrade",
                Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2), "");
    }
}
