package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.ImageStatus;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.Plan;

import io.npulifecycle.api.upgrade.spec.UpgradeState;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.internal.rollout.PlanRows.OLD;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.NOW;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.T;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.ago;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.node;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The drain states of {@link Reconciler#plan} ({@link DrainStates}), pure: grant, cordon, drain, timeout. */
class DrainPlanTest {

    static Plan plan(Map<String, Object> drain, Map<String, List<String>> left, PlanRows.NodeSpec... ns) {
        Map<String, Object> up = new HashMap<>();
        up.put("autoUpgrade", true);
        if (drain != null) {
            up.put("drain", drain);
        }
        Map<String, ImageStatus> images = new HashMap<>();
        images.put(PlanRows.image(T), ImageStatus.PRESENT);
        return Reconciler.plan(Inputs.builder().generation(5L).spec(SpecReader.parse(Map.of("driver", Map.of(
                "version", T, "upgradePolicy", up)))).nodes(java.util.Arrays.stream(ns).map(PlanRows.NodeSpec::build)
                        .toList()).images(images).now(NOW)
                .drainLeft(left).build());
    }

    static String state(Plan p, String node) {
        return p.nodeStates().get(node);
    }

    static List<String> events(Plan p, String node) {
        return p.nodePatches().stream().filter(x -> x.node().equals(node)).flatMap(x -> x.events().stream())
                .map(e -> e.reason() + ": " + e.message()).toList();
    }

    @Test
    void aGrantedNodeIsCordonedFirstUnlessTheDrainIsDisabled() {
        assertEquals("cordon-required", state(plan(null, Map.of(), node("n1").on(OLD)
                .state(UpgradeState.UPGRADE_REQUIRED)), "n1"));
        assertEquals("pod-restart-required", state(plan(Map.of("enable", false), Map.of(), node("n1").on(OLD)
                .state(UpgradeState.UPGRADE_REQUIRED)), "n1"));
    }

    @Test
    void aCordonedNodeDrainsAndGoesOnOnceNoPodIsLeft() {
        Plan blocked = plan(null, Map.of("n1", List.of("ml/a (PodDisruptionBudget ml/p allows no "
                + "disruption now)")), node("n1").on(OLD).in(UpgradeState.CORDON_REQUIRED, ago(5)).cordoned());
        assertEquals("drain-required", state(blocked, "n1"));
        assertTrue(events(blocked, "n1").get(0).startsWith(NodeKeys.EVENT_DRAIN_STARTED + ": "), events(blocked, "n1")
                .toString());
        assertTrue(String.valueOf(blocked.status().getDrainingNodes()).contains("PodDisruptionBudget ml/p"));
        assertEquals("cordon-required", state(plan(null, Map.of(), node("n1").on(OLD)
                .in(UpgradeState.CORDON_REQUIRED, ago(5))), "n1"), "not cordoned yet");
        assertEquals("pod-restart-required", state(plan(null, Map.of(), node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(5)).cordoned()), "n1"));
        assertEquals("drain-required", state(plan(null, Map.of("n1", List.of("ml/a (terminating)")), node("n1")
                .on(OLD).in(UpgradeState.DRAIN_REQUIRED, ago(5)).cordoned()), "n1"), "an evicted pod is waited for");
    }

    @Test
    void theTimeoutFailsTheNodeNamingThePodsOrRebootsWithOnTimeoutReboot() {
        Map<String, List<String>> left = Map.of("n1", List.of("ml/a (PodDisruptionBudget ml/p allows no disruption "
                + "now)"));
        Plan failed = plan(Map.of("timeoutSeconds", 60), left, node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(61)).cordoned());
        assertEquals("upgrade-failed", state(failed, "n1"));
        assertTrue(String.valueOf(failed.status().getFailedNodes()).contains("PodDisruptionBudget ml/p"));
        assertTrue(events(failed, "n1").stream().anyMatch(e -> e.startsWith(NodeKeys.EVENT_DRAIN_FAILED)));
        Plan reboot = plan(Map.of("timeoutSeconds", 60, "onTimeout", "reboot"), left, node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(61)).cordoned());
        assertEquals("pod-restart-required", state(reboot, "n1"));
        assertTrue(events(reboot, "n1").stream().anyMatch(e -> e.startsWith(NodeKeys.EVENT_DRAIN_FAILED)
                && e.contains("onTimeout: reboot")));
        assertEquals("drain-required", state(plan(Map.of("timeoutSeconds", 60), left, node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(59)).cordoned()), "n1"));
    }

    /** A manual-mode plan with the drain enabled (its defaults), maxParallelUpgrades 1, maxUnavailable 1. */
    static Plan manual(PlanRows.NodeSpec... ns) {
        Map<String, Object> up = new HashMap<>();
        up.put("autoUpgrade", false);
        up.put("maxParallelUpgrades", 1);
        up.put("maxUnavailable", 1);
        Map<String, ImageStatus> images = new HashMap<>();
        images.put(PlanRows.image(T), ImageStatus.PRESENT);
        return Reconciler.plan(Inputs.builder().generation(5L).spec(SpecReader.parse(Map.of("driver", Map.of(
                "version", T, "upgradePolicy", up)))).nodes(java.util.Arrays.stream(ns).map(PlanRows.NodeSpec::build)
                        .toList()).images(images).now(NOW).build());
    }

    /**
     * The slot rule of manual mode with the drain: the unapproved holder was cordoned by this controller for its
     * drain, so its cordon is what makes it unavailable; giving the slot up gives that unit of maxUnavailable back
     * (it is uncordoned as reboot-deferred), and the approved node gets the slot in the next plan, cordoned and
     * drained like any other.
     */
    @Test
    void anUnapprovedHolderCordonedByUsYieldsUnderMaxUnavailableOneAndTheApprovedNodeIsDrained() {
        PlanRows.NodeSpec holder = node("n1").on(OLD).in(UpgradeState.REBOOT_REQUIRED, ago(5)).agentAsksReboot()
                .cordoned().ann(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE);
        assertEquals("reboot-deferred", state(manual(holder, node("n2").on(OLD).approved()), "n1"));

        Plan next = manual(node("n1").on(OLD).in(UpgradeState.REBOOT_DEFERRED, ago(1)).agentAsksReboot(),
                node("n2").on(OLD).approved());
        assertEquals("cordon-required", state(next, "n2"), "the approved node is cordoned and drained first");
        assertEquals("reboot-deferred", state(next, "n1"));
    }

    /** A holder an administrator cordoned stays unavailable when released: its yield would let nobody in. */
    @Test
    void anUnapprovedHolderCordonedByAnAdministratorDoesNotYieldUnderMaxUnavailableOne() {
        PlanRows.NodeSpec holder = node("n1").on(OLD).in(UpgradeState.REBOOT_REQUIRED, ago(5)).agentAsksReboot()
                .cordoned();
        assertEquals("reboot-required", state(manual(holder, node("n2").on(OLD).approved()), "n1"));
    }

    /**
     * A reboot-deferred node given its slot back with the drain enabled goes through cordon and drain again (it was
     * uncordoned when it gave its slot up, pods may have landed), never straight to reboot-required.
     */
    @Test
    void aDeferredNodeGivenItsSlotBackIsCordonedAndDrainedAgain() {
        assertEquals("cordon-required", state(manual(node("n1").on(OLD).in(UpgradeState.REBOOT_DEFERRED, ago(1))
                .agentAsksReboot().approved()), "n1"));
    }

    static PlanRows.NodeSpec cordonedByUs(PlanRows.NodeSpec n) {
        return n.cordoned().ann(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE);
    }

    /**
     * Empty means done: a node validated on the target while our cordon is on it keeps its state, with no patch and
     * no Event, and is listed to be uncordoned now; the plan that sees the uncordon on the Node removes the label.
     */
    @Test
    void aValidatedNodeIsDoneOnlyOnceOurCordonIsReleased() {
        Plan held = plan(null, Map.of(), cordonedByUs(node("n1").done()
                .in(UpgradeState.VALIDATION_REQUIRED, ago(30))));
        assertEquals("validation-required", state(held, "n1"), "not done while cordoned by us");
        assertEquals(List.of(), held.nodePatches(), "no patch: the uncordon goes first");
        assertTrue(held.releasing().get("n1").startsWith("upgraded to " + T + " and validated"), held.releasing()
                .toString());
        assertEquals("0/1", held.status().getProgress());
        assertTrue(String.valueOf(held.status().getSlotHolders()).contains("label is removed once it is back in "
                + "service, waiting for the uncordon of its cordon"), String.valueOf(held.status().getSlotHolders()));
        assertTrue(held.crEvents().stream().noneMatch(e -> e.reason().equals("RolloutComplete")));

        Plan done = plan(null, Map.of(), node("n1").done().in(UpgradeState.VALIDATION_REQUIRED, ago(31)));
        assertEquals("upgraded", state(done, "n1"));
        assertTrue(done.nodePatches().get(0).labels().containsKey(NodeKeys.DRIVER_UPGRADE_STATE)
                && done.nodePatches().get(0).labels().get(NodeKeys.DRIVER_UPGRADE_STATE) == null);
        assertEquals(Map.of(), done.releasing());
    }

    /** A cordon that is not ours (an administrator's) stays and does not hold the node: it is done at once. */
    @Test
    void aNodeCordonedByAnAdministratorIsDoneAtOnceAndStaysCordoned() {
        Plan p = plan(null, Map.of(), node("n1").done().in(UpgradeState.VALIDATION_REQUIRED, ago(30))
                .cordoned());
        assertEquals("upgraded", state(p, "n1"));
        assertEquals(Map.of(), p.releasing(), "not ours to uncordon");
    }

    /**
     * The recovery's taint on a validated node (a recovery request, or its release in this reconcile) holds the
     * label as well; there is no cordon of ours to release, so nothing is listed to uncordon.
     */
    @Test
    void aValidatedNodeStillTaintedIsNotDoneYet() {
        Plan p = plan(null, Map.of(), node("n1").done().in(UpgradeState.VALIDATION_REQUIRED, ago(30))
                .tainted());
        assertEquals("validation-required", state(p, "n1"));
        assertEquals(List.of(), p.nodePatches());
        assertEquals(Map.of(), p.releasing());
        assertTrue(String.valueOf(p.status().getSlotHolders()).contains("the removal of the taint "
                + NodeKeys.NPU_UNHEALTHY_TAINT), String.valueOf(p.status().getSlotHolders()));
    }

    /**
     * A drain past its timeout while our cordon is on the node: no {@code upgrade-failed}, no Event yet, the node is
     * listed to be uncordoned; the plan that sees it uncordoned writes the failure with the drain's reason (the
     * deadline's, not that of an uncordon by someone else: the record went with our uncordon).
     */
    @Test
    void aFailedDrainReadsUpgradeFailedOnlyOnceOurCordonIsReleased() {
        Map<String, List<String>> left = Map.of("n1", List.of("ml/a (PodDisruptionBudget ml/p allows no disruption "
                + "now)"));
        Plan held = plan(Map.of("timeoutSeconds", 60), left, cordonedByUs(node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(61))));
        assertEquals("drain-required", state(held, "n1"));
        assertEquals(List.of(), held.nodePatches(), "no failure patch, no Event while cordoned by us");
        assertTrue(held.releasing().get("n1").contains("upgrade-failed follows"), held.releasing().toString());
        assertEquals(List.of(), held.status().getFailedNodes());
        assertTrue(held.crEvents().stream().noneMatch(e -> e.reason().equals("NodeUpgradeFailed")));
        assertTrue(String.valueOf(held.status().getDrainingNodes()).contains("upgrade-failed is written once it is "
                + "back in service"), String.valueOf(held.status().getDrainingNodes()));

        Plan failed = plan(Map.of("timeoutSeconds", 60), left, node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(62)));
        assertEquals("upgrade-failed", state(failed, "n1"));
        String why = String.valueOf(failed.status().getFailedNodes());
        assertTrue(why.contains("missed the drain-required deadline of 60s") && why.contains("PodDisruptionBudget ml/p")
                && !why.contains("uncordoned during its drain"), why);
        assertTrue(events(failed, "n1").stream().anyMatch(e -> e.startsWith(NodeKeys.EVENT_DRAIN_FAILED)));
    }

    /**
     * Someone else uncordons a node during its drain (our record still on it): the person is respected. The node is
     * not drained any more, not cordoned again, gives its slot up as upgrade-failed, with a reason that says what was
     * removed and how to retry, the Events DrainFailed and DriverUpgradeFailed, and our stale record removed.
     */
    @Test
    void aNodeUncordonedBySomeoneElseDuringItsDrainFailsAndIsNotCordonedAgain() {
        Map<String, List<String>> left = Map.of("n1", List.of("ml/a (PodDisruptionBudget ml/p allows no disruption "
                + "now)"));
        Plan p = plan(null, left, node("n1").on(OLD).in(UpgradeState.DRAIN_REQUIRED, ago(5))
                .ann(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE));
        assertEquals("upgrade-failed", state(p, "n1"));
        String failure = p.nodePatches().get(0).annotations().get(NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(failure.startsWith("uncordoned during its drain: spec.unschedulable was cleared by someone other "
                + "than npu-lifecycle (kubectl uncordon or another controller"), failure);
        assertTrue(failure.contains("its cordon (made by npu-lifecycle, whose record npu.openfuyao.com/cordoned-by="
                + "npu-lifecycle is still on the Node) was removed by someone else"), failure);
        assertTrue(failure.contains("to upgrade it: kubectl label node n1 npu.openfuyao.com/driver-upgrade-state="
                + "upgrade-required --overwrite"), failure);
        assertTrue(failure.contains("pods left: ml/a"), failure);
        assertTrue(p.nodePatches().get(0).annotations().containsKey(NodeKeys.CORDONED_BY)
                && p.nodePatches().get(0).annotations().get(NodeKeys.CORDONED_BY) == null, "the stale record goes");
        List<String> ev = events(p, "n1");
        assertTrue(ev.stream().anyMatch(e -> e.startsWith(NodeKeys.EVENT_DRAIN_FAILED + ": drain stopped for the "
                + "driver upgrade to " + T + ": the node was uncordoned by someone else")), ev.toString());
        assertTrue(ev.stream().anyMatch(e -> e.startsWith(NodeKeys.EVENT_DRIVER_UPGRADE_FAILED)), ev.toString());
        assertEquals(List.of(), p.status().getSlotHolders(), "the slot is given back");
        assertEquals(Map.of(), p.releasing(), "nothing to uncordon");
        assertTrue(p.crEvents().stream().anyMatch(e -> e.reason().equals("NodeUpgradeFailed")));
    }

    /** The cordon removed was an administrator's (no record of ours): the same answer, named as such. */
    @Test
    void aNodeWhoseAdministratorsCordonWasRemovedDuringItsDrainFailsToo() {
        Plan p = plan(null, Map.of(), node("n1").on(OLD).in(UpgradeState.DRAIN_REQUIRED, ago(5)));
        assertEquals("upgrade-failed", state(p, "n1"));
        String failure = p.nodePatches().get(0).annotations().get(NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(failure.contains("the cordon it had (an administrator's, not npu-lifecycle's) was removed"),
                failure);
        assertTrue(!p.nodePatches().get(0).annotations().containsKey(NodeKeys.CORDONED_BY), "no record to remove");
    }

    /**
     * A wedged node (a recovery request) uncordoned during its upgrade drain is left to the recovery's rule, which
     * cordons it again: it stays drain-required (the controller evicts nothing while it is schedulable).
     */
    @Test
    void aWedgedNodeUncordonedDuringItsUpgradeDrainWaitsForTheRecoveryToCordonItAgain() {
        Plan p = plan(null, Map.of(), node("n1").on(OLD).in(UpgradeState.DRAIN_REQUIRED, ago(5))
                .ann(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE).label(NodeKeys.REBOOT_REQUIRED, "true")
                .ann(NodeKeys.REBOOT_REASON, "recovery"));
        assertEquals("drain-required", state(p, "n1"));
    }
}
