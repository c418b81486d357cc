package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/**
 * Each invariant breaks on what it forbids and holds otherwise, read from the API server's Nodes and Events (the
 * embedded mock) and a node's simulator records (its state file), with the scenario's actions reported as the runner
 * reports them.
 */
class InvariantsTest {

    static final Instant START = Instant.parse("2026-12-07T00:00:00Z");

    @TempDir
    Path dir;
    EmbeddedCluster api;
    Cluster sim;

    @BeforeEach
    void start() throws IOException {
        api = EmbeddedCluster.start();
        api.addNode(EmbeddedCluster.npuNode("node-0"));
        sim = new Cluster(api, dir.resolve("node-0"));
        host(0, 0);
    }

    @AfterEach
    void stop() {
        api.close();
    }

    void host(int reboots, int violations) throws IOException {
        Files.createDirectories(dir.resolve("node-0/simulator"));
        Files.writeString(dir.resolve("node-0/simulator/state.properties"), "reboots=" + reboots + "\nviolations="
                + violations + "\n");
    }

    void event(String reason, String message, long atSecond) {
        api.client().v1().events().inNamespace("default").resource(new EventBuilder().withNewMetadata()
                .withGenerateName("e-").withNamespace("default").endMetadata().withNewInvolvedObject().withKind("Node")
                .withName("node-0").endInvolvedObject().withReason(reason).withMessage(message).withType("Normal")
                .withLastTimestamp(START.plusSeconds(atSecond).toString()).withCount(1).build()).create();
    }

    Invariants invariants(Map<String, Object> policy) {
        return new Invariants(Invariants.ALL, sim, Map.of("node-0", 0), START.getEpochSecond(), policy);
    }

    static Map<String, Object> auto(boolean upgrade, boolean recover) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("upgradePolicy", Map.of("autoUpgrade", upgrade));
        d.put("recoveryPolicy", Map.of("autoRecover", recover));
        return d;
    }

    @Test
    void aRebootWithoutItsEventsBreaksAnnouncedAtTheEnd() throws IOException {
        Invariants inv = invariants(auto(true, true));
        host(1, 0);
        assertNull(inv.check(10, false), "within the lag for Events written late");
        Invariants.Violation v = inv.check(20, true);
        assertEquals(Invariants.ANNOUNCED, v.name(), v.toString());
        assertTrue(v.detail().contains("node-0 rebooted 1 time(s) but has 0 RebootRequired and 0 Rebooting"), v.detail());
    }

    @Test
    void anAutomaticRebootWhileThePolicySwitchWasOffBreaksAuthorised() throws IOException {
        Invariants inv = invariants(auto(false, true));
        host(1, 0);
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=upgrade", 990);
        event(NodeKeys.EVENT_REBOOTING, "rebooting: reason=upgrade, authorised by autoUpgrade=true, leaving boot b",
                1000);
        Invariants.Violation v = inv.check(1010, false);
        assertEquals(Invariants.AUTHORISED, v.name(), v.toString());
        assertTrue(v.detail().contains("by autoUpgrade=true, but the scenario had autoUpgrade off"), v.detail());

        Invariants on = invariants(auto(false, true));
        on.did(new Action.SetPolicy(new Action.Policy(true, null, null, null, null, null, null, null, null, null)),
                800);
        assertNull(on.check(1010, true), "switched on 200 s before the reboot");
    }

    @Test
    void moreRebootsByApprovalThanApprovalsBreaksOnePerApproval() throws IOException {
        Invariants inv = invariants(auto(false, false));
        host(1, 0);
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=recovery", 90);
        event(NodeKeys.EVENT_REBOOTING, "rebooting: reason=recovery, authorised by approval (CONSUMED), leaving boot b",
                100);
        assertEquals(Invariants.ONE_PER_APPROVAL, inv.check(110, false).name());
        Invariants approved = invariants(auto(false, false));
        approved.did(new Action.Approve("node-0"), 50);
        assertNull(approved.check(110, true));
    }

    @Test
    void anAdministratorsCordonLiftedBreaksCordonKept() {
        Invariants inv = invariants(auto(true, true));
        inv.did(new Action.Cordon("node-0"), 0);
        assertNull(inv.check(60, false), "within the lag of the cordon step");
        assertEquals(Invariants.ADMIN_CORDON, inv.check(500, false).name(), "the Node is schedulable");
        Invariants kept = invariants(auto(true, true));
        kept.did(new Action.Cordon("node-0"), 0);
        sim.workloads().setUnschedulable("node-0", true);
        assertNull(kept.check(500, false));
        kept.did(new Action.Uncordon("node-0"), 600);
        sim.workloads().setUnschedulable("node-0", false);
        assertNull(kept.check(900, true));
    }

    /** kubectl cordon of a node npu-lifecycle holds cordoned changes nothing: lifting that cordon later breaks nothing. */
    @Test
    void aCordonStepOnOurCordonIsNoAdministratorsCordon() {
        sim.annotate("node-0", NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE);
        sim.workloads().setUnschedulable("node-0", true);
        Invariants inv = invariants(auto(true, true));
        inv.did(new Action.Cordon("node-0"), 0);
        sim.annotate("node-0", NodeKeys.CORDONED_BY, null);
        sim.workloads().setUnschedulable("node-0", false);
        assertNull(inv.check(500, true), "our cordon, lifted when our work ended");
    }

    @Test
    void aSimulatorViolationBreaksNoLoadAndTheFirstBrokenStays() throws IOException {
        Invariants inv = invariants(auto(true, true));
        host(0, 1);
        Invariants.Violation v = inv.check(5, false);
        assertEquals(Invariants.NO_LOAD, v.name());
        host(0, 0);
        assertEquals(v, inv.check(6, true), "the first broken is kept");
    }

    /** The cluster the invariants read: the embedded API server and one node whose records are files. */
    static final class Cluster implements ScenarioCluster {
        private final EmbeddedCluster api;
        private final Map<String, ScenarioNode> nodes = new LinkedHashMap<>();

        Cluster(EmbeddedCluster api, Path root) {
            this.api = api;
            nodes.put("node-0", new ScenarioNode() {
                public String name() {
                    return "node-0";
                }

                public Path root() {
                    return root;
                }

                public io.npulifecycle.simulator.harness.Jolokia jolokia() {
                    throw new IllegalStateException("no node agent");
                }

                public void killAgent() {
                }

                public void jumpClock(Duration delta) {
                }

                public void markersReadOnly(boolean on) {
                }

                public void markersFull(boolean on) {
                }
            });
        }

        public void start(List<String> extraVersions) {
        }

        public Map<String, ? extends ScenarioNode> nodes() {
            return nodes;
        }

        public ClusterBackend cluster() {
            return api;
        }

        public Workloads workloads() {
            return new Workloads(api);
        }

        public CrashLoopException crashLoop() {
            return null;
        }

        public Path writeJolokiaCredentials(ScenarioNode n) {
            return null;
        }

        public void killControlPlane(String which, boolean restart) {
        }

        public void startControlPlane(int replica) {
        }

        public void unreachableFor(Duration wall) {
        }

        public String unavailableFor(Duration wall) {
            return null;
        }

        public String apiGone(int failNext) {
            return null;
        }

        public String apiFaultSummary() {
            return null;
        }

        public void jumpControlPlaneClock(Duration delta) {
        }

        public void registerNode(String node) {
        }

        public String metrics(ScenarioNode node) {
            return "";
        }

        public void close() {
        }
    }
}
