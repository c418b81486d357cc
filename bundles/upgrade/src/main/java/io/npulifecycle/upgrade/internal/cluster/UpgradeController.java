package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.drain.DrainWork;
import io.npulifecycle.upgrade.internal.plan.Combination;
import io.npulifecycle.upgrade.internal.plan.DaemonSetApply;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.NodePatch;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.PodFacts;
import io.npulifecycle.upgrade.internal.plan.Progress;
import io.npulifecycle.upgrade.internal.preflight.ImagePreflight;
import io.npulifecycle.upgrade.internal.preflight.RegistryClient;
import io.npulifecycle.upgrade.internal.recovery.RecoveryWork;
import io.npulifecycle.upgrade.internal.rollout.DeadlineClock;
import io.npulifecycle.upgrade.internal.rollout.Reconciler;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.SpecReader;
import io.npulifecycle.api.upgrade.spec.UpgradeGates;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Set;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
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
 * The loop around {@link Reconciler}: informers on the NPUOperatorCtl, the NPU Nodes (label
 * {@code openfuyao.com/npu.present}), all pods (driver pods and NPU workloads) and the driver DaemonSets; a
 * debounced reconcile on one thread that builds the plan's inputs from the informers' caches, asks
 * {@link ImagePreflight} for the registry and ImageWhiteList checks the plan needs, publishes the view for the MBean
 * and, while this replica leads, has {@link PlanWriter} apply the plan, then the recovery flow ({@link RecoveryWork}:
 * taint, cordon, drain and grant of wedged nodes) and the upgrade drain ({@link DrainWork}) (writes only while leader, checked right before
 * every request; status writes at most every {@code statusInterval}); informers rebuilt when they stop watching (410
 * Gone, API server restart). The finalizer {@code npu.openfuyao.com/cleanup} and the uninstall's stand-down are
 * {@link CleanupFinalizer}'s, asked before every plan.
 */
