package io.npulifecycle.kube.internal;

import static io.npulifecycle.kube.internal.MockNode.NODE;
import static io.npulifecycle.testing.support.Waits.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.EmbeddedFaults;

/**
 * The node sync's writes the API server has not received, kept on the host: they outlive the runtime (a SIGKILL or
 * the reboot they announce, simulated by abandoning the runtime without anything more written) and are written by the
 * next runtime once the API server answers, once each; a label set again keeps the last value; a damaged file is moved
 * aside and what parses in it is kept.
 */
class PendingWritesTest {

    static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path stateDir;
    @RegisterExtension
    final MockNode mock = new MockNode();
    final List<NodeSync> runtimes = new ArrayList<>();

    @BeforeEach
    void policy() {
        mock.fixture.createDriver(Map.of("version", "25.5.0", "recoveryPolicy", Map.of("autoRecover", true)));
    }

    @AfterEach
    void stopAll() {
        runtimes.forEach(NodeSync::stop);
    }

    NodeSync runtime() {
        NodeSync s = new NodeSync(mock.agent, NodeSync.Settings.builder(NODE).crNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .crName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).stateDir(stateDir).build(), mock.time, null,
                null);
        runtimes.add(s);
        s.start();
        return s;
    }

    /** The runtime ends with no chance to write anything more (SIGKILL, reboot): nothing is added at its stop. */
    void kill(NodeSync s) throws IOException {
        String before = Files.exists(file()) ? Files.readString(file()) : null;
        s.stop();
        runtimes.remove(s);
        assertEquals(before, Files.exists(file()) ? Files.readString(file()) : null, "stop() writes nothing");
    }

    Path file() {
        return stateDir.resolve(PendingWritesFile.NAME);
    }

    List<Event> events(String reason) {
        return mock.fixture.events("default", reason);
    }

    void apiDown() {
        mock.cluster.faults().startOutage(EmbeddedFaults.OutageMode.SERVICE_UNAVAILABLE);
    }

    void apiBack() {
        mock.cluster.faults().endOutage();
    }

    void awaitNothingPending(NodeSync s) {
        untilWritten(s, "nothing pending", () -> s.getPendingWrites().isEmpty() && !Files.exists(file()));
    }

    /** Waits for {@code done}, each poll a health tick (an informer that could not start is re-created) and a round. */
    void untilWritten(NodeSync s, String what, java.util.concurrent.Callable<Boolean> done) {
        await(what).atMost(PATIENCE).until(() -> {
            mock.time.advance(Duration.ofSeconds(30));
            s.requestSync();
            return done.call();
        });
    }

    @Test
    void writesMadeWhileTheApiIsDownOutliveTheRuntimeAndAreWrittenOnceEach() throws IOException {
        apiDown();
        NodeSync a = runtime();
        a.recordEvent("Rebooting/boot-a", NodeKeys.NORMAL, NodeKeys.EVENT_REBOOTING, "rebooting: reason=recovery");
        a.setAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, "boot-a");
        a.setLabel(NodeKeys.NPU_HEALTH, "wedged");
        String recordedAt = mock.time.now().toString();

        // on disk as soon as the write methods returned, before any flush or round
        String kept = Files.readString(file());
        assertTrue(kept.contains("event ") && kept.contains("Rebooting%2Fboot-a"), kept);
        assertEquals(List.of("Event Rebooting " + NodeEventQueue.eventName(NODE, "Rebooting/boot-a") + " (Normal, since "
                + recordedAt + ")", "label " + NodeKeys.NPU_HEALTH + "=wedged",
                "annotation " + NodeKeys.REBOOTING_FROM_BOOT_ID + "=boot-a"), a.getPendingWrites());
        assertEquals(file().toString(), a.getPendingWritesFile());
        assertFalse(a.flush(500), "the API server does not answer");
        kill(a);

        apiBack();
        NodeSync b = runtime();
        // the same occurrence recorded again by the new runtime: still one Event
        b.recordEvent("Rebooting/boot-a", NodeKeys.NORMAL, NodeKeys.EVENT_REBOOTING, "recorded again");
        awaitNothingPending(b);

        assertEquals(1, events(NodeKeys.EVENT_REBOOTING).size());
        Event e = events(NodeKeys.EVENT_REBOOTING).get(0);
        assertEquals("rebooting: reason=recovery", e.getMessage(), "the first runtime's Event");
        assertEquals(recordedAt, e.getFirstTimestamp(), "when it was recorded");
        assertEquals("wedged", mock.label(NodeKeys.NPU_HEALTH));
        assertEquals("boot-a", mock.annotation(NodeKeys.REBOOTING_FROM_BOOT_ID));
        assertNull(b.getPendingWritesProblem());

        // a third runtime finds nothing to write again
        kill(b);
        NodeSync c = runtime();
        untilWritten(c, "Node seen", () -> c.approval().known() && c.flush(PATIENCE.toMillis()));
        assertEquals(1, events(NodeKeys.EVENT_REBOOTING).size());
        assertFalse(Files.exists(file()));
    }

    @Test
    void anEventThatExistsAlreadyCountsAsDelivered() throws IOException {
        // created by an earlier runtime that died before it could take it out of the file
        mock.agent.v1().events().inNamespace("default").resource(new EventBuilder().withNewMetadata()
                .withName(NodeEventQueue.eventName(NODE, "RecoveryFailed/req-1")).endMetadata()
                .withNewInvolvedObject().withKind("Node").withName(NODE).endInvolvedObject()
                .withType(NodeKeys.WARNING).withReason(NodeKeys.EVENT_RECOVERY_FAILED).withMessage("already there")
                .build()).create();
        apiDown();
        NodeSync a = runtime();
        a.recordEvent("RecoveryFailed/req-1", NodeKeys.WARNING, NodeKeys.EVENT_RECOVERY_FAILED, "limit reached");
        assertEquals(1, a.getPendingWrites().size());
        kill(a);
        apiBack();

        NodeSync b = runtime();
        awaitNothingPending(b);

        assertEquals(1, events(NodeKeys.EVENT_RECOVERY_FAILED).size());
        assertEquals("already there", events(NodeKeys.EVENT_RECOVERY_FAILED).get(0).getMessage());
        assertEquals(0, b.getEventsPosted(), "answered 409: it existed");
    }

    @Test
    void aLabelSetAgainKeepsTheLastValueAndARemovalIsAWriteToo() throws IOException {
        mock.fixture.annotate(NODE, NodeKeys.RECOVERY_FAILURE, "old failure");
        apiDown();
        NodeSync a = runtime();
        a.setLabel(NodeKeys.NPU_HEALTH, "wedged");
        a.setLabel(NodeKeys.NPU_HEALTH, "degraded");
        a.setAnnotation(NodeKeys.RECOVERY_FAILURE, null);
        PendingWritesFile.Content kept = new PendingWritesFile(stateDir).load().content();
        assertEquals(Map.of(NodeKeys.NPU_HEALTH, Optional.of("degraded")), kept.labels());
        assertEquals(Map.of(NodeKeys.RECOVERY_FAILURE, Optional.empty()), kept.annotations());
        kill(a);

        apiBack();
        NodeSync b = runtime();
        awaitNothingPending(b);

        assertEquals("degraded", mock.label(NodeKeys.NPU_HEALTH));
        assertNull(mock.annotation(NodeKeys.RECOVERY_FAILURE));
    }

    @Test
    void aWriteOfTheNewRuntimeSupersedesTheKeptOne() throws IOException {
        apiDown();
        NodeSync a = runtime();
        a.setLabel(NodeKeys.RECOVERY_BLOCKED, "true");
        kill(a);

        NodeSync b = runtime();
        b.setLabel(NodeKeys.RECOVERY_BLOCKED, null);
        apiBack();
        awaitNothingPending(b);

        assertNull(mock.label(NodeKeys.RECOVERY_BLOCKED));
    }

    @Test
    void aTruncatedFileIsMovedAsideAndWhatParsesIsWritten() throws IOException {
        apiDown();
        NodeSync a = runtime();
        a.recordEvent("First/boot-a", NodeKeys.NORMAL, "First", "one");
        a.recordEvent("Second/boot-a", NodeKeys.NORMAL, "Second", "two");
        kill(a);
        String text = Files.readString(file());
        // the file ends inside the second Event's line
        Files.writeString(file(), text.substring(0, text.indexOf("Second") + 3));
        apiBack();

        NodeSync b = runtime();

        String problem = b.getPendingWritesProblem();
        assertTrue(problem != null && problem.contains("truncated") && problem.contains(".corrupt-"
                + mock.time.now().toEpochMilli()), String.valueOf(problem));
        Path aside = stateDir.resolve(PendingWritesFile.NAME + ".corrupt-" + mock.time.now().toEpochMilli());
        assertEquals(text.substring(0, text.indexOf("Second") + 3), Files.readString(aside), "kept as it was");
        awaitNothingPending(b);
        assertEquals(1, events("First").size(), "the Event before the cut is written");
        assertEquals(0, events("Second").size());
    }

    @Test
    void garbageInTheFileIsNeverAReasonToStop() throws IOException {
        Files.writeString(file(), "\u0000\u00ff\nnot a pending-writes file\n");

        NodeSync s = runtime();
        s.setLabel(NodeKeys.NPU_HEALTH, "healthy");
        awaitNothingPending(s);

        assertEquals("healthy", mock.label(NodeKeys.NPU_HEALTH));
        assertTrue(s.getPendingWritesProblem().contains("expected format=1"), s.getPendingWritesProblem());
        try (var files = Files.list(stateDir)) {
            assertEquals(1, files.filter(p -> p.getFileName().toString().startsWith(PendingWritesFile.NAME
                    + ".corrupt-")).count());
        }
    }

    @Test
    void anUnwritableStateFolderKeepsTheWritesInMemoryAndSaysSo() throws IOException {
        Path notAFolder = Files.writeString(stateDir.resolve("plain-file"), "x");
        NodeSync s = new NodeSync(mock.agent, NodeSync.Settings.builder(NODE).crNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .crName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).stateDir(notAFolder).build(), mock.time, null,
                null);
        runtimes.add(s);
        apiDown();
        s.start();
        s.setLabel(NodeKeys.NPU_HEALTH, "wedged");

        assertTrue(s.getPendingWritesProblem().startsWith("cannot write " + notAFolder.resolve(PendingWritesFile.NAME)),
                s.getPendingWritesProblem());
        assertEquals(List.of("label " + NodeKeys.NPU_HEALTH + "=wedged"), s.getPendingWrites());
        apiBack();
        untilWritten(s, "written from memory", () -> "wedged".equals(mock.label(NodeKeys.NPU_HEALTH)));
    }
}
