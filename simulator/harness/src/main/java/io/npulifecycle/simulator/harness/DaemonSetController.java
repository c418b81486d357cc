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
 * Plays the DaemonSet controller and the kubelet of the simulated cluster (neither API server runs controllers or
 * kubelets): every DaemonSet in {@code npu-operator} gets one Running pod on each NPU node its node selector matches
 * (recreated when the control plane deletes it: {@code updateStrategy: OnDelete}; a pod of the same name still
 * terminating is waited for), and each node's agent is (re)started when its driver pod is new, with
 * {@code DRIVER_VERSION} taken from the pod's image tag and, on a real API server, a new token bound to that pod.
 *
 * <p>As the kubelet of the emulated nodes, for every pod bound to one of them (any namespace): a pod without the
 * phase Running gets it through the status subresource (a create does not store a status), and a pod deleted with a
 * grace period (it keeps a {@code deletionTimestamp}) has its container stopped at once and is deleted with grace 0
 * once the grace period has passed in simulated time.
 *
 * <p>An agent that exits on its own is started again at once, as the kubelet restarts a container, until it keeps
 * exiting without ever getting going ({@link CrashLoop}): then, like the kubelet's CrashLoopBackOff, it is left down
 * (the scenario fails, naming it) until a new driver pod replaces the old one.
 */
final class DaemonSetController implements Runnable {

    static final String NAMESPACE = NodeKeys.DRIVER_NAMESPACE;
    static final String APP_LABEL = "app";
    static final String APP = NodeKeys.DRIVER_APP;
    /** The chart's node-agent DaemonSet of driver.enabled=false (drivers installed on the hosts). */
    static final String NODE_AGENT_APP = "npu-lifecycle-node-agent";

    private final KubernetesClient client;
    private final Map<String, SimNode> nodes;
    private final Consumer<String> log;
    private final Map<String, String> podUidOfNode = new HashMap<>();
    private final RuntimeCredentials credentials;
    private final double timeScale;
    private final java.util.function.LongSupplier nanoClock;
    /** Nodes whose agent is not restarted because it keeps exiting ({@link CrashLoop}), reported once each. */
    private final java.util.Set<String> backedOff = new java.util.HashSet<>();
    /** Terminating pods by uid: when this emulation first saw their deletionTimestamp ({@link #nanoClock}). */
    private final Map<String, Long> terminatingSince = new HashMap<>();
    private volatile java.util.function.Predicate<String> silent = node -> false;
    private volatile boolean running = true;
    private volatile boolean paused;

    /**
     * @param client the admin client (the harness plays the controllers and the kubelets)
     * @param nodes the emulated nodes by name
     * @param credentials writes a node agent's token for each new driver pod
     * @param timeScale simulated seconds per wall-clock second (grace periods are simulated time)
     * @param nanoClock monotonic wall-clock nanoseconds
     * @param log where it reports what it does
     */
    DaemonSetController(KubernetesClient client, Map<String, SimNode> nodes, RuntimeCredentials credentials,
            double timeScale, java.util.function.LongSupplier nanoClock, Consumer<String> log) {
        this.credentials = credentials;
        this.timeScale = timeScale;
        this.nanoClock = nanoClock;
        this.client = client;
        this.nodes = nodes;
        this.log = log;
    }

    /**
     * Stops the controller: no agent is started once this returns. Waits for a reconcile in progress (it holds this
     * object's lock), which sees the flag before each agent start, so the runtimes the caller stops next stay stopped.
     */
    void stop() {
        running = false;
        synchronized (this) {
            // the lock is free only between reconciles
        }
    }

