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
import io.fabric8.kubernetes.api.model.Pod;
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
        // the runner's order: doing, the write, a check before did (chaos seed 4 on the mock saw it) holds
        Invariants raced = invariants(auto(true, true));
        sim.workloads().setUnschedulable("node-0", true);
        raced.did(new Action.Cordon("node-0"), 0);
        raced.doing(new Action.Uncordon("node-0"));
        sim.workloads().setUnschedulable("node-0", false);
        assertNull(raced.check(500, false), "the uncordon under way");
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


    // ---- no-upgrade-reboot-outside-window ----

    /** Open every day 01:00-02:00 UTC: simulated 3600 s to 7200 s of each day of the run (START is 00:00 UTC). */
    static Map<String, Object> window(String start, String end) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("upgradePolicy", Map.of("autoUpgrade", true, "maintenanceWindow", Map.of("startTime", start, "endTime",
                end, "timeZone", "UTC")));
        d.put("recoveryPolicy", Map.of("autoRecover", true));
        return d;
    }

    static final String AUTO_UPGRADE = "rebooting: reason=upgrade, authorised by autoUpgrade=true, leaving boot b";

    @Test
    void anUpgradeRebootOutsideTheWindowBreaksWindow() {
        Invariants inv = invariants(window("01:00", "02:00"));
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=upgrade", 10_700);
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE, 10_800);
        Invariants.Violation v = inv.check(10_810, false);
        assertEquals(Invariants.WINDOW, v.name(), v.toString());
        assertEquals(10_810, v.atSeconds());
        assertTrue(v.detail().startsWith("node-0: an upgrade reboot started at simulated 10800s "
                + "(2026-12-07T03:00:00Z), outside the maintenance window every day 01:00-02:00 UTC (next opening "
                + "2026-12-08T01:00:00Z)"), v.detail());
        assertTrue(v.detail().endsWith("Rebooting Event: " + AUTO_UPGRADE), v.detail());
    }

    /**
     * Inside the window, stamped within the slack after its close (the node agent looked at the window just before),
     * a recovery reboot at any time, and no window at all: each holds. Past the slack it breaks.
     */
    @Test
    void rebootsInsideTheWindowOrNotForTheUpgradeHoldWindow() {
        Invariants inside = invariants(window("01:00", "02:00"));
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=upgrade", 5_300);
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE, 5_400);
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=recovery", 10_700);
        event(NodeKeys.EVENT_REBOOTING, "rebooting: reason=recovery, authorised by autoRecover=true, leaving boot c",
                10_800);
        assertNull(inside.check(10_900, false), "inside the window; the recovery reboot is not the window's");
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE.replace("boot b", "boot d"),
                7_199 + Invariants.REBOOT_START_SLACK_SECONDS);
        assertNull(inside.check(10_910, false), "stamped within the slack after the close at 7200 s (exclusive)");
        assertNull(invariants(auto(true, true)).check(10_920, false), "no window: every time is the window's");
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE.replace("boot b", "boot e"),
                7_200 + Invariants.REBOOT_START_SLACK_SECONDS);
        Invariants.Violation v = inside.check(10_930, false);
        assertEquals(Invariants.WINDOW, v.name(), v.toString());
        assertTrue(v.detail().contains("simulated 7320s"), v.detail());
    }

    /**
     * A window moved by setPolicy reaches the controller and the node agents within {@value
     * Invariants#POLICY_LAG_SECONDS} s: the old window still covers a reboot in that time, not after.
     */
    @Test
    void aWindowChangeTakesThePolicyLag() {
        Action.UpgradePolicy later = new Action.UpgradePolicy(null, null, null, null, null, Map.of("startTime", "03:00",
                "endTime", "04:00"), null, null);
        Action.SetPolicy move = new Action.SetPolicy(new Action.Policy(null, null, null, null, null, null, null, null,
                later, null));
        Invariants inLag = invariants(window("01:00", "02:00"));
        inLag.did(move, 5_000);
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=upgrade", 5_100);
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE, 4_999 + Invariants.POLICY_LAG_SECONDS);
        assertNull(inLag.check(5_400, false), "the old window, open, may still be in force");

        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE.replace("boot b", "boot c"),
                5_000 + Invariants.POLICY_LAG_SECONDS);
        Invariants.Violation v = inLag.check(5_410, false);
        assertEquals(Invariants.WINDOW, v.name(), v.toString());
        assertTrue(v.detail().contains("at simulated 5300s (2026-12-07T01:28:20Z), outside the maintenance window "
                + "every day 03:00-04:00 UTC (next opening 2026-12-07T03:00:00Z) in force from 5000s to then"),
                v.detail());
    }

    /**
     * A window removed ({@code maintenanceWindow: null}) judges nothing after the policy lag; a CR deleted judges
     * nothing while it is gone, and created again ({@code createCr}) brings back the policy the steps made.
     */
    @Test
    void aRemovedWindowJudgesNothingAndACreatedCrJudgesAgain() throws Exception {
        Action.SetPolicy remove = (Action.SetPolicy) Scenario.parse("r.yaml", "steps:\n  - at: 0s\n    setPolicy: "
                + "{upgradePolicy: {maintenanceWindow: null}}\n").steps.get(0).action();
        Invariants removed = invariants(window("01:00", "02:00"));
        removed.did(remove, 9_000);
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=upgrade", 9_500);
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE, 10_800);
        assertNull(removed.check(10_900, false), "no window in force at 10800 s");

        Invariants recreated = invariants(window("01:00", "02:00"));
        recreated.did(new Action.DeleteCr(), 9_000);
        assertNull(recreated.check(10_900, false), "the CR deleted: nothing judged");
        recreated.did(new Action.CreateCr(), 10_000);
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE.replace("boot b", "boot c"), 10_000
                + Invariants.POLICY_LAG_SECONDS + 100);
        Invariants.Violation v = recreated.check(10_910, false);
        assertEquals(Invariants.WINDOW, v.name(), "the window of the CR created again: " + v);
    }

    /**
     * A node agent restarted after it consumed an approval reboots on it without looking at the window again (the
     * consumption is the point of no return): the reboot started at the consumption. A window the product refuses
     * (InvalidSpec) applies nothing, so nothing is judged.
     */
    @Test
    void aConsumedApprovalStartsTheRebootAndARefusedWindowJudgesNothing() {
        Invariants inv = invariants(window("01:00", "02:00"));
        inv.did(new Action.Approve("node-0"), 7_000);
        event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=upgrade", 6_900);
        event(NodeKeys.EVENT_REBOOTING, "rebooting: reason=upgrade, authorised by approval consumed at "
                + START.plusSeconds(7_150) + " (before a runtime restart), leaving boot b", 7_800);
        assertNull(inv.check(7_810, false));

        Invariants refused = invariants(window("25:00", "02:00"));
        refused.did(new Action.Approve("node-0"), 7_000);
        event(NodeKeys.EVENT_REBOOTING, AUTO_UPGRADE, 10_800);
        assertNull(refused.check(10_810, false), "startTime 25:00 is InvalidSpec: no window applied");
    }

    // ---- no-reboot-with-a-protected-pod ----

    Pod pod(String name, String controller) {
        return sim.workloads().addPod(new Action.PodStep("node-0", name, "ml", 0, Map.of("app", name), controller,
                false));
    }

    void budget(String name) {
        sim.workloads().applyPdb(new Action.Pdb(name, "ml", Map.of("app", name), 1, null));
    }

    void upgradeState(String state) {
        sim.workloads().label("node-0", NodeKeys.DRIVER_UPGRADE_STATE, state);
    }

    @Test
    void aRebootWithAProtectedPodOnItBreaksProtected() throws IOException {
        Invariants inv = invariants(auto(true, true));
        upgradeState("drain-required");
        pod("train", null);
        budget("train");
        assertNull(inv.check(100, false), "the first check only records");
        upgradeState("rebooting");
        host(1, 0);
        Invariants.Violation v = inv.check(101, false);
        assertEquals(Invariants.PROTECTED, v.name(), v.toString());
        assertEquals("node-0 rebooted (its reboot count 0 at simulated 100s, 1 at 101s) with pod ml/train on it, not "
                + "evicted, under PodDisruptionBudget ml/train: it was there before its node's drain ended and at both "
                + "checks", v.detail());
    }

    /** The chaos runs' policy is one the product applies: the invariants judge under it. */
    @Test
    void theChaosRunsPolicyIsJudgedProtected() throws Exception {
        Map<String, Object> chaos = Scenario.parse("chaos.yaml", "cluster: {nodes: 1}\npolicy: "
                + ChaosSchedule.DEFAULT_POLICY + "\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n").policy;
        Invariants inv = invariants(chaos);
        pod("train", null);
        budget("train");
        assertNull(inv.check(100, false));
        host(1, 0);
        assertEquals(Invariants.PROTECTED, inv.check(101, false).name());
    }

    /**
     * Evicted between the checks (gone, or terminating), without a budget, a DaemonSet's, landed after the drain
     * ended, or first seen at the reboot's own check: no reboot with a protected pod.
     */
    @Test
    void podsTheDrainDidNotOweOrThatWentHoldProtected() throws IOException {
        Invariants inv = invariants(auto(true, true));
        pod("evicted", null);
        budget("evicted");
        sim.workloads().addPod(new Action.PodStep("node-0", "leaving", "ml", 0, Map.of("app", "leaving"), null,
                false, true, List.of("example.com/hold")));
        budget("leaving");
        pod("nobudget", null);
        pod("logs", "DaemonSet");
        budget("logs");
        assertNull(inv.check(100, false));
        api.client().pods().inNamespace("ml").withName("evicted").withGracePeriod(0).delete();
        api.client().pods().inNamespace("ml").withName("leaving").delete();
        host(1, 0);
        assertNull(inv.check(101, false), "evicted, terminating, no budget, a DaemonSet's");

        upgradeState("reboot-required");
        pod("late", null);
        budget("late");
        assertNull(inv.check(102, false), "landed after the drain: no reboot since the last check");
        host(2, 0);
        assertNull(inv.check(103, false), "landed after the drain ended: not owed to it");

        upgradeState(null);
        host(3, 0);
        pod("new", null);
        budget("new");
        assertNull(inv.check(104, false), "first seen at the reboot's own check");
        assertNull(inv.check(105, false), "a reboot counted at the previous check is not this check's");
    }

    /** A drain disabled or rebooting on its timeout, or a pod outside its selector, may leave a pod on the node. */
    @Test
    void aPolicyThatLeavesPodsHoldsProtected() throws IOException {
        pod("train", null);
        budget("train");
        Action.Drain off = new Action.Drain(false, null, null, null, null, null, null, null, null);
        Action.Drain onTimeoutReboot = new Action.Drain(null, null, null, null, null, null, null, null, "reboot");
        Action.Drain selector = new Action.Drain(null, null, "app=other", null, null, null, null, null, null);
        int reboots = 0;
        for (Action.Drain d : List.of(off, onTimeoutReboot, selector)) {
            Invariants inv = invariants(auto(true, true));
            inv.did(new Action.SetPolicy(new Action.Policy(null, null, null, null, null, null, null, null, null,
                    new Action.RecoveryPolicy(null, null, null, d, null, null, null))), 50);
            assertNull(inv.check(100, false));
            host(++reboots, 0);
            assertNull(inv.check(101, false), d.toString());
        }
        Invariants enabled = invariants(auto(true, true));
        assertNull(enabled.check(100, false));
        host(++reboots, 0);
        assertEquals(Invariants.PROTECTED, enabled.check(101, false).name(), "the default drains");
    }

    // ---- node-agent-memory-bounded ----

    static ScenarioNode.AgentProcess agent(long pid, double mib, boolean probed) {
        return agent(pid, 0, mib, probed);
    }

    static ScenarioNode.AgentProcess agent(long pid, int boot, double mib, boolean probed) {
        return new ScenarioNode.AgentProcess(pid, boot, Math.round(mib * 1024), probed, false);
    }

    @Test
    void aNodeAgentAboveTheChartsLimitBreaksMemory() {
        Invariants inv = invariants(auto(true, true));
        sim.agent = agent(4242, Invariants.MEMORY_LIMIT_MIB, false);
        assertNull(inv.check(10, false), "at the limit");
        sim.agent = agent(4242, Invariants.MEMORY_LIMIT_MIB + 0.5, false);
        Invariants.Violation v = inv.check(11, false);
        assertEquals(Invariants.MEMORY, v.name(), v.toString());
        assertEquals("node-0: the node agent (pid 4242) holds 256.5 MiB resident (VmRSS), above 256 MiB, the memory "
                + "limit of the chart's node-agent container", v.detail());
    }

    /** Growth counts from the first reading after the first probe, per process: a restarted agent starts over. */
    @Test
    void growthAfterTheFirstProbeAboveTheBoundBreaksMemory() {
        long bound = Invariants.MEMORY_GROWTH_MIB;
        Invariants inv = invariants(auto(true, true));
        sim.agent = agent(4242, 40, false);
        assertNull(inv.check(5, false), "starting: no probe yet, no baseline");
        sim.agent = agent(4242, 100, true);
        assertNull(inv.check(10, false));
        sim.agent = agent(4242, 100 + bound, true);
        assertNull(inv.check(3_600, false), "at the bound");
        sim.agent = agent(4243, 120, true);
        assertNull(inv.check(3_700, false), "restarted: a new process");
        sim.agent = agent(4243, 120 + bound, true);
        assertNull(inv.check(7_300, false), "measured from its own first reading");
        sim.agent = agent(4243, 120 + bound + 0.1, true);
        Invariants.Violation v = inv.check(7_400, false);
        assertEquals(Invariants.MEMORY, v.name(), v.toString());
        assertEquals("node-0: the node agent (pid 4243, boot 0) grew from 120.0 MiB resident (VmRSS) at simulated 3700s, "
                + "its "
                + "first reading after its first probe, to " + (120 + bound) + ".1 MiB: " + bound + ".1 MiB, above the "
                + "bound of " + bound + " MiB", v.detail());
        assertEquals(List.of("node-0 (pid 4242, boot 0): 100.0 MiB at 10s (first after its first probe), " + (100 + bound)
                + ".0 at 3600s (last); growth " + bound + ".0 MiB; peak " + (100 + bound) + ".0 MiB at 3600s",
                "node-0 (pid 4243, boot 0): 120.0 MiB at 3700s (first after its first probe), " + (120 + bound)
                        + ".0 at 7300s, " + (120 + bound) + ".1 at 7400s (last); growth " + bound + ".1 MiB; peak "
                        + (120 + bound) + ".1 MiB at 7400s"), inv.memoryReport());
    }

    /**
     * A process the harness signalled to end (its pod replaced, the run's end) is judged no more: its shutdown is not
     * the running agent's memory; the report shows it apart.
     */
    @Test
    void anAgentBeingStoppedIsNotJudgedMemory() {
        Invariants inv = invariants(auto(true, true));
        sim.agent = agent(4242, 120, true);
        assertNull(inv.check(10, false));
        sim.agent = new ScenarioNode.AgentProcess(4242, 0, (Invariants.MEMORY_LIMIT_MIB + 20) * 1024, true, true);
        assertNull(inv.check(20, true));
        assertEquals(List.of("node-0 (pid 4242, boot 0): 120.0 MiB at 10s (first after its first probe), 120.0 at 10s (last); "
                + "growth 0.0 MiB; peak 120.0 MiB at 10s; while going down (not judged): up to "
                + (Invariants.MEMORY_LIMIT_MIB + 20) + ".0 MiB at 20s"), inv.memoryReport());
    }

    /**
     * A simulated reboot restarts the agent's framework inside the same JVM, as a host's reboot restarts the agent:
     * its growth starts over, and what the earlier framework left in the JVM (which a real reboot does not carry) is
     * not held against the container's limit.
     */
    @Test
    void aSimulatedRebootStartsTheAgentOverMemory() {
        long bound = Invariants.MEMORY_GROWTH_MIB;
        Invariants inv = invariants(auto(true, true));
        sim.agent = agent(4242, 0, 100, true);
        assertNull(inv.check(10, false));
        sim.agent = agent(4242, 0, 100 + bound, true);
        assertNull(inv.check(20, false));
        sim.agent = agent(4242, 1, 100 + bound, false);
        assertNull(inv.check(30, false), "restarting: no probe of this boot yet");
        sim.agent = agent(4242, 1, Invariants.MEMORY_LIMIT_MIB - bound + 10, true);
        assertNull(inv.check(40, false));
        sim.agent = agent(4242, 1, Invariants.MEMORY_LIMIT_MIB + 10, true);
        assertNull(inv.check(50, false), "above the limit, but not a fresh JVM's memory; within the bound of its boot");
        sim.agent = agent(4242, 1, Invariants.MEMORY_LIMIT_MIB + 10.1, true);
        Invariants.Violation v = inv.check(60, false);
        assertEquals(Invariants.MEMORY, v.name(), v.toString());
        assertTrue(v.detail().startsWith("node-0: the node agent (pid 4242, boot 1) grew from "
                + (Invariants.MEMORY_LIMIT_MIB - bound + 10) + ".0 MiB resident (VmRSS) at simulated 40s"), v.detail());
        assertTrue(inv.memoryReport().get(1).startsWith("node-0 (pid 4242, boot 1, after a simulated reboot in the same "
                + "JVM): "), inv.memoryReport().toString());
    }

    @Test
    void anAgentNotReadHoldsMemory() {
        Invariants inv = invariants(auto(true, true));
        assertNull(inv.check(10, true));
        assertEquals(List.of(), inv.memoryReport(), "the real node's pod: nothing read");
    }

    /** The peak bound is the chart's: a change of the container's limit must change it too. */
    @Test
    void thePeakBoundIsTheChartsNodeAgentLimit() throws Exception {
        YamlTree.Node values = YamlTree.parse(Files.readString(Path.of("../../charts/npu-lifecycle/values.yaml")));
        Object limit = values.map().get("nodeAgent").map().get("resources").map().get("limits").map().get("memory")
                .value();
        assertEquals(Invariants.MEMORY_LIMIT_MIB + "Mi", limit);
    }

    /**
     * The cluster the invariants read: the embedded API server and one node whose records are files, whose node
     * agent's process is what {@link #agent} says.
     */
    static final class Cluster implements ScenarioCluster {
        private final EmbeddedCluster api;
        private final Map<String, ScenarioNode> nodes = new LinkedHashMap<>();
        /** what {@link ScenarioNode#agentProcess()} of node-0 answers */
        volatile ScenarioNode.AgentProcess agent = ScenarioNode.AgentProcess.UNKNOWN;

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

                public AgentProcess agentProcess() {
                    return agent;
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
