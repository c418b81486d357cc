package io.npulifecycle.upgrade.internal.recovery;

import io.npulifecycle.upgrade.internal.drain.DrainWork;

import io.npulifecycle.api.upgrade.spec.DrainSettings;
import io.npulifecycle.api.upgrade.spec.PodSelector;
import io.npulifecycle.api.upgrade.spec.RecoverySettings;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.TaintBuilder;

/**
 * The recovery flow of the control plane ({@link RecoveryPlanner}), pure: taint, storm protection, cordon, drain,
 * grant, validation, suppression, the drain disabled, an administrator's cordon, bad input.
 */
class RecoveryPlanTest {

    static final RecoverySettings DEFAULT = RecoverySettings.DEFAULT;

    /** A Ready NPU node in boot {@code b1}, validated in it. */
    static final class N {
        final String name;
        final Map<String, String> labels = new HashMap<>();
        final Map<String, String> ann = new HashMap<>();
        boolean unschedulable;
        boolean tainted;
        boolean ready = true;

        N(String name) {
            this.name = name;
            labels.put(NodeKeys.NPU_PRESENT, "true");
            ann.put(NodeKeys.BOOT_ID, "b1");
            ann.put(NodeKeys.DRIVER_VALIDATED, "25.5.0@b1");
        }

        N wedged(String chips) {
            labels.put(NodeKeys.REBOOT_REQUIRED, "true");
            ann.put(NodeKeys.REBOOT_REASON, "recovery");
            ann.put(NodeKeys.REBOOT_CHIPS, chips);
            return this;
        }

        N cordonedByUs() {
            unschedulable = true;
            ann.put(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE);
            return this;
        }

        N cordonedByAdmin() {
            unschedulable = true;
            return this;
        }

        N tainted() {
            tainted = true;
            return this;
        }

        N granted(String boot) {
            ann.put(NodeKeys.RECOVERY_REBOOT_GRANTED, boot);
            return this;
        }

        N boot(String boot) {
            ann.put(NodeKeys.BOOT_ID, boot);
            return this;
        }

        N notReady() {
            ready = false;
            return this;
        }

        Node build() {
            NodeBuilder b = new NodeBuilder().withNewMetadata().withName(name).withLabels(labels).withAnnotations(ann)
                    .withResourceVersion("1").endMetadata().withNewSpec().withUnschedulable(unschedulable ? true : null)
                    .endSpec().withNewStatus().addNewCondition().withType("Ready").withStatus(ready ? "True" : "False")
                    .endCondition().endStatus();
            Node n = b.build();
            if (tainted) {
                n.getSpec().setTaints(new ArrayList<>(List.of(new TaintBuilder().withKey(NodeKeys.NPU_UNHEALTHY_TAINT)
                        .withValue("true").withEffect("NoSchedule").build())));
            }
            return n;
        }
    }

    static RecoveryPlanner.Plan plan(RecoverySettings s, Map<String, List<String>> left, N... ns) {
        return RecoveryPlanner.plan(java.util.Arrays.stream(ns).map(N::build).toList(), left, s,
                DrainWork.CORDONED_STATES);
    }

    static RecoveryPlanner.NodePlan of(RecoveryPlanner.Plan p, String node) {
        return p.nodes().stream().filter(x -> x.node().equals(node)).findFirst().orElse(null);
    }

    @Test
    void aWedgedNodeIsTaintedAndCordonedAtOnce() {
        RecoveryPlanner.NodePlan p = of(plan(DEFAULT, Map.of(), new N("n1").wedged("0,3"), new N("n2")), "n1");
        assertEquals(RecoveryPlanner.Step.CORDON, p.step());
        assertTrue(p.taint() && p.cordon());
        assertNull(p.grant());
        assertEquals("0,3", p.chips());
        assertNull(of(plan(DEFAULT, Map.of(), new N("n1").wedged("0"), new N("n2")), "n2"), "a healthy node: nothing");
    }

