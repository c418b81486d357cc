package io.npulifecycle.simulator.harness;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.NodeEdits;

/**
 * The workloads and the administrator's edits of a scenario ({@code pod:}, {@code deletePod:}, {@code setPodReady:},
 * {@code removeFinalizers:}, {@code pdb:}, {@code deletePdb:}, {@code cordon:}, {@code uncordon:}, {@code label:}),
 * written through the admin client on either API server.
 *
 * <p>A pod's controller is an object of its kind owning it ({@code controller: true} owner reference). On the
 * harness's own clusters no controller acts on it: neither API server runs the ReplicaSet, StatefulSet or DaemonSet
 * controller, so nothing recreates an evicted pod, and the disruption controller (real API server) reads the owner's
 * {@code spec.replicas} (1) for a budget's {@code maxUnavailable}. On a real node ({@link RealNodeCluster}) the
 * ReplicaSet controller adopts the pod and makes a new one, through kube-scheduler, for an evicted one; its pods run
 * the image given here. A mirror pod carries {@code kubernetes.io/config.mirror} and is owned by its Node, as the
 * kubelet writes it. Every pod meets Pod Security's {@code restricted} level (a real API server's default).
 */
final class Workloads {

    /** The NPU resource a {@code pod:} step requests ({@code npu: N}). */
    static final String NPU_RESOURCE = "huawei.com/Ascend910";
    /** Label of every workload pod the harness creates, with the pod's name: its owner's selector. */
    static final String POD_LABEL = "sim.npulifecycle.io/pod";
    /** The annotation the kubelet puts on the mirror pod of a static pod. */
    static final String MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

    /**
     * The annotation that makes the kubelet emulation ({@link DaemonSetController}) report a pod Running but not Ready
     * (its readiness probe failing): {@code pod: {ready: false}} and {@code setPodReady}.
     */
    static final String NOT_READY_ANNOTATION = "sim.npulifecycle.io/not-ready";

    /** The image of a workload pod where no kubelet runs it. */
    static final String IMAGE = "registry.local/workload:1";

    private final ClusterBackend cluster;
    private final KubernetesClient client;
    private final String image;
    private final String pullPolicy;

    /** @param cluster the API server; its admin client writes; no kubelet runs the pods */
    Workloads(ClusterBackend cluster) {
        this(cluster, IMAGE, null);
    }

    /**
     * @param cluster the API server; its admin client writes
     * @param image the image of every workload pod (on a real kubelet, one its container runtime holds)
     * @param pullPolicy its {@code imagePullPolicy}, or null for the API server's default
     */
    Workloads(ClusterBackend cluster, String image, String pullPolicy) {
        this.cluster = cluster;
        this.client = cluster.client();
        this.image = image;
        this.pullPolicy = pullPolicy;
    }

