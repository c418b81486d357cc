package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * A reconcile that runs before the informer delivered the controller's own patches plans from the patch responses,
 * not from the older copies: no 409 Conflict from re-sending a patch guarded by an old resourceVersion (0.11 per
 * node upgrade at 5,000 nodes, maxParallelUpgrades 50), and no slot counted free that our patch just took.
 */
class OwnWritesTest {

    ClusterFixture c;

    ScaledTestClock time;

    NodeAgentEmulator emulator;

    @AfterEach
    void close() {
        if (c != null) {
            c.close();
        }
    }

    private static Node node(String name, String rv, String state) {
        return new NodeBuilder().withNewMetadata().withName(name).withResourceVersion(rv)
                .addToLabels(NodeKeys.DRIVER_UPGRADE_STATE, state).endMetadata().build();
    }

    @Test
    void responseReplacesOnlyTheCopiesItSupersedes() {
        OwnWrites w = new OwnWrites();
        Node a1 = node("a", "1", "upgrade-required");
        Node b7 = node("b", "7", "upgrade-required");
        assertSame(a1, List.copyOf(w.view(List.of(a1, b7))).get(0), "nothing recorded: the informer's copies");

        Node a2 = node("a", "2", "pod-restart-required");
        w.patched("a", "1", a2);
        assertSame(a2, first(w.view(List.of(a1, b7))), "informer still at rv 1: our response (rv 2)");
        Node a3 = node("a", "3", "reboot-required");
        w.patched("a", "2", a3); // patched again from our own copy
        assertSame(a3, first(w.view(List.of(a1, b7))), "informer two writes behind: still our newest response");
        assertSame(a3, first(w.view(List.of(node("a", "2", "pod-restart-required"), b7))), "one write behind");
        Node a3cached = node("a", "3", "reboot-required");
        assertSame(a3cached, first(w.view(List.of(a3cached, b7))), "caught up: the informer's copy again");
        assertEquals(0, w.size(), "forgotten once caught up");

        w.patched("a", "3", node("a", "4", "rebooting"));
        Node a5 = node("a", "5", "rebooting"); // the agent wrote after us
        assertSame(a5, first(w.view(List.of(a5, b7))), "a later version than ours: the informer's copy");
        w.patched("b", "7", node("b", "8", "pod-restart-required"));
        w.view(List.of(a5)); // b deleted
        assertEquals(0, w.size(), "a node gone from the informer is forgotten");
        w.patched("a", "5", null);
        assertEquals(0, w.size(), "no response, nothing recorded");
        w.patched("a", "5", node("a", "6", "done"));
        assertEquals("6", w.currentVersion(a5), "informer at 5: a patch now goes with our 6");
        assertEquals("9", w.currentVersion(node("a", "9", "rebooting")), "informer at 9 (the agent wrote): 9");
        assertEquals(1, w.size(), "currentVersion forgets nothing");
    }

    /**
     * The grant patch of n1 is rejected (someone wrote n1 after the informer's copy): its driver pod is not deleted,
     * so the node agent never stages (and with autoUpgrade reboots) a node that holds no slot.
     */
    @Test
    void noDriverPodDeletedWhenTheGrantPatchFails() {
        UpgradeController uc = frozenController();
        c.admin().nodes().withName("n1").edit(n -> {
            n.getMetadata().getAnnotations().put("example.com/touched", "yes");
            return n;
        });
        uc.setLeader(true);
        uc.reconcile();
        Map<String, Long> w = uc.writeCounts();
        assertEquals(1L, w.get("conflicts(409)"), "n1's grant rejected: " + w);
        assertEquals(0L, w.getOrDefault("pod-delete", 0L), "no driver pod deleted without the slot: " + w);
        assertEquals(1, c.admin().pods().inNamespace(NodeAgentEmulator.NS).list().getItems().stream()
                .filter(p -> "n1".equals(p.getSpec().getNodeName())).count(), "n1's driver pod is still there");
        assertEquals(null, c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
    }

    /**
     * @return a controller (not leader yet) on 3 nodes and the CR (maxParallelUpgrades 1) whose informers listed them
     *         but never watch: the API server answers every watch request 503 (fabric8 retries it with a backoff), so
     *         the caches stay as the first lists left them. The clock runs 1,000 times slower than wall time, so no
     *         resync rebuilds the informers and no debounced reconcile runs during the test; it calls reconcile().
     */
    private UpgradeController frozenController() {
        c = ClusterFixture.startEmbedded();
        time = c.own(new ScaledTestClock(0.001));
        emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(3, "24.1.0");
        Map<String, Object> spec = driver("25.5.0", true, 1, "100%", null);
        // the grant's own patch is what this counts: without the drain's cordon-required and drain-required steps
        @SuppressWarnings("unchecked")
        Map<String, Object> up = (Map<String, Object>) spec.get("upgradePolicy");
        up.put("drain", Map.of("enable", false));
        c.createDriver(spec);
        // no emulated agent runs here: the controller is the only client that watches
        c.embedded().faults().injectFault((method, path) -> path.contains("watch=true") ? 503 : 0);
        UpgradeController uc = c.own(new UpgradeController(c.client("npu-controller"), time,
                LeaderAndScaleTest.cfg(false, false, "x"), null));
        uc.start();
        // the preflight's answers (the ImageWhiteList: not served here) arrive on its own thread: the reconciles below
        // go by them
        Waits.until("informers synced, the CR seen, the preflight passed", Duration.ofSeconds(30), () -> {
            uc.reconcile(); // not leader: computes the view only
            return uc.hasSynced() && "25.5.0".equals(uc.snapshot().target())
                    && uc.snapshot().conditions().stream().anyMatch(k -> k.startsWith("PreflightPassed=True"));
        });
        return uc;
    }

    private static Node first(Collection<Node> nodes) {
        return new ArrayList<>(nodes).get(0);
    }

    /**
     * The informers are frozen after the CR arrived (as if their watch events lagged behind our writes): the first
     * reconcile grants n1 and labels n2, n3 upgrade-required; the next reconciles see those writes and send nothing.
     * Without the overlay each of them re-sent the three patches with the old resourceVersions (3 × 409), and n1 did
     * not count as in flight.
     */
    @Test
    void reconcileBeforeTheWatchEventsArriveSendsNoStalePatch() {
        UpgradeController uc = frozenController(); // no emulated agents: nothing else writes the nodes
        uc.setLeader(true);
        uc.reconcile();
        uc.reconcile();
        uc.reconcile();
        Map<String, Long> w = uc.writeCounts();
        assertEquals(0L, w.get("conflicts(409)"), "no stale patch: " + w);
        assertEquals(3L, w.get("node-patch"), "one patch per node: " + w);
        assertEquals(1L, w.get("pod-delete"), "one driver pod deleted (n1's): " + w);
        assertEquals("pod-restart-required", c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
        assertEquals("upgrade-required", c.label("n2", NodeKeys.DRIVER_UPGRADE_STATE));
        assertEquals("upgrade-required", c.label("n3", NodeKeys.DRIVER_UPGRADE_STATE));
        assertEquals(Map.of("n1", "pod-restart-required", "n2", "upgrade-required", "n3", "upgrade-required"),
                uc.snapshot().nodeStates(), "the view follows our own writes");
    }
}
