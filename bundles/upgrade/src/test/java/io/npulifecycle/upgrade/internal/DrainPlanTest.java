package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.upgrade.spec.UpgradeState;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.internal.PlanRows.OLD;
import static io.npulifecycle.upgrade.internal.PlanRows.NOW;
import static io.npulifecycle.upgrade.internal.PlanRows.T;
import static io.npulifecycle.upgrade.internal.PlanRows.ago;
import static io.npulifecycle.upgrade.internal.PlanRows.node;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The drain states of {@link Reconciler#plan} ({@link DrainStates}), pure: grant, cordon, drain, timeout. */
class DrainPlanTest {

    static Reconciler.Plan plan(Map<String, Object> drain, Map<String, List<String>> left, PlanRows.NodeSpec... ns) {
        Map<String, Object> up = new HashMap<>();
        up.put("autoUpgrade", true);
        if (drain != null) {
            up.put("drain", drain);
        }
        Map<String, Reconciler.ImageStatus> images = new HashMap<>();
        images.put(PlanRows.image(T), Reconciler.ImageStatus.PRESENT);
        return Reconciler.plan(new Reconciler.Inputs(5L, SpecReader.parse(Map.of("driver", Map.of("version", T,
                "upgradePolicy", up))), false, null, java.util.Arrays.stream(ns).map(PlanRows.NodeSpec::build)
                        .toList(), Map.of(), Map.of(), images, Map.of(), Set.of(), NOW, Map.of(), left));
    }

    static String state(Reconciler.Plan p, String node) {
        return p.nodeStates().get(node);
    }

    static List<String> events(Reconciler.Plan p, String node) {
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
        Reconciler.Plan blocked = plan(null, Map.of("n1", List.of("ml/a (PodDisruptionBudget ml/p allows no "
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
        Reconciler.Plan failed = plan(Map.of("timeoutSeconds", 60), left, node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(61)).cordoned());
        assertEquals("upgrade-failed", state(failed, "n1"));
        assertTrue(String.valueOf(failed.status().getFailedNodes()).contains("PodDisruptionBudget ml/p"));
        assertTrue(events(failed, "n1").stream().anyMatch(e -> e.startsWith(NodeKeys.EVENT_DRAIN_FAILED)));
        Reconciler.Plan reboot = plan(Map.of("timeoutSeconds", 60, "onTimeout", "reboot"), left, node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(61)).cordoned());
        assertEquals("pod-restart-required", state(reboot, "n1"));
        assertTrue(events(reboot, "n1").stream().anyMatch(e -> e.startsWith(NodeKeys.EVENT_DRAIN_FAILED)
                && e.contains("onTimeout: reboot")));
        assertEquals("drain-required", state(plan(Map.of("timeoutSeconds", 60), left, node("n1").on(OLD)
                .in(UpgradeState.DRAIN_REQUIRED, ago(59)).cordoned()), "n1"));
    }

    /** A manual-mode plan with the drain enabled (its defaults), maxParallelUpgrades 1, maxUnavailable 1. */
    static Reconciler.Plan manual(PlanRows.NodeSpec... ns) {
        Map<String, Object> up = new HashMap<>();
        up.put("autoUpgrade", false);
        up.put("maxParallelUpgrades", 1);
        up.put("maxUnavailable", 1);
        Map<String, Reconciler.ImageStatus> images = new HashMap<>();
        images.put(PlanRows.image(T), Reconciler.ImageStatus.PRESENT);
        return Reconciler.plan(new Reconciler.Inputs(5L, SpecReader.parse(Map.of("driver", Map.of("version", T,
                "upgradePolicy", up))), false, null, java.util.Arrays.stream(ns).map(PlanRows.NodeSpec::build)
                        .toList(), Map.of(), Map.of(), images, Map.of(), Set.of(), NOW, Map.of(), Map.of()));
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

        Reconciler.Plan next = manual(node("n1").on(OLD).in(UpgradeState.REBOOT_DEFERRED, ago(1)).agentAsksReboot(),
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
}
