package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Node;
import io.npulifecycle.api.node.NodeKeys;

/**
 * The labels and annotations the node agent wants on its Node, kept in memory and reconciled onto the Node
 * ({@link #reconcile}) whenever it differs, so a writer never blocks on the API server and a write is not lost to an
 * outage. Each key maps to a value to set or to "absent" (remove it); keys not managed here are left as they are.
 * Thread-safe.
 */
final class DesiredNodeState {

    private static final System.Logger LOG = System.getLogger(DesiredNodeState.class.getName());
    /** A Kubernetes label value: at most 63 characters of {@code [A-Za-z0-9._-]}, alphanumeric at both ends, or empty. */
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?");

    private final Map<String, Optional<String>> labels = new ConcurrentHashMap<>();
    private final Map<String, Optional<String>> annotations = new ConcurrentHashMap<>();

    /**
     * Sets (or with {@code null}, removes) a label.
     *
     * @param key a key the node agent owns ({@link NodeKeys#writableByNodeAgent})
     * @param value a valid label value, or {@code null} to remove the label
     * @return whether the desired state changed
     * @throws IllegalArgumentException on a key the node agent does not own or an invalid value, naming both
     */
    boolean setLabel(String key, String value) {
        checkKey(key);
        if (value != null && !LABEL_VALUE.matcher(value).matches()) {
            throw new IllegalArgumentException("label " + key + ": '" + value
                    + "' is not a valid label value (at most 63 characters of [A-Za-z0-9._-], alphanumeric at both ends)");
        }
        Optional<String> v = Optional.ofNullable(value);
        return !v.equals(labels.put(key, v));
    }

    /**
     * Sets (or with {@code null}, removes) an annotation.
     *
     * @param key a key the node agent owns ({@link NodeKeys#writableByNodeAgent})
     * @param value a one-line value, or {@code null} to remove the annotation
     * @return whether the desired state changed
     * @throws IllegalArgumentException on a key the node agent does not own or a value with a line break
     */
    boolean setAnnotation(String key, String value) {
        checkKey(key);
        if (value != null && (value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0)) {
            throw new IllegalArgumentException("annotation " + key + ": values are one line");
        }
        Optional<String> v = Optional.ofNullable(value);
        return !v.equals(annotations.put(key, v));
    }

    /**
     * Stops managing an annotation, so that {@link #reconcile} neither sets nor removes it until it is managed again.
     * The approval protocol uses this while it writes {@value NodeKeys#REBOOTING_FROM_BOOT_ID} itself.
     *
     * @param key the annotation
     * @return what was desired before (give it back to {@link #manageAnnotation}), or {@code null} when it was not
     *         managed
     */
    Optional<String> releaseAnnotation(String key) {
        return annotations.remove(key);
    }

    /**
     * Sets what is desired for an annotation without the checks of {@link #setAnnotation}, for values this package
     * wrote onto the Node itself (the approval protocol's mark), or puts back what {@link #releaseAnnotation} returned.
     *
     * @param key the annotation
     * @param value the value to keep, {@link Optional#empty()} to keep it absent, {@code null} to leave it unmanaged
     */
    void manageAnnotation(String key, Optional<String> value) {
        if (value == null) {
            annotations.remove(key);
        } else {
            annotations.put(key, value);
        }
    }

    /**
     * @param key a label key
     * @return what is desired for it: a value, {@link Optional#empty()} (to be absent), or {@code null} when the key
     *         is not managed
     */
    Optional<String> label(String key) {
        return labels.get(key);
    }

    /**
     * @param key an annotation key
     * @return what is desired for it, as {@link #label}
     */
    Optional<String> annotation(String key) {
        return annotations.get(key);
    }

    /**
     * @param n the Node as last seen, or {@code null} when it was not seen
     * @return the desired labels the Node does not have yet (a value to set, or empty: to remove), by key; every
     *         desired label when {@code n} is {@code null}
     */
    SortedMap<String, Optional<String>> pendingLabels(Node n) {
        return pending(labels, n == null ? null : NodeApi.labels(n));
    }

    /**
     * @param n the Node as last seen, or {@code null} when it was not seen
     * @return the desired annotations the Node does not have yet, as {@link #pendingLabels}
     */
    SortedMap<String, Optional<String>> pendingAnnotations(Node n) {
        return pending(annotations, n == null ? null : NodeApi.annotations(n));
    }

    private static SortedMap<String, Optional<String>> pending(Map<String, Optional<String>> desired,
            Map<String, String> actual) {
        SortedMap<String, Optional<String>> out = new TreeMap<>();
        desired.forEach((k, v) -> {
            if (actual == null || (v.isPresent() ? !v.get().equals(actual.get(k)) : actual.containsKey(k))) {
                out.put(k, v);
            }
        });
        return out;
    }

    /**
     * @param n a Node, or {@code null}
     * @return whether the Node has every desired label and annotation ({@code false} for {@code null})
     */
    boolean satisfiedBy(Node n) {
        return n != null && !differs(n);
    }

    /**
     * @param n a Node
     * @return whether a desired label or annotation is missing, different, or present where it should be absent
     */
    boolean differs(Node n) {
        return differs(labels, NodeApi.labels(n)) || differs(annotations, NodeApi.annotations(n));
    }

    /**
     * Writes the desired state onto the Node if the cached copy differs: one {@link NodeApi#updateNode} that applies
     * the desired labels and annotations to a fresh read (nothing is written when the fresh read already has them).
     *
     * @param api the Node
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the API server fails (recorded by {@code api})
     */
    void reconcile(NodeApi api) {
        Node n = api.cached();
        if (n == null || !differs(n)) {
            return;
        }
        NodeApi.Update u = api.updateNode("write the node agent's labels and annotations",
                current -> differs(current) ? applyTo(current) : null);
        if (u.outcome() == NodeApi.Outcome.UNCHANGED) {
            // the cached copy was older than the Node: keep the fresh read so the next check compares with it
            api.remember(u.node());
        } else if (u.outcome() == NodeApi.Outcome.CONFLICT) {
            LOG.log(Level.DEBUG, "desired state of Node " + api.nodeName() + " not written: retried at the next sync");
        }
    }

    private Node applyTo(Node n) {
        if (n.getMetadata().getLabels() == null) {
            n.getMetadata().setLabels(new HashMap<>());
        }
        if (n.getMetadata().getAnnotations() == null) {
            n.getMetadata().setAnnotations(new HashMap<>());
        }
        apply(labels, n.getMetadata().getLabels());
        apply(annotations, n.getMetadata().getAnnotations());
        return n;
    }

    private static boolean differs(Map<String, Optional<String>> desired, Map<String, String> actual) {
        for (Map.Entry<String, Optional<String>> e : desired.entrySet()) {
            if (e.getValue().isPresent() ? !e.getValue().get().equals(actual.get(e.getKey()))
                    : actual.containsKey(e.getKey())) {
                return true;
            }
        }
        return false;
    }

    private static void apply(Map<String, Optional<String>> desired, Map<String, String> target) {
        desired.forEach((k, v) -> {
            if (v.isPresent()) {
                target.put(k, v.get());
            } else {
                target.remove(k);
            }
        });
    }

    private static void checkKey(String key) {
        if (!NodeKeys.writableByNodeAgent(key)) {
            throw new IllegalArgumentException("'" + key + "' is not a key the node agent writes (it owns keys under "
                    + NodeKeys.PREFIX + " except approve-reboot and the control plane's)");
        }
    }
}
