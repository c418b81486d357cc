package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.plan.NodeWrites;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Removes what npu-lifecycle added to a cluster, so that uninstalling leaves it as it was: the node-agent DaemonSets
 * (the driver DaemonSets, label {@code app=npu-driver-daemonset}, and, for {@link Scope#UNINSTALL}, the chart's
 * {@code app=npu-lifecycle-node-agent}) and their pods; on every Node the {@code npu.openfuyao.com/} labels and
 * annotations of the contract, the taint {@value NodeKeys#NPU_UNHEALTHY_TAINT}, the NodeCondition
 * {@value NodeKeys#CONDITION_NPU_HEALTHY} and the cordons the control plane made (annotation
 * {@value NodeKeys#CORDONED_BY}); and, for {@link Scope#UNINSTALL}, the finalizer {@value NodeKeys#FINALIZER_CLEANUP}
 * of the NPUOperatorCtl resources (the resources themselves are kept).
 *
 * <p>Kept, and said so in the {@link Report}: the annotation {@value NodeKeys#APPROVE_REBOOT} (an administrator's
 * pending approval is theirs to withdraw), the installer's labels ({@value NodeKeys#CHIP},
 * {@value NodeKeys#NPU_PRESENT}), and a cordon without our record (an administrator's).
 *
 * <p>Never in the middle of a reboot: while a Node's {@value NodeKeys#REBOOTING_FROM_BOOT_ID} names the boot it is
 * still in (the kubelet's {@code status.nodeInfo.bootID}, else the node agent's {@value NodeKeys#BOOT_ID}), no
 * DaemonSet is deleted and that Node is not touched: the pass reports it as waited for. Node agents are gone before
 * the Nodes are cleaned (their pods deleted and waited for, except on a Node that is not Ready, whose kubelet cannot
 * confirm), so none writes its keys back.
 *
 * <p>One {@link #pass()} does what can be done now and never blocks; callers repeat passes until
 * {@link Report#done()} (the launcher's {@code uninstall} with its timeout, the controller at each reconcile for the
 * finalizer). Every Node write is one JSON merge patch guarded by its resourceVersion (a 409 leaves the Node for the
 * next pass); the condition is removed with a JSON patch that tests its position first. Before any write the pass
 * asks the API server (SelfSubjectAccessReview) for every permission it will use and refuses with the missing ones
 * named: nothing is half removed for want of a permission.
 */
public final class ClusterCleanup {

    private static final System.Logger LOG = System.getLogger(ClusterCleanup.class.getName());

    /** Label value of the chart's node-agent DaemonSet (driver.enabled=false). */
    public static final String NODE_AGENT_APP = "npu-lifecycle-node-agent";
    /**
     * Annotation on an NPUOperatorCtl, value an RFC 3339 instant, written by {@code npu-lifecycle uninstall} before it
     * cleans: a control plane started before that instant writes nothing more (its replicas are about to be deleted
     * by {@code helm uninstall}); one started after it (a reinstall) removes the annotation and carries on.
     */
    public static final String UNINSTALLING = NodeKeys.PREFIX + "uninstalling";

    /** The control plane's labels. */
    static final List<String> CONTROL_PLANE_LABELS = List.of(NodeKeys.DRIVER_UPGRADE_STATE, NodeKeys.DRIVER_COMBINATION);
    /** The control plane's annotations ({@value NodeKeys#CORDONED_BY} goes with the cordon). */
    static final List<String> CONTROL_PLANE_ANNOTATIONS = List.of(NodeKeys.DRIVER_UPGRADE_FAILURE,
            NodeKeys.DRIVER_UPGRADE_PROGRESS, NodeKeys.UPGRADE_REBOOT_BEFORE, NodeKeys.RECOVERY_REBOOT_GRANTED,
            NodeKeys.RECOVERY_DRAIN_FAILED);
    /** The node agent's labels. */
    static final List<String> NODE_AGENT_LABELS = List.of(NodeKeys.REBOOT_REQUIRED, NodeKeys.DRIVER_VERSION,
            NodeKeys.NPU_HEALTH, NodeKeys.RECOVERY_BLOCKED);
    /** The node agent's annotations. */
    static final List<String> NODE_AGENT_ANNOTATIONS = List.of(NodeKeys.REBOOT_REASON, NodeKeys.BOOT_ID,
            NodeKeys.REBOOTING_FROM_BOOT_ID, NodeKeys.DRIVER_VALIDATED, NodeKeys.RECOVERY_FAILURE,
            NodeKeys.REBOOT_CHIPS);

    /** What a cleanup covers. */
    public enum Scope {
        /**
         * {@code npu-lifecycle uninstall} (the chart's pre-delete hook): everything, the chart's node-agent DaemonSet
         * and the NPUOperatorCtl finalizers included.
         */
        UNINSTALL,
        /**
         * The deletion of the NPUOperatorCtl (its finalizer): the driver DaemonSets and everything on the Nodes;
         * while the chart's node-agent DaemonSet (driver.enabled=false) runs, its agents' keys and the condition are
         * theirs and stay (helm uninstall removes them).
         */
        RESOURCE_DELETED
    }

    /**
     * What one pass did and found.
     *
     * @param removed what this pass removed, one line each ({@code node n1: label ...})
     * @param kept what stays on purpose, with why
     * @param waitingFor what the pass waits for before it can go on (a node in its reboot, terminating pods), with why
     * @param changed whether this pass wrote anything (a next pass checks nothing came back)
     */
    public record Report(List<String> removed, List<String> kept, List<String> waitingFor, boolean changed) {
        /** @return whether nothing is left to do: nothing waited for and nothing written in this pass */
        public boolean done() {
            return waitingFor.isEmpty() && !changed;
        }
    }

    /** The cleanup cannot go on: a permission is missing or the API server refused a request; the message says which. */
    public static final class CleanupException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** @param message what failed and what to do about it */
        CleanupException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** {@code authorization.k8s.io/v1} {@code selfsubjectaccessreviews}, cluster-scoped. */
    private static final io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext ACCESS_REVIEW =
            new io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext.Builder().withGroup("authorization.k8s.io")
                    .withVersion("v1").withKind("SelfSubjectAccessReview").withPlural("selfsubjectaccessreviews")
                    .withNamespaced(false).build();

    private final KubernetesClient client;
    private final String namespace;
    private final Scope scope;
    private boolean permissionsChecked;

    /**
     * @param client a client with the control plane's permissions (not closed here)
     * @param namespace the control plane's namespace: its DaemonSets, pods and NPUOperatorCtl resources
     * @param scope what to remove
     */
    public ClusterCleanup(KubernetesClient client, String namespace, Scope scope) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.scope = Objects.requireNonNull(scope, "scope");
    }

    /**
     * One pass: checks the permissions (first pass only), then deletes the DaemonSets unless a Node is in its
     * reboot, deletes their pods and waits for them, then cleans each Node not in its reboot and, for
     * {@link Scope#UNINSTALL}, removes the finalizers. Never blocks on a wait: it reports it.
     *
     * @return what was done and found
     * @throws CleanupException when a permission is missing (every missing one named, before any write) or the API
     *         server refuses or fails a request (the request named)
     */
    public Report pass() {
        if (!permissionsChecked) {
            checkPermissions();
            permissionsChecked = true;
        }
        List<String> removed = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        List<String> waiting = new ArrayList<>();
        boolean changed = false;
        List<Node> nodes = call("list nodes", () -> client.nodes().list().getItems());
        List<Node> rebooting = nodes.stream().filter(ClusterCleanup::inReboot).toList();
        for (Node n : rebooting) {
            waiting.add("node " + name(n) + " is in its reboot (" + NodeKeys.REBOOTING_FROM_BOOT_ID + "="
                    + annotations(n).get(NodeKeys.REBOOTING_FROM_BOOT_ID) + " is still its boot id): left as it is "
                    + "until it is back");
        }
        List<String> apps = scope == Scope.UNINSTALL ? List.of(NodeKeys.DRIVER_APP, NODE_AGENT_APP)
                : List.of(NodeKeys.DRIVER_APP);
        List<DaemonSet> sets = new ArrayList<>();
        for (String app : apps) {
            sets.addAll(call("list daemonsets in " + namespace, () -> client.apps().daemonSets().inNamespace(namespace)
                    .withLabel(NodeKeys.DRIVER_APP_LABEL, app).list().getItems()));
        }
        boolean chartAgents = scope == Scope.RESOURCE_DELETED && !call("list daemonsets in " + namespace,
                () -> client.apps().daemonSets().inNamespace(namespace).withLabel(NodeKeys.DRIVER_APP_LABEL,
                        NODE_AGENT_APP).list().getItems()).isEmpty();
        if (!sets.isEmpty() && !rebooting.isEmpty()) {
            for (DaemonSet ds : sets) {
                kept.add("DaemonSet " + namespace + "/" + ds.getMetadata().getName() + " for now: its agent must see "
                        + "the rebooting node back first");
            }
            return new Report(removed, kept, waiting, false);
        }
        for (DaemonSet ds : sets) {
            String n = ds.getMetadata().getName();
            call("delete DaemonSet " + namespace + "/" + n,
                    () -> client.apps().daemonSets().inNamespace(namespace).withName(n).delete());
            removed.add("DaemonSet " + namespace + "/" + n);
            changed = true;
        }
        java.util.Set<String> notReady = new java.util.HashSet<>();
        nodes.stream().filter(n -> !ready(n)).forEach(n -> notReady.add(name(n)));
        for (String app : apps) {
            List<Pod> pods = call("list pods in " + namespace, () -> client.pods().inNamespace(namespace)
                    .withLabel(NodeKeys.DRIVER_APP_LABEL, app).list().getItems());
            for (Pod p : pods) {
                String pn = p.getMetadata().getName();
                String on = p.getSpec() == null ? null : p.getSpec().getNodeName();
                if (p.getMetadata().getDeletionTimestamp() == null) {
                    call("delete pod " + namespace + "/" + pn, () -> client.pods().inNamespace(namespace).withName(pn)
                            .delete());
                    removed.add("pod " + namespace + "/" + pn);
                    changed = true;
                }
                if (on != null && notReady.contains(on)) {
                    kept.add("pod " + namespace + "/" + pn + " terminating on node " + on + ", which is not Ready: "
                            + "its kubelet removes it when the node is back");
                } else {
                    waiting.add("pod " + namespace + "/" + pn + (on == null ? "" : " on node " + on)
                            + " to terminate (its node agent could write its keys back)");
                }
            }
        }
        if (!waiting.isEmpty() && rebooting.size() < waiting.size()) {
            // node agents still run somewhere: clean the Nodes once they are gone
            return new Report(removed, kept, waiting, changed);
        }
        for (Node n : nodes) {
            if (rebooting.contains(n)) {
                continue;
            }
            changed |= cleanNode(n, chartAgents, removed, kept);
        }
        if (scope == Scope.UNINSTALL) {
            changed |= removeFinalizers(removed);
        }
        return new Report(removed, kept, waiting, changed);
    }

    /** @return whether the node is in a reboot called from the boot it is still in */
    static boolean inReboot(Node n) {
        String from = annotations(n).get(NodeKeys.REBOOTING_FROM_BOOT_ID);
        if (from == null || from.isBlank()) {
            return false;
        }
        String boot = n.getStatus() != null && n.getStatus().getNodeInfo() != null
                && n.getStatus().getNodeInfo().getBootID() != null && !n.getStatus().getNodeInfo().getBootID().isBlank()
                        ? n.getStatus().getNodeInfo().getBootID() : annotations(n).get(NodeKeys.BOOT_ID);
        return from.equals(boot);
    }

    private static boolean ready(Node n) {
        if (n.getStatus() == null || n.getStatus().getConditions() == null) {
            return true; // no kubelet reports (the test servers): treated as ready
        }
        return n.getStatus().getConditions().stream().noneMatch(c -> "Ready".equals(c.getType())
                && !"True".equals(c.getStatus()));
    }

    /** @return whether the Node was written */
    private boolean cleanNode(Node n, boolean chartAgents, List<String> removed, List<String> kept) {
        String name = name(n);
        Map<String, String> labels = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
        Map<String, String> ann = annotations(n);
        List<String> labelKeys = new ArrayList<>(CONTROL_PLANE_LABELS);
        List<String> annKeys = new ArrayList<>(CONTROL_PLANE_ANNOTATIONS);
        if (!chartAgents) {
            labelKeys.addAll(NODE_AGENT_LABELS);
            annKeys.addAll(NODE_AGENT_ANNOTATIONS);
        }
        Map<String, Object> labelPatch = new LinkedHashMap<>();
        Map<String, Object> annPatch = new LinkedHashMap<>();
        List<String> what = new ArrayList<>();
        for (String k : labelKeys) {
            if (labels.containsKey(k)) {
                labelPatch.put(k, null);
                what.add("label " + k);
            }
        }
        for (String k : annKeys) {
            if (ann.containsKey(k)) {
                annPatch.put(k, null);
                what.add("annotation " + k);
            }
        }
        boolean unschedulable = n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
        boolean ours = NodeKeys.CORDONED_BY_VALUE.equals(ann.get(NodeKeys.CORDONED_BY));
        Map<String, Object> spec = new LinkedHashMap<>();
        if (ann.containsKey(NodeKeys.CORDONED_BY)) {
            annPatch.put(NodeKeys.CORDONED_BY, null);
            if (ours && unschedulable) {
                spec.put("unschedulable", null);
                what.add("cordon (" + NodeKeys.CORDONED_BY + "=" + NodeKeys.CORDONED_BY_VALUE + ")");
            } else {
                what.add("annotation " + NodeKeys.CORDONED_BY);
            }
        } else if (unschedulable) {
            kept.add("node " + name + ": cordon (not made by npu-lifecycle: no " + NodeKeys.CORDONED_BY
                    + " record, an administrator's)");
        }
        List<Taint> taints = n.getSpec() == null || n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints();
        if (taints.stream().anyMatch(t -> NodeKeys.NPU_UNHEALTHY_TAINT.equals(t.getKey()))) {
            List<Taint> rest = new ArrayList<>(taints);
            rest.removeIf(t -> NodeKeys.NPU_UNHEALTHY_TAINT.equals(t.getKey()));
            spec.put("taints", rest);
            what.add("taint " + NodeKeys.NPU_UNHEALTHY_TAINT);
        }
        if (ann.containsKey(NodeKeys.APPROVE_REBOOT)) {
            kept.add("node " + name + ": annotation " + NodeKeys.APPROVE_REBOOT + "=" + ann.get(NodeKeys.APPROVE_REBOOT)
                    + " (an administrator's pending approval: `kubectl annotate node " + name + " "
                    + NodeKeys.APPROVE_REBOOT + "-` withdraws it)");
        }
        if (chartAgents && (NODE_AGENT_LABELS.stream().anyMatch(labels::containsKey)
                || NODE_AGENT_ANNOTATIONS.stream().anyMatch(ann::containsKey))) {
            kept.add("node " + name + ": the node agent's keys and condition (its DaemonSet " + NODE_AGENT_APP
                    + " runs; helm uninstall removes them)");
        }
        boolean wrote = false;
        if (!what.isEmpty()) {
            Map<String, Object> meta = new LinkedHashMap<>();
            meta.put("resourceVersion", n.getMetadata().getResourceVersion());
            if (!labelPatch.isEmpty()) {
                meta.put("labels", labelPatch);
            }
            if (!annPatch.isEmpty()) {
                meta.put("annotations", annPatch);
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("metadata", meta);
            if (!spec.isEmpty()) {
                body.put("spec", spec);
            }
            try {
                client.nodes().resource(NodeWrites.nodeStub(name)).patch(PatchContext.of(PatchType.JSON_MERGE),
                        client.getKubernetesSerialization().asJson(body));
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409 || e.getCode() == 404) {
                    LOG.log(Level.DEBUG, "node " + name + " changed while being cleaned (" + e.getCode() + "): next pass");
                    return true;
                }
                throw refused("patch node " + name + " (remove " + String.join(", ", what) + ")", e);
            }
            what.forEach(w -> removed.add("node " + name + ": " + w));
            wrote = true;
        }
        if (!chartAgents) {
            wrote |= removeCondition(n, removed);
        }
        return wrote;
    }

    /** @return whether the condition was removed (or the Node changed meanwhile: a next pass looks again) */
    private boolean removeCondition(Node n, List<String> removed) {
        List<NodeCondition> conds = n.getStatus() == null ? null : n.getStatus().getConditions();
        if (conds == null) {
            return false;
        }
        for (int i = 0; i < conds.size(); i++) {
            if (!NodeKeys.CONDITION_NPU_HEALTHY.equals(conds.get(i).getType())) {
                continue;
            }
            List<Map<String, Object>> ops = List.of(
                    Map.of("op", "test", "path", "/status/conditions/" + i + "/type", "value",
                            NodeKeys.CONDITION_NPU_HEALTHY),
                    Map.of("op", "remove", "path", "/status/conditions/" + i));
            String name = name(n);
            try {
                // on a stub, not withName(..): fabric8 GETs the object before a patch otherwise (RBAC: no get)
                client.nodes().resource(NodeWrites.nodeStub(name)).subresource("status").patch(PatchContext.of(PatchType.JSON),
                        client.getKubernetesSerialization().asJson(ops));
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409 || e.getCode() == 422 || e.getCode() == 404) {
                    return true; // the list moved (a kubelet status update): the next pass reads it again
                }
                throw refused("patch nodes/status of " + name + " (remove the condition "
                        + NodeKeys.CONDITION_NPU_HEALTHY + ")", e);
            }
            removed.add("node " + name + ": condition " + NodeKeys.CONDITION_NPU_HEALTHY);
            return true;
        }
        return false;
    }

    private boolean removeFinalizers(List<String> removed) {
        boolean wrote = false;
        List<GenericKubernetesResource> crs = call("list npuoperatorctls in " + namespace,
                () -> client.genericKubernetesResources(UpgradeController.CTX).inNamespace(namespace).list().getItems());
        for (GenericKubernetesResource cr : crs) {
            List<String> fins = cr.getMetadata().getFinalizers();
            if (fins == null || !fins.contains(NodeKeys.FINALIZER_CLEANUP)) {
                continue;
            }
            String name = cr.getMetadata().getName();
            patchCr(cr, fresh -> {
                List<String> now = fresh.getMetadata().getFinalizers();
                return now == null || !now.contains(NodeKeys.FINALIZER_CLEANUP) ? null
                        : Map.of("finalizers", Finalizers.without(now));
            }, "remove the finalizer " + NodeKeys.FINALIZER_CLEANUP);
            removed.add("NPUOperatorCtl " + namespace + "/" + name + ": finalizer " + NodeKeys.FINALIZER_CLEANUP
                    + " (the resource itself is kept)");
            wrote = true;
        }
        return wrote;
    }

    /**
     * Marks every NPUOperatorCtl of the namespace with {@link #UNINSTALLING} = {@code at}, so the running control
     * plane writes nothing more while the cleanup runs.
     *
     * @param at the instant to write (RFC 3339)
     * @return the resources marked, by name
     * @throws CleanupException when the API server refuses
     */
    public List<String> markUninstalling(java.time.Instant at) {
        List<String> marked = new ArrayList<>();
        List<GenericKubernetesResource> crs = call("list npuoperatorctls in " + namespace,
                () -> client.genericKubernetesResources(UpgradeController.CTX).inNamespace(namespace).list().getItems());
        for (GenericKubernetesResource cr : crs) {
            patchCr(cr, fresh -> Map.of("annotations", Map.of(UNINSTALLING, at.toString())), "mark it " + UNINSTALLING);
            marked.add(cr.getMetadata().getName());
        }
        return marked;
    }

    /** How often a patch of an NPUOperatorCtl is tried when the resource changed between read and write (409). */
    static final int CR_PATCH_ATTEMPTS = 5;

    /**
     * JSON merge patch of an NPUOperatorCtl's metadata, guarded by the resourceVersion it was read with. The running
     * control plane writes the resource's status all along (each write a new resourceVersion), so a 409 is expected:
     * the resource is read again and {@code change} applied to the fresh copy, at most {@value #CR_PATCH_ATTEMPTS}
     * times.
     *
     * @param cr the resource as listed
     * @param change the metadata fields to merge (e.g. {@code finalizers}, {@code annotations}) for a copy of the
     *        resource, or null when that copy needs none
     * @param purpose what the patch is for, in the error
     * @throws CleanupException when the API server refuses other than with 409, or still with 409 after the last
     *         attempt
     */
    private void patchCr(GenericKubernetesResource cr, java.util.function.Function<GenericKubernetesResource,
            Map<String, Object>> change, String purpose) {
        String name = cr.getMetadata().getName();
        String what = "patch NPUOperatorCtl " + namespace + "/" + name + " (" + purpose + ")";
        GenericKubernetesResource current = cr;
        for (int attempt = 1;; attempt++) {
            Map<String, Object> fields = change.apply(current);
            if (fields == null) {
                return;
            }
            Map<String, Object> meta = new LinkedHashMap<>(fields);
            meta.put("resourceVersion", current.getMetadata().getResourceVersion());
            GenericKubernetesResource stub = new GenericKubernetesResource();
            stub.setApiVersion(NpuOperatorCtlType.GROUP + "/" + NpuOperatorCtlType.VERSION);
            stub.setKind(NpuOperatorCtlType.KIND);
            stub.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name)
                    .withNamespace(namespace).build());
            try {
                client.genericKubernetesResources(UpgradeController.CTX).inNamespace(namespace).resource(stub)
                        .patch(PatchContext.of(PatchType.JSON_MERGE),
                                client.getKubernetesSerialization().asJson(Map.of("metadata", meta)));
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= CR_PATCH_ATTEMPTS) {
                    throw refused(what, e);
                }
            }
            current = call("read NPUOperatorCtl " + namespace + "/" + name + " again (it changed while trying to "
                    + purpose + ")", () -> client.genericKubernetesResources(UpgradeController.CTX)
                            .inNamespace(namespace).withName(name).get());
            if (current == null) {
                return; // deleted meanwhile: nothing left to mark or release
            }
        }
    }

    /** The permissions the cleanup uses: (verb, group, resource, subresource, namespace or null). */
    private List<String[]> permissions() {
        List<String[]> p = new ArrayList<>();
        p.add(new String[] {"list", "", "nodes", "", null});
        p.add(new String[] {"patch", "", "nodes", "", null});
        p.add(new String[] {"patch", "", "nodes", "status", null});
        p.add(new String[] {"list", "apps", "daemonsets", "", namespace});
        p.add(new String[] {"delete", "apps", "daemonsets", "", namespace});
        p.add(new String[] {"list", "", "pods", "", namespace});
        p.add(new String[] {"delete", "", "pods", "", namespace});
        if (scope == Scope.UNINSTALL) {
            p.add(new String[] {"list", NpuOperatorCtlType.GROUP, NpuOperatorCtlType.PLURAL, "", namespace});
            p.add(new String[] {"patch", NpuOperatorCtlType.GROUP, NpuOperatorCtlType.PLURAL, "", namespace});
        }
        return p;
    }

    /**
     * Asks the API server whether this client may do everything the cleanup does; an answer without a verdict (a
     * server without the authorization API, the embedded test server) counts as allowed.
     *
     * @throws CleanupException naming every missing permission
     */
    void checkPermissions() {
        List<String> missing = new ArrayList<>();
        for (String[] p : permissions()) {
            // untyped: the authorization model is not among the fabric8 jars the kubeclient bundle embeds
            Map<String, Object> attributes = new LinkedHashMap<>();
            attributes.put("verb", p[0]);
            attributes.put("group", p[1]);
            attributes.put("resource", p[2]);
            if (!p[3].isEmpty()) {
                attributes.put("subresource", p[3]);
            }
            if (p[4] != null) {
                attributes.put("namespace", p[4]);
            }
            GenericKubernetesResource review = new GenericKubernetesResource();
            review.setApiVersion("authorization.k8s.io/v1");
            review.setKind("SelfSubjectAccessReview");
            review.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMeta());
            review.setAdditionalProperty("spec", Map.of("resourceAttributes", attributes));
            GenericKubernetesResource answer;
            try {
                answer = client.genericKubernetesResources(ACCESS_REVIEW).resource(review).create();
            } catch (KubernetesClientException e) {
                if (e.getCode() <= 0 || e.getCode() == 401 || e.getCode() == 403 || e.getCode() >= 500) {
                    throw refused("ask the API server for the cleanup's permissions (SelfSubjectAccessReview)", e);
                }
                // a server that cannot answer the question (no authorization API): each request says it instead
                LOG.log(Level.INFO, "SelfSubjectAccessReview not answered (" + e.getCode() + "): the permissions are "
                        + "not checked before the cleanup");
                return;
            }
            Object status = answer == null ? null : answer.getAdditionalProperties().get("status");
            if (status instanceof Map<?, ?> st && Boolean.FALSE.equals(st.get("allowed"))) {
                missing.add(p[0] + " " + (p[1].isEmpty() ? "" : p[1] + "/") + p[2] + (p[3].isEmpty() ? "" : "/" + p[3])
                        + (p[4] == null ? " (cluster-wide)" : " in namespace " + p[4]));
            }
        }
        if (!missing.isEmpty()) {
            throw new CleanupException("nothing was removed: the account of this client lacks the permissions "
                    + String.join(", ", missing) + " (grant them to it, e.g. the chart's control-plane ServiceAccount "
                    + "roles, or run with a kubeconfig that has them)", null);
        }
    }

    private static String name(Node n) {
        return n.getMetadata().getName();
    }

    private static Map<String, String> annotations(Node n) {
        Map<String, String> a = n.getMetadata() == null ? null : n.getMetadata().getAnnotations();
        return a == null ? Map.of() : a;
    }

    private static <T> T call(String what, java.util.function.Supplier<T> request) {
        try {
            return request.get();
        } catch (KubernetesClientException e) {
            throw refused(what, e);
        }
    }

    private static void call(String what, Runnable request) {
        call(what, () -> {
            request.run();
            return null;
        });
    }

    private static CleanupException refused(String what, KubernetesClientException e) {
        String why = e.getCode() == 403 ? "forbidden (403): a permission is missing: " + e.getMessage()
                : e.getCode() == 401 ? "unauthorized (401): the API server rejected the credentials (an expired or "
                        + "wrong token, a client certificate it does not trust); check them with kubectl auth whoami"
                : e.getCode() <= 0 ? noAnswer(e)
                        : "the API server answered " + e.getCode() + ": " + e.getMessage();
        return new CleanupException("cannot " + what + ": " + why, e);
    }

    /** @return why a request got no HTTP answer, from the exception's causes (TLS, refused, closed connection) */
    static String noAnswer(Throwable e) {
        StringBuilder causes = new StringBuilder();
        for (Throwable t = e; t != null && causes.length() < 2000; t = t.getCause()) {
            causes.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
        }
        String all = causes.toString();
        String detail = e.getCause() == null ? e.getMessage() : String.valueOf(e.getCause());
        if (all.contains("PKIX") || all.contains("SSLHandshakeException") || all.contains("CertificateException")) {
            return "TLS handshake failed: the API server's certificate is not trusted by the credentials' "
                    + "certificate-authority (" + detail + ")";
        }
        if (all.contains("GOAWAY")) {
            return "the API server closed the connection (" + detail + "): a token or client certificate it rejects "
                    + "ends an HTTP/2 connection this way; check the credentials with kubectl auth whoami";
        }
        if (all.contains("ConnectException") || all.contains("Connection refused")) {
            return "connection refused (" + detail + "): nothing listens at the server address; check --kubeconfig, "
                    + "or the pod's network";
        }
        return "no answer from the API server (" + detail + "); check --kubeconfig, or the pod's ServiceAccount and "
                + "network";
    }

    /** The finalizer list of an NPUOperatorCtl. */
    static final class Finalizers {
        private Finalizers() {
        }

        /** @return {@code fins} with the cleanup finalizer added (once) */
        static List<String> with(List<String> fins) {
            List<String> out = new ArrayList<>(fins == null ? List.of() : fins);
            if (!out.contains(NodeKeys.FINALIZER_CLEANUP)) {
                out.add(NodeKeys.FINALIZER_CLEANUP);
            }
            return out;
        }

        /** @return {@code fins} without the cleanup finalizer */
        static List<String> without(List<String> fins) {
            List<String> out = new ArrayList<>(fins == null ? List.of() : fins);
            out.removeIf(NodeKeys.FINALIZER_CLEANUP::equals);
            return out;
        }
    }
}
