package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.EventSpec;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.NodeFacts;
import io.npulifecycle.upgrade.internal.plan.Progress;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.DrainSettings;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.model.NodeIssue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The drain phase of {@link Reconciler#plan} (docs/upgrade.md "Drain"): a node given its slot with the drain enabled
 * enters {@code cordon-required}; once its Node is unschedulable (cordoned by {@code drain.CordonGuard}, or by an
 * administrator before) {@code drain-required}; once no pod of the drain is left on it ({@code drain.DrainScope},
 * evicted by {@code drain.Drainer} and gone) {@code pod-restart-required}, where the upgrade goes on as without a
 * drain. A {@code drain-required} node someone else made schedulable again fails ({@link #uncordonedDuringDrain}): a
 * schedulable node is never drained. A node leaves the rollout (no label) or reads {@code upgrade-failed} only once
 * it is back in service ({@link #releaseFirst}). Pure: the pods left come in {@link Inputs#drainLeft()}, the writes
 * are the controller's.
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
    static void advance(List<PlannedNode> ns, Policy pol, Inputs in) {
        Instant now = in.now();
        for (PlannedNode n : ns) {
            if (n.next == UpgradeState.CORDON_REQUIRED && n.cordoned) {
                n.enterIfNew(UpgradeState.DRAIN_REQUIRED, pol.version(), n.progressBootId(), now);
                if (n.state != UpgradeState.DRAIN_REQUIRED) {
                    List<String> left = in.drainLeft().getOrDefault(n.name, List.of());
                    n.events.add(new EventSpec("Node", n.name, NodeKeys.NORMAL, NodeKeys.EVENT_DRAIN_STARTED,
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
    static void timeoutReboot(PlannedNode n, Policy pol, Inputs in) {
        n.events.add(new EventSpec("Node", n.name, NodeKeys.WARNING, NodeKeys.EVENT_DRAIN_FAILED,
                "drain not finished within " + pol.drain().timeout().toSeconds() + "s, going on with the reboot "
                        + "(onTimeout: reboot): " + left(n, in)));
        n.enter(UpgradeState.POD_RESTART_REQUIRED, pol.version(), n.progressBootId(), in.now());
    }

    /** The drain timed out with {@code onTimeout: fail}: the Warning Event {@code DrainFailed} beside the failure. */
    static void timeoutFail(PlannedNode n, Policy pol, Inputs in) {
        n.events.add(new EventSpec("Node", n.name, NodeKeys.WARNING, NodeKeys.EVENT_DRAIN_FAILED,
                "drain not finished within " + pol.drain().timeout().toSeconds() + "s, the node is not rebooted "
                        + "(onTimeout: fail): " + left(n, in)));
    }

    /** @return what {@code Deadlines} names for a node past its cordon or drain deadline */
    static String failureDetail(PlannedNode n, Inputs in) {
        if (n.next == UpgradeState.CORDON_REQUIRED) {
            return "the node was not cordoned (spec.unschedulable is not true)";
        }
        return "drain not finished: " + left(n, in);
    }

    private static String left(PlannedNode n, Inputs in) {
        List<String> left = in.drainLeft().getOrDefault(n.name, List.of());
        return left.isEmpty() ? "no pod left" : "pods left: " + String.join(", ", left);
    }

    /**
     * Fails every {@code drain-required} node whose Node is schedulable again: someone other than this controller
     * removed the cordon (a person's {@code kubectl uncordon}, another controller), since this controller removes its
     * cordon only with its record and never while the drain needs it. The person's decision is respected: no pod is
     * evicted from a schedulable node, the cordon is not put back, the node gives its slot up as
     * {@code upgrade-failed} (not rebooted), with a reason that says what was removed and how to retry, the Warning
     * Events {@code DrainFailed} and {@code DriverUpgradeFailed}, and its patch removes our cordon record left
     * behind. Who removed it is not on the Node (the API server keeps no owner of a removed field; its audit log
     * names the request's user), so the reason says so rather than guess. A node the recovery flow holds (a recovery
     * request on the Node) is left to the recovery's rule, which cordons it again: its drain waits meanwhile. Runs
     * after {@link Deadlines#check}: a drain past its timeout fails for that.
     *
     * @param ns the nodes after the deadline phase
     * @param pol the policy
     * @param in the inputs (the time, the pods left)
     */
    static void uncordonedDuringDrain(List<PlannedNode> ns, Policy pol, Inputs in) {
        for (PlannedNode n : ns) {
            if (n.next != UpgradeState.DRAIN_REQUIRED || n.cordoned || NodeFacts.recoveryRequested(n.node)) {
                continue;
            }
            boolean ours = NodeKeys.CORDONED_BY_VALUE.equals(n.ann.get(NodeKeys.CORDONED_BY));
            String what = ours
                    ? "its cordon (made by npu-lifecycle, whose record " + NodeKeys.CORDONED_BY + "="
                            + NodeKeys.CORDONED_BY_VALUE + " is still on the Node) was removed by someone else"
                    : "the cordon it had (an administrator's, not npu-lifecycle's) was removed";
            String retry = "to upgrade it: kubectl label node " + n.name + " " + NodeKeys.DRIVER_UPGRADE_STATE + "="
                    + UpgradeState.UPGRADE_REQUIRED.label() + " --overwrite (it waits for a slot, then is cordoned "
                    + "and drained again)";
            String reason = "uncordoned during its drain: spec.unschedulable was cleared by someone other than "
                    + "npu-lifecycle (kubectl uncordon or another controller; the Node does not record who, the API "
                    + "server's audit log does): " + what + "; the drain stopped (no pod is evicted from a "
                    + "schedulable node), the node is not rebooted; " + retry + "; " + left(n, in);
            n.events.add(new EventSpec("Node", n.name, NodeKeys.WARNING, NodeKeys.EVENT_DRAIN_FAILED,
                    "drain stopped for the driver upgrade to " + pol.version() + ": the node was uncordoned by "
                            + "someone else (" + what + "); not cordoned again, not rebooted; " + retry));
            n.failBecause(reason, in.now());
            n.dropCordonRecord = ours;
        }
    }

    /**
     * Empty means done: a node leaves the rollout (its label removed) only once it is back in service, and reads
     * {@code upgrade-failed} only once our cordon of it is released. A node the plan would make done while its Node
     * still shows our cordon ({@code spec.unschedulable} with {@value NodeKeys#CORDONED_BY}={@value
     * NodeKeys#CORDONED_BY_VALUE}) or the recovery's taint {@value NodeKeys#NPU_UNHEALTHY_TAINT}, or
     * {@code upgrade-failed} while it shows our cordon, keeps its observed state in this plan, with no patch and no
     * Event ({@link PlannedNode#releaseWait} says why, in the status); the controller uncordons it now
     * ({@code drain.DrainWork}, or {@code recovery.RecoveryWork} with the taint), and the transition is made by the plan
     * that sees the release on the Node. So the state label and the cordon are never seen in the wrong order; the state list is
     * unchanged (ordered writes, no new state value). Runs before the slot phase, so the node still counts in flight
     * until its label changes.
     *
     * @param ns the nodes after the deadline phase
     * @param pol the policy
     * @param now the time of the plan
     * @return per node to uncordon now, why (for the Event {@code Uncordoned}); a node waiting for the taint alone
     *         is not in it
     */
    static Map<String, String> releaseFirst(List<PlannedNode> ns, Policy pol, Instant now) {
        Map<String, String> uncordon = new TreeMap<>();
        for (PlannedNode n : ns) {
            boolean done = n.state != null && n.next == null;
            boolean failing = n.state != null && n.state != UpgradeState.UPGRADE_FAILED
                    && n.next == UpgradeState.UPGRADE_FAILED;
            if (!done && !failing) {
                continue;
            }
            boolean ourCordon = n.cordoned && NodeKeys.CORDONED_BY_VALUE.equals(n.ann.get(NodeKeys.CORDONED_BY));
            boolean taint = done && NodeFacts.tainted(n.node);
            if (!ourCordon && !taint) {
                continue;
            }
            List<String> waits = new ArrayList<>();
            if (ourCordon) {
                waits.add("the uncordon of its cordon (" + NodeKeys.CORDONED_BY + "=" + NodeKeys.CORDONED_BY_VALUE + ")");
            }
            if (taint) {
                waits.add("the removal of the taint " + NodeKeys.NPU_UNHEALTHY_TAINT + " (by the recovery, once no "
                        + "recovery request is left and the boot validated)");
            }
            String outcome = done ? "upgraded to " + pol.version() + " and validated"
                    : "failed: " + n.failure;
            n.releaseWait = outcome + "; " + (done ? "its " + NodeKeys.DRIVER_UPGRADE_STATE + " label is removed"
                    : UpgradeState.UPGRADE_FAILED.label() + " is written") + " once it is back in service, waiting "
                    + "for " + String.join(" and ", waits);
            if (ourCordon) {
                uncordon.put(n.name, done ? "upgraded to " + pol.version() + " and validated; "
                        + NodeKeys.DRIVER_UPGRADE_STATE + " is removed now that the node is back in service"
                        : "the driver upgrade failed; " + NodeKeys.DRIVER_UPGRADE_STATE + "="
                                + UpgradeState.UPGRADE_FAILED.label() + " follows (" + NodeKeys.DRIVER_UPGRADE_FAILURE
                                + " says why)");
            }
            n.next = n.state;
            n.nextProgress = n.progress != null && n.progress.state() == n.state ? n.progress
                    : new Progress(n.state, now, pol.version(), n.progressBootId());
            n.failure = null;
            n.dropCordonRecord = false;
            n.events.clear();
        }
        return uncordon;
    }

    /** @return the nodes in cordon-required or drain-required with the pods left, for the status */
    static List<NodeIssue> draining(List<PlannedNode> ns, Map<String, List<String>> drainLeft) {
        List<NodeIssue> out = new ArrayList<>();
        for (PlannedNode n : ns) {
            if (n.releaseWait != null && (n.next == UpgradeState.CORDON_REQUIRED
                    || n.next == UpgradeState.DRAIN_REQUIRED)) {
                out.add(new NodeIssue(n.name, n.releaseWait));
            } else if (n.next == UpgradeState.CORDON_REQUIRED) {
                out.add(new NodeIssue(n.name, "cordoning"));
            } else if (n.next == UpgradeState.DRAIN_REQUIRED) {
                List<String> left = drainLeft.getOrDefault(n.name, List.of());
                out.add(new NodeIssue(n.name, left.isEmpty() ? "no pod left" : "pods left: " + String.join(", ", left)));
            }
        }
        return out;
    }
}
