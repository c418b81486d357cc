package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.EventSpec;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.MaintenanceWindow;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.model.NodeIssue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The maintenance-window phase of {@link Reconciler#plan} (docs/upgrade.md "Maintenance window"): with
 * {@code upgradePolicy.maintenanceWindow}, a slot is granted only while the window is open ({@link SlotGrants} is
 * blocked otherwise), and the reboot must start while it is open. A node that holds a slot but has not started its
 * reboot when the window closes gives the slot up: from {@code cordon-required} or {@code drain-required} back to
 * {@code upgrade-required}; observed in {@code pod-restart-required} or {@code reboot-required} (its driver pod may
 * have restarted, it may have staged) to {@code reboot-deferred}, in which the node agent makes no upgrade reboot; both states need no
 * cordon, so a node this controller cordoned is uncordoned ({@code drain.DrainWork}). Event
 * {@code OutsideMaintenanceWindow} on the Node; it goes again at the next opening. Each node holding a slot before its reboot carries
 * {@value NodeKeys#UPGRADE_REBOOT_BEFORE} (the instant the window closes), which the node agent checks right before
 * an upgrade reboot, so a reboot cannot start after the close even in the moment before this phase runs. Pure.
 */
final class WindowGate {

    /** The states that hold a slot before the reboot started: released when the window closes. */
    private static final Set<UpgradeState> BEFORE_REBOOT = EnumSet.of(UpgradeState.CORDON_REQUIRED,
            UpgradeState.DRAIN_REQUIRED, UpgradeState.POD_RESTART_REQUIRED, UpgradeState.REBOOT_REQUIRED);

    private WindowGate() {
    }

    /**
     * @param pol the policy
     * @param now the time of the plan
     * @return whether the window forbids a new grant now (a window is set and closed)
     */
    static boolean closed(Policy pol, Instant now) {
        MaintenanceWindow w = pol.gates().window();
        return w != null && !w.isOpen(now);
    }

    /**
     * Releases the slot of every node before its reboot while the window is closed.
     *
     * @param ns the nodes after the advance and drain phases
     * @param pol the policy
     * @param now the time of the plan
     */
    static void release(List<PlannedNode> ns, Policy pol, Instant now) {
        MaintenanceWindow w = pol.gates().window();
        if (!closed(pol, now)) {
            return;
        }
        for (PlannedNode n : ns) {
            if (n.next == null || !BEFORE_REBOOT.contains(n.next)) {
                continue;
            }
            // the driver pod may have been deleted (the agent may stage) once the Node showed the pod restart
            boolean restarted = n.state == UpgradeState.POD_RESTART_REQUIRED || n.state == UpgradeState.REBOOT_REQUIRED;
            String from = n.nextProgress == null ? n.progressBootId() : n.nextProgress.fromBootId();
            n.events.add(new EventSpec("Node", n.name, NodeKeys.WARNING,
                    NodeKeys.EVENT_OUTSIDE_MAINTENANCE_WINDOW, "the maintenance window " + w.describe()
                            + " closed before the upgrade reboot started (" + (n.state != null && BEFORE_REBOOT.contains(n.state) ? n.state
                                    : n.next).label() + "): slot released"
                            + (NodeKeys.CORDONED_BY_VALUE.equals(n.ann.get(NodeKeys.CORDONED_BY))
                                    ? ", uncordoned (cordoned for its drain)"
                                    : n.cordoned ? ", left cordoned (not cordoned by " + NodeKeys.CORDONED_BY_VALUE + ")"
                                            : "")
                            + (restarted ? "; the staged driver is kept (reboot-deferred)" : "")
                            + "; it goes again when the window opens at " + w.nextOpening(now)));
            if (restarted) {
                n.enter(UpgradeState.REBOOT_DEFERRED, pol.version(), from, now);
            } else {
                n.enter(UpgradeState.UPGRADE_REQUIRED, pol.version(), "", now);
            }
        }
    }

    /**
     * Sets {@link PlannedNode#rebootBefore} of every node before its reboot (granted in this plan or before) while
     * the window is open: the instant it closes.
     *
     * @param ns the nodes after the grants
     * @param pol the policy
     * @param now the time of the plan
     */
    static void afterGrants(List<PlannedNode> ns, Policy pol, Instant now) {
        MaintenanceWindow w = pol.gates().window();
        Instant closes = w == null ? null : w.closesAt(now);
        for (PlannedNode n : ns) {
            n.rebootBefore = closes != null && n.next != null && BEFORE_REBOOT.contains(n.next) ? closes : null;
        }
    }

    /**
     * @return the nodes that wait for a slot only because the window is closed, each with the window and its next
     *         opening; empty while it is open or none is set
     */
    static List<NodeIssue> waiting(List<PlannedNode> ns, Policy pol, Instant now) {
        List<NodeIssue> out = new ArrayList<>();
        if (!closed(pol, now)) {
            return out;
        }
        MaintenanceWindow w = pol.gates().window();
        for (PlannedNode n : ns) {
            if (SlotGrants.waitsForSlot(n, pol)) {
                out.add(new NodeIssue(n.name, "maintenance window " + w.describe() + " closed; opens at "
                        + w.nextOpening(now)));
            }
        }
        return out;
    }

    /**
     * @param ns the nodes
     * @param pol the policy
     * @param now the time of the plan
     * @return when the window opens or closes next while some node is to upgrade, or null
     */
    static Instant wake(List<PlannedNode> ns, Policy pol, Instant now) {
        MaintenanceWindow w = pol.gates().window();
        if (w == null || ns.stream().noneMatch(n -> n.needsUpgrade)) {
            return null;
        }
        return w.nextChange(now);
    }
}