    @Test
    void aCordonedNodeIsDrainedThenGrantedForItsBoot() {
        RecoveryPlanner.NodePlan draining = of(plan(DEFAULT, Map.of("n1", List.of("ml/train-0 (PodDisruptionBudget "
                + "ml/train allows no disruption now)")), new N("n1").wedged("0").tainted().cordonedByUs()), "n1");
        assertEquals(RecoveryPlanner.Step.DRAIN, draining.step());
        assertNull(draining.grant(), "no grant while a pod of the drain is left");
        assertTrue(draining.detail().contains("PodDisruptionBudget ml/train"), draining.detail());
        assertTrue(draining.holdsCordon());
        RecoveryPlanner.NodePlan drained = of(plan(DEFAULT, Map.of(), new N("n1").wedged("0").tainted()
                .cordonedByUs()), "n1");
        assertEquals(RecoveryPlanner.Step.GRANTED, drained.step());
        assertEquals("b1", drained.grant());
    }

    @Test
    void afterTheRebootTheNodeWaitsForTheValidationThenIsReleased() {
        N rebooted = new N("n1").tainted().cordonedByUs().granted("b1").boot("b2");
        RecoveryPlanner.NodePlan waiting = of(plan(DEFAULT, Map.of(), rebooted), "n1");
        assertEquals(RecoveryPlanner.Step.VALIDATING, waiting.step());
        assertTrue(waiting.taint() && waiting.holdsCordon());
        rebooted.ann.put(NodeKeys.DRIVER_VALIDATED, "25.5.0@b2");
        RecoveryPlanner.NodePlan done = of(plan(DEFAULT, Map.of(), rebooted), "n1");
        assertEquals(RecoveryPlanner.Step.RELEASE, done.step());
        assertFalse(done.taint() || done.holdsCordon());
        assertNull(done.grant());
    }

    @Test
    void aRebootBeingCalledIsNotMistakenForASuppression() {
        N n = new N("n1").tainted().cordonedByUs().granted("b1");
        n.ann.put(NodeKeys.REBOOTING_FROM_BOOT_ID, "b1");
        assertEquals(RecoveryPlanner.Step.VALIDATING, of(plan(DEFAULT, Map.of(), n), "n1").step());
    }

    @Test
    void suppressionUndoesTaintGrantAndCordon() {
        RecoveryPlanner.NodePlan p = of(plan(DEFAULT, Map.of(), new N("n1").tainted().cordonedByUs().granted("b1")),
                "n1");
        assertEquals(RecoveryPlanner.Step.RELEASE, p.step());
        assertFalse(p.taint());
        assertNull(p.grant());
        assertEquals("request withdrawn", p.detail());
    }

    @Test
    void withTheDrainDisabledTheNodeIsOnlyTainted() {
        RecoverySettings off = new RecoverySettings(new DrainSettings(false, false, PodSelector.ALL,
                DrainSettings.DEFAULT.timeout(), -1, false, false, false, false), 25, true);
        RecoveryPlanner.NodePlan p = of(plan(off, Map.of(), new N("n1").wedged("0")), "n1");
        assertEquals(RecoveryPlanner.Step.TAINTED, p.step());
        assertTrue(p.taint());
        assertFalse(p.cordon());
        assertNull(p.grant());
        // the node agent rebooted by itself: tainted until the new boot validates
        assertEquals(RecoveryPlanner.Step.VALIDATING, of(plan(off, Map.of(), new N("n1").tainted().boot("b2")), "n1")
                .step());
    }

    @Test
    void stormProtectionAdmitsUpToMaxUnavailableCountingNodesAlreadyUnavailable() {
        // 8 nodes, 25 %: 2 may be unavailable; n0 is NotReady already, so one wedged node goes, two wait
        N[] ns = new N[8];
        for (int i = 0; i < 8; i++) {
            ns[i] = new N("n" + i);
        }
        ns[0].notReady();
        ns[1].wedged("0");
        ns[2].wedged("1");
        ns[3].wedged("2");
        RecoveryPlanner.Plan p = plan(DEFAULT, Map.of(), ns);
        assertEquals(2, p.limit());
        assertEquals(RecoveryPlanner.Step.CORDON, of(p, "n1").step());
        assertEquals(List.of("n2", "n3"), p.storm());
        assertEquals(RecoveryPlanner.Step.STORM_WAIT, of(p, "n2").step());
        assertTrue(of(p, "n2").taint(), "a waiting node is tainted all the same: no new pod lands on it");
        assertFalse(of(p, "n2").cordon());
        assertTrue(of(p, "n2").detail().contains("maxUnavailable allows 2"), of(p, "n2").detail());
    }

