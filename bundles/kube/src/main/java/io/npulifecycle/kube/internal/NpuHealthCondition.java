package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.time.TimeSource;

/**
 * The NodeCondition {@value NodeKeys#CONDITION_NPU_HEALTHY} of this runtime's Node (the node-problem-detector
 * convention), derived from what the node agent reports on its Node ({@link DesiredNodeState}):
 * <ul>
 * <li>{@code False}, reason {@value NodeKeys#CONDITION_REASON_CHIP_WEDGED}, the chips in the message: while a
 * recovery request stands ({@code reboot-reason=recovery}, chips from {@code reboot-chips}) or the health-watch
 * verdict is {@code npu-health=wedged};</li>
 * <li>{@code True}, reason {@value NodeKeys#CONDITION_REASON_CHIPS_HEALTHY}: once the driver validated in this boot
 * ({@code driver-validated}) with {@code npu-health=healthy};</li>
 * <li>otherwise (a fresh boot not validated yet, a degraded or unknown verdict) the condition stays as it is.</li>
 * </ul>
 * Writes are bounded: one {@code PATCH nodes/status} (JSON Patch: a {@code test} of the condition's position, then its
 * {@code replace}, or an {@code add} to the list; a JSON merge patch guarded by the resourceVersion when the Node has
 * no condition yet; the other conditions are never touched) only when the status, reason or message
 * differ from the Node as last seen; {@code lastTransitionTime} changes only with the status, {@code lastHeartbeatTime}
 * is the time of the write (the condition is not re-asserted while nothing changes). A conflict (409, or 422 from a
 * failed {@code test}) is written at the next round, from the informer's newer copy. A refused write (no
 * {@code nodes/status patch} permission, the admission policy) is logged once per distinct error and tried again at
 * most every {@link #RETRY_AFTER_FAILURE} of TimeSource time; it never stops the labels and annotations of the node
 * sync. Called on the node sync's worker thread only.
 */
final class NpuHealthCondition {

    private static final System.Logger LOG = System.getLogger(NpuHealthCondition.class.getName());
    /** The shortest time between two attempts of the same condition after a failed write. */
    static final Duration RETRY_AFTER_FAILURE = Duration.ofSeconds(60);

    /**
     * The condition the node agent wants.
     *
     * @param status {@code True} or {@code False}
     * @param reason {@value NodeKeys#CONDITION_REASON_CHIP_WEDGED} or {@value NodeKeys#CONDITION_REASON_CHIPS_HEALTHY}
     * @param message for people: the chips, or the validated driver and boot
     */
    record Verdict(String status, String reason, String message) {
    }

    private final KubernetesClient client;
    private final String nodeName;
    private final TimeSource time;
    private Verdict failedVerdict;
    private Instant failedAt;
    private String lastError;
    private long writes;

    /**
     * @param client the fabric8 client (not closed here); needs {@code nodes/status patch} on this Node
     * @param nodeName this runtime's Node
     * @param time the TimeSource (condition times, retry spacing)
     */
    NpuHealthCondition(KubernetesClient client, String nodeName, TimeSource time) {
        this.client = Objects.requireNonNull(client, "client");
        this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
        this.time = Objects.requireNonNull(time, "time");
    }

    /**
     * @param d what the node agent reports on its Node
     * @return the condition that follows from it, or {@code null} when it says nothing new (leave the condition)
     */
    static Verdict decide(DesiredNodeState d) {
        String reason = value(d.annotation(NodeKeys.REBOOT_REASON));
        String chips = value(d.annotation(NodeKeys.REBOOT_CHIPS));
        String health = value(d.label(NodeKeys.NPU_HEALTH));
        String validated = value(d.annotation(NodeKeys.DRIVER_VALIDATED));
        if (Markers.REASON_RECOVERY.equals(reason) || "wedged".equals(health)) {
            return new Verdict("False", NodeKeys.CONDITION_REASON_CHIP_WEDGED, (chips == null
                    ? "NPU chips wedged (" + NodeKeys.NPU_HEALTH + "=wedged)" : "NPU chips " + chips + " wedged")
                    + ": the driver reports dev_num=0 and refuses DCMI calls; "
                    + (Markers.REASON_RECOVERY.equals(reason) ? "recovery reboot requested ("
                            + NodeKeys.REBOOT_REQUIRED + "=true, reason=recovery)" : "no reboot requested yet"));
        }
        if (validated != null && "healthy".equals(health)) {
            int at = validated.lastIndexOf('@');
            String msg = at > 0 ? "driver " + validated.substring(0, at) + " validated in boot "
                    + validated.substring(at + 1) : "driver validated (" + validated + ")";
            return new Verdict("True", NodeKeys.CONDITION_REASON_CHIPS_HEALTHY, msg + "; every expected chip healthy");
        }
        return null;
    }

    private static String value(Optional<String> v) {
        return v == null || v.isEmpty() || v.get().isBlank() ? null : v.get();
    }

