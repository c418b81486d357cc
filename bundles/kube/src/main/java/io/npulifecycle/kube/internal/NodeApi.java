package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.api.time.TimeSource;

/**
 * This runtime's own Node on the API server: the copy last seen (from the informer or from this runtime's own write)
 * and {@link #updateNode}, the one read-modify-write path of every change the node agent makes to its Node.
 *
 * <p>Every write is a full update guarded by the {@code resourceVersion} just read (optimistic concurrency), so it
 * never overwrites a change someone made meanwhile: the API server answers 409 and the change is applied again to a
 * fresh read, at most {@value #ATTEMPTS} times. Thread-safe.
 */
final class NodeApi {

    /** Reads-and-writes per {@link #updateNode} call before it gives up with {@link Outcome#CONFLICT}. */
    static final int ATTEMPTS = 5;

    private static final System.Logger LOG = System.getLogger(NodeApi.class.getName());

    /** What {@link #updateNode} did. */
    enum Outcome {
        /** the change was written; {@link Update#node()} is the Node as the API server stored it */
        WRITTEN,
        /** the change asked for no write; {@link Update#node()} is the Node as read */
        UNCHANGED,
        /** the Node does not exist; {@link Update#node()} is {@code null} */
        ABSENT,
        /** every attempt met a 409 (the Node kept changing); nothing was written; {@link Update#node()} is {@code null} */
        CONFLICT
    }

    /**
     * The result of {@link #updateNode}.
     *
     * @param outcome what happened
     * @param node the Node written or read, per {@link Outcome}
     */
    record Update(Outcome outcome, Node node) {
    }

    private final KubernetesClient client;
    private final String nodeName;
    private final TimeSource time;
    private final ApiHealth health;
    private final AtomicLong writes = new AtomicLong();
    private volatile Instant lastWriteAt;
    private volatile Node node;

    /**
     * @param client the fabric8 client (not closed by this class)
     * @param nodeName this runtime's Node
     * @param time the TimeSource (time of the last write)
     * @param health where the outcome of every request is recorded
     */
    NodeApi(KubernetesClient client, String nodeName, TimeSource time, ApiHealth health) {
        this.client = Objects.requireNonNull(client, "client");
        this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
        this.time = Objects.requireNonNull(time, "time");
        this.health = Objects.requireNonNull(health, "health");
    }

    /** @return the Node's name */
    String nodeName() {
        return nodeName;
    }

    /** @return the Node as last seen (informer event or own write), or {@code null} before the first or after a delete */
    Node cached() {
        return node;
    }

    /**
     * Records the Node as seen (informer event, fresh read); {@code null} when it was deleted.
     *
     * @param seen the Node, or {@code null}
     * @return the copy seen before, or {@code null}
     */
    synchronized Node remember(Node seen) {
        Node previous = node;
        node = seen;
        return previous;
    }

    /**
     * Records the Node this runtime's own write got back, unless the cache already holds a later version of it: an
     * informer event may deliver a later change (an operator's approval) between the write's answer and this call,
     * and the cache must never go back to a Node without it (a wedged node's approval seen, then forgotten, was
     * {@code RebootPathTest.apiUnreachableWithoutAutoRecoverNoReboot} on the real server under load). Later = a
     * greater resourceVersion, read as the whole number both kube-apiserver (etcd's revision) and the embedded mock
     * give; a resourceVersion that is not one is taken as later (the write's answer wins, as without this rule).
     *
     * @param written the Node the API server answered the write with
     */
    synchronized void rememberWritten(Node written) {
        Node cached = node;
        if (cached != null && cached.getMetadata() != null && written.getMetadata() != null) {
            try {
                long have = Long.parseLong(cached.getMetadata().getResourceVersion());
                long got = Long.parseLong(written.getMetadata().getResourceVersion());
                if (have > got) {
                    return;
                }
            } catch (NumberFormatException e) {
                // an opaque resourceVersion: the write's answer is taken
            }
        }
        node = written;
    }

    /**
     * Applies {@code change} to a fresh read of the Node and writes the result, guarded by the resourceVersion read.
     * On a 409 (someone changed the Node in between) it reads again and applies {@code change} again, at most
     * {@value #ATTEMPTS} times. Runs on the calling thread; blocks for the API server's answers.
     *
     * @param purpose what the write is for, in messages: e.g. {@code "consume the approval"}
     * @param change gets the Node just read (a copy of its own, which it may change and return) and returns the Node
     *        to write, or {@code null} when nothing is to be written; it runs once per attempt, so it must have no
     *        other effect
     * @return what happened
     * @throws KubernetesClientException when a read or a write fails other than with 409 (recorded in the
     *         {@link ApiHealth}, naming the Node and {@code purpose})
     */
    Update updateNode(String purpose, UnaryOperator<Node> change) {
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            Node current;
            try {
                current = client.nodes().withName(nodeName).get();
            } catch (KubernetesClientException e) {
                health.failed("cannot read Node " + nodeName + " to " + purpose + ": " + ApiErrors.describe(e));
                throw e;
            }
            health.answered();
            if (current == null) {
                return new Update(Outcome.ABSENT, null);
            }
            String rv = current.getMetadata().getResourceVersion();
            Node next = change.apply(current);
            if (next == null) {
                return new Update(Outcome.UNCHANGED, current);
            }
            try {
                Node written = client.nodes().resource(next).lockResourceVersion(rv).update();
                rememberWritten(written);
                health.answered();
                writes.incrementAndGet();
                lastWriteAt = time.now();
                return new Update(Outcome.WRITTEN, written);
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    health.failed("cannot update Node " + nodeName + " to " + purpose + ": " + ApiErrors.describe(e));
                    throw e;
                }
                LOG.log(Level.INFO, "Node " + nodeName + ": resourceVersion " + rv + " is stale (409) while trying to "
                        + purpose + ", re-reading (attempt " + attempt + " of " + ATTEMPTS + ")");
            }
        }
        LOG.log(Level.WARNING, "Node " + nodeName + " changed under every one of " + ATTEMPTS + " attempts to " + purpose
                + " (409 each time): nothing written, tried again later");
        return new Update(Outcome.CONFLICT, null);
    }

    /** @return Node writes done by {@link #updateNode} */
    long writes() {
        return writes.get();
    }

    /** @return the time of the last Node write, or {@code null} */
    Instant lastWriteAt() {
        return lastWriteAt;
    }

    /**
     * @param n a Node, or {@code null}
     * @return its annotations, empty (unmodifiable) when it has none
     */
    static Map<String, String> annotations(Node n) {
        Map<String, String> a = n == null || n.getMetadata() == null ? null : n.getMetadata().getAnnotations();
        return a == null ? Map.of() : a;
    }

    /**
     * @param n a Node, or {@code null}
     * @return its labels, empty (unmodifiable) when it has none
     */
    static Map<String, String> labels(Node n) {
        Map<String, String> l = n == null || n.getMetadata() == null ? null : n.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }
}
