package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * A spec that the CRD schema (charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml) lets through and the controller's own
 * validation ({@link SpecReader}) refuses: a rule across fields, {@code holdNodesWithNpuWorkloads: false} with the drain
 * disabled (nothing would evict the NPU workloads before the reboot), which the schema does not state; every single
 * value the schema and the reader agree on ({@code bundles/kube} SpecCorpusTest). On a real kube-apiserver the server
 * stores it (the schema is enforced there, so the value really passed it); on either backend the leading controller,
 * on the ServiceAccount token of {@value #CONTROL_PLANE_SA} on the real one, answers with {@code InvalidSpec=True}
 * naming the field, and no node gets a rollout step although the spec asks for {@value #NEW} with
 * {@code autoUpgrade: true}.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {ClusterBackend.EMBEDDED, ClusterBackend.REAL})
class InvalidSpecTest {

    static final String CONTROL_PLANE_SA = "npu-lifecycle-control-plane";
    static final String OLD = "24.1.0";
    static final String NEW = "25.5.0";
    static final Duration WAIT = Duration.ofSeconds(30);

    @Parameter
    String kind;
    ClusterFixture c;

    @AfterEach
    void close() {
        if (c != null) {
            c.close();
        }
    }

    @Test
    void aSpecTheSchemaLetsThroughGetsInvalidSpecNamingTheFieldAndNoNodeIsTouched() {
        c = ClusterFixture.start(kind);
        ScaledTestClock time = c.own(new ScaledTestClock(200));
        NodeAgentEmulator emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(2, OLD);
        emulator.start();
        ControllerConfig d = ControllerConfig.defaults();
        ControllerConfig cfg = new ControllerConfig(d.namespace(), d.resourceName(), false, "http", "",
                d.reconcileDelay(), d.resync(), d.statusInterval(), false, d.leaseName(), d.leaseDuration(),
                d.renewDeadline(), d.retryPeriod(), "t");
        UpgradeController uc = c.own(new UpgradeController(c.serviceAccountClient(CONTROL_PLANE_SA, null, k -> {
            k.setUserAgent("npu-controller");
            k.setRequestRetryBackoffLimit(3);
        }), time, cfg, null));
        uc.start();
        uc.setLeader(true);
        c.createDriver(driver(OLD, false, 1, null, null));
        Waits.until("a valid spec on " + OLD + ": InvalidSpec=False", WAIT,
                () -> c.condition("InvalidSpec").startsWith("False"));

        Map<String, Object> bad = driver(NEW, true, 2, null, null);
        @SuppressWarnings("unchecked")
        Map<String, Object> up = (Map<String, Object>) bad.get("upgradePolicy");
        up.put("holdNodesWithNpuWorkloads", false);
        up.put("drain", Map.of("enable", false));
        c.setDriver(bad);

        assertEquals(Boolean.FALSE, upgradePolicy().get("holdNodesWithNpuWorkloads"),
                "the API server stored the spec as written (the schema let it through): " + upgradePolicy());
        String named = "spec.driver.upgradePolicy.holdNodesWithNpuWorkloads: false needs "
                + "spec.driver.upgradePolicy.drain.enable: true";
        try {
            Waits.until("InvalidSpec=True naming " + named, WAIT, () -> {
                String m = c.condition("InvalidSpec");
                return m.startsWith("True") && m.contains(named);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; condition now: " + c.condition("InvalidSpec"), e);
        }
        assertTrue(c.condition("Progressing").contains("nothing is touched"), c.condition("Progressing"));
        for (Node n : c.admin().nodes().list().getItems()) {
            String name = n.getMetadata().getName();
            assertNull(c.label(name, NodeKeys.DRIVER_UPGRADE_STATE), name + " got a rollout step");
            assertEquals(OLD, c.label(name, "npu.openfuyao.com/driver-version"), name + " driver changed");
        }
        assertTrue(c.admin().apps().daemonSets().inNamespace(NodeAgentEmulator.NS).list().getItems().stream()
                .noneMatch(ds -> String.valueOf(ds.getSpec()).contains(NEW)), "a driver DaemonSet for " + NEW);
        List<Event> started = c.events(NodeAgentEmulator.NS, "RolloutStarted").stream()
                .filter(e -> String.valueOf(e.getMessage()).contains(NEW)).toList();
        assertTrue(started.isEmpty(), "no rollout to " + NEW + " started: " + started);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> upgradePolicy() {
        Map<String, Object> spec = (Map<String, Object>) c.npuOperatorCtl().getAdditionalProperties().get("spec");
        return (Map<String, Object>) ((Map<String, Object>) spec.get("driver")).get("upgradePolicy");
    }
}