    /**
     * @param n a Node, or {@code null}
     * @return its {@value NodeKeys#CONDITION_NPU_HEALTHY} condition, or {@code null}
     */
    static NodeCondition current(Node n) {
        if (n == null || n.getStatus() == null || n.getStatus().getConditions() == null) {
            return null;
        }
        for (NodeCondition c : n.getStatus().getConditions()) {
            if (NodeKeys.CONDITION_NPU_HEALTHY.equals(c.getType())) {
                return c;
            }
        }
        return null;
    }

    /**
     * Writes the condition {@code want} onto the Node unless the Node (as last seen) has it already.
     *
     * @param want the condition wanted, or {@code null} (nothing is written)
     * @param seen the Node as last seen, or {@code null} (nothing is written: the informer has not delivered it)
     * @return the Node as the API server stored it after an accepted write (remember it: the informer's copy comes
     *         later), or {@code null} when nothing was written
     */
    Node reconcile(Verdict want, Node seen) {
        if (want == null || seen == null) {
            return null;
        }
        NodeCondition have = current(seen);
        if (have != null && want.status().equals(have.getStatus()) && want.reason().equals(have.getReason())
                && want.message().equals(have.getMessage())) {
            failedVerdict = null;
            return null;
        }
        Instant now = time.now().truncatedTo(ChronoUnit.SECONDS);
        if (want.equals(failedVerdict) && failedAt != null && now.isBefore(failedAt.plus(RETRY_AFTER_FAILURE))) {
            return null;
        }
        String transition = have != null && want.status().equals(have.getStatus()) && have.getLastTransitionTime() != null
                ? have.getLastTransitionTime() : now.toString();
        Map<String, Object> cond = new LinkedHashMap<>();
        cond.put("type", NodeKeys.CONDITION_NPU_HEALTHY);
        cond.put("status", want.status());
        cond.put("lastHeartbeatTime", now.toString());
        cond.put("lastTransitionTime", transition);
        cond.put("reason", want.reason());
        cond.put("message", want.message());
        List<Map<String, Object>> ops = new ArrayList<>();
        List<NodeCondition> conds = seen.getStatus() == null ? null : seen.getStatus().getConditions();
        int index = conds == null ? -1 : conds.indexOf(have);
        if (have != null && index >= 0) {
            // the position is tested first: a list that changed meanwhile fails the patch, tried again from a new read
            ops.add(op("test", "/status/conditions/" + index + "/type", NodeKeys.CONDITION_NPU_HEALTHY));
            ops.add(op("replace", "/status/conditions/" + index, cond));
        } else if (conds != null && !conds.isEmpty()) {
            ops.add(op("add", "/status/conditions/-", cond));
        }
        // no condition yet (the status or its list may be absent in the JSON): a merge patch guarded by the
        // resourceVersion creates the list
        String body = !ops.isEmpty() ? client.getKubernetesSerialization().asJson(ops)
                : client.getKubernetesSerialization().asJson(Map.of("metadata", Map.of("resourceVersion",
                        seen.getMetadata().getResourceVersion()), "status", Map.of("conditions", List.of(cond))));
        PatchType type = ops.isEmpty() ? PatchType.JSON_MERGE : PatchType.JSON;
        Node written;
        try {
            // on a stub, not withName(..): fabric8 would GET the Node first, a second request per write
            Node stub = new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName(nodeName)
                    .endMetadata().build();
            written = client.nodes().resource(stub).subresource("status").patch(PatchContext.of(type), body);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409 || e.getCode() == 422) {
                // the Node changed since it was seen (a stale resourceVersion, or the list moved under the test): the
                // next round, with the informer's newer copy, writes it; no pause
                LOG.log(Level.DEBUG, "Node " + nodeName + ": condition " + NodeKeys.CONDITION_NPU_HEALTHY
                        + " not written (" + e.getCode() + ", the Node changed): next round");
                return null;
            }
            failedVerdict = want;
            failedAt = now;
            String error = e.getCode() + " " + e.getMessage();
            if (!error.equals(lastError)) {
                lastError = error;
                boolean denied = e.getCode() == 403;
                LOG.log(denied ? Level.ERROR : Level.WARNING, "Node " + nodeName + ": cannot write the condition "
                        + NodeKeys.CONDITION_NPU_HEALTHY + "=" + want.status() + " (" + want.reason() + "): "
                        + (denied ? "the node agent needs 'patch' on nodes/status (RBAC) and the admission policy's "
                                + "leave to change this condition of its own Node: " : "")
                        + ApiErrors.describe(e) + " (tried again in " + RETRY_AFTER_FAILURE.toSeconds() + " s; the labels, "
                        + "annotations and Events are written as before)");
            }
            return null;
        }
        failedVerdict = null;
        lastError = null;
        writes++;
        LOG.log(Level.INFO, "Node " + nodeName + ": condition " + NodeKeys.CONDITION_NPU_HEALTHY + "="
                + want.status() + " (" + want.reason() + "): " + want.message());
        return written;
    }

    private static Map<String, Object> op(String op, String path, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", op);
        m.put("path", path);
        m.put("value", value);
        return m;
    }

    /** @return the condition writes accepted since start */
    long writes() {
        return writes;
    }

    /** @return the last refused write's error, or {@code null} after an accepted one */
    String lastError() {
        return lastError;
    }
}