    @Test
    void anAlreadyUnavailableWedgedNodeCostsNothingAndTheLimitIsAtLeastOne() {
        RecoverySettings zero = new RecoverySettings(DrainSettings.DEFAULT, 0, false);
        RecoveryPlanner.Plan p = plan(zero, Map.of(), new N("n1").wedged("0").cordonedByAdmin(),
                new N("n2").wedged("0"), new N("n3").wedged("1"));
        assertEquals(1, p.limit(), "0 means at least 1");
        assertEquals(RecoveryPlanner.Step.GRANTED, of(p, "n1").step(), "cordoned by the admin: drained, granted");
        assertEquals(List.of("n2", "n3"), p.storm(), "n1 is the one unavailable node");
        RecoveryPlanner.Plan notReady = plan(zero, Map.of(), new N("n1").notReady(), new N("n2").wedged("0")
                .notReady(), new N("n3").wedged("0"));
        assertEquals(RecoveryPlanner.Step.CORDON, of(notReady, "n2").step(), "NotReady already: admitted");
        assertEquals(List.of("n3"), notReady.storm());
    }

    @Test
    void anAdminCordonIsNeverOursToLift() {
        RecoveryPlanner.NodePlan p = of(plan(DEFAULT, Map.of(), new N("n1").wedged("0").cordonedByAdmin()), "n1");
        assertFalse(p.cordon(), "already unschedulable: no cordon of ours");
        assertEquals("b1", p.grant());
    }

