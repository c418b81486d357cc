package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.DrainSettings;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.model.NodeIssue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The drain phase of {@link Reconciler#plan} (docs/upgrade.md "Drain"): a node given its slot with the drain enabled
 * enters {@code cordon-required}; once its Node is unschedulable (cordoned by {@link CordonGuard}, or by an
 * administrator before) {@code drain-required}; once no pod of the drain is left on it ({@link DrainScope}, evicted
 * by {@link Drainer} and gone) {@code pod-restart-required}, where the upgrade goes on as without a drain. Pure: the
 * pods left come in {@link Reconciler.Inputs#drainLeft()}, the writes are the controller's.
 */
final class DrainStates {

    private DrainStates() {
    }

    /**
     * @param drain the policy's drain
     * @return the state a node granted its slot enters
     */
    static UpgradeState granted(DrainSettings drain) {
        return drain.enable() ? UpgradeState.CORDON_REQUIRED : UpgradeState.POD_RESTART_REQUIRED;
    }

    /** Moves each cordon-required or drain-required node on when its Node shows the step done. */
    static void advance(List<PlannedNode> ns, Policy pol, Reconciler.Inputs in) {
        Instant now = in.now();
        for (PlannedNode n : ns) {
            if (n.next == UpgradeState.CORDON_REQUIRED && n.cordoned) {
                n.enterIfNew(UpgradeState.DRAIN_REQUIRED, pol.version(), n.progressBootId(), now);
                if (n.state != UpgradeState.DRAIN_REQUIRED) {
                    List<String> left = in.drainLeft().getOrDefault(n.name, List.of());
                    n.events.add(new Reconciler.EventSpec("Node", n.name, NodeKeys.NORMAL, NodeKeys.EVENT_DRAIN_STARTED,
                            "draining for the driver upgrade to " + pol.version() + ": " + (left.isEmpty()
                                    ? "no pod to evict" : left.size() + " pods to evict: " + String.join(", ", left))));
                }
            }
            if (n.next == UpgradeState.DRAIN_REQUIRED && n.cordoned
                    && in.drainLeft().getOrDefault(n.name, List.of()).isEmpty()) {
                n.enter(UpgradeState.POD_RESTART_REQUIRED, pol.version(), n.progressBootId(), now);
            }
        }
    }

    /**
     * The drain timed out with {@code onTimeout: reboot}: the node goes on to its pod restart and reboot with the pods
     * left, and the Warning Event {@code DrainFailed} says so.
     */
    static void timeoutReboot(PlannedNode n, Policy pol, Reconciler.Inputs in) {
        n.events.add(new Reconciler.EventSpec("Node", n.name, NodeKeys.WARNING, NodeKeys.EVENT_DRAIN_FAILED,
                "drain not finished within " + pol.drain().timeout().toSeconds() + "s, going on with the reboot "
                        + "(onTimeout: reboot): " + left(n, in)));
        n.enter(UpgradeState.POD_RESTART_REQUIRED, pol.version(), n.progressBootId(), in.now());
    }

    /** The drain timed out with {@code onTimeout: fail}: the Warning Event {@code DrainFailed} beside the failure. */
    static void timeoutFail(PlannedNode n, Policy pol, Reconciler.Inputs in) {
        n.events.add(new Reconciler.EventSpec("Node", n.name, NodeKeys.WARNING, NodeKeys.EVENT_DRAIN_FAILED,
                "drain not finished within " + pol.drain().timeout().toSeconds() + "s, the node is not rebooted "
                        + "(onTimeout: fail): " + left(n, in)));
    }

    /** @return what {@code Deadlines} names for a node past its cordon or drain deadline */
    static String failureDetail(PlannedNode n, Reconciler.Inputs in) {
        if (n.next == UpgradeState.CORDON_REQUIRED) {
            return "the node was not cordoned (spec.unschedulable is not true)";
        }
        return "drain not finished: " + left(n, in);
    }

    private static String left(PlannedNode n, Reconciler.Inputs in) {
        List<String> left = in.drainLeft().getOrDefault(n.name, List.of());
        return left.isEmpty() ? "no pod left" : "pods left: " + String.join(", ", left);
    }

    /** @return the nodes in cordon-required or drain-required with the pods left, for the status */
    static List<NodeIssue> draining(List<PlannedNode> ns, Map<String, List<String>> drainLeft) {
        List<NodeIssue> out = new ArrayList<>();
        for (PlannedNode n : ns) {
            if (n.next == UpgradeState.CORDON_REQUIRED) {
                out.add(new NodeIssue(n.name, "cordoning"));
            } else if (n.next == UpgradeState.DRAIN_REQUIRED) {
                List<String> left = drainLeft.getOrDefault(n.name, List.of());
                out.add(new NodeIssue(n.name, left.isEmpty() ? "no pod left" : "pods left: " + String.join(", ", left)));
            }
        }
        return out;
    }
}
