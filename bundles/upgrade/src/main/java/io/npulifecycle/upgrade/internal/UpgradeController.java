package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.api.time.TimeSource;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * The thin informer/writer layer around {@link Reconciler}: informers on the NPUOperatorCtl, the NPU Nodes (label
 * {@code openfuyao.com/npu.present}), all pods (driver pods and NPU workloads) and the driver DaemonSets; a
 * debounced reconcile on one thread; writes only while leader (checked right before every request); status writes
 * at most every {@code statusInterval}; informers rebuilt when they stop watching (410 Gone, API server restart).
 */
public final class UpgradeController implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(UpgradeController.class.getName());
    static final ResourceDefinitionContext CTX = new ResourceDefinitionContext.Builder().withGroup(NpuOperatorCtlType.GROUP)
            .withVersion(NpuOperatorCtlType.VERSION).withKind(NpuOperatorCtlType.KIND).withPlural(NpuOperatorCtlType.PLURAL).withNamespaced(true).build();
    private static final Duration IMAGE_OK_TTL = Duration.ofMinutes(5);
    private static final Duration IMAGE_BAD_TTL = Duration.ofSeconds(30);

    private final KubernetesClient client;
    private final TimeSource time;
    private final ControllerConfig cfg;
    private final RegistryClient registryOverride;
    private final DriverDaemonSets daemonSets;
    private final ExecutorService worker;
    private final ExecutorService checker;
    private final AtomicBoolean leader = new AtomicBoolean();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile boolean closed;
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private SharedIndexInformer<GenericKubernetesResource> crInf;
    private SharedIndexInformer<Node> nodeInf;
    private SharedIndexInformer<Pod> podInf;
    private SharedIndexInformer<DaemonSet> dsInf;
    private final Map<String, Cached> images = new ConcurrentHashMap<>();
    private final Set<String> checking = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> recentlyDeleted = new ConcurrentHashMap<>();
    /** Nodes this controller patched that the informer has not delivered yet (see {@link OwnWrites}). */
    private final OwnWrites ownWrites = new OwnWrites();
    /** Ages of the in-flight states measured with the monotonic clock (reconcile thread only). */
    private final DeadlineClock deadlineClock = new DeadlineClock();
    private NpuOperatorCtlStatus lastStatus;
    private String lastStatusUid;
    private long lastStatusWriteNanos = Long.MIN_VALUE / 2;
    private long unhealthySince = Long.MIN_VALUE;
    private TimeSource.Scheduled resyncTask;
    private final AtomicReference<Snapshot> snapshot = new AtomicReference<>(Snapshot.EMPTY);
    /** Write counters by kind (node-patch, pod-delete, event, daemonset, status, cr-annotation). */
    private final Map<String, AtomicLong> writes = new ConcurrentHashMap<>();
    private final AtomicLong reconciles = new AtomicLong();
    private final AtomicLong conflicts = new AtomicLong();
    private final AtomicLong staleSkipped = new AtomicLong();
    private final AtomicLong informerRebuilds = new AtomicLong();

    private record Cached(Reconciler.ImageStatus status, long atNanos) {
    }

    /** What the MBean shows. */
    public record Snapshot(String target, Map<String, Integer> counts, Map<String, String> nodeStates,
            List<String> awaitingApproval, List<String> failed, List<String> conditions, boolean paused) {
        static final Snapshot EMPTY = new Snapshot("", Map.of(), Map.of(), List.of(), List.of(), List.of(), false);
    }


    /**
     * @param client the Kubernetes client (not closed here)
     * @param time the time source
     * @param cfg the configuration
     * @param registry a registry client to use instead of one built from the configuration (tests), or null
     */
    public UpgradeController(KubernetesClient client, TimeSource time, ControllerConfig cfg, RegistryClient registry) {
        this.client = client;
        this.time = time;
        this.cfg = cfg;
        this.registryOverride = registry;
        this.daemonSets = DriverDaemonSets.load(client.getKubernetesSerialization());
        this.worker = Executors.newSingleThreadExecutor(r -> daemon(r, "npu-upgrade-reconcile"));
        this.checker = Executors.newSingleThreadExecutor(r -> daemon(r, "npu-upgrade-preflight"));
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Starts the informers and the periodic resync. Writes happen only after {@link #setLeader(boolean)} true. */
    public synchronized void start() {
        startInformers();
        resync();
    }

    private synchronized void startInformers() {
        ResourceEventHandler<Object> h = new ResourceEventHandler<>() {
            @Override
            public void onAdd(Object obj) {
                trigger();
            }

            @Override
            public void onUpdate(Object o, Object n) {
                trigger();
            }

            @Override
            public void onDelete(Object obj, boolean unknown) {
                trigger();
            }
        };
        crInf = client.genericKubernetesResources(CTX).inNamespace(cfg.namespace()).runnableInformer(0);
        nodeInf = client.nodes().withLabel(NodeKeys.NPU_PRESENT).runnableInformer(0);
        podInf = client.pods().inAnyNamespace().runnableInformer(0);
        dsInf = client.apps().daemonSets().inNamespace(NodeKeys.DRIVER_NAMESPACE)
                .withLabel(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP).runnableInformer(0);
        informers.clear();
        informers.add(crInf);
        informers.add(nodeInf);
        informers.add(podInf);
        informers.add(dsInf);
        for (SharedIndexInformer<?> i : informers) {
            i.addEventHandler(cast(h));
            i.start(); // asynchronous: a reconcile before the first list sees empty caches and writes nothing
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> ResourceEventHandler<T> cast(ResourceEventHandler<Object> h) {
        return (ResourceEventHandler<T>) (ResourceEventHandler<?>) h;
    }

    private synchronized void stopInformers() {
        for (SharedIndexInformer<?> i : informers) {
            try {
                i.stop();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "informer stop: " + e);
            }
        }
        informers.clear();
    }

    /** For tests: the informers stop silently (what fabric8 informers may do after 410 Gone or an API restart). */
    public synchronized void simulateInformerLoss() {
        for (SharedIndexInformer<?> i : informers) {
            i.stop();
        }
    }

    /**
     * Leader election callback: true = this replica reconciles and writes; false stops writing at once.
     *
     * @param isLeader whether this replica holds the lease
     */
    public void setLeader(boolean isLeader) {
        boolean was = leader.getAndSet(isLeader);
        if (was != isLeader) {
            LOG.log(Level.INFO, isLeader ? "lease acquired: reconciling the driver rollout" : "lease lost: writes stopped");
            if (isLeader) {
                synchronized (this) {
                    lastStatus = null; // re-read the CR's status: another leader may have written since
                }
                trigger();
            }
        }
    }

    /**
     * @return whether every informer has completed its first list (the caches hold the cluster's objects); false
     *         before {@link #start()} and while informers are being rebuilt
     */
    public synchronized boolean hasSynced() {
        return !informers.isEmpty() && informers.stream().allMatch(SharedIndexInformer::hasSynced);
    }

    /** @return whether this replica is the leader */
    public boolean isLeader() {
        return leader.get();
    }

    /** Asks for a reconcile after the debounce delay. */
    public void trigger() {
        if (closed || !scheduled.compareAndSet(false, true)) {
            return;
        }
        time.schedule(() -> worker.execute(() -> {
            scheduled.set(false);
            reconcileSafely();
        }), cfg.reconcileDelay());
    }

    private void resync() {
        if (closed) {
            return;
        }
        worker.execute(this::checkInformers);
        trigger();
        synchronized (this) {
            resyncTask = time.schedule(this::resync, cfg.resync());
        }
    }

    private synchronized void checkInformers() {
        boolean healthy = !informers.isEmpty() && informers.stream().allMatch(SharedIndexInformer::isWatching);
        long mono = time.monotonicNanos();
        if (healthy) {
            unhealthySince = Long.MIN_VALUE;
        } else if (unhealthySince == Long.MIN_VALUE) {
            unhealthySince = mono;
        }
        // fabric8 reconnects by itself: rebuild only an informer that stopped, or one not watching for 30 s of wall
        // time (simulated nanos / scale)
        boolean longUnhealthy = unhealthySince != Long.MIN_VALUE
                && (mono - unhealthySince) / time.scale() > Duration.ofSeconds(30).toNanos();
        if (longUnhealthy || informers.stream().anyMatch(i -> !i.isRunning())) {
            unhealthySince = Long.MIN_VALUE;
            LOG.log(Level.WARNING, "informers not watching (API server restart, 410 Gone?): rebuilding them and all "
                    + "per-node state from the Kubernetes objects");
            stopInformers();
            startInformers();
            informerRebuilds.incrementAndGet();
        }
    }

    private void reconcileSafely() {
        try {
            reconcile();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reconcile failed, retrying at the next event or resync: " + e, e);
        }
    }

    /**
     * @return per node carrying a progress annotation, its age in that state measured with the monotonic clock
     *         ({@link DeadlineClock})
     */
    private Map<String, Duration> stateAges(Collection<Node> nodes, Instant now, long mono) {
        Map<String, Duration> ages = new HashMap<>();
        for (Node n : nodes) {
            Map<String, String> ann = n.getMetadata().getAnnotations();
            Progress p = ann == null ? null : Progress.parse(ann.get(NodeKeys.DRIVER_UPGRADE_PROGRESS));
            if (p != null) {
                ages.put(n.getMetadata().getName(), deadlineClock.age(n.getMetadata().getName(), p, now, mono));
            }
        }
        deadlineClock.retain(ages.keySet());
        return ages;
    }

    synchronized void reconcile() {
        if (closed || crInf == null) {
            return;
        }
        if (!hasSynced()) {
            // every cache complete first: with the nodes listed but not yet the pods, a node running an NPU
            // workload would look free and be started (seen on a real API server, whose lists are slower)
            trigger();
            return;
        }
        reconciles.incrementAndGet();
        GenericKubernetesResource cr = crInf.getStore().getByKey(cfg.namespace() + "/" + cfg.resourceName());
        if (cr == null) {
            snapshot.set(Snapshot.EMPTY);
            return;
        }
        Instant now = time.now();
        long mono = time.monotonicNanos();
        recentlyDeleted.entrySet().removeIf(e -> mono - e.getValue() > Duration.ofMinutes(2).toNanos());
        SpecParser.Result spec = SpecParser.parse(cr.getAdditionalProperties().get("spec"));
        Map<String, String> crAnn = cr.getMetadata().getAnnotations() == null ? Map.of() : cr.getMetadata().getAnnotations();
        boolean paused = "true".equals(crAnn.get(NpuOperatorCtlType.PAUSED_ANNOTATION));
        if (lastStatus == null || !cr.getMetadata().getUid().equals(lastStatusUid)) {
            lastStatus = readStatus(cr);
            lastStatusUid = cr.getMetadata().getUid();
        }
        // the informer's copies, except where our own patch is newer (the watch event has not arrived yet)
        Collection<Node> nodes = ownWrites.view(nodeInf.getStore().list());
        List<Pod> pods = podInf.getStore().list();
        Map<String, Pod> driverPods = new HashMap<>();
        for (Pod p : pods) {
            if (NodeKeys.DRIVER_NAMESPACE.equals(p.getMetadata().getNamespace()) && p.getMetadata().getLabels() != null
                    && NodeKeys.DRIVER_APP.equals(p.getMetadata().getLabels().get(NodeKeys.DRIVER_APP_LABEL))
                    && p.getSpec() != null && p.getSpec().getNodeName() != null) {
                driverPods.merge(p.getSpec().getNodeName(), p, (a, b) -> a.getMetadata().getDeletionTimestamp() != null ? b
                        : b.getMetadata().getDeletionTimestamp() != null ? a
                                : String.valueOf(a.getMetadata().getCreationTimestamp())
                                        .compareTo(String.valueOf(b.getMetadata().getCreationTimestamp())) >= 0 ? a : b);
            }
        }
        Map<String, String> dsImages = new HashMap<>();
        for (DaemonSet ds : dsInf.getStore().list()) {
            dsImages.put(ds.getMetadata().getName(), ds.getSpec().getTemplate().getSpec().getContainers().get(0).getImage());
        }
        Map<String, Reconciler.ImageStatus> imgs = new HashMap<>();
        images.forEach((k, v) -> imgs.put(k, v.status()));
        Reconciler.Inputs in = new Reconciler.Inputs(cr.getMetadata().getGeneration(), spec, paused, lastStatus, nodes,
                driverPods, Reconciler.workloads(pods), cfg.registryCheck() ? imgs : new AllPresent(), dsImages,
                recentlyDeleted.keySet(), now, stateAges(nodes, now, mono));
        Reconciler.Plan plan = Reconciler.plan(in);
        if (cfg.registryCheck()) {
            for (String img : plan.imagesToCheck()) {
                Cached c = images.get(img);
                long ttl = (c != null && c.status().present() ? IMAGE_OK_TTL : IMAGE_BAD_TTL).toNanos();
                if ((c == null || mono - c.atNanos() > ttl) && checking.add(img)) {
                    checker.execute(() -> checkImage(img));
                }
            }
        }
        publish(plan);
        if (!leader.get()) {
            return;
        }
        if (!spec.valid() && (lastStatus == null || !plan.status().equals(lastStatus))) {
            LOG.log(Level.WARNING, "NPUOperatorCtl " + cfg.namespace() + "/" + cfg.resourceName()
                    + " has an invalid spec, nothing is touched: " + String.join("; ", spec.problems()));
        }
        for (Reconciler.DaemonSetApply d : plan.daemonSets()) {
            applyDaemonSet(d, dsInf.getStore().getByKey(NodeKeys.DRIVER_NAMESPACE + "/" + d.name()));
        }
        Set<String> notPatched = new java.util.HashSet<>();
        for (Reconciler.NodePatch p : plan.nodePatches()) {
            if (!patchNode(p, cr)) {
                notPatched.add(p.node());
            }
        }
        for (Reconciler.PodDelete d : plan.podDeletes()) {
            if (!leader.get()) {
                return;
            }
            if (notPatched.contains(d.node())) {
                // the node's patch (its slot: pod-restart-required) did not go through: no driver pod deleted
                // outside a slot; the next reconcile decides again from the newer node
                continue;
            }
            try {
                client.pods().inNamespace(d.namespace()).withName(d.name()).delete();
                count("pod-delete");
                recentlyDeleted.put(d.uid(), mono);
                LOG.log(Level.INFO, "node " + d.node() + ": deleted driver pod " + d.namespace() + "/" + d.name()
                        + " (" + d.why() + ")");
            } catch (KubernetesClientException e) {
                LOG.log(Level.WARNING, "node " + d.node() + ": deleting driver pod " + d.name() + " failed: " + e.getMessage());
            }
        }
        for (Reconciler.EventSpec e : plan.crEvents()) {
            event(e, cr);
        }
        if (!plan.status().equals(lastStatus)) {
            long since = mono - lastStatusWriteNanos;
            long interval = statusWriteInterval(lastStatus, plan.status(), cfg.statusInterval()).toNanos();
            if (since >= interval) {
                writeStatus(cr, plan.status());
                lastStatusWriteNanos = mono;
            } else {
                time.schedule(this::trigger, Duration.ofNanos(interval - since));
            }
        }
        if (plan.nextWakeup() != null) {
            Duration d = Duration.between(now, plan.nextWakeup());
            time.schedule(this::trigger, d.isNegative() ? Duration.ZERO : d.plusMillis(1));
        }
    }

    /** Progress-only status changes are written at most every this many status intervals. */
    static final int PROGRESS_INTERVALS = 5;

    /**
     * How long after the last status write the next one may go out: {@code statusInterval} when anything a person
     * or a tool acts on changed (a condition's status or reason, awaiting approval, failed or held nodes, target,
     * pause, start or completion), {@link #PROGRESS_INTERVALS} × {@code statusInterval} (10 s by default) when only
     * the counts, {@code progress} and the condition messages that quote them changed. Why: every node transition
     * changes the counts, so status PUTs grew with the rollout's length (0.05 per node upgrade at 5,000 nodes,
     * maxParallelUpgrades 50, docs/upgrade.md "Status").
     *
     * @param last the status last written (null = none)
     * @param next the status to write
     * @param statusInterval the configured minimum interval
     * @return the minimum interval between the last write and this one
     */
    static Duration statusWriteInterval(NpuOperatorCtlStatus last, NpuOperatorCtlStatus next, Duration statusInterval) {
        return last != null && outline(last).equals(outline(next)) ? statusInterval.multipliedBy(PROGRESS_INTERVALS)
                : statusInterval;
    }

    /** @return the status without its counts: everything but nodeCounts, progress and condition messages */
    private static List<Object> outline(NpuOperatorCtlStatus s) {
        List<Object> conds = new ArrayList<>();
        for (var c : s.getConditions()) {
            conds.add(List.of(String.valueOf(c.getType()), String.valueOf(c.getStatus()), String.valueOf(c.getReason()),
                    String.valueOf(c.getLastTransitionTime())));
        }
        return java.util.Arrays.asList(s.getObservedGeneration(), s.getTargetVersion(), s.getPaused(), s.getStartTime(),
                s.getCompletionTime(), s.getAwaitingApproval(), s.getFailedNodes(), s.getHeldNodes(), conds);
    }

    /** The map used when the registry preflight is disabled: every image is present. */
    private static final class AllPresent extends HashMap<String, Reconciler.ImageStatus> {
        private static final long serialVersionUID = 1L;

        @Override
        public Reconciler.ImageStatus get(Object key) {
            return Reconciler.ImageStatus.PRESENT;
        }
    }

    private void checkImage(String img) {
        try {
            RegistryClient rc = registryOverride != null ? registryOverride : registryFromSecret();
            Reconciler.ImageStatus s = rc.check(img);
            images.put(img, new Cached(s, time.monotonicNanos()));
            if (!s.present()) {
                LOG.log(Level.WARNING, "preflight: driver image " + img + " " + (s.missing() ? "is missing" : s.detail()));
            }
        } catch (RuntimeException e) {
            images.put(img, new Cached(new Reconciler.ImageStatus(false, false, e.getMessage()), time.monotonicNanos()));
        } finally {
            checking.remove(img);
            trigger();
        }
    }

    private RegistryClient registryFromSecret() {
        Map<String, String> auth = Map.of();
        if (!cfg.pullSecret().isBlank()) {
            Secret s = client.secrets().inNamespace(cfg.namespace()).withName(cfg.pullSecret()).get();
            if (s == null || s.getData() == null || s.getData().get(".dockerconfigjson") == null) {
                throw new IllegalArgumentException("pull secret " + cfg.namespace() + "/" + cfg.pullSecret()
                        + " missing or without .dockerconfigjson");
            }
            auth = RegistryClient.parseDockerConfig(new String(Base64.getDecoder().decode(s.getData().get(".dockerconfigjson")),
                    StandardCharsets.UTF_8));
        }
        return new RegistryClient(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build(),
                cfg.registryScheme(), auth, Duration.ofSeconds(10));
    }

    private NpuOperatorCtlStatus readStatus(GenericKubernetesResource cr) {
        Object st = cr.getAdditionalProperties().get("status");
        if (st == null) {
            return null;
        }
        try {
            return client.getKubernetesSerialization().convertValue(st, NpuOperatorCtlStatus.class);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "NPUOperatorCtl " + cfg.resourceName() + ": status unreadable, rebuilding it: " + e.getMessage());
            return null;
        }
    }

    /** @return whether the patch went through */
    private boolean patchNode(Reconciler.NodePatch p, GenericKubernetesResource cr) {
        if (!leader.get()) {
            return false;
        }
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("resourceVersion", p.resourceVersion());
        if (!p.labels().isEmpty()) {
            meta.put("labels", p.labels());
        }
        if (!p.annotations().isEmpty()) {
            meta.put("annotations", p.annotations());
        }
        // the patch loop of a wave takes a while (one request after the other): a node whose agent wrote since the
        // plan was made would answer 409 (its newer copy is in the informer already); skip it and decide again
        Node cached = nodeInf.getStore().getByKey(p.node());
        if (cached != null && !Objects.equals(ownWrites.currentVersion(cached), p.resourceVersion())) {
            staleSkipped.incrementAndGet();
            trigger();
            return false;
        }
        String json = client.getKubernetesSerialization().asJson(Map.of("metadata", meta));
        try {
            // resource(stub).patch(..), not withName(..).patch(..): fabric8 8.0.0 GETs the object before a patch
            // unless it holds one (one read per write, measured: 3.95 GET per node upgrade at 1,000 nodes,
            // docs/upgrade.md "Requests"); the merge patch needs no current object, the resourceVersion guards it
            Node after = client.nodes().resource(nodeStub(p.node())).patch(PatchContext.of(PatchType.JSON_MERGE), json);
            count("node-patch");
            ownWrites.patched(p.node(), p.resourceVersion(), after);
            // a state this controller entered is first seen at its own write, not when its informer's copy arrives:
            // a wall-clock step in between would otherwise count as time spent in the state
            Map<String, String> written = after.getMetadata().getAnnotations();
            Progress progress = written == null ? null : Progress.parse(written.get(NodeKeys.DRIVER_UPGRADE_PROGRESS));
            if (progress != null) {
                deadlineClock.age(p.node(), progress, time.now(), time.monotonicNanos());
            }
            if (p.labels().containsKey(NodeKeys.DRIVER_UPGRADE_STATE)) {
                LOG.log(Level.INFO, "node " + p.node() + ": driver-upgrade-state " + p.why());
            }
            for (Reconciler.EventSpec e : p.events()) {
                LOG.log(Level.WARNING, "node " + p.node() + ": upgrade-failed: " + e.message());
                event(e, cr);
            }
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                conflicts.incrementAndGet();
                trigger(); // the node changed since (its agent wrote): decide again from the newer object
            } else {
                LOG.log(Level.WARNING, "node " + p.node() + ": patch failed (" + e.getCode() + "): " + e.getMessage());
            }
            return false;
        }
    }

    /** @return a Node with only its name: the target of a patch that must not read the object first */
    static Node nodeStub(String name) {
        Node n = new Node();
        n.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).build());
        return n;
    }

    private void event(Reconciler.EventSpec e, GenericKubernetesResource cr) {
        if (!leader.get()) {
            return;
        }
        boolean onNode = "Node".equals(e.kind());
        String ns = onNode ? "default" : cfg.namespace();
        String name = onNode ? e.name() : cr.getMetadata().getName();
        ObjectReference ref = onNode ? new ObjectReference("v1", null, "Node", name, null, null, null)
                : new ObjectReference(NpuOperatorCtlType.GROUP + "/" + NpuOperatorCtlType.VERSION, null, NpuOperatorCtlType.KIND, name, ns,
                        cr.getMetadata().getResourceVersion(), cr.getMetadata().getUid());
        String ts = time.now().toString();
        try {
            client.v1().events().inNamespace(ns).resource(new EventBuilder().withNewMetadata()
                    .withName(name + "." + Long.toHexString(time.now().toEpochMilli()) + Long.toHexString(System.nanoTime() & 0xffff))
                    .withNamespace(ns).endMetadata().withInvolvedObject(ref).withType(e.type()).withReason(e.reason())
                    .withMessage(e.message()).withNewSource().withComponent("npu-lifecycle-upgrade").endSource()
                    .withFirstTimestamp(ts).withLastTimestamp(ts).withCount(1).build()).create();
            count("event");
        } catch (KubernetesClientException ex) {
            LOG.log(Level.WARNING, "event " + e.reason() + " on " + e.kind() + " " + name + " failed: " + ex.getMessage());
        }
    }

    private void applyDaemonSet(Reconciler.DaemonSetApply d, DaemonSet existing) {
        if (!leader.get()) {
            return;
        }
        try {
            if (existing == null) {
                client.apps().daemonSets().inNamespace(NodeKeys.DRIVER_NAMESPACE)
                        .resource(daemonSets.render(d.combination(), d.name(), d.image(), d.version())).create();
            } else {
                // JSON patch (RFC 6902): the whole pod template, rendered from the manifest template with the new
                // image and DRIVER_VERSION (OnDelete: no pod restarts until the rollout deletes it)
                // on a name-only stub: withName(..).patch(..) GETs the object first, which the control plane's RBAC
                // does not allow (daemonsets: list, watch, create, patch)
                io.fabric8.kubernetes.api.model.apps.DaemonSet stub = new io.fabric8.kubernetes.api.model.apps.DaemonSet();
                stub.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(d.name())
                        .withNamespace(NodeKeys.DRIVER_NAMESPACE).build());
                client.apps().daemonSets().inNamespace(NodeKeys.DRIVER_NAMESPACE).resource(stub)
                        .patch(PatchContext.of(PatchType.JSON), daemonSets.templatePatch(d.combination(), d.image(), d.version()));
            }
            count("daemonset");
            LOG.log(Level.INFO, "driver DaemonSet " + d.name() + " (" + d.combination() + "): image " + d.image());
        } catch (KubernetesClientException e) {
            LOG.log(Level.WARNING, "driver DaemonSet " + d.name() + ": " + e.getMessage());
        }
    }

    private void writeStatus(GenericKubernetesResource cr, NpuOperatorCtlStatus st) {
        if (!leader.get()) {
            return;
        }
        // Untyped on purpose (reliability matrix, issue #7): the server answers with the whole object, spec included,
        // and a spec with a value of the wrong type (maxParallelUpgrades: 1.5, autoUpgrade: "yes", an unknown field)
        // could not be bound to the typed NpuOperatorCtl: every status write failed with "An error has occurred",
        // so InvalidSpec never reached the status and the previous condition (even "spec is valid") stayed visible.
        GenericKubernetesResource out = new GenericKubernetesResource();
        out.setApiVersion(cr.getApiVersion());
        out.setKind(cr.getKind());
        // the informer's resourceVersion: without one, fabric8 8.0.0 GETs the object before every updateStatus()
        out.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(cr.getMetadata().getName())
                .withNamespace(cr.getMetadata().getNamespace())
                .withResourceVersion(cr.getMetadata().getResourceVersion()).build());
        try {
            out.setAdditionalProperty("status", client.getKubernetesSerialization().convertValue(st, Map.class));
            // a full replace of the status subresource (PUT .../status): a JSON merge patch would merge the lists
            // on some servers (the mock appends conditions). Guarded by the resourceVersion the informer holds.
            client.genericKubernetesResources(CTX).inNamespace(cfg.namespace()).resource(out).updateStatus();
            count("status");
            lastStatus = st;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                // the CR changed since the informer's copy (a spec edit, our previous status write): the informer's
                // update event brings a reconcile that writes the status again with the newer resourceVersion
                conflicts.incrementAndGet();
                trigger();
            } else {
                LOG.log(Level.WARNING, "status of NPUOperatorCtl " + cfg.resourceName() + ": " + e.getMessage()
                        + (e.getCause() != null ? " (" + e.getCause().getMessage() + ")" : ""));
            }
        }
    }

    /**
     * Sets or removes the pause annotation on the CR (any replica may do this; the leader reacts).
     *
     * @param paused true to pause
     * @throws KubernetesClientException when the CR cannot be patched
     */
    public void setPaused(boolean paused) {
        String json = "{\"metadata\":{\"annotations\":{\"" + NpuOperatorCtlType.PAUSED_ANNOTATION + "\":" + (paused ? "\"true\"" : "null") + "}}}";
        // on a name-only stub: withName(..).patch(..) GETs the object first, which the control plane's RBAC does
        // not allow (npuoperatorctls: list, watch, patch)
        GenericKubernetesResource stub = new GenericKubernetesResource();
        stub.setApiVersion(NpuOperatorCtlType.GROUP + "/" + NpuOperatorCtlType.VERSION);
        stub.setKind(NpuOperatorCtlType.KIND);
        stub.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(cfg.resourceName())
                .withNamespace(cfg.namespace()).build());
        client.genericKubernetesResources(CTX).inNamespace(cfg.namespace()).resource(stub)
                .patch(PatchContext.of(PatchType.JSON_MERGE), json);
        count("cr-annotation");
    }

    private void count(String kind) {
        writes.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    }

    private void publish(Reconciler.Plan plan) {
        NpuOperatorCtlStatus s = plan.status();
        List<String> conds = new ArrayList<>();
        s.getConditions().forEach(c -> conds.add(c.getType() + "=" + c.getStatus() + " (" + c.getReason() + "): " + c.getMessage()));
        snapshot.set(new Snapshot(s.getTargetVersion() == null ? "" : s.getTargetVersion(), new TreeMap<>(s.getNodeCounts()),
                plan.nodeStates(), List.copyOf(s.getAwaitingApproval()),
                s.getFailedNodes().stream().map(Object::toString).toList(), conds, Boolean.TRUE.equals(s.getPaused())));
    }

    /** @return the last computed view */
    public Snapshot snapshot() {
        return snapshot.get();
    }

    /** @return writes by kind since start */
    public Map<String, Long> writeCounts() {
        Map<String, Long> m = new TreeMap<>();
        writes.forEach((k, v) -> m.put(k, v.get()));
        m.put("conflicts(409)", conflicts.get());
        m.put("stale-skipped", staleSkipped.get());
        m.put("reconciles", reconciles.get());
        m.put("informer-rebuilds", informerRebuilds.get());
        return m;
    }

    @Override
    public void close() {
        closed = true;
        leader.set(false);
        synchronized (this) {
            if (resyncTask != null) {
                resyncTask.cancel();
            }
            stopInformers();
        }
        worker.shutdownNow();
        checker.shutdownNow();
    }
}
