package io.npulifecycle.kube.internal;

import static io.npulifecycle.kube.internal.MockNode.NODE;
import static io.npulifecycle.kube.internal.MockNode.NODE_PATH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClientException;

/** {@link NodeApi#updateNode}: the one guarded read-modify-write of the Node, its 409 retry and its bound. */
class NodeApiTest {

    @RegisterExtension
    final MockNode mock = new MockNode();
    final NodeApi api = mock.api();


    static Node annotated(Node n, String key, String value) {
        Map<String, String> a = new HashMap<>(NodeApi.annotations(n));
        a.put(key, value);
        n.getMetadata().setAnnotations(a);
        return n;
    }

    @Test
    void writesTheChangeOnceAndRemembersTheWrittenNode() {
        NodeApi.Update u = api.updateNode("test", n -> annotated(n, "npu.openfuyao.com/x", "1"));

        assertEquals(NodeApi.Outcome.WRITTEN, u.outcome());
        assertEquals("1", mock.annotation("npu.openfuyao.com/x"));
        assertSame(u.node(), api.cached(), "the written Node is the one remembered");
        assertEquals(mock.node().getMetadata().getResourceVersion(), u.node().getMetadata().getResourceVersion());
        assertEquals(1, mock.requests("PUT", NODE_PATH));
        assertEquals(1, api.writes());
        assertEquals(mock.time.now(), api.lastWriteAt());
        assertTrue(mock.health.ok());
    }

    static Node version(String rv, String approval) {
        Node n = new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName(NODE)
                .withResourceVersion(rv).endMetadata().build();
        return approval == null ? n : annotated(n, "npu.openfuyao.com/approve-reboot", approval);
    }

    @Test
    void aWritesAnswerNeverReplacesALaterNodeTheInformerDelivered() {
        // the informer delivered the operator's approval (rv 102) before the answer of the agent's own write (rv 101)
        // was recorded
        api.remember(version("102", "true"));
        api.rememberWritten(version("101", null));
        assertEquals("102", api.cached().getMetadata().getResourceVersion());
        assertEquals("true", NodeApi.annotations(api.cached()).get("npu.openfuyao.com/approve-reboot"));

        api.rememberWritten(version("103", null));
        assertEquals("103", api.cached().getMetadata().getResourceVersion(), "a later write's answer is taken");
        api.remember(null);
        api.rememberWritten(version("7", null));
        assertEquals("7", api.cached().getMetadata().getResourceVersion(), "nothing cached: the answer is taken");
        api.rememberWritten(version("opaque-x", null));
        assertEquals("opaque-x", api.cached().getMetadata().getResourceVersion(),
                "a resourceVersion that is not a number: the answer is taken");
    }

    @Test
    void aChangeThatAsksForNoWriteWritesNothing() {
        NodeApi.Update u = api.updateNode("test", n -> null);

        assertEquals(NodeApi.Outcome.UNCHANGED, u.outcome());
        assertEquals(NODE, u.node().getMetadata().getName(), "the Node as read");
        assertEquals(0, mock.requests("PUT", NODE_PATH));
        assertEquals(0, api.writes());
        assertNull(api.lastWriteAt());
        assertNull(api.cached(), "a read alone is not remembered");
    }

    @Test
    void aConcurrentEditGets409AndTheChangeIsAppliedAgainToAFreshRead() {
        AtomicInteger calls = new AtomicInteger();
        NodeApi.Update u = api.updateNode("test", n -> {
            if (calls.incrementAndGet() == 1) {
                // the person writes between our read and our write: our resourceVersion is stale now
                mock.annotate("example.com/person", "edited");
            }
            return annotated(n, "npu.openfuyao.com/x", "1");
        });

        assertEquals(NodeApi.Outcome.WRITTEN, u.outcome());
        assertEquals(2, calls.get(), "applied again after the 409");
        assertEquals(2, mock.requests("PUT", NODE_PATH), "the first write was refused");
        assertEquals("edited", mock.annotation("example.com/person"), "the person's edit is not overwritten");
        assertEquals("1", mock.annotation("npu.openfuyao.com/x"));
        assertEquals(1, api.writes());
    }

    @Test
    void conflictsAreRetriedAtMostAttemptsTimes() {
        mock.fail("PUT", NODE_PATH, 409, -1);
        AtomicInteger calls = new AtomicInteger();

        NodeApi.Update u = api.updateNode("test", n -> {
            calls.incrementAndGet();
            return annotated(n, "npu.openfuyao.com/x", "1");
        });

        assertEquals(NodeApi.Outcome.CONFLICT, u.outcome());
        assertNull(u.node());
        assertEquals(NodeApi.ATTEMPTS, calls.get());
        assertEquals(NodeApi.ATTEMPTS, mock.requests("PUT", NODE_PATH));
        assertEquals(NodeApi.ATTEMPTS, mock.requests("GET", NODE_PATH), "each attempt reads the Node again");
        assertNull(mock.annotation("npu.openfuyao.com/x"));
        assertEquals(0, api.writes());
    }

    @Test
    void anAbsentNodeIsNotWritten() {
        NodeApi other = new NodeApi(mock.agent, "no-such-node", mock.time, mock.health);
        AtomicInteger calls = new AtomicInteger();

        NodeApi.Update u = other.updateNode("test", n -> {
            calls.incrementAndGet();
            return n;
        });

        assertEquals(NodeApi.Outcome.ABSENT, u.outcome());
        assertEquals(0, calls.get());
        assertEquals(0, mock.requests("PUT", "/api/v1/nodes/"));
    }

    @Test
    void aFailedWriteThrowsAndIsRecordedNamingTheNodeAndThePurpose() {
        mock.fail("PUT", NODE_PATH, 500, 1);

        KubernetesClientException e = assertThrows(KubernetesClientException.class,
                () -> api.updateNode("test the errors", n -> annotated(n, "npu.openfuyao.com/x", "1")));

        assertEquals(500, e.getCode());
        assertEquals(1, mock.requests("PUT", NODE_PATH), "only 409 is retried");
        assertFalse(mock.health.ok());
        assertTrue(mock.health.lastError().startsWith("cannot update Node " + NODE + " to test the errors: "),
                mock.health.lastError());
    }

    @Test
    void aFailedReadThrowsAndIsRecorded() {
        mock.fail("GET", NODE_PATH, 503, 1);

        assertThrows(KubernetesClientException.class, () -> api.updateNode("test", n -> n));

        assertFalse(mock.health.ok());
        assertTrue(mock.health.lastError().startsWith("cannot read Node " + NODE + " to test: "),
                mock.health.lastError());
        api.updateNode("test", n -> null);
        assertTrue(mock.health.ok(), "answered again");
    }
}