    @Test
    void theRecoveryFieldsAreValidatedNamingTheField() {
        SpecReader.Result bad = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("maxUnavailable", "lots", "drain", Map.of("timeoutSeconds", 0, "onTimeout", "maybe",
                        "podSelector", "a in (")))));
        assertFalse(bad.valid());
        String all = String.join("; ", bad.problems());
        assertTrue(all.contains("spec.driver.recoveryPolicy.maxUnavailable: 'lots'"), all);
        assertTrue(all.contains("spec.driver.recoveryPolicy.drain.timeoutSeconds"), all);
        assertTrue(all.contains("spec.driver.recoveryPolicy.drain.onTimeout: 'maybe'"), all);
        assertTrue(all.contains("spec.driver.recoveryPolicy.drain.podSelector"), all);
        SpecReader.Result unknown = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("drain", Map.of("enabled", true)))));
        assertTrue(String.join("; ", unknown.problems()).contains("spec.driver.recoveryPolicy.drain.enabled: unknown"),
                unknown.problems().toString());
        SpecReader.Result ok = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("maxUnavailable", 3, "drain", Map.of("enable", false, "scope", "npu")))));
        assertTrue(ok.valid(), ok.problems().toString());
        assertEquals(3, ok.recovery().limit(100));
        assertFalse(ok.recovery().drain().enable());
        assertEquals(Set.of(), Set.copyOf(SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0"))).problems()));
        assertEquals(2, SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0"))).recovery().limit(5),
                "25 % of 5, rounded up");
    }

    /** Every day 06:00-07:00 UTC, enforced unless {@code enforce} is false; with the default drain. */
    static RecoverySettings windowed(boolean enforce) {
        SpecReader.Result r = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("maintenanceWindow", Map.of("startTime", "06:00", "endTime", "07:00", "enforce", enforce)))));
        assertTrue(r.valid(), r.problems().toString());
        return r.recovery();
    }

    static final java.time.Instant CLOSED = java.time.Instant.parse("2026-12-01T05:00:00Z");
    static final java.time.Instant OPEN = java.time.Instant.parse("2026-12-01T06:30:00Z");

    static RecoveryPlanner.Plan plan(RecoverySettings s, java.time.Instant now, Map<String, Long> timedOut,
            Map<String, List<String>> left, N... ns) {
        return RecoveryPlanner.plan(java.util.Arrays.stream(ns).map(N::build).toList(), left, s,
                DrainWork.CORDONED_STATES, now, timedOut);
    }

    @Test
    void anEnforcedClosedWindowHoldsTheCordonDrainAndGrantAndWithdrawsAnUnusedGrant() {
        RecoveryPlanner.NodePlan waiting = of(plan(windowed(true), CLOSED, Map.of(), Map.of(),
                new N("n1").wedged("0")), "n1");
        assertEquals(RecoveryPlanner.Step.WINDOW_WAIT, waiting.step());
        assertTrue(waiting.taint(), "tainted all the same");
        assertFalse(waiting.cordon() || waiting.holdsCordon());
        assertTrue(waiting.detail().contains("maintenance window every day 06:00-07:00 UTC closed "
                + "(recoveryPolicy.maintenanceWindow.enforce); opens at 2026-12-01T06:00:00Z"), waiting.detail());
        RecoveryPlanner.NodePlan withdrawn = of(plan(windowed(true), CLOSED, Map.of(), Map.of(),
                new N("n1").wedged("0").tainted().cordonedByUs().granted("b1")), "n1");
        assertEquals(RecoveryPlanner.Step.WINDOW_WAIT, withdrawn.step());
        assertNull(withdrawn.grant(), "a grant not used yet is withdrawn when the window closes");
        assertTrue(withdrawn.givesCordonBack());
        N calling = new N("n1").wedged("0").tainted().cordonedByUs().granted("b1");
        calling.ann.put(NodeKeys.REBOOTING_FROM_BOOT_ID, "b1");
        assertEquals("b1", of(plan(windowed(true), CLOSED, Map.of(), Map.of(), calling), "n1").grant(),
                "a reboot being called keeps its grant");
        assertEquals(RecoveryPlanner.Step.CORDON, of(plan(windowed(true), OPEN, Map.of(), Map.of(),
                new N("n1").wedged("0")), "n1").step(), "open: cordoned at once");
        assertEquals(RecoveryPlanner.Step.CORDON, of(plan(windowed(false), CLOSED, Map.of(), Map.of(),
                new N("n1").wedged("0")), "n1").step(), "enforce: false: the window is ignored");
        assertNull(windowed(false).window());
    }

    @Test
    void aDrainPastItsTimeoutFailsTheNodeOrGrantsItWithOnTimeoutReboot() {
        Map<String, List<String>> left = Map.of("n1", List.of("ml/train-0 (PodDisruptionBudget ml/train allows no "
                + "disruption now)"));
        RecoveryPlanner.NodePlan failed = of(plan(DEFAULT, OPEN, Map.of("n1", 301L), left,
                new N("n1").wedged("0").tainted().cordonedByUs()), "n1");
        assertEquals(RecoveryPlanner.Step.DRAIN_FAILED, failed.step());
        assertNull(failed.grant(), "not rebooted");
        assertTrue(failed.taint(), "the taint stays while the chip is wedged");
        assertTrue(failed.givesCordonBack());
        assertTrue(failed.failed().startsWith("b1: drain timed out after 301 s (recoveryPolicy.drain.timeoutSeconds "
                + "300): pods left: ml/train-0 (PodDisruptionBudget ml/train"), failed.failed());
        N recorded = new N("n1").wedged("0").tainted();
        recorded.ann.put(NodeKeys.RECOVERY_DRAIN_FAILED, failed.failed());
        RecoveryPlanner.NodePlan stays = of(plan(DEFAULT, OPEN, Map.of(), Map.of(), recorded), "n1");
        assertEquals(RecoveryPlanner.Step.DRAIN_FAILED, stays.step(), "not cordoned again in this boot");
        assertFalse(stays.cordon());
        assertTrue(stays.detail().contains("kubectl annotate node n1 npu.openfuyao.com/recovery-drain-failed-"),
                stays.detail());
        recorded.boot("b2");
        assertEquals(RecoveryPlanner.Step.CORDON, of(plan(DEFAULT, OPEN, Map.of(), Map.of(), recorded), "n1").step(),
                "a record of another boot does not hold the node");
        N released = new N("n1").tainted();
        released.ann.put(NodeKeys.RECOVERY_DRAIN_FAILED, failed.failed());
        assertEquals(RecoveryPlanner.Step.RELEASE, of(plan(DEFAULT, OPEN, Map.of(), Map.of(), released), "n1")
                .step(), "the request withdrawn: released, the record with it");

        SpecReader.Result r = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("drain", Map.of("timeoutSeconds", 60, "onTimeout", "reboot")))));
        RecoveryPlanner.NodePlan reboot = of(plan(r.recovery(), OPEN, Map.of("n1", 61L), left,
                new N("n1").wedged("0").tainted().cordonedByUs()), "n1");
        assertEquals(RecoveryPlanner.Step.GRANTED, reboot.step());
        assertEquals("b1", reboot.grant());
        assertTrue(reboot.detail().contains("onTimeout: reboot"), reboot.detail());
        assertEquals(RecoveryPlanner.Step.DRAIN, of(plan(DEFAULT, OPEN, Map.of(), left,
                new N("n1").wedged("0").tainted().cordonedByUs()), "n1").step(), "within the timeout: draining");
    }

    @Test
    void theRecoveryMaintenanceWindowIsValidatedNamingTheField() {
        String f = "spec.driver.recoveryPolicy.maintenanceWindow";
        record Case(Map<String, Object> window, Map<String, Object> drain, String expected) { }
        List<Case> cases = List.of(
                new Case(Map.of("startTime", "01:00", "endTime", "05:00", "enforce", "yes"), null,
                        f + ".enforce: 'yes' is not a boolean"),
                new Case(Map.of("startTime", "01:00", "endTime", "01:00", "enforce", true), null,
                        f + ": startTime and endTime are both 01:00"),
                new Case(Map.of("startTime", "1am", "endTime", "05:00"), null, f + ".startTime: '1am'"),
                new Case(Map.of("days", "mo,funday", "startTime", "01:00", "endTime", "05:00"), null,
                        f + ".days: 'funday' is not a day"),
                new Case(Map.of("startTime", "01:00", "endTime", "05:00", "timeZone", "Nowhere/Land"), null,
                        f + ".timeZone: 'Nowhere/Land'"),
                new Case(Map.of("startTime", "01:00", "endTime", "05:00", "enforced", true), null,
                        f + ".enforced: unknown field"),
                new Case(Map.of("startTime", "01:00", "endTime", "05:00", "enforce", true), Map.of("enable", false),
                        f + ".enforce: true needs spec.driver.recoveryPolicy.drain.enable: true"));
        for (Case c : cases) {
            Map<String, Object> rp = new HashMap<>();
            rp.put("maintenanceWindow", c.window());
            if (c.drain() != null) {
                rp.put("drain", c.drain());
            }
            SpecReader.Result r = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                    rp)));
            assertFalse(r.valid(), c.toString());
            assertNull(r.policy(), "nothing applied");
            assertTrue(String.join("; ", r.problems()).contains(c.expected()), c + " -> " + r.problems());
        }
        assertFalse(SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("maintenanceWindow", "nightly")))).valid(), "not an object");
        RecoverySettings ok = windowed(true);
        assertEquals("every day 06:00-07:00 UTC", ok.window().describe());
    }

    @Test
    void aBlockingPodHoldsTheRecoveryDrainAndGrantOfItsNode() {
        SpecReader.Result r = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("blockingPodSelector", "app=critical"))));
        assertTrue(r.valid(), r.problems().toString());
        Map<String, List<String>> blocking = Map.of("n1", List.of("ml/db-0"));
        RecoveryPlanner.NodePlan held = of(RecoveryPlanner.plan(List.of(new N("n1").wedged("0").tainted()
                .cordonedByUs().granted("b1").build()), Map.of(), r.recovery(), DrainWork.CORDONED_STATES, OPEN,
                Map.of(), blocking), "n1");
        assertEquals(RecoveryPlanner.Step.BLOCKED, held.step());
        assertNull(held.grant(), "not rebooted while the blocking pod runs");
        assertTrue(held.taint() && held.givesCordonBack());
        assertEquals("blocked: blocking pods (recoveryPolicy.blockingPodSelector app=critical): ml/db-0",
                held.detail());
        assertEquals(RecoveryPlanner.Step.CORDON, of(RecoveryPlanner.plan(List.of(new N("n1").wedged("0").build()),
                Map.of(), DEFAULT, DrainWork.CORDONED_STATES, OPEN, Map.of(), blocking), "n1").step(),
                "without the selector a pod blocks nothing");
        for (Object bad : List.of("a in (", "", 7)) {
            SpecReader.Result b = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                    Map.of("blockingPodSelector", bad))));
            assertFalse(b.valid(), String.valueOf(bad));
            assertTrue(b.problems().get(0).startsWith("spec.driver.recoveryPolicy.blockingPodSelector: "),
                    b.problems().toString());
        }
    }
}