    /**
     * The nodes whose kubelet is silent ({@code nodeNotReady}): their pods get no status and their deletions do not
     * end, no pod is created on them and their node agent is neither started nor stopped (its container runs on).
     *
     * @param test whether a node is silent now
     */
    void silentNodes(java.util.function.Predicate<String> test) {
        this.silent = test;
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
        if (!running) {
            return;
        }
        kubelet();
        List<DaemonSet> daemonSets = client.apps().daemonSets().inNamespace(NAMESPACE).list().getItems();
        List<Node> clusterNodes = client.nodes().list().getItems();
        List<Pod> pods = agentPods();
        for (DaemonSet ds : daemonSets) {
            PodSpec template = ds.getSpec().getTemplate().getSpec();
            Map<String, String> selector = template.getNodeSelector() == null ? Map.of() : template.getNodeSelector();
            for (Node n : clusterNodes) {
                String name = n.getMetadata().getName();
                if (!nodes.containsKey(name) || !matches(n, selector) || silent.test(name)) {
                    continue;
                }
                boolean has = pods.stream().anyMatch(p -> name.equals(p.getSpec().getNodeName())
                        && p.getMetadata().getDeletionTimestamp() == null && ownedBy(p, ds));
                String podName = ds.getMetadata().getName() + "-" + name;
                boolean nameTaken = pods.stream().anyMatch(p -> podName.equals(p.getMetadata().getName()));
                if (!has && !nameTaken) {
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
                    Pod created = client.pods().inNamespace(NAMESPACE).resource(pod).create();
                    running(created);
                    log.accept("kubelet: pod " + pod.getMetadata().getName() + " created on " + name + " ("
                            + image(pod) + ")");
                }
            }
        }
        pods = agentPods();
        for (SimNode node : nodes.values()) {
            if (silent.test(node.name())) {
                continue; // no kubelet acts: the agent's container runs on whatever happens to its pod
            }
            // a terminating pod's container is stopped (SIGTERM) as the kubelet does at the start of the deletion
            Pod pod = pods.stream().filter(p -> node.name().equals(p.getSpec().getNodeName())
                    && p.getMetadata().getDeletionTimestamp() == null).findFirst().orElse(null);
            String uid = pod == null ? null : pod.getMetadata().getUid();
            boolean samePod = Objects.equals(uid, podUidOfNode.get(node.name()));
            if (samePod && (pod == null || node.runtime().alive())) {
                continue;
            }
            CrashLoopException loop = samePod ? node.runtime().crashLoop() : null;
            if (loop != null) {
                // CrashLoopBackOff: the same pod's agent keeps exiting on its own; a new driver pod starts it again
                if (backedOff.add(node.name())) {
                    log.accept("kubelet: " + node.name() + ": CrashLoopBackOff, not restarted: " + loop.getMessage());
                }
                continue;
            }
            backedOff.remove(node.name());
            podUidOfNode.put(node.name(), uid);
            if (pod == null) {
                node.stopAgent();
                log.accept("kubelet: " + node.name() + ": driver pod gone, node agent stopped");
                continue;
            }
            String version = versionOf(image(pod));
            if (!running) {
                return;
            }
            try {
                credentials.writeNodeAgent(node.kubeconfig(), pod);
                node.startAgent(version);
                log.accept("kubelet: " + node.name() + ": node agent started from " + image(pod));
            } catch (java.io.IOException e) {
                log.accept("kubelet: " + node.name() + ": cannot start the node agent: " + e.getMessage());
            }
        }
    }

    /**
     * @return the driver and node-agent pods of {@value #NAMESPACE} (label {@code app} one of the two), filtered here
     *         too: the embedded mock answers a set-based selector without applying it
     */
    private List<Pod> agentPods() {
        return client.pods().inNamespace(NAMESPACE).withLabelIn(APP_LABEL, APP, NODE_AGENT_APP).list().getItems()
                .stream().filter(p -> p.getMetadata().getLabels() != null && java.util.Set.of(APP, NODE_AGENT_APP)
                        .contains(p.getMetadata().getLabels().get(APP_LABEL))).toList();
    }

    /** The kubelet's part for the pods of the emulated nodes: the Running phase, and the end of deletions. */
    private void kubelet() {
        List<Pod> all = client.pods().inAnyNamespace().list().getItems();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (Pod p : all) {
            if (p.getSpec() == null || !nodes.containsKey(p.getSpec().getNodeName())
                    || silent.test(p.getSpec().getNodeName())) {
                continue;
            }
            String uid = p.getMetadata().getUid();
            if (p.getMetadata().getDeletionTimestamp() != null) {
                seen.add(uid);
                long since = terminatingSince.computeIfAbsent(uid, k -> nanoClock.getAsLong());
                Long grace = p.getMetadata().getDeletionGracePeriodSeconds();
                if (grace != null && grace == 0 && p.getMetadata().getFinalizers() != null
                        && !p.getMetadata().getFinalizers().isEmpty()) {
                    continue; // its container stopped; its finalizers hold the object until removed
                }
                double wallSeconds = (grace == null ? 0 : grace) / timeScale;
                if (nanoClock.getAsLong() - since >= (long) (wallSeconds * 1e9)) {
                    client.pods().inNamespace(p.getMetadata().getNamespace()).withName(p.getMetadata().getName())
                            .withGracePeriod(0).delete();
                    log.accept("kubelet: pod " + p.getMetadata().getName() + " terminated after its grace period ("
                            + grace + " s simulated)");
                }
            } else {
                running(p);
            }
        }
        terminatingSince.keySet().retainAll(seen);
    }

    /**
     * Sets the phase Running and the {@code Ready} condition through the status subresource, unless the pod has them
     * (or has finished): Ready {@code False} while it carries {@link Workloads#NOT_READY_ANNOTATION} (its readiness
     * probe failing), else {@code True}.
     */
    private void running(Pod p) {
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        boolean ready = p.getMetadata().getAnnotations() == null
                || !p.getMetadata().getAnnotations().containsKey(Workloads.NOT_READY_ANNOTATION);
        String want = ready ? "True" : "False";
        if (phase != null && !"Pending".equals(phase) && !("Running".equals(phase) && !want.equals(readyOf(p)))) {
            return;
        }
        Pod copy = new PodBuilder(p).withNewStatus().withPhase("Running").addNewCondition().withType("Ready")
                .withStatus(want).endCondition().endStatus().build();
        try {
            client.pods().inNamespace(p.getMetadata().getNamespace()).resource(copy).updateStatus();
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            if (e.getCode() != 409 && e.getCode() != 404) {
                throw e;
            }
            // changed or deleted meanwhile: the next round sees the newer pod
        }
    }

    /** @return the status of the pod's {@code Ready} condition, or null */
    private static String readyOf(Pod p) {
        if (p.getStatus() == null || p.getStatus().getConditions() == null) {
            return null;
        }
        return p.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
                .map(c -> c.getStatus()).findFirst().orElse(null);
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
