package io.npulifecycle.upgrade.internal.rollout;


import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The slot phase of {@link Reconciler#plan} (docs/upgrade.md "Slots"): grants rollout slots under
 * {@code maxParallelUpgrades} and {@code maxUnavailable}, and, in manual mode, makes an unapproved node that holds a
 * slot before its reboot give it to an approved node that waits. Pure; one plan, one thread.
 *
 * <p>The counts a grant is checked against are those the plan observed (the nodes' labels), never the effect of a
 * yield decided in the same plan: a yielding node leaves the counts only once its {@code reboot-deferred} patch is
 * on the Node, and the approved node gets the slot in a later plan that sees it. A yield patch that the API server
 * rejects (409: the node agent used an approval in between and writes {@code rebooting-from-boot-id}) therefore never
 * lets a second node in: the next plan sees the node {@code rebooting}, in flight, and yields nothing.
 */
final class SlotGrants {

    private SlotGrants() {
    }

    /**
     * Grants slots to the nodes that wait for one, unless {@code blocked} (paused, images not confirmed), then decides
     * the yields.
     *
     * <p>Waiting for a slot: {@code upgrade-required} nodes not held, and {@code reboot-deferred} nodes not held that
     * are approved (or autoUpgrade; without an approval a deferred node has nothing to do in a slot). Each grant keeps
     * in-flight &lt; maxParallelUpgrades (0 = unlimited) and unavailable + 1 &le; maxUnavailable; a node already
     * unavailable costs no unit. Order: approved first (unless autoUpgrade), then deferred (staged: the shortest way
     * to a reboot), then already unavailable, then by name. A granted node enters {@code cordon-required} when the
     * drain is enabled (a {@code reboot-deferred} node too: it was uncordoned when it gave its slot up, so pods may
     * have landed on it since, and the node agent uses no approval until it is drained); without the drain a granted
     * {@code reboot-deferred} node goes to {@code reboot-required} when the agent asks for the upgrade reboot, else to
     * {@code pod-restart-required}, like a new one.
     *
     * @param ns the nodes after the advance, deadline and hold phases
     * @param pol the policy
     * @param blocked no grant and no yield (paused, images not confirmed)
     * @param now the time of the plan
     * @return the slot counts after the grants (yields decided now are still counted: they free their slot in a
     *         later plan)
     */
    static Slots grant(List<PlannedNode> ns, Policy pol, boolean blocked, Instant now) {
        int inFlight = 0;
        int unavailable = 0;
        for (PlannedNode n : ns) {
            boolean fl = n.inFlight();
            inFlight += fl ? 1 : 0;
            unavailable += fl || n.next == UpgradeState.UPGRADE_FAILED || n.unavailable ? 1 : 0;
        }
        int maxUnav = pol.maxUnavailableOf(ns.size());
        Instant wake = null;
        if (blocked) {
            return new Slots(inFlight, unavailable, maxUnav, null);
        }
        List<PlannedNode> cands = ns.stream().filter(n -> waitsForSlot(n, pol))
                .sorted(Comparator.comparing((PlannedNode n) -> pol.autoUpgrade() || !n.approved)
                        .thenComparing(n -> n.next != UpgradeState.REBOOT_DEFERRED)
                        .thenComparing(n -> !n.unavailable).thenComparing(n -> n.name))
                .toList();
        List<PlannedNode> passedOver = new ArrayList<>();
        for (PlannedNode n : cands) {
            if (!fits(n, inFlight, unavailable, pol, maxUnav)) {
                passedOver.add(n);
                continue;
            }
            inFlight++;
            unavailable += n.unavailable ? 0 : 1;
            UpgradeState s = pol.drain().enable() ? UpgradeState.CORDON_REQUIRED
                    : n.next == UpgradeState.REBOOT_DEFERRED && n.agentRequested()
                            ? UpgradeState.REBOOT_REQUIRED : UpgradeState.POD_RESTART_REQUIRED;
            n.enter(s, pol.version(), n.bootIdOrEmpty(), now);
            Duration d = pol.deadlines().getOrDefault(s, Duration.ZERO);
            if (!d.isZero()) {
                wake = Deadlines.earliest(wake, now.plus(d));
            }
        }
        if (!pol.autoUpgrade()) {
            yields(ns, passedOver, inFlight, unavailable, pol, maxUnav, now);
        }
        return new Slots(inFlight, unavailable, maxUnav, wake);
    }

    /** @return whether the node waits for a slot in this plan (see {@link #grant}) */
    static boolean waitsForSlot(PlannedNode n, Policy pol) {
        if (n.held != null || n.blockedBy != null) {
            return false;
        }
        return n.next == UpgradeState.UPGRADE_REQUIRED
                || n.next == UpgradeState.REBOOT_DEFERRED && (n.approved || pol.autoUpgrade());
    }

    /** @return whether one more node {@code n} keeps both limits */
    private static boolean fits(PlannedNode n, int inFlight, int unavailable, Policy pol, int maxUnav) {
        return (pol.maxParallelUpgrades() == 0 || inFlight < pol.maxParallelUpgrades())
                && unavailable + (n.unavailable ? 0 : 1) <= maxUnav;
    }

    /**
     * Manual mode: for each approved node passed over (in grant order), the first unapproved node in
     * {@code pod-restart-required} or {@code reboot-required} (by name) whose slot would let it in goes to
     * {@code reboot-deferred}, keeping the progress' {@code fromBootId}, and is uncordoned if this controller cordoned it
     * ({@code drain.DrainWork}). A yield that would not let the approved node in (e.g. maxUnavailable is used up by
     * nodes that are down anyway) is not made.
     */
    private static void yields(List<PlannedNode> ns, List<PlannedNode> passedOver, int inFlight, int unavailable,
            Policy pol, int maxUnav, Instant now) {
        List<PlannedNode> holders = ns.stream().filter(SlotGrants::mayYield).toList();
        int unav = unavailable;
        for (PlannedNode c : passedOver) {
            if (!c.approved) {
                continue;
            }
            for (PlannedNode y : holders) {
                if (y.yieldsTo != null) {
                    continue;
                }
                // a node this controller cordoned for its drain is uncordoned once it is reboot-deferred: its unit
                // of maxUnavailable comes back with its slot
                int freed = y.staysUnavailable ? 0 : 1;
                if (fits(c, inFlight - 1, unav - freed, pol, maxUnav)) {
                    y.yieldsTo = c.name;
                    y.enter(UpgradeState.REBOOT_DEFERRED, pol.version(), y.nextProgress.fromBootId(), now);
                    // the projection of the plan that will grant c: y out, c in (in flight: one out, one in)
                    unav = unav - freed + (c.unavailable ? 0 : 1);
                    break;
                }
            }
        }
    }

    /**
     * @return whether the node holds a slot it may give up: observed and planned in {@code pod-restart-required} or
     *         {@code reboot-required} (so not rebooting, no {@code rebooting-from-boot-id} of this boot), without an
     *         approval, and not waiting to be back in service before it fails ({@link PlannedNode#releaseWait})
     */
    private static boolean mayYield(PlannedNode n) {
        boolean before = n.state == UpgradeState.POD_RESTART_REQUIRED || n.state == UpgradeState.REBOOT_REQUIRED;
        boolean still = n.next == UpgradeState.POD_RESTART_REQUIRED || n.next == UpgradeState.REBOOT_REQUIRED;
        return before && still && !n.approved && n.releaseWait == null;
    }
}
