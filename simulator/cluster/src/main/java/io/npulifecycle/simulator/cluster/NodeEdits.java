package io.npulifecycle.simulator.cluster;

import java.util.HashMap;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Node edits as a person makes them with kubectl. {@link #annotate} is {@code kubectl annotate --overwrite}: a JSON
 * merge patch of the one annotation, without a resource version, so it applies whatever the node agent writes to the
 * Node meanwhile (a read-modify-write would be refused, 409 or 422, when the agent changed the same annotations in
 * between). {@link #retryOnConflict} is a {@code kubectl edit} retried on {@code 409 Conflict}. Shared by the simulator
 * harness and the test support so both edit Nodes the same way.
 */
public final class NodeEdits {

    /** Writes tried before a conflict is handed to the caller. */
    public static final int CONFLICT_ATTEMPTS = 10;

    private NodeEdits() {
    }

    /**
     * Sets (value non-null) or removes (null) an annotation of a node, as {@code kubectl annotate --overwrite node
     * NODE KEY=VALUE} (or {@code KEY-}) does: {@code {"metadata":{"annotations":{KEY:VALUE|null}}}} as a JSON merge
     * patch (RFC 7386).
     *
     * @param client a client allowed to patch the node
     * @param node node name
     * @param key annotation key
     * @param value the value, or null to remove the annotation
     * @throws KubernetesClientException when the API server refuses the write (404 for a node that does not exist)
     */
    public static void annotate(KubernetesClient client, String node, String key, String value) {
        java.util.Map<String, Object> annotations = new HashMap<>();
        annotations.put(key, value);
        String patch = client.getKubernetesSerialization().asJson(
                java.util.Map.of("metadata", java.util.Map.of("annotations", annotations)));
        client.nodes().withName(node).patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE), patch);
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
