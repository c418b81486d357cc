package io.npulifecycle.simulator.harness;

import io.npulifecycle.api.node.NodeKeys;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Plays the DaemonSet controller and the kubelet of the simulated cluster (the embedded API server has no
 * controllers): every DaemonSet in {@code npu-operator} gets one Running pod on each NPU node its node selector
 * matches (recreated when the control plane deletes it: {@code updateStrategy: OnDelete}), and each node's agent is
 * (re)started when its driver pod is new, with {@code DRIVER_VERSION} taken from the pod's image tag.
 */
final class DaemonSetController implements Runnable {

    static final String NAMESPACE = NodeKeys.DRIVER_NAMESPACE;
    static final String APP_LABEL = "app";
    static final String APP = NodeKeys.DRIVER_APP;

    private final KubernetesClient client;
    private final Map<String, SimNode> nodes;
    private final Consumer<String> log;
    private final Map<String, String> podUidOfNode = new HashMap<>();
    private volatile boolean running = true;
    private volatile boolean paused;

    DaemonSetController(KubernetesClient client, Map<String, SimNode> nodes, Consumer<String> log) {
        this.client = client;
        this.nodes = nodes;
        this.log = log;
    }

    void stop() {
        running = false;
    }

    /** Pauses pod (re)creation and agent restarts (while the API server is out, for instance). */
    void paused(boolean value) {
        paused = value;
    }

    @Override
    public void run() {
        while (running) {
            try {
                if (!paused) {
                    reconcile();
                }
            } catch (RuntimeException e) {
                // the API server may be out (an injected outage): try again
            }
            try {
                Thread.sleep(250); // a controller's resync period, wall clock
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    synchronized void reconcile() {
        List<DaemonSet> daemonSets = client.apps().daemonSets().inNamespace(NAMESPACE).list().getItems();
        List<Node> clusterNodes = client.nodes().list().getItems();
        List<Pod> pods = client.pods().inNamespace(NAMESPACE).withLabel(APP_LABEL, APP).list().getItems();
        for (DaemonSet ds : daemonSets) {
            PodSpec template = ds.getSpec().getTemplate().getSpec();
            Map<String, String> selector = template.getNodeSelector() == null ? Map.of() : template.getNodeSelector();
            for (Node n : clusterNodes) {
                String name = n.getMetadata().getName();
                if (!nodes.containsKey(name) || !matches(n, selector)) {
                    continue;
                }
                boolean has = pods.stream().anyMatch(p -> name.equals(p.getSpec().getNodeName())
                        && p.getMetadata().getDeletionTimestamp() == null && ownedBy(p, ds));
                if (!has) {
                    Pod pod = new PodBuilder().withNewMetadata()
                            .withName(ds.getMetadata().getName() + "-" + name)
                            .withNamespace(NAMESPACE)
                            .withLabels(ds.getSpec().getTemplate().getMetadata().getLabels())
                            .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1")
                                    .withKind("DaemonSet").withName(ds.getMetadata().getName())
                                    .withUid(ds.getMetadata().getUid()).withController(true).build())
                            .endMetadata()
                            .withSpec(new PodBuilder().withSpec(template).build().getSpec())
                            .editSpec().withNodeName(name).endSpec()
                            .withNewStatus().withPhase("Running").endStatus()
                            .build();
                    client.pods().inNamespace(NAMESPACE).resource(pod).create();
                    log.accept("kubelet: pod " + pod.getMetadata().getName() + " created on " + name + " ("
                            + image(pod) + ")");
                }
            }
        }
        pods = client.pods().inNamespace(NAMESPACE).withLabel(APP_LABEL, APP).list().getItems();
        for (SimNode node : nodes.values()) {
            Pod pod = pods.stream().filter(p -> node.name().equals(p.getSpec().getNodeName())).findFirst()
                    .orElse(null);
            String uid = pod == null ? null : pod.getMetadata().getUid();
            if (Objects.equals(uid, podUidOfNode.get(node.name())) && (pod == null || node.runtime().alive())) {
                continue;
            }
            podUidOfNode.put(node.name(), uid);
            if (pod == null) {
                node.stopAgent();
                log.accept("kubelet: " + node.name() + ": driver pod gone, node agent stopped");
                continue;
            }
            String version = versionOf(image(pod));
            try {
                node.startAgent(version);
                log.accept("kubelet: " + node.name() + ": node agent started from " + image(pod));
            } catch (java.io.IOException e) {
                log.accept("kubelet: " + node.name() + ": cannot start the node agent: " + e.getMessage());
            }
        }
    }

    private static boolean ownedBy(Pod p, DaemonSet ds) {
        return p.getMetadata().getOwnerReferences() != null && p.getMetadata().getOwnerReferences().stream()
                .anyMatch(o -> Objects.equals(o.getUid(), ds.getMetadata().getUid()));
    }

    private static boolean matches(Node n, Map<String, String> selector) {
        Map<String, String> labels = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
        for (Map.Entry<String, String> e : selector.entrySet()) {
            if (!e.getValue().equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    static String image(Pod p) {
        return p.getSpec().getContainers().isEmpty() ? "" : p.getSpec().getContainers().get(0).getImage();
    }

    /**
     * @param image {@code <registry>/mlops/ascend-driver:<version>-<chip>-<kernel>-<os>}
     * @return the version, e.g. {@code 25.5.0}
     */
    static String versionOf(String image) {
        int colon = image.lastIndexOf(':');
        String tag = colon < 0 ? image : image.substring(colon + 1);
        int dash = tag.indexOf('-');
        return dash < 0 ? tag : tag.substring(0, dash);
    }
}
