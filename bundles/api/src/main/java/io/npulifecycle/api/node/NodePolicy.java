package io.npulifecycle.api.node;

import java.time.Duration;

/**
 * The policy read from the {@code NPUOperatorCtl} custom resource ({@code DESIGN.md}): {@code spec.driver.version},
 * {@code spec.driver.upgradePolicy.autoUpgrade}, {@code spec.driver.recoveryPolicy.autoRecover}, {@code .maxReboots},
 * {@code .window}.
 *
 * <p>An unknown policy (no custom resource seen yet, the API server unreachable since start, or a malformed resource)
 * authorises nothing automatically: {@link #autoRecover()} and {@link #autoUpgrade()} are then {@code false}.
 *
 * @param known whether a valid resource was read
 * @param desiredVersion {@code spec.driver.version}, or {@code null}
 * @param autoUpgrade {@code spec.driver.upgradePolicy.autoUpgrade} (absent = {@code false})
 * @param autoRecover {@code spec.driver.recoveryPolicy.autoRecover} (absent = {@code false})
 * @param maxReboots {@code spec.driver.recoveryPolicy.maxReboots}, or {@code null} when absent (the rebooter's
 *        configuration then applies)
 * @param window {@code spec.driver.recoveryPolicy.window} (a Kubernetes duration such as {@code 24h}, {@code 90m}),
 *        or {@code null} when absent
 * @param problem why the policy is unknown (names the resource and the field), or {@code null}
 * @param resourceVersion the resource's {@code metadata.resourceVersion}, or {@code null}
 * @param recoveryDrain {@code spec.driver.recoveryPolicy.drain.enable} (absent = {@code true}): a recovery reboot
 *        waits until the control plane has cordoned and drained the node and granted it
 *        ({@value NodeKeys#RECOVERY_REBOOT_GRANTED}); {@code false} for an unknown policy: the control plane drains
 *        nothing while the resource is malformed, and a person's approval then reboots as without the drain
 */
public record NodePolicy(boolean known, String desiredVersion, boolean autoUpgrade, boolean autoRecover,
        Integer maxReboots, Duration window, String problem, String resourceVersion, boolean recoveryDrain) {

    /**
     * A policy without the recovery drain ({@code recoveryPolicy.drain.enable: false}).
     *
     * @param known whether a valid resource was read
     * @param desiredVersion {@code spec.driver.version}, or {@code null}
     * @param autoUpgrade {@code spec.driver.upgradePolicy.autoUpgrade}
     * @param autoRecover {@code spec.driver.recoveryPolicy.autoRecover}
     * @param maxReboots {@code spec.driver.recoveryPolicy.maxReboots}, or {@code null}
     * @param window {@code spec.driver.recoveryPolicy.window}, or {@code null}
     * @param problem why the policy is unknown, or {@code null}
     * @param resourceVersion the resource's {@code metadata.resourceVersion}, or {@code null}
     */
    public NodePolicy(boolean known, String desiredVersion, boolean autoUpgrade, boolean autoRecover,
            Integer maxReboots, Duration window, String problem, String resourceVersion) {
        this(known, desiredVersion, autoUpgrade, autoRecover, maxReboots, window, problem, resourceVersion, false);
    }

    /**
     * @param problem why it is unknown
     * @return a policy that authorises nothing
     */
    public static NodePolicy unknown(String problem) {
        return new NodePolicy(false, null, false, false, null, null, problem, null, false);
    }

    /** @return {@code autoRecover} if the policy is known, else {@code false} */
    public boolean allowsAutoRecover() {
        return known && autoRecover;
    }

    /**
     * @return whether a recovery reboot needs the control plane's grant: the policy is known and its recovery drain
     *         enabled (an unknown policy allows no automatic reboot at all, only a person's approval)
     */
    public boolean recoveryNeedsGrant() {
        return known && recoveryDrain;
    }

    /** @return {@code autoUpgrade} if the policy is known, else {@code false} */
    public boolean allowsAutoUpgrade() {
        return known && autoUpgrade;
    }
}