    /**
     * Creates the pod of a {@code pod:} step, then its owner (named as the pod), whose controller reference the pod then
     * carries.
     *
     * @param a the step
     * @return the pod as created
     * @throws IllegalStateException when the pod exists (Terminating or not)
     * @throws KubernetesClientException when the API server refuses a write
     */
    Pod addPod(Action.PodStep a) {
        ensureNamespace(a.namespace());
        Pod existing = client.pods().inNamespace(a.namespace()).withName(a.name()).get();
        if (existing != null) {
            boolean terminating = existing.getMetadata().getDeletionTimestamp() != null;
            List<String> f = existing.getMetadata().getFinalizers() == null ? List.of()
                    : existing.getMetadata().getFinalizers();
            throw new IllegalStateException("pod " + a.namespace() + "/" + a.name() + " exists" + (terminating
                    ? " (Terminating" + (f.isEmpty() ? "" : ", held by its finalizers " + f + ": removeFinalizers "
                            + "first") + ")" : "") + ": a pod step creates a new one");
        }
        Map<String, String> labels = new LinkedHashMap<>(a.labels());
        labels.put(POD_LABEL, a.name());
        // Pod Security "restricted" (a real API server's default level for a namespace without labels)
        PodSpecBuilder spec = new PodSpecBuilder().withNodeName(a.node()).withTerminationGracePeriodSeconds(30L)
                .withAutomountServiceAccountToken(false).withNewSecurityContext().withRunAsNonRoot(true)
                .withRunAsUser(65535L).withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .endSecurityContext()
                .addNewContainer().withName("main").withImage(image).withImagePullPolicy(pullPolicy).withNewResources()
                .endResources().withNewSecurityContext().withAllowPrivilegeEscalation(false).withNewCapabilities()
                .withDrop("ALL").endCapabilities().endSecurityContext().endContainer();
        if (a.npu() > 0) {
            Quantity q = new Quantity(Integer.toString(a.npu()));
            spec.editFirstContainer().editResources().addToRequests(NPU_RESOURCE, q).addToLimits(NPU_RESOURCE, q)
                    .endResources().endContainer();
        }
        if (a.emptyDir()) {
            spec.addNewVolume().withName("scratch").withNewEmptyDir().endEmptyDir().endVolume()
                    .editFirstContainer().addNewVolumeMount().withName("scratch").withMountPath("/scratch")
                    .endVolumeMount().endContainer();
        }
        PodSpec podSpec = spec.build();
        ObjectMeta meta = new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(a.name())
                .withNamespace(a.namespace()).withLabels(labels).withFinalizers(a.finalizers()).build();
        if (!a.ready()) {
            meta.setAnnotations(new LinkedHashMap<>(Map.of(NOT_READY_ANNOTATION, "true")));
        }
        boolean mirror = a.controller().equals("mirror");
        if (mirror) {
            meta.setOwnerReferences(List.of(owner(a, labels, podSpec)));
            Map<String, String> annotations = new LinkedHashMap<>(meta.getAnnotations() == null ? Map.of()
                    : meta.getAnnotations());
            annotations.put(MIRROR_ANNOTATION, "sim-" + a.name());
            meta.setAnnotations(annotations);
        }
        Pod pod = client.pods().inNamespace(a.namespace()).resource(new PodBuilder().withMetadata(meta)
                .withSpec(podSpec).build()).create();
        if (mirror || a.controller().equals("none")) {
            return pod;
        }
        // the owner comes after its pod, which it finds already there: a controller that runs (a real node's
        // ReplicaSet controller) adopts it instead of making a pod of its own or deleting one in excess; the harness
        // sets the same controller reference where none runs
        OwnerReference owner = owner(a, labels, podSpec);
        NodeEdits.retryOnConflict(() -> client.pods().inNamespace(a.namespace()).withName(a.name()).edit(p -> {
            if (p.getMetadata().getOwnerReferences() == null || p.getMetadata().getOwnerReferences().stream()
                    .noneMatch(r -> owner.getUid().equals(r.getUid()))) {
                p.getMetadata().setOwnerReferences(List.of(owner));
            }
            return p;
        }));
        return client.pods().inNamespace(a.namespace()).withName(a.name()).get();
    }

