package io.npulifecycle.kube.internal;

import static io.npulifecycle.kube.internal.MockNode.NODE;
import static io.npulifecycle.testing.support.Waits.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.Event;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.markers.internal.FileMarkerStore;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/** The wired node sync: the informers feed the parts, a write request or a marker change reaches the Node. */
class NodeSyncTest {

    static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path markerDir;
    @RegisterExtension
    final MockNode mock = new MockNode();
    final List<String> changes = new CopyOnWriteArrayList<>();
    FileMarkerStore markers;
    NodeSync sync;

    @BeforeEach
    void start() {
        mock.fixture.createDriver(Map.of("version", "25.5.0", "recoveryPolicy", Map.of("autoRecover", true)));
        markers = new FileMarkerStore(markerDir, "boot-a", mock.time::now, null);
        sync = new NodeSync(mock.agent, NodeSync.Settings.builder(NODE).crNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .crName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).build(), mock.time, markers,
                changes::add);
        sync.start();
        await("Node and policy seen and announced").atMost(PATIENCE).until(() -> sync.approval().known()
                && sync.policy().known() && changes.contains("approval") && changes.contains("policy"));
    }

    @AfterEach
    void stop() {
        sync.stop();
    }

    List<Event> events(String reason) {
        return mock.fixture.events("default", reason);
    }

    @Test
    void writesAndEventsReachTheNodeAndFlushWaitsForThem() {
        sync.setLabel(NodeKeys.DRIVER_VERSION, "25.5.0");
        sync.setAnnotation(NodeKeys.DRIVER_VALIDATED, "25.5.0@boot-a");
        sync.recordEvent("DriverValidated/boot-a/25.5.0", NodeKeys.NORMAL, NodeKeys.EVENT_DRIVER_VALIDATED, "ok");

        assertTrue(sync.flush(PATIENCE.toMillis()));

        assertEquals("25.5.0", mock.label(NodeKeys.DRIVER_VERSION));
        assertEquals("25.5.0@boot-a", mock.annotation(NodeKeys.DRIVER_VALIDATED));
        assertEquals("boot-a", mock.annotation(NodeKeys.BOOT_ID), "the boot id is always reported");
        assertEquals(1, events(NodeKeys.EVENT_DRIVER_VALIDATED).size());
        assertEquals(0, sync.getPendingEvents());
        assertEquals(1, sync.getEventsPosted());
        assertTrue(sync.getWrites() >= 1);
        await("connected: the API answered and the Node informer watches").atMost(PATIENCE).until(sync::isConnected);
        assertEquals(NODE, sync.getNodeName());
        assertEquals(EmbeddedCluster.NPU_NAMESPACE + "/" + EmbeddedCluster.NPU_OPERATOR_CTL_NAME,
                sync.getPolicyResource());
    }

    @Test
    void theRebootRequiredMarkerIsMirroredWithOneEventPerRequest() throws IOException {
        markers.write(Markers.REBOOT_REQUIRED, Map.of(Markers.KEY_REASON, Markers.REASON_RECOVERY,
                Markers.KEY_CHIPS, "1:0", Markers.KEY_SINCE, mock.time.now().toString()), "health-watch");

        await("label").atMost(PATIENCE).until(() -> "true".equals(mock.label(NodeKeys.REBOOT_REQUIRED)));
        assertEquals(Markers.REASON_RECOVERY, mock.annotation(NodeKeys.REBOOT_REASON));
        await("RebootRequired Event").atMost(PATIENCE).until(() -> events(NodeKeys.EVENT_REBOOT_REQUIRED).size() == 1);
        String message = events(NodeKeys.EVENT_REBOOT_REQUIRED).get(0).getMessage();
        assertTrue(message.startsWith("reason=recovery") && message.contains("1:0") && message.contains("bootId=boot-a"),
                message);
        sync.requestSync();
        assertTrue(sync.flush(PATIENCE.toMillis()));
        assertEquals(1, events(NodeKeys.EVENT_REBOOT_REQUIRED).size(), "one Event per request, not per round");

        markers.remove(Markers.REBOOT_REQUIRED, "health-watch");
        await("label removed").atMost(PATIENCE).until(() -> mock.label(NodeKeys.REBOOT_REQUIRED) == null);
        assertEquals(null, mock.annotation(NodeKeys.REBOOT_REASON));
    }

    @Test
    void anInvalidApprovalIsAnnouncedAndShownForItsWarning() {
        changes.clear();
        mock.annotate(NodeKeys.APPROVE_REBOOT, "yes");

        await("approval change announced").atMost(PATIENCE).until(() -> changes.contains("approval"));
        assertTrue(sync.approval().invalid(), "announced after the Node was remembered");
        assertEquals("invalid value 'yes'", sync.getApproval());
        // what the rebooter does with it: one ApprovalInvalid Warning per value
        for (int i = 0; i < 2; i++) {
            sync.recordEvent(NodeKeys.EVENT_APPROVAL_INVALID + "/req-1/yes", NodeKeys.WARNING,
                    NodeKeys.EVENT_APPROVAL_INVALID, "annotation value 'yes' is not 'true'");
        }
        assertTrue(sync.flush(PATIENCE.toMillis()));
        List<Event> warnings = events(NodeKeys.EVENT_APPROVAL_INVALID);
        assertEquals(1, warnings.size());
        assertEquals(NodeKeys.WARNING, warnings.get(0).getType());
    }

    @Test
    void thePolicyIsReadAndAChangeAnnounced() {
        assertEquals("version=25.5.0 autoUpgrade=false autoRecover=true maxReboots=null window=null", sync.getPolicy());
        changes.clear();

        mock.fixture.setDriver(Map.of("version", "latest"));

        // the change is announced after the new policy is published: wait for both
        await("policy unknown and the change announced").atMost(PATIENCE)
                .until(() -> !sync.policy().known() && changes.contains("policy"));
        assertTrue(sync.getPolicyProblem().contains("spec.driver.version"), sync.getPolicyProblem());
        assertTrue(sync.getPolicy().startsWith("unknown ("), sync.getPolicy());
    }
}
