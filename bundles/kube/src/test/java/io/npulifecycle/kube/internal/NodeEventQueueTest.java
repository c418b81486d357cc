package io.npulifecycle.kube.internal;

import static io.npulifecycle.kube.internal.MockNode.EVENTS_PATH;
import static io.npulifecycle.kube.internal.MockNode.NODE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.simulator.cluster.EmbeddedFaults;

/** The Event queue: created in the order recorded, one Event per key (also across restarts), kept while the API fails. */
class NodeEventQueueTest {

    @RegisterExtension
    final MockNode mock = new MockNode();
    final AtomicReference<Node> seen = new AtomicReference<>();
    final NodeEventQueue queue = newQueue();

    NodeEventQueue newQueue() {
        return new NodeEventQueue(mock.agent, NODE, "default", mock.time, mock.health, seen::get);
    }


    /** @return the Events on the API server, in the order they were created (the mock's resourceVersions increase) */
    List<Event> events() {
        return mock.fixture.admin().v1().events().inNamespace("default").list().getItems().stream()
                .sorted(Comparator.comparingLong(e -> Long.parseLong(e.getMetadata().getResourceVersion()))).toList();
    }

    List<String> reasons() {
        return events().stream().map(Event::getReason).toList();
    }

    void record(String reason) {
        queue.record(reason + "/boot-a", NodeKeys.NORMAL, reason, "about " + reason);
    }

    @Test
    void eventsAreCreatedInTheOrderRecorded() {
        record("First");
        record("Second");
        record("Third");
        assertEquals(3, queue.pending());

        queue.flush();

        assertEquals(List.of("First", "Second", "Third"), reasons());
        assertEquals(0, queue.pending());
        assertEquals(3, queue.posted());
        assertTrue(mock.health.ok());
    }

    @Test
    void aFailedCreationKeepsThatEventAndTheLaterOnesQueuedInOrder() {
        record("First");
        record("Second");
        record("Third");
        // the first creation goes through, the second is refused
        mock.cluster.faults().injectFault((m, p) -> "POST".equals(m) && p.startsWith(EVENTS_PATH)
                && mock.requests("POST", EVENTS_PATH) == 2 ? 500 : 0);

        KubernetesClientException e = assertThrows(KubernetesClientException.class, queue::flush);

        assertEquals(500, e.getCode());
        assertEquals(List.of("First"), reasons(), "nothing after the failure is tried");
        assertEquals(2, queue.pending());
        assertFalse(mock.health.ok());
        assertTrue(mock.health.lastError().startsWith("cannot create Event Second (" + NODE + "."),
                mock.health.lastError());

        mock.cluster.faults().clearFaults();
        queue.flush();

        assertEquals(List.of("First", "Second", "Third"), reasons());
        assertEquals(0, queue.pending());
        assertTrue(mock.health.ok());
    }

    @Test
    void eventsWaitOutAnOutage() {
        mock.cluster.faults().startOutage(EmbeddedFaults.OutageMode.SERVICE_UNAVAILABLE);
        record("First");
        assertThrows(KubernetesClientException.class, queue::flush);
        assertThrows(KubernetesClientException.class, queue::flush);
        assertEquals(1, queue.pending());

        mock.cluster.faults().endOutage();
        queue.flush();

        assertEquals(List.of("First"), reasons());
        assertEquals(0, queue.pending());
    }

    @Test
    void aKeyGivesOneEvent() {
        assertTrue(queue.record("k", NodeKeys.WARNING, NodeKeys.EVENT_APPROVAL_INVALID, "one"));
        assertFalse(queue.record("k", NodeKeys.WARNING, NodeKeys.EVENT_APPROVAL_INVALID, "again"));
        queue.flush();
        assertFalse(queue.record("k", NodeKeys.WARNING, NodeKeys.EVENT_APPROVAL_INVALID, "after the flush"));
        queue.flush();

        List<Event> events = events();
        assertEquals(1, events.size());
        assertEquals("one", events.get(0).getMessage());
    }

    @Test
    void aKeyPostedByAnEarlierRuntimeIsNotPostedAgain() {
        queue.record("k", NodeKeys.NORMAL, NodeKeys.EVENT_REBOOT_REQUIRED, "first runtime");
        queue.flush();
        NodeEventQueue restarted = newQueue();

        assertTrue(restarted.record("k", NodeKeys.NORMAL, NodeKeys.EVENT_REBOOT_REQUIRED, "second runtime"));
        restarted.flush();

        assertEquals(1, events().size(), "the API server answered 409: it exists");
        assertEquals("first runtime", events().get(0).getMessage());
        assertEquals(0, restarted.pending());
        assertEquals(0, restarted.posted());
        assertTrue(mock.health.ok());
    }

    @Test
    void theNameComesFromTheNodeAndTheKey() {
        String name = NodeEventQueue.eventName(NODE, "RebootRequired/boot-a/recovery/2026-12-01T10:00:00Z");

        assertTrue(name.matches(NODE + "\\.[0-9a-f]{16}"), name);
        assertEquals(name, NodeEventQueue.eventName(NODE, "RebootRequired/boot-a/recovery/2026-12-01T10:00:00Z"));
        assertNotEquals(name, NodeEventQueue.eventName(NODE, "RebootRequired/boot-b/recovery/2026-12-01T10:00:00Z"));
        assertNotEquals(name, NodeEventQueue.eventName("node-1", "RebootRequired/boot-a/recovery/2026-12-01T10:00:00Z"));
    }

    @Test
    void theEventDescribesTheNode() {
        seen.set(mock.node());
        queue.record("k", NodeKeys.WARNING, NodeKeys.EVENT_APPROVAL_INVALID, "annotation value 'yes'");
        queue.flush();

        Event e = events().get(0);
        assertEquals(NodeEventQueue.eventName(NODE, "k"), e.getMetadata().getName());
        assertEquals("Node", e.getInvolvedObject().getKind());
        assertEquals(NODE, e.getInvolvedObject().getName());
        assertNotNull(e.getInvolvedObject().getUid());
        assertEquals(mock.node().getMetadata().getUid(), e.getInvolvedObject().getUid());
        assertEquals(NodeKeys.WARNING, e.getType());
        assertEquals(NodeKeys.EVENT_APPROVAL_INVALID, e.getReason());
        assertEquals("annotation value 'yes'", e.getMessage());
        assertEquals(NodeEventQueue.COMPONENT, e.getSource().getComponent());
        assertEquals(NODE, e.getSource().getHost());
        assertEquals(mock.time.now().toString(), e.getFirstTimestamp());
        assertEquals(1, e.getCount());
    }
}
