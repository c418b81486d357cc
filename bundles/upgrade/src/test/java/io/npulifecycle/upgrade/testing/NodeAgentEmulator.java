package io.npulifecycle.upgrade.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.api.time.TimeSource;
import io.npulifecycle.testing.support.ClusterFixture;

/**
 * Emulates, at the Kubernetes level only, what the control plane sees of NPU nodes: the DaemonSet controller (one
 * driver pod per node matching a driver DaemonSet's nodeSelector, created with the DaemonSet's image when absent)
 * and one node agent per node, following the node agent ↔ control plane contract of docs/architecture.md:
 * <ol>
 * <li>a driver pod whose image version differs from the loaded one → stage, label
 * {@code npu.openfuyao.com/reboot-required=true}, annotation {@code reboot-reason=upgrade}, Event RebootRequired
 * {@code reason=upgrade};</li>
 * <li>reboot only with autoUpgrade (read from the NPUOperatorCtl) or a consumed {@code approve-reboot=true},
 * writing {@code rebooting-from-boot-id} right before; an approval is consumed as the node agent does it (one write
 * guarded by the resourceVersion of the Node it decided on, removing the approval and writing
 * {@code rebooting-from-boot-id}); neither while the control plane holds the upgrade reboot
 * ({@code driver-upgrade-state} {@code reboot-deferred}, {@code cordon-required} or {@code drain-required}) nor at or
 * after {@code upgrade-reboot-before} (NodeKeys#upgradeRebootRefusal);</li>
 * <li>after {@link #rebootDuration} (simulated): new {@code boot-id}, {@code driver-version} = staged,
 * {@code driver-validated=<version>@<boot-id>} and {@code npu-health=healthy} (after {@link #validationDelay} in a
 * second write if non-zero), {@code reboot-required} removed.</li>
 * </ol>
 * Public so that the simulator and the 1,000/5,000-node benchmarks can reuse it (test-jar of
 * io.npulifecycle.upgrade).
 */
public final class NodeAgentEmulator implements AutoCloseable {

    private static final String P = "npu.openfuyao.com/";
    private static final String BY_NODE = "node";
    private static final ResourceDefinitionContext CTX = new ResourceDefinitionContext.Builder()
            .withGroup("npu.openfuyao.com").withVersion("v1").withKind("NPUOperatorCtl").withPlural("npuoperatorctls")
            .withNamespaced(true).build();

    /** Namespace of the NPUOperatorCtl and the driver pods. */
    public static final String NS = "npu-operator";
    /** Name of the NPUOperatorCtl. */
    public static final String CR = "npuoperatorctl-sample";
    /** Registry of the driver images. */
    public static final String REGISTRY = "registry.local";