    private OwnerReference owner(Action.PodStep a, Map<String, String> labels, PodSpec podSpec) {
        Map<String, String> selector = Map.of(POD_LABEL, a.name());
        // the owner's template has no nodeName: a pod its controller makes in place of an evicted one (on a real
        // kubelet) goes through the scheduler, which keeps it off a cordoned node, as a real workload's would
        var template = new PodTemplateSpecBuilder().withNewMetadata().withLabels(labels).endMetadata()
                .withSpec(new PodSpecBuilder(podSpec).withNodeName(null).build()).build();
        HasMetadata o;
        String apiVersion = "apps/v1";
        switch (a.controller()) {
            case "ReplicaSet" -> o = client.apps().replicaSets().inNamespace(a.namespace()).resource(
                    new ReplicaSetBuilder().withNewMetadata().withName(a.name()).withNamespace(a.namespace())
                            .endMetadata().withNewSpec().withReplicas(1).withNewSelector()
                            .withMatchLabels(selector).endSelector().withTemplate(template).endSpec().build())
                    .create();
            case "StatefulSet" -> o = client.apps().statefulSets().inNamespace(a.namespace()).resource(
                    new StatefulSetBuilder().withNewMetadata().withName(a.name()).withNamespace(a.namespace())
                            .endMetadata().withNewSpec().withReplicas(1).withServiceName(a.name())
                            .withNewSelector().withMatchLabels(selector).endSelector().withTemplate(template)
                            .endSpec().build())
                    .create();
            case "DaemonSet" -> o = client.apps().daemonSets().inNamespace(a.namespace()).resource(
                    new DaemonSetBuilder().withNewMetadata().withName(a.name()).withNamespace(a.namespace())
                            .endMetadata().withNewSpec().withNewSelector().withMatchLabels(selector).endSelector()
                            .withTemplate(template).endSpec().build())
                    .create();
            case "mirror" -> {
                o = client.nodes().withName(a.node()).get();
                apiVersion = "v1";
            }
            default -> o = null;
        }
        if (o == null) {
            return null;
        }
        return new OwnerReferenceBuilder().withApiVersion(apiVersion).withKind(o.getKind())
                .withName(o.getMetadata().getName()).withUid(o.getMetadata().getUid()).withController(true).build();
    }

    /**
     * Creates or replaces (a whole new spec) the PodDisruptionBudget of a {@code pdb:} step.
     *
     * @param a the step
     */
    void applyPdb(Action.Pdb a) {
        ensureNamespace(a.namespace());
        var b = new PodDisruptionBudgetBuilder().withNewMetadata().withName(a.name()).withNamespace(a.namespace())
                .endMetadata().withNewSpec().withNewSelector().withMatchLabels(a.selector()).endSelector();
        if (a.minAvailable() != null) {
            b.withMinAvailable(intOrString(a.minAvailable()));
        } else {
            b.withMaxUnavailable(intOrString(a.maxUnavailable()));
        }
        if (a.unhealthyPodEvictionPolicy() != null) {
            b.withUnhealthyPodEvictionPolicy(a.unhealthyPodEvictionPolicy());
        }
        var pdb = b.endSpec().build();
        var budgets = client.policy().v1().podDisruptionBudget().inNamespace(a.namespace());
        NodeEdits.retryOnConflict(() -> {
            var old = budgets.withName(a.name()).get();
            if (old == null) {
                budgets.resource(pdb).create();
            } else {
                pdb.getMetadata().setResourceVersion(old.getMetadata().getResourceVersion());
                budgets.resource(pdb).update();
            }
        });
    }

    /**
     * @param name the budget
     * @param namespace its namespace
     */
    void deletePdb(String name, String namespace) {
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName(name).delete();
    }

    /**
     * Deletes a pod as {@code kubectl delete pod} does.
     *
     * @param a the step: the pod, and its grace period or null for the pod's own
     * @throws KubernetesClientException when the API server refuses (a pod that does not exist is not an error: it is
     *         logged by the caller's timeline as done)
     */
    void deletePod(Action.DeletePod a) {
        var op = client.pods().inNamespace(a.namespace()).withName(a.name());
        if ((a.gracePeriodSeconds() == null ? op : op.withGracePeriod(a.gracePeriodSeconds())).delete().isEmpty()) {
            throw new IllegalStateException(noPod(a.namespace(), a.name()));
        }
    }

    private static String noPod(String namespace, String name) {
        return "there is no pod " + namespace + "/" + name + " (a name mistyped, or deleted by an earlier step?)";
    }

    /** Runs an edit of a pod, a missing pod named instead of the client's 404. */
    private void editPod(String namespace, String name, java.util.function.UnaryOperator<Pod> edit) {
        if (client.pods().inNamespace(namespace).withName(name).get() == null) {
            throw new IllegalStateException(noPod(namespace, name));
        }
        NodeEdits.retryOnConflict(() -> client.pods().inNamespace(namespace).withName(name).edit(edit));
    }