public final class UpgradeController implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(UpgradeController.class.getName());
    static final ResourceDefinitionContext CTX = new ResourceDefinitionContext.Builder().withGroup(NpuOperatorCtlType.GROUP)
            .withVersion(NpuOperatorCtlType.VERSION).withKind(NpuOperatorCtlType.KIND).withPlural(NpuOperatorCtlType.PLURAL).withNamespaced(true).build();

    private final KubernetesClient client;
    private final TimeSource time;
    private final ControllerConfig cfg;
    private final ImagePreflight preflight;
    private final PlanWriter writer;
    private final DrainWork drainWork;
    /** The planted bug of the chaos checker's tests, or {@code null} (always, in the product). */
    private volatile PlantedBug plantedBug;
    private final RecoveryWork recoveryWork;
    private final CleanupFinalizer finalizer;
    private final ExecutorService worker;
    private final AtomicBoolean leader = new AtomicBoolean();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile boolean closed;
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private SharedIndexInformer<GenericKubernetesResource> crInf;
    private SharedIndexInformer<Node> nodeInf;
    private SharedIndexInformer<Pod> podInf;
    private SharedIndexInformer<DaemonSet> dsInf;
    /** The driver DaemonSet template's ConfigMap (managed mode only; else null). */
    private volatile SharedIndexInformer<io.fabric8.kubernetes.api.model.ConfigMap> templateInf;
    /** When the template informer was started (monotonic nanoseconds). */
    private volatile long templateSince;
    /** How long (wall time) a reconcile waits for the template informer's first list before it reports a problem. */
    static final Duration TEMPLATE_LIST_GRACE = Duration.ofSeconds(30);
    private final DriverModes.Templates templates;
    private final PodSecurityLabels podSecurity;
    /** Ages of the in-flight states measured with the monotonic clock (reconcile thread only). */
    private final DeadlineClock deadlineClock = new DeadlineClock();
    private long unhealthySince = Long.MIN_VALUE;
    private TimeSource.Scheduled resyncTask;
    private final AtomicReference<Snapshot> snapshot = new AtomicReference<>(Snapshot.EMPTY);
    private final AtomicLong reconciles = new AtomicLong();
    private final AtomicLong informerRebuilds = new AtomicLong();
    private volatile UpgradeMeasurements measurements = new UpgradeMeasurements();

    /**
     * What the MBean shows: the last reconcile's status, per node lists as {@code name: reason}.
     *
     * @param target the target version, "" without one
     * @param counts NPU nodes per state
     * @param nodeStates each NPU node's state
     * @param awaitingApproval nodes waiting for an approval
     * @param failed failed nodes
     * @param conditions the conditions, {@code Type=Status (Reason): message}
     * @param paused whether the rollout is paused
     * @param slotHolders nodes holding a rollout slot
     * @param draining nodes of the upgrade drain, with the pods left and what blocks them
     * @param blocked nodes that get no slot, with the blocking pods
     * @param waitingForWindow nodes waiting for a slot while the maintenance window is closed, with its next opening
     * @param recovering wedged nodes in the recovery flow, with their step (the window they wait for, the pods left)
     */
    public record Snapshot(String target, Map<String, Integer> counts, Map<String, String> nodeStates,
            List<String> awaitingApproval, List<String> failed, List<String> conditions, boolean paused,
            List<String> slotHolders, List<String> draining, List<String> blocked, List<String> waitingForWindow,
            List<String> recovering) {
        /** The view before the first reconcile, and while there is no CR or it is being deleted. */
        public static final Snapshot EMPTY = new Snapshot("", Map.of(), Map.of(), List.of(), List.of(), List.of(), false,
                List.of(), List.of(), List.of(), List.of(), List.of());

        Snapshot withPaused(boolean p) {
            return new Snapshot(target, counts, nodeStates, awaitingApproval, failed, conditions, p, slotHolders,
                    draining, blocked, waitingForWindow, recovering);
        }
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}); called before {@link #start()}.
     *
     * @param bug {@link PlantedBug#ADMIN_CORDON_LIFTED}, {@link PlantedBug#WINDOW_IGNORED},
     *        {@link PlantedBug#DRAIN_SKIPPED}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        plantedBug = bug;
        drainWork.plant(bug);
        recoveryWork.plant(bug);
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
        this.preflight = new ImagePreflight(client, time, cfg.preflight(), registry, this::trigger,
                singleThread("npu-upgrade-preflight"));
        this.writer = new PlanWriter(client, time, cfg, leader::get, this::trigger, this::cachedNode, this::cachedDaemonSet);
        this.drainWork = new DrainWork(client, time, writer, leader::get);
        this.recoveryWork = new RecoveryWork(client, time, writer, leader::get);
        this.finalizer = new CleanupFinalizer(client, time, cfg, leader::get, this::trigger);
        this.worker = singleThread("npu-upgrade-reconcile");
        this.templates = new DriverModes.Templates(client.getKubernetesSerialization(), cfg.namespace(),
                cfg.driverDaemonSetConfigMap());
        this.podSecurity = new PodSecurityLabels(client, cfg.namespace(), cfg.podSecurityLabels(), leader::get);
    }

    private static ExecutorService singleThread(String name) {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** @return the node informer's copy (called by the writer during a reconcile, under this lock) */
    private Node cachedNode(String name) {
        return nodeInf.getStore().getByKey(name);
    }

    /** @return the driver DaemonSet informer's copy (called by the writer during a reconcile, under this lock) */
    private DaemonSet cachedDaemonSet(String name) {
        return dsInf.getStore().getByKey(NodeKeys.DRIVER_NAMESPACE + "/" + name);
    }

    /** Starts the informers and the periodic resync. Writes happen only after {@link #setLeader(boolean)} true. */
    public synchronized void start() {
        startInformers();
        podSecurity.start(this::applyPodSecurity);
        resync();
    }

    /** Has the worker write the namespace's Pod Security labels when missing (while leader). */
    private void applyPodSecurity() {
        if (!closed) {
            worker.execute(podSecurity::apply);
        }
    }

    /** Every informer's handler: any add, update or delete brings a reconcile ({@link #trigger}). */
    private ResourceEventHandler<Object> triggerOnChange() {
        return new ResourceEventHandler<>() {
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
    }

    private synchronized void startInformers() {
        ResourceEventHandler<Object> h = triggerOnChange();
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
        startTemplateInformer();
    }

    /**
     * Managed drivers: the informer on the template's ConfigMap, one object by name (list/watch with a
     * {@code metadata.name} field selector). Kept out of {@link #informers}: a ConfigMap it cannot read (RBAC, an
     * outage) holds the driver DaemonSets back ({@link DriverModes}), never the reconcile of the rest (recovery).
     */
    private synchronized void startTemplateInformer() {
        if (cfg.hostDrivers()) {
            return;
        }
        templateInf = client.configMaps().inNamespace(cfg.namespace()).withName(cfg.driverDaemonSetConfigMap())
                .runnableInformer(0);
        templateInf.addEventHandler(cast(triggerOnChange()));
        templateSince = time.monotonicNanos();
        templateInf.start();
    }

    /**
     * @return the template's ConfigMap as the informer holds it; a problem while the informer has not listed it
     *         after {@link #TEMPLATE_LIST_GRACE}; null while it may still come
     */
    private DriverModes.Current template() {
        SharedIndexInformer<io.fabric8.kubernetes.api.model.ConfigMap> inf = templateInf;
        if (inf != null && inf.hasSynced()) {
            return templates.current(inf.getStore().getByKey(cfg.namespace() + "/" + cfg.driverDaemonSetConfigMap()));
        }
        if ((time.monotonicNanos() - templateSince) / time.scale() < TEMPLATE_LIST_GRACE.toNanos()) {
            return null;
        }
        return new DriverModes.Current(null, "ConfigMap " + cfg.namespace() + "/" + cfg.driverDaemonSetConfigMap()
                + " cannot be read (its informer has not listed it: RBAC list/watch on configmaps of that name, or the "
                + "API server): no driver DaemonSet is written");
    }

    @SuppressWarnings("unchecked")
    private static <T> ResourceEventHandler<T> cast(ResourceEventHandler<Object> h) {
        return (ResourceEventHandler<T>) (ResourceEventHandler<?>) h;
    }

    private synchronized void stopInformers() {
        if (templateInf != null) {
            try {
                templateInf.stop();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "informer stop: " + e);
            }
            templateInf = null;
        }
        for (SharedIndexInformer<?> i : informers) {
            try {
                i.stop();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "informer stop: " + e);
            }
        }
        informers.clear();
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
                    writer.forgetStatus(); // re-read the CR's status: another leader may have written since
                }
                trigger();
                applyPodSecurity();
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
        if (!longUnhealthy && informers.stream().allMatch(SharedIndexInformer::isRunning) && templateInf != null
                && !templateInf.isRunning()) {
            templateInf.stop(); // a failed first list (RBAC, outage): tried again each resync
            startTemplateInformer();
        }
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
        long start = time.monotonicNanos();
        try {
            reconcile();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reconcile failed, retrying at the next event or resync: " + e, e);
        } finally {
            measurements.reconciled(Duration.ofNanos(time.monotonicNanos() - start));
        }
    }

    /**
     * @param m where the counters and histograms of {@code /metrics} go (the component's, kept across controller
     *        restarts)
     */
    public void measurements(UpgradeMeasurements m) {
        this.measurements = java.util.Objects.requireNonNull(m);
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

    /**
     * Starts the monotonic deadline of every state this plan entered, at the plan's own instant. The controller wrote
     * {@code since=now} itself, so the age is zero now; waiting for the next reconcile to see the state first would
     * measure its age against a wall clock that may have stepped meanwhile, and fail a node that missed nothing.
     */
    private void startDeadlines(Plan plan, Instant now, long mono) {
        for (NodePatch patch : plan.nodePatches()) {
            String value = patch.annotations() == null ? null : patch.annotations().get(NodeKeys.DRIVER_UPGRADE_PROGRESS);
            Progress p = value == null ? null : Progress.parse(value);
            if (p != null) {
                deadlineClock.age(patch.node(), p, now, mono);
            }
        }
    }

    /**
     * One reconcile: the plan from the informers' caches (and our own newer writes), the registry checks it needs,
     * the MBean's view; then, while leader, the plan's writes and a reconcile at its next deadline.
     */
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
            if (!cfg.hostDrivers()) {
                template(); // no CR to write a status on: a missing or malformed template is still logged (once)
            }
            snapshot.set(Snapshot.EMPTY);
            return;
        }
        if (finalizer.intercept(cr)) {
            // being deleted (the cleanup runs, then the finalizer goes) or npu-lifecycle uninstall runs: no plan
            snapshot.set(Snapshot.EMPTY);
            return;
        }
        Instant now = time.now();
        long mono = time.monotonicNanos();
        Set<String> recentlyDeleted = writer.recentlyDeletedPods(mono);
        SpecReader.Result spec = SpecReader.parse(cr.getAdditionalProperties().get("spec"));
        if (plantedBug == PlantedBug.WINDOW_IGNORED && spec.valid() && spec.policy().gates().window() != null) {
            // planted bug (testing the chaos checker only): breaks "no upgrade reboot outside the maintenance
            // window", as the window is dropped: slots are granted and no reboot deadline is set while it is closed
            Policy p = spec.policy();
            spec = new SpecReader.Result(new Policy(p.version(), p.registry(), p.autoUpgrade(),
                    p.maxParallelUpgrades(), p.maxUnavailable(), p.maxUnavailablePercent(), p.deadlines(), p.drain(),
                    new UpgradeGates(null, p.gates().blockingPods(), p.gates().holdNpuWorkloads())), spec.problems(),
                    spec.recovery());
        }
        Map<String, String> crAnn = cr.getMetadata().getAnnotations() == null ? Map.of() : cr.getMetadata().getAnnotations();
        boolean paused = "true".equals(crAnn.get(NpuOperatorCtlType.PAUSED_ANNOTATION));
        NpuOperatorCtlStatus previous = writer.previousStatus(cr);
        // the informer's copies, except where our own patch is newer (the watch event has not arrived yet)
        Collection<Node> nodes = writer.asWritten(nodeInf.getStore().list());
        List<Pod> pods = podInf.getStore().list();
        Map<String, String> dsImages = new HashMap<>();
        for (DaemonSet ds : dsInf.getStore().list()) {
            dsImages.put(ds.getMetadata().getName(), ds.getSpec().getTemplate().getSpec().getContainers().get(0).getImage());
        }
        boolean host = cfg.hostDrivers();
        DriverModes.Current template = host ? null : template();
        if (!host && template == null) {
            trigger(); // the template's first list is still in progress: decide with it
            return;
        }
        boolean templateProblem = template != null && template.problem() != null;
        if (!host) {
            writer.template(template.renderer());
        }
        Map<String, Pod> driverPods = PodFacts.driverPods(pods);
        // an unusable template blocks new slots as a pause does (DriverModes.withTemplate says why in the status)
        Inputs in = Inputs.builder().generation(cr.getMetadata().getGeneration()).spec(spec)
                .paused(paused || templateProblem).previous(previous).nodes(nodes).driverPods(driverPods)
                .npuWorkloads(PodFacts.workloads(pods)).images(preflight.results()).daemonSetImages(dsImages)
                .recentlyDeletedPods(recentlyDeleted).now(now).stateAges(stateAges(nodes, now, mono))
                .whiteList(preflight.whiteList())
                .drainLeft(spec.valid() && !host ? drainWork.left(nodes, pods, spec.policy().drain()) : Map.of())
                .blockingPods(spec.valid() && !host ? PodFacts.blocking(pods, spec.policy().gates().blockingPods())
                        : Map.of())
                .build();
        Plan plan;
        if (host && spec.valid()) {
            plan = DriverModes.hostPlan(cr.getMetadata().getGeneration(), spec.policy().version(), paused, nodes,
                    previous, now);
        } else if (host) {
            plan = Reconciler.plan(in); // InvalidSpec: a status only, no write to any node
        } else {
            plan = DriverModes.withTemplate(Reconciler.plan(in), template.problem(), paused, driverPods, previous, now);
            if (template.renderer() != null && spec.valid()) {
                plan = withTemplateRefresh(plan, template.renderer(), nodes);
            }
        }
        RecoveryWork.Round recovery = spec.valid() ? recoveryWork.plan(nodes, pods, spec.recovery(), now) : null;
        if (recovery != null) {
            RecoveryWork.status(recovery, plan.status(), previous, now);
        }
        preflight.request(plan.imagesToCheck(), mono);
        publish(plan);
        measurements.observe(plan.nodeStates(), plan.status().getDrainingNodes(), leader.get(), mono);

        if (!leader.get()) {
            return;
        }
        if (!spec.valid() && !plan.status().equals(previous)) {
            LOG.log(Level.WARNING, "NPUOperatorCtl " + cfg.namespace() + "/" + cfg.resourceName()
                    + " has an invalid spec, nothing is touched: " + String.join("; ", spec.problems()));
        }
        boolean applied = writer.apply(plan, cr, mono);
        startDeadlines(plan, now, mono);
        RecoveryWork.Acted recovered = recovery == null ? null
                : recoveryWork.act(recovery, nodes, plan.releasing().keySet());
        Duration retry = spec.valid() && !host
                ? drainWork.act(plan, nodes, pods, spec.policy(), recovered.skipUncordon()) : null;
        if (recovered != null && recovered.retry() != null) {
            retry = retry == null || recovered.retry().compareTo(retry) < 0 ? recovered.retry() : retry;
        }
        if (retry != null) {
            time.schedule(this::trigger, retry.plusMillis(1)); // a refused eviction's backoff, then a new attempt
        }
        if (!applied) {
            return;
        }
        if (plan.nextWakeup() != null) {
            Duration d = Duration.between(now, plan.nextWakeup());
            time.schedule(this::trigger, d.isNegative() ? Duration.ZERO : d.plusMillis(1));
        }
    }

    /**
     * Adds to the plan the driver DaemonSets written from another template than the current one (annotation
     * {@value DriverDaemonSets#TEMPLATE_HASH}), with the image and version they run now: a changed template reaches
     * the existing DaemonSets too, and with updateStrategy OnDelete no driver pod restarts for it; each pod takes it
     * when it is next replaced (its node's next upgrade, or a person deleting it). Only DaemonSets of combinations of
     * the current NPU nodes, and not those the plan writes already.
     */
    private Plan withTemplateRefresh(Plan plan, DriverDaemonSets renderer, Collection<Node> nodes) {
        boolean stale = dsInf.getStore().list().stream().anyMatch(ds -> ds.getMetadata().getAnnotations() == null
                || !renderer.hash().equals(ds.getMetadata().getAnnotations().get(DriverDaemonSets.TEMPLATE_HASH)));
        if (!stale) {
            return plan; // the usual case: no per-node work
        }
        Map<String, Combination> combos = new HashMap<>();
        for (Node n : nodes) {
            try {
                Combination c = Combination.of(n);
                combos.putIfAbsent(c.daemonSetName(), c);
            } catch (IllegalArgumentException badNodeInfo) {
                // no combination: the plan holds the node and says why
            }
        }
        Set<String> planned = new java.util.HashSet<>();
        plan.daemonSets().forEach(d -> planned.add(d.name()));
        List<DaemonSetApply> more = new ArrayList<>();
        for (DaemonSet ds : dsInf.getStore().list()) {
            String name = ds.getMetadata().getName();
            Combination c = combos.get(name);
            Map<String, String> ann = ds.getMetadata().getAnnotations();
            if (c == null || planned.contains(name) || ann != null
                    && renderer.hash().equals(ann.get(DriverDaemonSets.TEMPLATE_HASH))) {
                continue;
            }
            var containers = ds.getSpec().getTemplate().getSpec().getContainers();
            String version = containers.stream().flatMap(k -> k.getEnv() == null ? java.util.stream.Stream.empty()
                    : k.getEnv().stream()).filter(e -> DriverDaemonSets.DRIVER_VERSION_ENV.equals(e.getName())
                            && e.getValue() != null).map(io.fabric8.kubernetes.api.model.EnvVar::getValue)
                    .findFirst().orElse(null);
            if (version != null) {
                more.add(new DaemonSetApply(c, name, containers.get(0).getImage(), version));
            }
        }
        if (more.isEmpty()) {
            return plan;
        }
        List<DaemonSetApply> all = new ArrayList<>(plan.daemonSets());
        all.addAll(more);
        return new Plan(plan.nodePatches(), plan.podDeletes(), all, plan.crEvents(), plan.imagesToCheck(),
                plan.status(), plan.nodeStates(), plan.nextWakeup(), plan.releasing());
    }

    /**
     * Sets or removes the pause annotation on the CR (any replica may do this; the leader reacts). Once the patch is
     * accepted, {@link #snapshot()} says the new state at once (the next reconcile confirms it).
     *
     * @param paused true to pause
     * @throws KubernetesClientException when the CR cannot be patched
     */
    public void setPaused(boolean paused) {
        String json = "{\"metadata\":{\"annotations\":{\"" + NpuOperatorCtlType.PAUSED_ANNOTATION + "\":" + (paused ? "\"true\"" : "null") + "}}}";
        // on a stub, not withName(..): fabric8 GETs the object before a patch otherwise (RBAC: no get)
        GenericKubernetesResource stub = new GenericKubernetesResource();
        stub.setApiVersion(NpuOperatorCtlType.GROUP + "/" + NpuOperatorCtlType.VERSION);
        stub.setKind(NpuOperatorCtlType.KIND);
        stub.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(cfg.resourceName())
                .withNamespace(cfg.namespace()).build());
        client.genericKubernetesResources(CTX).inNamespace(cfg.namespace()).resource(stub)
                .patch(PatchContext.of(PatchType.JSON_MERGE), json);
        writer.count("cr-annotation");
        snapshot.updateAndGet(s -> s.withPaused(paused));
    }

    private void publish(Plan plan) {
        NpuOperatorCtlStatus s = plan.status();
        List<String> conds = new ArrayList<>();
        s.getConditions().forEach(c -> conds.add(c.getType() + "=" + c.getStatus() + " (" + c.getReason() + "): " + c.getMessage()));
        snapshot.set(new Snapshot(s.getTargetVersion() == null ? "" : s.getTargetVersion(), new TreeMap<>(s.getNodeCounts()),
                plan.nodeStates(), List.copyOf(s.getAwaitingApproval()),
                s.getFailedNodes().stream().map(Object::toString).toList(), conds, Boolean.TRUE.equals(s.getPaused()),
                issues(s.getSlotHolders()), issues(s.getDrainingNodes()), issues(s.getBlockedNodes()),
                issues(s.getWaitingForWindow()), issues(s.getRecoveringNodes())));
    }

    private static List<String> issues(List<io.npulifecycle.api.upgrade.model.NodeIssue> l) {
        return l == null ? List.of() : l.stream().map(Object::toString).toList();
    }

    /** @return the last computed view */
    public Snapshot snapshot() {
        return snapshot.get();
    }

    /** @return writes by kind since start */
    public Map<String, Long> writeCounts() {
        Map<String, Long> m = new TreeMap<>();
        writer.countsInto(m);
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
        podSecurity.close();
        worker.shutdownNow();
        preflight.close();
    }
}
