package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.api.time.TimeSource;

/**
 * The Events the node agent records on its Node, queued in the order recorded and created by {@link #flush()}.
 *
 * <p>Each occurrence has a key; the Event's name is {@code <node>.<first 16 hex digits of SHA-256(key)>}, so one key
 * gives one Event: a key recorded again in this runtime is ignored, and one recorded again after a runtime restart is
 * answered 409 by the API server, which counts as created (no {@code get} needed, which the node agent's RBAC does not
 * grant). A failed creation stops the flush and keeps that Event and the ones after it queued, in order, for the next
 * flush. What is queued can be read ({@link #queued()}) and given back after a runtime restart ({@link #restore}), so
 * that {@link PendingWrites} keeps it on the host until it is created. Thread-safe.
 */
final class NodeEventQueue {

    private static final System.Logger LOG = System.getLogger(NodeEventQueue.class.getName());
    /** {@code source.component} and {@code reportingComponent} of every Event. */
    static final String COMPONENT = "npu-lifecycle-node-agent";

    private final KubernetesClient client;
    private final String nodeName;
    private final String namespace;
    private final TimeSource time;
    private final ApiHealth health;
    private final Supplier<Node> involved;
    private final Map<String, QueuedEvent> pending = new LinkedHashMap<>();
    private final Set<String> recorded = ConcurrentHashMap.newKeySet();
    private final AtomicLong posted = new AtomicLong();

    /**
     * @param client the fabric8 client (not closed by this class)
     * @param nodeName the Node the Events are about
     * @param namespace where the Events are created ({@code default}: Events of cluster-scoped objects live there)
     * @param time the TimeSource (first and last timestamp)
     * @param health where the outcome of every creation is recorded
     * @param involved the Node as last seen, for the involved object's uid (gives {@code null} before it is seen)
     */
    NodeEventQueue(KubernetesClient client, String nodeName, String namespace, TimeSource time, ApiHealth health,
            Supplier<Node> involved) {
        this.client = Objects.requireNonNull(client, "client");
        this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.time = Objects.requireNonNull(time, "time");
        this.health = Objects.requireNonNull(health, "health");
        this.involved = Objects.requireNonNull(involved, "involved");
    }

    /**
     * Queues an Event, once per key.
     *
     * @param key identifies the occurrence, e.g. {@code RebootRequired/<boot-id>/<reason>/<since>}
     * @param type {@code Normal} or {@code Warning}
     * @param reason e.g. {@code RebootRequired}
     * @param message human-readable, one line
     * @return whether it was queued ({@code false}: the key was recorded before in this runtime)
     */
    boolean record(String key, String type, String reason, String message) {
        Objects.requireNonNull(key, "key");
        if (!recorded.add(key)) {
            return false;
        }
        QueuedEvent ev = new QueuedEvent(key, type, reason, message, time.now());
        synchronized (pending) {
            pending.put(key, ev);
        }
        return true;
    }

    /**
     * Queues Events recorded by an earlier runtime and not yet created, in their order, each once per key: a key
     * recorded in this runtime already is not queued again.
     *
     * @param events the Events, oldest first
     * @return how many were queued
     */
    int restore(List<QueuedEvent> events) {
        int n = 0;
        for (QueuedEvent ev : events) {
            if (recorded.add(ev.key())) {
                synchronized (pending) {
                    pending.put(ev.key(), ev);
                }
                n++;
            }
        }
        return n;
    }

    /** @return the Events queued, not yet created, oldest first */
    List<QueuedEvent> queued() {
        synchronized (pending) {
            return List.copyOf(pending.values());
        }
    }

    /**
     * Creates the queued Events, oldest first; each one created (or answered 409: it exists) leaves the queue.
     *
     * @throws KubernetesClientException when a creation fails other than with 409: that Event and the later ones stay
     *         queued (recorded in the {@link ApiHealth})
     */
    void flush() {
        List<QueuedEvent> todo;
        synchronized (pending) {
            todo = new ArrayList<>(pending.values());
        }
        for (QueuedEvent q : todo) {
            Event ev = event(q);
            Node n = involved.get();
            if (n != null && n.getMetadata() != null) {
                ev.getInvolvedObject().setUid(n.getMetadata().getUid());
            }
            try {
                client.v1().events().inNamespace(namespace).resource(ev).create();
                posted.incrementAndGet();
                LOG.log(Level.INFO, "Event " + ev.getReason() + " (" + ev.getType() + ") on Node " + nodeName + ": "
                        + ev.getMessage());
            } catch (KubernetesClientException ex) {
                if (ex.getCode() != 409) {
                    health.failed("cannot create Event " + ev.getReason() + " (" + ev.getMetadata().getName()
                            + ") on Node " + nodeName + ": " + ApiErrors.describe(ex));
                    throw ex;
                }
                LOG.log(Level.DEBUG, "Event " + ev.getMetadata().getName() + " already exists");
            }
            health.answered();
            synchronized (pending) {
                pending.remove(q.key());
            }
        }
    }

    private Event event(QueuedEvent q) {
        String at = q.at().toString();
        return new EventBuilder().withNewMetadata().withName(eventName(nodeName, q.key())).withNamespace(namespace)
                .endMetadata()
                .withNewInvolvedObject().withApiVersion("v1").withKind("Node").withName(nodeName).endInvolvedObject()
                .withType(q.type()).withReason(q.reason()).withMessage(q.message())
                .withNewSource().withComponent(COMPONENT).withHost(nodeName).endSource()
                .withReportingComponent(COMPONENT).withReportingInstance(nodeName)
                .withFirstTimestamp(at).withLastTimestamp(at).withCount(1).build();
    }

    /** @return Events queued, not yet created */
    int pending() {
        synchronized (pending) {
            return pending.size();
        }
    }

    /** @return Events this runtime created (not counting those that existed already) */
    long posted() {
        return posted.get();
    }

    /**
     * @param nodeName the Node
     * @param key the occurrence's key
     * @return the Event's name: {@code <node>.<first 16 hex digits of SHA-256(key)>}
     */
    static String eventName(String nodeName, String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return nodeName + "." + HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available (every Java runtime has it)", e);
        }
    }
}
