package io.npulifecycle.simulator.cluster;

import java.util.HashMap;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Node edits as a person makes them with {@code kubectl annotate}: read, change, write, and on a {@code 409
 * Conflict} (someone else wrote the Node in between, e.g. the node agent) read again and retry. Shared by the
 * simulator harness and the test support so both edit Nodes the same way.
 */
public final class NodeEdits {

    /** Writes tried before a conflict is handed to the caller. */
    public static final int CONFLICT_ATTEMPTS = 10;

    private NodeEdits() {
    }

    /**
     * Sets (value non-null) or removes (null) an annotation of a node.
     *
     * @param client a client allowed to patch the node
     * @param node node name
     * @param key annotation key
     * @param value the value, or null to remove the annotation
     * @throws KubernetesClientException when the API server refuses the write, or after {@value #CONFLICT_ATTEMPTS}
     *         conflicts in a row
     */
    public static void annotate(KubernetesClient client, String node, String key, String value) {
        retryOnConflict(() -> client.nodes().withName(node).edit(n -> {
            if (n.getMetadata().getAnnotations() == null) {
                n.getMetadata().setAnnotations(new HashMap<>());
            }
            if (value == null) {
                n.getMetadata().getAnnotations().remove(key);
            } else {
                n.getMetadata().getAnnotations().put(key, value);
            }
            return n;
        }));
    }

    /**
     * Runs a read-modify-write until it is not refused with {@code 409 Conflict}.
     *
     * @param write the whole read-modify-write
     * @throws KubernetesClientException any other refusal, or the conflict after {@value #CONFLICT_ATTEMPTS} attempts
     */
    public static void retryOnConflict(Runnable write) {
        for (int attempt = 1;; attempt++) {
            try {
                write.run();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= CONFLICT_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }
}
