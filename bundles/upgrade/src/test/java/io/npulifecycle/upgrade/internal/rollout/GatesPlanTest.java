package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.ImageStatus;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.NodePatch;
import io.npulifecycle.upgrade.internal.plan.Plan;

import io.npulifecycle.api.upgrade.spec.UpgradeState;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.model.NodeIssue;

import static io.npulifecycle.upgrade.internal.rollout.PlanRows.OLD;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.T;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.node;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The gates of a slot in {@link Reconciler#plan}, pure: the maintenance window ({@link WindowGate}), the blocking
 * pods and {@code holdNodesWithNpuWorkloads}; and the bad input of each, refused whole ({@link SpecReader}).
 */
class GatesPlanTest {

    /** 2026-11-30 is a Monday; the window below is open 01:00-05:00 UTC. */
    static final Instant INSIDE = Instant.parse("2026-11-30T02:00:00Z");
    static final Instant OUTSIDE = Instant.parse("2026-11-30T05:00:00Z");
    static final Map<String, Object> WINDOW = Map.of("startTime", "01:00", "endTime", "05:00");

    static Map<String, Object> policy(boolean auto, Object... kv) {
        Map<String, Object> up = new HashMap<>();
        up.put("autoUpgrade", auto);
        for (int i = 0; i < kv.length; i += 2) {
            up.put((String) kv[i], kv[i + 1]);
        }
        return up;
    }

    static Plan plan(Map<String, Object> up, Instant now, Map<String, List<String>> npuWorkloads,
            Map<String, List<String>> blocking, PlanRows.NodeSpec... ns) {
        SpecReader.Result spec = SpecReader.parse(Map.of("driver", Map.of("version", T, "upgradePolicy", up)));
        assertTrue(spec.valid(), spec.problems().toString());
        Map<String, ImageStatus> images = new HashMap<>();
        images.put(PlanRows.image(T), ImageStatus.PRESENT);
        return Reconciler.plan(Inputs.builder().generation(5L).spec(spec)
                .nodes(java.util.Arrays.stream(ns).map(PlanRows.NodeSpec::build).toList()).npuWorkloads(npuWorkloads)
                .images(images).now(now).blockingPods(blocking).build());
    }

    static NodePatch patch(Plan p, String node) {
        return p.nodePatches().stream().filter(x -> x.node().equals(node)).findFirst().orElse(null);
    }

    @Test
    void aSlotIsGrantedOnlyInsideTheWindowAndTheNodeLearnsWhenItCloses() {
        Plan outside = plan(policy(true, "maintenanceWindow", WINDOW), OUTSIDE, Map.of(), Map.of(),
                node("n0").done(), node("n1").on(OLD).state(UpgradeState.UPGRADE_REQUIRED));
        assertEquals("upgrade-required", outside.nodeStates().get("n1"));
        List<NodeIssue> waiting = outside.status().getWaitingForWindow();
        assertEquals("n1", waiting.get(0).getName());
        assertEquals("maintenance window every day 01:00-05:00 UTC closed; opens at 2026-12-01T01:00:00Z",
                waiting.get(0).getReason());
        assertEquals(Instant.parse("2026-12-01T01:00:00Z"), outside.nextWakeup(), "a plan again at the opening");

        Plan inside = plan(policy(true, "maintenanceWindow", WINDOW), INSIDE, Map.of(), Map.of(),
                node("n0").done(), node("n1").on(OLD).state(UpgradeState.UPGRADE_REQUIRED));
        assertEquals("cordon-required", inside.nodeStates().get("n1"));
        assertEquals("2026-11-30T05:00:00Z", patch(inside, "n1").annotations().get(NodeKeys.UPGRADE_REBOOT_BEFORE),
                "the grant's patch says when the reboot must have started");
        assertTrue(inside.status().getWaitingForWindow().isEmpty());
    }

    @Test
    void theWindowClosingBeforeTheRebootReleasesTheSlotWithAnEvent() {
        Map<String, Object> up = policy(true, "maintenanceWindow", WINDOW);
        PlanRows.NodeSpec draining = node("n1").on(OLD).in(UpgradeState.DRAIN_REQUIRED, OUTSIDE.minusSeconds(60))
                .cordoned().ann(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE)
                .ann(NodeKeys.UPGRADE_REBOOT_BEFORE, "2026-11-30T05:00:00Z");
        Plan p = plan(up, OUTSIDE, Map.of(), Map.of(), draining);
        assertEquals("upgrade-required", p.nodeStates().get("n1"), "not restarted: back to waiting");
        NodePatch np = patch(p, "n1");
        assertTrue(np.annotations().containsKey(NodeKeys.UPGRADE_REBOOT_BEFORE));
        assertNull(np.annotations().get(NodeKeys.UPGRADE_REBOOT_BEFORE), "removed with the slot");
        String ev = np.events().stream().filter(e -> e.reason().equals(NodeKeys.EVENT_OUTSIDE_MAINTENANCE_WINDOW))
                .findFirst().orElseThrow().message();
        assertTrue(ev.contains("closed before the upgrade reboot started (drain-required): slot released, uncordoned")
                && ev.endsWith("opens at 2026-12-01T01:00:00Z"), ev);

        PlanRows.NodeSpec staged = node("n2").on(OLD).in(UpgradeState.REBOOT_REQUIRED, OUTSIDE.minusSeconds(60))
                .agentAsksReboot().cordoned();
        Plan q = plan(policy(false, "maintenanceWindow", WINDOW), OUTSIDE, Map.of(), Map.of(), staged);
        assertEquals("reboot-deferred", q.nodeStates().get("n2"), "staged: the node agent makes no upgrade reboot");
        assertTrue(patch(q, "n2").events().get(0).message().contains("left cordoned (not cordoned by npu-lifecycle)"));

        PlanRows.NodeSpec rebooting = node("n3").on(OLD).in(UpgradeState.REBOOTING, OUTSIDE.minusSeconds(60))
                .rebootingFrom("boot-1");
        assertEquals("rebooting", plan(up, OUTSIDE, Map.of(), Map.of(), rebooting).nodeStates().get("n3"),
                "a reboot that started inside the window goes on");
    }

    @Test
    void aReleasedNodeGoesAgainAtTheNextOpening() {
        PlanRows.NodeSpec deferred = node("n1").on(OLD).in(UpgradeState.REBOOT_DEFERRED, OUTSIDE).agentAsksReboot();
        Map<String, Object> up = policy(true, "maintenanceWindow", WINDOW);
        assertEquals("reboot-deferred", plan(up, OUTSIDE.plusSeconds(3600), Map.of(), Map.of(), deferred)
                .nodeStates().get("n1"));
        assertEquals("cordon-required", plan(up, Instant.parse("2026-12-01T01:00:00Z"), Map.of(), Map.of(), deferred)
                .nodeStates().get("n1"), "cordoned and drained again: pods may have landed");
    }

    @Test
    void aBlockingPodHoldsTheSlotAndIsNamed() {
        Map<String, Object> up = policy(true, "blockingPodSelector", "app=critical");
        Plan p = plan(up, INSIDE, Map.of(), Map.of("n1", List.of("ml/db-0")),
                node("n1").on(OLD).state(UpgradeState.UPGRADE_REQUIRED), node("n2").on(OLD)
                        .state(UpgradeState.UPGRADE_REQUIRED));
        assertEquals("upgrade-required", p.nodeStates().get("n1"));
        assertEquals("cordon-required", p.nodeStates().get("n2"), "the slot goes to the next node");
        assertEquals("blocking pods (blockingPodSelector app=critical): ml/db-0",
                p.status().getBlockedNodes().get(0).getReason());
        assertTrue(p.status().getHeldNodes().isEmpty(), "not a preflight hold");
        assertEquals("cordon-required", plan(up, INSIDE, Map.of(), Map.of(), node("n1").on(OLD)
                .state(UpgradeState.UPGRADE_REQUIRED)).nodeStates().get("n1"), "the pod gone: the slot");
    }

    @Test
    void npuWorkloadsHoldTheirNodeUnlessHoldNodesWithNpuWorkloadsIsFalse() {
        Map<String, List<String>> npu = Map.of("n1", List.of("ml/train-0"));
        PlanRows.NodeSpec n1 = node("n1").on(OLD).state(UpgradeState.UPGRADE_REQUIRED);
        Plan held = plan(policy(true), INSIDE, npu, Map.of(), n1);
        assertEquals("upgrade-required", held.nodeStates().get("n1"));
        assertTrue(held.status().getHeldNodes().get(0).getReason().contains("ml/train-0"));
        Plan drained = plan(policy(true, "holdNodesWithNpuWorkloads", false), INSIDE, npu, Map.of(), n1);
        assertEquals("cordon-required", drained.nodeStates().get("n1"), "the drain evicts them");
        assertTrue(drained.status().getHeldNodes().isEmpty());
    }

    static List<String> refused(Map<String, Object> up) {
        SpecReader.Result r = SpecReader.parse(Map.of("driver", Map.of("version", T, "upgradePolicy", up)));
        assertFalse(r.valid(), "refused: " + up);
        return r.problems();
    }

    @Test
    void badInputIsRefusedWholeNamingTheField() {
        String f = "spec.driver.upgradePolicy.";
        assertTrue(refused(policy(true, "blockingPodSelector", "app in (a")).get(0)
                .startsWith(f + "blockingPodSelector: 'app in (a' does not parse"));
        assertTrue(refused(policy(true, "blockingPodSelector", "")).get(0)
                .startsWith(f + "blockingPodSelector: '' is not a label selector"));
        assertTrue(refused(policy(true, "maintenanceWindow", Map.of("startTime", "01:00", "endTime", "05:00",
                "timeZone", "Nowhere/Land"))).get(0).startsWith(f + "maintenanceWindow.timeZone: 'Nowhere/Land'"));
        assertTrue(refused(policy(true, "maintenanceWindow", Map.of("startTime", "01:00", "endTime", "01:00")))
                .get(0).startsWith(f + "maintenanceWindow: startTime and endTime are both 01:00"));
        assertTrue(refused(policy(true, "maintenanceWindow", Map.of("days", "mo,funday", "startTime", "01:00",
                "endTime", "05:00"))).get(0).startsWith(f + "maintenanceWindow.days: 'funday' is not a day"));
        assertTrue(refused(policy(true, "maintenanceWindow", Map.of("startTime", "01:00", "endTime", "05:00",
                "enforce", true))).get(0).startsWith(f + "maintenanceWindow.enforce: unknown field"));
        assertTrue(refused(policy(true, "holdNodesWithNpuWorkloads", "no")).get(0)
                .startsWith(f + "holdNodesWithNpuWorkloads: 'no' is not a boolean"));
        assertTrue(refused(policy(true, "holdNodesWithNpuWorkloads", false, "drain", Map.of("enable", false))).get(0)
                .startsWith(f + "holdNodesWithNpuWorkloads: false needs " + f + "drain.enable: true"));
        assertTrue(refused(policy(true, "drain", Map.of("onTimeout", "maybe"))).get(0)
                .startsWith(f + "drain.onTimeout: 'maybe' is not an action"));
        assertEquals(2, refused(policy(true, "blockingPodSelector", "=x", "maintenanceWindow", Map.of("startTime",
                "1", "endTime", "05:00"))).size(), "every problem, not the first only");
    }
}
