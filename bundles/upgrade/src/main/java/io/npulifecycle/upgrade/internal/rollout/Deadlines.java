package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.PodFacts;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * The deadline phase of {@link Reconciler#plan}: an in-flight node whose time in its state reached that state's
 * deadline ({@code spec.driver.upgradePolicy.deadlines}, 0 = none) becomes {@code upgrade-failed}, with a reason that
 * names what the node was waiting for (docs/upgrade.md "Deadlines"). {@code upgrade-required} has no deadline. Pure.
 */
final class Deadlines {

    private Deadlines() {
    }

    /**
     * Fails every in-flight node whose time in its planned state reached that state's deadline (0 = none).
     *
     * @return the earliest deadline among the in-flight nodes that did not fail, or null
     */
    static Instant check(List<PlannedNode> ns, Policy pol, Inputs in) {
        Instant now = in.now();
        Instant wake = null;
        for (PlannedNode n : ns) {
            if (!n.inFlight()) {
                continue;
            }
            Duration d = pol.deadlines().getOrDefault(n.next, Duration.ZERO);
            if (d.isZero()) {
                continue;
            }
            // the age as measured by the controller's monotonic clock when the progress is the observed one (a
            // wall-clock step changes nothing), else by the wall clock (a state entered now: 0)
            Duration measured = n.nextProgress == n.progress ? in.stateAges().get(n.name) : null;
            Duration age = measured != null ? measured : Duration.between(n.nextProgress.since(), now);
            if (age.compareTo(d) >= 0) {
                if (n.next == UpgradeState.DRAIN_REQUIRED && pol.drain().rebootOnTimeout()) {
                    DrainStates.timeoutReboot(n, pol, in);
                    continue;
                }
                if (n.next == UpgradeState.DRAIN_REQUIRED) {
                    DrainStates.timeoutFail(n, pol, in);
                }
                n.fail(d, failureDetail(n, pol, in), now);
            } else {
                wake = earliest(wake, now.plus(d.minus(age)));
            }
        }
        return wake;
    }

    /** @return the earlier of two instants, null = none */
    static Instant earliest(Instant a, Instant b) {
        return a == null ? b : b == null || a.isBefore(b) ? a : b;
    }

    /** @return what the failure reason of a node past its deadline names, per state (docs/upgrade.md "Deadlines") */
    private static String failureDetail(PlannedNode n, Policy pol, Inputs in) {
        switch (n.next) {
            case CORDON_REQUIRED:
            case DRAIN_REQUIRED:
                return DrainStates.failureDetail(n, in);
            case POD_RESTART_REQUIRED: {
                Pod p = in.driverPods().get(n.name);
                return p == null ? "no driver pod on the node"
                        : "driver pod " + p.getMetadata().getNamespace() + "/" + p.getMetadata().getName() + " (image "
                                + PodFacts.image(p) + ") did not request an upgrade reboot (" + NodeKeys.REBOOT_REQUIRED + ")";
            }
            case REBOOT_REQUIRED:
                return pol.autoUpgrade() ? "autoUpgrade is on but the node agent did not start the reboot"
                        : n.approved ? "approved but the node agent did not start the reboot"
                                : "reboot not approved (annotation " + NodeKeys.APPROVE_REBOOT + "=true missing)";
            case REBOOTING:
                return "the node did not come back with a new boot id (" + NodeKeys.BOOT_ID + " still " + n.bootId + ")";
            case VALIDATION_REQUIRED:
                return "not validated: " + NodeKeys.DRIVER_VALIDATED + " is '" + n.ann.getOrDefault(NodeKeys.DRIVER_VALIDATED, "")
                        + "' (expected " + pol.version() + "@" + n.bootId + "), loaded driver " + n.loaded
                        + ", npu-health " + n.labels.getOrDefault(NodeKeys.NPU_HEALTH, "unknown");
            default:
                return n.next.label();
        }
    }
}
