package io.npulifecycle.upgrade.internal;

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
                DrainSettings.DEFAULT.timeout(), -1, false, false, false), 25, true);
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
        SpecParser.Result bad = SpecParser.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("maxUnavailable", "lots", "drain", Map.of("timeoutSeconds", 0, "onTimeout", "maybe",
                        "podSelector", "a in (")))));
        assertFalse(bad.valid());
        String all = String.join("; ", bad.problems());
        assertTrue(all.contains("spec.driver.recoveryPolicy.maxUnavailable: 'lots'"), all);
        assertTrue(all.contains("spec.driver.recoveryPolicy.drain.timeoutSeconds"), all);
        assertTrue(all.contains("spec.driver.recoveryPolicy.drain.onTimeout: 'maybe'"), all);
        assertTrue(all.contains("spec.driver.recoveryPolicy.drain.podSelector"), all);
        SpecParser.Result unknown = SpecParser.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("drain", Map.of("enabled", true)))));
        assertTrue(String.join("; ", unknown.problems()).contains("spec.driver.recoveryPolicy.drain.enabled: unknown"),
                unknown.problems().toString());
        SpecParser.Result ok = SpecParser.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("maxUnavailable", 3, "drain", Map.of("enable", false, "scope", "npu")))));
        assertTrue(ok.valid(), ok.problems().toString());
        assertEquals(3, ok.recovery().limit(100));
        assertFalse(ok.recovery().drain().enable());
        assertEquals(Set.of(), Set.copyOf(SpecParser.parse(Map.of("driver", Map.of("version", "25.5.0"))).problems()));
        assertEquals(2, SpecParser.parse(Map.of("driver", Map.of("version", "25.5.0"))).recovery().limit(5),
                "25 % of 5, rounded up");
    }
}