    private final KubernetesClient client;
    private final TimeSource time;
    private final String crNamespace;
    private final String crName;
    private final String registry;
    private final ExecutorService exec = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "node-agent-emulator");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, Agent> agents = new ConcurrentHashMap<>();
    private final Set<String> dirty = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean allDirty = new AtomicBoolean();
    private final AtomicBoolean queued = new AtomicBoolean();
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private SharedIndexInformer<Node> nodes;
    private SharedIndexInformer<Pod> pods;
    private SharedIndexInformer<DaemonSet> dss;
    private SharedIndexInformer<GenericKubernetesResource> crs;
    private volatile boolean closed;
    /** Simulated reboot time. */
    public volatile Duration rebootDuration = Duration.ofSeconds(60);
    /** Simulated time between the new boot's report and driver-validated; zero = the same write. */
    public volatile Duration validationDelay = Duration.ZERO;
    /** Highest number of nodes seen at once in an in-flight upgrade state (a slot). */
    public final AtomicInteger maxInFlight = new AtomicInteger();
    /** Reboots done. */
    public final AtomicInteger reboots = new AtomicInteger();
    /** Highest number of nodes rebooting at once (from the reboot decision to the new boot), whatever the labels say. */
    public final AtomicInteger maxRebootingAtOnce = new AtomicInteger();
    private final AtomicInteger rebootingNow = new AtomicInteger();

    private static final class Agent {
        final String name;
        volatile String loaded;
        volatile String bootId = UUID.randomUUID().toString();
        volatile String staged;
        volatile boolean rebooting;
        volatile boolean validates = true;

        Agent(String name, String loaded) {
            this.name = name;
            this.loaded = loaded;
        }
    }

    /**
     * @param client a client of its own (so its requests can be counted apart from the controller's)
     * @param time the (scaled) time source
     * @param crNamespace namespace of the NPUOperatorCtl
     * @param crName its name
     * @param registry registry of the initial driver pods' images
     */
    public NodeAgentEmulator(KubernetesClient client, TimeSource time, String crNamespace, String crName, String registry) {
        this.client = client;
        this.time = time;
        this.crNamespace = crNamespace;
        this.crName = crName;
        this.registry = registry;
    }

    /**
     * @param cluster the cluster; the emulator gets a client of its own (User-Agent {@code npu-emulator}) and is
     *        closed with the cluster
     * @param time the (scaled) time source
     * @return an emulator of the NPUOperatorCtl {@value #CR} in {@value #NS}, images from {@value #REGISTRY}; not
     *         started
     */
    public static NodeAgentEmulator on(ClusterFixture cluster, TimeSource time) {
        return cluster.own(new NodeAgentEmulator(cluster.client("npu-emulator"), time, NS, CR, REGISTRY));
    }

    /**
     * Adds {@code count} 910B nodes on openEuler 24.03 SP3 named n1..nN with driver {@code loaded}.
     *
     * @param count how many
     * @param loaded the validated driver version of each
     */
    public void addNodes(int count, String loaded) {
        for (int i = 1; i <= count; i++) {
            addNode("n" + i, "910b", "6.6.0-145.0.4.135.oe2403sp3.aarch64", "openEuler 24.03 (LTS-SP3)", loaded,
                    "6.6.0-145.0.4.135", "oe2403sp3");
        }
    }

    /**
     * @param version the target driver version
     * @return whether every NPU node has no upgrade state and runs and validated {@code version}
     */
    public boolean allDone(String version) {
        for (Node n : client.nodes().withLabel("openfuyao.com/npu.present").list().getItems()) {
            Map<String, String> l = n.getMetadata().getLabels();
            Map<String, String> a = n.getMetadata().getAnnotations();
            if (l.get(P + "driver-upgrade-state") != null || !version.equals(l.get(P + "driver-version"))
                    || !(version + "@" + a.get(P + "boot-id")).equals(a.get(P + "driver-validated"))) {
                return false;
            }
        }
        return true;
    }

    /**
     * @return a {@code spec.driver} map: {@code version}, {@code registry} {@value #REGISTRY}, {@code upgradePolicy}
     *         with {@code autoUpgrade} and, when not null, {@code maxParallelUpgrades}, {@code maxUnavailable},
     *         {@code deadlines}
     */
    public static Map<String, Object> driver(String version, boolean auto, Object maxParallel, Object maxUnavailable,
            Map<String, Object> deadlines) {
        Map<String, Object> up = new LinkedHashMap<>();
        up.put("autoUpgrade", auto);
        if (maxParallel != null) {
            up.put("maxParallelUpgrades", maxParallel);
        }
        if (maxUnavailable != null) {
            up.put("maxUnavailable", maxUnavailable);
        }
        if (deadlines != null) {
            up.put("deadlines", deadlines);
        }
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("version", version);
        d.put("registry", REGISTRY);
        d.put("upgradePolicy", up);
        return d;
    }

    /**
     * Creates an NPU node with a validated driver {@code loaded} and its driver pod.
     *
     * @param name node name
     * @param chip {@code 910b} / {@code 310p}
     * @param kernel {@code status.nodeInfo.kernelVersion}
     * @param osImage {@code status.nodeInfo.osImage}
     * @param loaded the loaded driver version
     * @param kernelTag / osTag the image tag parts of the combination (for the initial pod image)
     */
    public void addNode(String name, String chip, String kernel, String osImage, String loaded, String kernelTag, String osTag) {
        Agent a = new Agent(name, loaded);
        agents.put(name, a);
        Node node = new NodeBuilder().withNewMetadata().withName(name)
                .addToLabels("openfuyao.com/npu.present", "true").addToLabels(P + "chip", chip)
                .addToLabels(P + "driver-version", loaded).addToLabels(P + "npu-health", "healthy")
                .addToAnnotations(P + "boot-id", a.bootId).addToAnnotations(P + "driver-validated", loaded + "@" + a.bootId)
                .endMetadata().withNewSpec().endSpec().withNewStatus().withNewNodeInfo().withKernelVersion(kernel)
                .withOsImage(osImage).endNodeInfo().addNewCondition().withType("Ready").withStatus("True").endCondition()
                .endStatus().build();
        Node created = client.nodes().resource(node).create();
        if (created.getStatus() == null || created.getStatus().getNodeInfo() == null
                || created.getStatus().getNodeInfo().getKernelVersion() == null) {
            // a real API server ignores the status of a create (the kubelet writes it through nodes/status)
            created.setStatus(node.getStatus());
            client.nodes().resource(created).updateStatus();
        }
        createPod(name, registry + "/mlops/ascend-driver:" + loaded + "-" + chip + "-" + kernelTag + "-" + osTag,
                "npu-driver-initial", Map.of("app", "npu-driver-daemonset"));
    }

    /** @param node whose next boots never validate (npu-health=wedged), or validate again (true) */
    public void setValidates(String node, boolean validates) {
        Agent a = agents.get(node);
        a.validates = validates;
        if (validates && !a.rebooting) {
            patch(node, Map.of(P + "driver-validated", a.loaded + "@" + a.bootId), Map.of(P + "npu-health", "healthy"));
        }
    }

    /** Starts the informers. */
    public void start() {
        ResourceEventHandler<Node> nh = handler(n -> n.getMetadata().getName());
        ResourceEventHandler<Pod> ph = handler(p -> p.getSpec() == null ? null : p.getSpec().getNodeName());
        nodes = client.nodes().withLabel("openfuyao.com/npu.present").runnableInformer(0);
        pods = client.pods().inNamespace("npu-operator").withLabel("app", "npu-driver-daemonset").runnableInformer(0);
        // driver pods by node: a step looks up its node's pod, not every pod (5,000-node benchmark)
        pods.addIndexers(Map.of(BY_NODE, p -> p.getSpec() == null || p.getSpec().getNodeName() == null ? List.of()
                : List.of(p.getSpec().getNodeName())));
        dss = client.apps().daemonSets().inNamespace("npu-operator").runnableInformer(0);
        crs = client.genericKubernetesResources(CTX).inNamespace(crNamespace).runnableInformer(0);
        nodes.addEventHandler(nh);
        pods.addEventHandler(ph);
        dss.addEventHandler(handler(d -> null));
        crs.addEventHandler(handler(c -> null));
        informers.addAll(List.of(nodes, pods, dss, crs));
        // the emulated node agents and DaemonSet controller outlive an outage of the API server as the product's
        // watchdog makes its runtimes do: fabric8's default handler stops an informer whose watch or relist fails
        // in certain ways (DESIGN.md "Known traps"), after which this emulator would see no pod deleted and make
        // none (RolloutTest.informerLossMidRolloutCompletes in a CI run: "no driver pod on the node")
        informers.forEach(i -> i.exceptionHandler((started, t) -> !closed));
        informers.forEach(i -> i.start().toCompletableFuture().join());
    }

    private <T> ResourceEventHandler<T> handler(java.util.function.Function<T, String> nodeOf) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T o) {
                mark(nodeOf.apply(o));
            }

            @Override
            public void onUpdate(T o, T n) {
                mark(nodeOf.apply(n));
            }

            @Override
            public void onDelete(T o, boolean u) {
                mark(nodeOf.apply(o));
            }
        };
    }

    private void mark(String node) {
        if (node == null) {
            allDirty.set(true);
        } else {
            dirty.add(node);
        }
        if (queued.compareAndSet(false, true) && !closed) {
            exec.execute(this::run);
        }
    }

    private void run() {
        queued.set(false);
        if (closed) {
            return;
        }
        List<String> todo = new ArrayList<>();
        if (allDirty.getAndSet(false)) {
            todo.addAll(agents.keySet());
            dirty.clear();
        } else {
            todo.addAll(dirty);
            todo.forEach(dirty::remove);
        }
        int inFlight = 0;
        for (Node n : nodes.getStore().list()) {
            String s = n.getMetadata().getLabels().get(P + "driver-upgrade-state");
            if (s != null && Set.of("pod-restart-required", "reboot-required", "rebooting", "validation-required").contains(s)) {
                inFlight++;
            }
        }
        maxInFlight.accumulateAndGet(inFlight, Math::max);
        for (String name : todo) {
            try {
                step(name);
            } catch (KubernetesClientException e) {
                mark(name);
            }
        }
    }

    private void step(String name) {
        Agent a = agents.get(name);
        Node n = nodes.getStore().getByKey(name);
        if (a == null || n == null) {
            return;
        }
        // the DaemonSet controller
        Pod pod = null;
        for (Pod p : pods.getIndexer().byIndex(BY_NODE, name)) {
            if (p.getMetadata().getDeletionTimestamp() == null) {
                pod = p;
            } else {
                // the kubelet's part: a real API server keeps a deleted pod of a node (Terminating) until the
                // kubelet has stopped it and deletes it with grace period 0; the mock removes it at once
                client.pods().inNamespace(p.getMetadata().getNamespace()).resource(p).withGracePeriod(0).delete();
            }
        }
        if (pod == null) {
            for (DaemonSet ds : dss.getStore().list()) {
                Map<String, String> sel = ds.getSpec().getTemplate().getSpec().getNodeSelector();
                if (sel != null && sel.entrySet().stream().allMatch(e -> e.getValue().equals(n.getMetadata().getLabels().get(e.getKey())))) {
                    createPod(name, ds.getSpec().getTemplate().getSpec().getContainers().get(0).getImage(),
                            ds.getMetadata().getName(), ds.getSpec().getTemplate().getMetadata().getLabels());
                }
            }
            return;
        }
        if (a.rebooting) {
            return;
        }
        // the node agent in the driver pod
        String image = pod.getSpec().getContainers().get(0).getImage();
        String tag = image.substring(image.lastIndexOf(':') + 1);
        String podVersion = tag.substring(0, tag.indexOf('-'));
        Map<String, String> labels = n.getMetadata().getLabels();
        Map<String, String> ann = n.getMetadata().getAnnotations();
        if (!podVersion.equals(a.loaded) && !podVersion.equals(a.staged)) {
            a.staged = podVersion;
            try {
                patch(name, Map.of(P + "reboot-reason", "upgrade"), Map.of(P + "reboot-required", "true"));
            } catch (KubernetesClientException e) {
                // not staged while the request is not on the Node (the API server's 503 outage): the next step asks
                // again, as a node agent keeps its marker and writes it until it is written
                a.staged = null;
                throw e;
            }
            client.v1().events().inNamespace("default").resource(new EventBuilder().withNewMetadata()
                    .withName(name + "." + UUID.randomUUID()).endMetadata().withNewInvolvedObject().withKind("Node")
                    .withName(name).endInvolvedObject().withReason("RebootRequired").withType("Normal")
                    .withMessage("reason=upgrade: driver " + podVersion + " staged for the next boot").build()).create();
            return;
        }
        if (podVersion.equals(a.loaded) && a.staged != null && !a.staged.equals(a.loaded)) {
            a.staged = null; // the pod went back to the loaded version: nothing to boot into
            patch(name, Map.of(), nullMap(P + "reboot-required"));
            return;
        }
        if ("true".equals(labels.get(P + "reboot-required")) && a.staged != null) {
            // the node agent's rule (NodeKeys.upgradeRebootRefusal): no upgrade reboot while the control plane holds
            // it (no slot, cordon or drain) or after the maintenance window closed
            boolean held = io.npulifecycle.api.node.NodeKeys.upgradeRebootRefusal(
                    labels.get(P + "driver-upgrade-state"), ann.get(P + "upgrade-reboot-before"), time.now()) != null;
            boolean approved = "true".equals(ann.get(P + "approve-reboot")) && !held;
            if (approved || autoUpgrade() && !held) {
                Map<String, String> an = new java.util.HashMap<>();
                an.put(P + "rebooting-from-boot-id", a.bootId);
                if (approved) {
                    // the consumption: guarded by the resourceVersion the decision was made on (a 409 is retried
                    // from the newer copy: run() marks the node again)
                    an.put(P + "approve-reboot", null);
                    patch(name, an, Map.of(), n.getMetadata().getResourceVersion());
                } else {
                    patch(name, an, Map.of());
                }
                a.rebooting = true;
                maxRebootingAtOnce.accumulateAndGet(rebootingNow.incrementAndGet(), Math::max);
                time.schedule(() -> exec.execute(() -> boot(a)), rebootDuration);
            }
        }
    }

    private void boot(Agent a) {
        if (closed) {
            return;
        }
        reboots.incrementAndGet();
        rebootingNow.decrementAndGet();
        a.bootId = UUID.randomUUID().toString();
        a.loaded = a.staged;
        a.staged = null;
        Map<String, String> an = new java.util.HashMap<>();
        an.put(P + "boot-id", a.bootId);
        an.put(P + "reboot-reason", null);
        Map<String, String> lb = new java.util.HashMap<>();
        lb.put(P + "driver-version", a.loaded);
        lb.put(P + "reboot-required", null);
        boolean inline = validationDelay.isZero() && a.validates;
        if (inline) {
            an.put(P + "driver-validated", a.loaded + "@" + a.bootId);
            lb.put(P + "npu-health", "healthy");
        } else {
            an.put(P + "driver-validated", null);
            lb.put(P + "npu-health", a.validates ? "unknown" : "wedged");
        }
        reportBoot(a, an, lb, inline);
    }

    /**
     * Writes the new boot's report; while the API server refuses it (a 503 outage) it is written again 10 simulated
     * seconds later, as a node agent writes its labels until they are written: a report lost here left the node
     * {@code rebooting} for ever ({@code RolloutTest.informerLossMidRolloutCompletes}, "the node did not come back
     * with a new boot id").
     */
    private void reportBoot(Agent a, Map<String, String> an, Map<String, String> lb, boolean inline) {
        if (closed) {
            return;
        }
        try {
            patch(a.name, an, lb);
        } catch (KubernetesClientException e) {
            time.schedule(() -> exec.execute(() -> reportBoot(a, an, lb, inline)), Duration.ofSeconds(10));
            return;
        }
        a.rebooting = false;
        if (!inline && a.validates) {
            String boot = a.bootId;
            time.schedule(() -> exec.execute(() -> {
                if (boot.equals(a.bootId) && a.validates) {
                    patch(a.name, Map.of(P + "driver-validated", a.loaded + "@" + boot), Map.of(P + "npu-health", "healthy"));
                }
            }), validationDelay);
        }
        mark(a.name);
    }

    private boolean autoUpgrade() {
        GenericKubernetesResource cr = crs.getStore().getByKey(crNamespace + "/" + crName);
        if (cr == null || !(cr.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec)
                || !(spec.get("driver") instanceof Map<?, ?> d) || !(d.get("upgradePolicy") instanceof Map<?, ?> up)) {
            return false;
        }
        return Boolean.TRUE.equals(up.get("autoUpgrade"));
    }

    private void createPod(String node, String image, String owner, Map<String, String> labels) {
        ensureRunning(client, client.pods().inNamespace("npu-operator").resource(new PodBuilder().withNewMetadata()
                .withName(owner + "-" + node + "-" + UUID.randomUUID().toString().substring(0, 5)).withLabels(labels)
                .endMetadata().withNewSpec().withNodeName(node).addNewContainer().withName("driver").withImage(image)
                .endContainer().endSpec().withNewStatus().withPhase("Running").endStatus().build()).create());
    }

    /**
     * Sets a created pod's phase to Running, as the kubelet would, when the server did not keep the phase of the
     * create (a real API server stores a new pod as Pending; the mock keeps what was sent, and is not asked again).
     *
     * @param client a client that may write pods/status
     * @param created the pod as the create returned it
     */
    public static void ensureRunning(KubernetesClient client, Pod created) {
        if (created.getStatus() == null || !"Running".equals(created.getStatus().getPhase())) {
            created.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running").build());
            client.pods().inNamespace(created.getMetadata().getNamespace()).resource(created).updateStatus();
        }
    }

    private static Map<String, String> nullMap(String k) {
        Map<String, String> m = new java.util.HashMap<>();
        m.put(k, null);
        return m;
    }

    private void patch(String node, Map<String, String> annotations, Map<String, String> labels) {
        patch(node, annotations, labels, null);
    }

    /** A merge patch, guarded by {@code resourceVersion} when not null (a 409 when the Node changed since). */
    private void patch(String node, Map<String, String> annotations, Map<String, String> labels, String resourceVersion) {
        Map<String, Object> meta = new java.util.HashMap<>();
        if (resourceVersion != null) {
            meta.put("resourceVersion", resourceVersion);
        }
        if (!annotations.isEmpty()) {
            meta.put("annotations", annotations);
        }
        if (!labels.isEmpty()) {
            meta.put("labels", labels);
        }
        // an unguarded merge patch on a name-only stub: fabric8 reads the object before withName(..).patch(..), and
        // those reads (3 per node upgrade) were a quarter of the mock API server's work at 5,000 nodes
        Node stub = new Node();
        stub.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(node).build());
        client.nodes().resource(stub).patch(PatchContext.of(PatchType.JSON_MERGE),
                client.getKubernetesSerialization().asJson(Map.of("metadata", meta)));
    }

    /**
     * Counts, in the emulator's informer cache (no request), the nodes whose upgrade is done: no upgrade state,
     * {@code driver-version} and {@code driver-validated} on {@code version} for the current boot.
     *
     * @param version the target driver version
     * @return the number of such nodes (0 before {@link #start()})
     */
    public int upgraded(String version) {
        if (nodes == null) {
            return 0;
        }
        int done = 0;
        for (Node n : nodes.getStore().list()) {
            Map<String, String> l = n.getMetadata().getLabels();
            Map<String, String> a = n.getMetadata().getAnnotations();
            if (l.get(P + "driver-upgrade-state") == null && version.equals(l.get(P + "driver-version"))
                    && (version + "@" + a.get(P + "boot-id")).equals(a.get(P + "driver-validated"))) {
                done++;
            }
        }
        return done;
    }

    /**
     * @return the number of nodes in each {@code driver-upgrade-state}, from the emulator's informer cache (no request;
     *         empty before {@link #start()})
     */
    public Map<String, Integer> states() {
        Map<String, Integer> m = new java.util.TreeMap<>();
        if (nodes != null) {
            for (Node n : nodes.getStore().list()) {
                String s = n.getMetadata().getLabels().get(P + "driver-upgrade-state");
                if (s != null) {
                    m.merge(s, 1, Integer::sum);
                }
            }
        }
        return m;
    }

    /** @return the loaded version of a node as the agent knows it */
    public String loaded(String node) {
        return agents.get(node).loaded;
    }

    @Override
    public void close() {
        closed = true;
        informers.forEach(SharedIndexInformer::stop);
        exec.shutdownNow();
    }
}
