package io.npulifecycle.kube.internal;

import static io.npulifecycle.kube.internal.MockNode.NODE;
import static io.npulifecycle.kube.internal.MockNode.NODE_PATH;
import static io.npulifecycle.testing.support.Waits.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.markers.internal.FileMarkerStore;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/**
 * The NodeCondition {@code NpuHealthy}: False (ChipWedged, the chips) while a chip is wedged, True (ChipsHealthy) once
 * validated; bounded writes; another condition never touched; a refused write named and not retried in a loop.
 */
class NpuHealthConditionTest {

    static final Duration PATIENCE = Duration.ofSeconds(30);

    @RegisterExtension
    final MockNode mock = new MockNode();
    @TempDir
    Path markerDir;

    private NodeCondition condition() {
        return NpuHealthCondition.current(mock.node());
    }

    @Test
    void decideFollowsWhatTheAgentReports() {
        DesiredNodeState d = new DesiredNodeState();
        assertNull(NpuHealthCondition.decide(d), "nothing reported: the condition is left as it is");
        d.setLabel(NodeKeys.NPU_HEALTH, "healthy");
        assertNull(NpuHealthCondition.decide(d), "healthy but not validated in this boot: left as it is");
        d.setAnnotation(NodeKeys.DRIVER_VALIDATED, "25.5.0@boot-a");
        NpuHealthCondition.Verdict ok = NpuHealthCondition.decide(d);
        assertEquals("True", ok.status());
        assertEquals(NodeKeys.CONDITION_REASON_CHIPS_HEALTHY, ok.reason());
        assertTrue(ok.message().contains("25.5.0") && ok.message().contains("boot-a"), ok.message());
        d.setAnnotation(NodeKeys.REBOOT_REASON, Markers.REASON_RECOVERY);
        d.setAnnotation(NodeKeys.REBOOT_CHIPS, "4:0,6:0");
        NpuHealthCondition.Verdict wedged = NpuHealthCondition.decide(d);
        assertEquals("False", wedged.status());
        assertEquals(NodeKeys.CONDITION_REASON_CHIP_WEDGED, wedged.reason());
        assertTrue(wedged.message().contains("4:0,6:0"), wedged.message());
        d.setAnnotation(NodeKeys.REBOOT_REASON, Markers.REASON_UPGRADE);
        d.setAnnotation(NodeKeys.REBOOT_CHIPS, null);
        d.setLabel(NodeKeys.NPU_HEALTH, "wedged");
        assertEquals("False", NpuHealthCondition.decide(d).status(), "the verdict alone says wedged too");
    }

    @Test
    void wedgeThenValidationWithBoundedWritesAndTheOtherConditionsKept() {
        // a condition of someone else (the kubelet's Ready) must survive every write
        Node n = mock.node();
        n.getStatus().getConditions().add(new NodeConditionBuilder().withType("Ready").withStatus("True")
                .withReason("KubeletReady").build());
        mock.fixture.admin().nodes().resource(n).updateStatus();
        NpuHealthCondition c = new NpuHealthCondition(mock.agent, NODE, mock.time);
        NpuHealthCondition.Verdict wedged = new NpuHealthCondition.Verdict("False",
                NodeKeys.CONDITION_REASON_CHIP_WEDGED, "NPU chips 4:0 wedged");
        assertNotNull(c.reconcile(wedged, mock.node()));
        NodeCondition w = condition();
        assertEquals("False", w.getStatus());
        assertEquals(NodeKeys.CONDITION_REASON_CHIP_WEDGED, w.getReason());
        assertEquals("2026-12-01T10:00:00Z", w.getLastTransitionTime());
        assertEquals("True", mock.node().getStatus().getConditions().stream()
                .filter(x -> "Ready".equals(x.getType())).findFirst().orElseThrow().getStatus());

        mock.cluster.requestLog().clearRequests();
        assertNull(c.reconcile(wedged, mock.node()), "unchanged: no write");
        assertEquals(0, mock.requests("PATCH", NODE_PATH));

        mock.time.advance(Duration.ofMinutes(5));
        NpuHealthCondition.Verdict otherChips = new NpuHealthCondition.Verdict("False",
                NodeKeys.CONDITION_REASON_CHIP_WEDGED, "NPU chips 4:0,6:0 wedged");
        assertNotNull(c.reconcile(otherChips, mock.node()));
        assertEquals("2026-12-01T10:00:00Z", condition().getLastTransitionTime(),
                "the status did not change: the transition time stays");
        assertEquals("2026-12-01T10:05:00Z", condition().getLastHeartbeatTime());

        mock.time.advance(Duration.ofMinutes(5));
        assertNotNull(c.reconcile(new NpuHealthCondition.Verdict("True", NodeKeys.CONDITION_REASON_CHIPS_HEALTHY,
                "driver 25.5.0 validated in boot b"), mock.node()));
        assertEquals("True", condition().getStatus());
        assertEquals("2026-12-01T10:10:00Z", condition().getLastTransitionTime());
        assertEquals(1, mock.node().getStatus().getConditions().stream()
                .filter(x -> NodeKeys.CONDITION_NPU_HEALTHY.equals(x.getType())).count(), "one condition, replaced");
        assertEquals(3, c.writes());
    }