    /**
     * Makes a pod Ready or not through the kubelet emulation's annotation {@value #NOT_READY_ANNOTATION}.
     *
     * @param a the step
     * @throws KubernetesClientException 404 when the pod does not exist
     */
    void setPodReady(Action.SetPodReady a) {
        editPod(a.namespace(), a.name(), p -> {
            Map<String, String> annotations = p.getMetadata().getAnnotations() == null ? new LinkedHashMap<>()
                    : new LinkedHashMap<>(p.getMetadata().getAnnotations());
            if (a.ready()) {
                annotations.remove(NOT_READY_ANNOTATION);
            } else {
                annotations.put(NOT_READY_ANNOTATION, "true");
            }
            p.getMetadata().setAnnotations(annotations);
            return p;
        });
    }

    /**
     * Removes every finalizer of a pod, which ends a deletion they held.
     *
     * @param a the step
     * @throws KubernetesClientException 404 when the pod does not exist
     */
    void removeFinalizers(Action.RemoveFinalizers a) {
        editPod(a.namespace(), a.name(), p -> {
            p.getMetadata().setFinalizers(List.of());
            return p;
        });
    }

    /**
     * Sets or removes a node's label, as {@code kubectl label node --overwrite} does.
     *
     * @param node the node
     * @param key the label key
     * @param value the value, or null to remove it
     */
    void label(String node, String key, String value) {
        NodeEdits.retryOnConflict(() -> client.nodes().withName(node).edit(n -> {
            Map<String, String> labels = n.getMetadata().getLabels() == null ? new LinkedHashMap<>()
                    : new LinkedHashMap<>(n.getMetadata().getLabels());
            if (value == null) {
                labels.remove(key);
            } else {
                labels.put(key, value);
            }
            n.getMetadata().setLabels(labels);
            return n;
        }));
    }

    /**
     * Sets {@code spec.unschedulable} of a node, as {@code kubectl cordon} and {@code uncordon} do.
     *
     * @param node the node
     * @param unschedulable true to cordon
     */
    void setUnschedulable(String node, boolean unschedulable) {
        NodeEdits.retryOnConflict(() -> client.nodes().withName(node).edit(n -> {
            n.getSpec().setUnschedulable(unschedulable ? Boolean.TRUE : null);
            return n;
        }));
    }

    /**
     * @param node the node
     * @return its taints by key (the value, or "" for a taint without one); empty when none
     */
    Map<String, String> taints(String node) {
        var n = client.nodes().withName(node).get();
        Map<String, String> out = new LinkedHashMap<>();
        if (n != null && n.getSpec().getTaints() != null) {
            for (Taint t : n.getSpec().getTaints()) {
                out.put(t.getKey(), t.getValue() == null ? "" : t.getValue());
            }
        }
        return out;
    }

    /**
     * @param node the node
     * @return its {@code spec.unschedulable}, absent counting as false
     */
    boolean unschedulable(String node) {
        var n = client.nodes().withName(node).get();
        return n != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
    }

    /**
     * @param ref {@code namespace/name}
     * @return the pod, or null when it does not exist
     */
    Pod pod(String ref) {
        int slash = ref.indexOf('/');
        return client.pods().inNamespace(ref.substring(0, slash)).withName(ref.substring(slash + 1)).get();
    }

    /**
     * @return every pod a {@code pod:} step created (label {@value #POD_LABEL}), in any namespace, as the API server
     *         has them now (terminating ones included)
     */
    List<Pod> scenarioPods() {
        // filtered here rather than by a label selector: the mock's selector support is not the API server's
        return client.pods().inAnyNamespace().list().getItems().stream().filter(p -> p.getMetadata().getLabels() != null
                && p.getMetadata().getLabels().containsKey(POD_LABEL)).toList();
    }

    /** @return every PodDisruptionBudget ({@code policy/v1}), in any namespace */
    List<io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget> budgets() {
        return client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems();
    }

    /** The namespace and (no controller-manager creates it) its {@code default} ServiceAccount, which pods run as. */
    private void ensureNamespace(String name) {
        cluster.ensureNamespace(name);
    }

    private static IntOrString intOrString(Object v) {
        return v instanceof Integer i ? new IntOrString(i) : new IntOrString(String.valueOf(v));
    }
}