    @Test
    void aRefusedWriteIsNamedAndNotRetriedInALoop() {
        mock.fail("PATCH", NODE_PATH + "/status", 403, -1);
        NpuHealthCondition c = new NpuHealthCondition(mock.agent, NODE, mock.time);
        NpuHealthCondition.Verdict wedged = new NpuHealthCondition.Verdict("False",
                NodeKeys.CONDITION_REASON_CHIP_WEDGED, "NPU chips 4:0 wedged");
        assertNull(c.reconcile(wedged, mock.node()));
        assertNotNull(c.lastError());
        assertTrue(c.lastError().startsWith("403"), c.lastError());
        mock.cluster.requestLog().clearRequests();
        assertNull(c.reconcile(wedged, mock.node()));
        assertEquals(0, mock.requests("PATCH", NODE_PATH), "not again before " + NpuHealthCondition.RETRY_AFTER_FAILURE);
        mock.time.advance(NpuHealthCondition.RETRY_AFTER_FAILURE);
        assertNull(c.reconcile(wedged, mock.node()));
        assertEquals(1, mock.requests("PATCH", NODE_PATH), "tried again after the pause");
        assertNull(condition());
    }

    /**
     * On a real kube-apiserver with the chart's rendered RBAC and admission policy in force (RBAC, the admission policy): the node agent's
     * pod-bound token may write NpuHealthy on its own Node, and is denied another condition of it.
     */
    @Test
    void onARealServerTheAdmissionPolicyAllowsTheConditionAndNothingElseOfTheStatus() {
        try (io.npulifecycle.testing.support.ClusterFixture real = io.npulifecycle.testing.support.ClusterFixture
                .start(io.npulifecycle.simulator.cluster.ClusterBackend.REAL)) {
            real.admin().nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata()
                    .withName(NODE).addToLabels("openfuyao.com/npu.present", "true").endMetadata().build()).create();
            io.fabric8.kubernetes.client.KubernetesClient agent = real.serviceAccountClient("npu-lifecycle-node-agent",
                    NODE, k -> k.setRequestRetryBackoffLimit(0));
            NpuHealthCondition c = new NpuHealthCondition(agent, NODE, mock.time);
            NpuHealthCondition.Verdict wedged = new NpuHealthCondition.Verdict("False",
                    NodeKeys.CONDITION_REASON_CHIP_WEDGED, "NPU chips 4:0 wedged");
            assertNotNull(c.reconcile(wedged, real.node(NODE)), "allowed: " + c.lastError());
            assertEquals("False", NpuHealthCondition.current(real.node(NODE)).getStatus());
            io.fabric8.kubernetes.client.KubernetesClientException denied = org.junit.jupiter.api.Assertions.assertThrows(
                    io.fabric8.kubernetes.client.KubernetesClientException.class, () -> agent.nodes()
                            .resource(real.node(NODE)).subresource("status").patch(PatchContext.of(PatchType.JSON),
                                    "[{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":"
                                            + "\"Ready\",\"status\":\"False\"}}]"));
            assertEquals(403, denied.getCode());
            assertTrue(denied.getMessage().contains("may change only the NodeCondition NpuHealthy"), denied.getMessage());
        }
    }

    @Test
    void theNodeSyncWritesTheConditionFromTheRecoveryMarker() throws Exception {
        FileMarkerStore markers = new FileMarkerStore(markerDir, "boot-a", mock.time::now, null);
        mock.fixture.createDriver(Map.of("version", "25.5.0"));
        NodeSync sync = new NodeSync(mock.agent, NodeSync.Settings.builder(NODE)
                .crNamespace(EmbeddedCluster.NPU_NAMESPACE).crName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).build(), mock.time, markers, null);
        sync.start();
        try {
            markers.write(Markers.REBOOT_REQUIRED, Map.of(Markers.KEY_REASON, Markers.REASON_RECOVERY,
                    Markers.KEY_CHIPS, "4:0"), "probe");
            sync.requestSync();
            await("NpuHealthy=False ChipWedged naming chip 4:0").atMost(PATIENCE).until(() -> condition() != null
                    && "False".equals(condition().getStatus()) && condition().getMessage().contains("4:0"));
            markers.remove(Markers.REBOOT_REQUIRED, "probe");
            sync.setLabel(NodeKeys.NPU_HEALTH, "healthy");
            sync.setAnnotation(NodeKeys.DRIVER_VALIDATED, "25.5.0@boot-a");
            await("NpuHealthy=True ChipsHealthy").atMost(PATIENCE).until(() -> condition() != null
                    && "True".equals(condition().getStatus())
                    && NodeKeys.CONDITION_REASON_CHIPS_HEALTHY.equals(condition().getReason()));
        } finally {
            sync.stop();
        }
    }
}
