package io.npulifecycle.kube.internal;

import io.npulifecycle.api.node.NodeSyncMXBean;

import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerListener;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.ConsumeResult;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodePolicy;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.node.PolicySource;
import io.npulifecycle.api.time.TimeSource;

/**
 * The node-side Kubernetes sync, usable without OSGi: informers on this runtime's Node and on the
 * {@code NPUOperatorCtl}; the policy, the approval and its consumption; the node agent's desired labels, annotations
 * and queued Events, reconciled onto the Node on every informer event, on every health tick and after a relist; the
 * {@code reboot-required} marker mirrored into the label {@value NodeKeys#REBOOT_REQUIRED}, the annotation
 * {@value NodeKeys#REBOOT_REASON} and one {@value NodeKeys#EVENT_REBOOT_REQUIRED} Event per request.
 *
 * <p>Informer health (fabric8 informers can stop silently after an API-server restart, a 503 or a 410 Gone:
 * {@code DESIGN.md} "Known traps"): every health tick checks that both informers run and watch; an informer that is
 * stopped, or not watching for two ticks in a row, is closed and re-created, which relists and rebuilds the node's
 * state from the objects.
 */
public final class NodeSync implements PolicySource, ApprovalService, NodeWriter, NodeSyncMXBean {

    private static final System.Logger LOG = System.getLogger(NodeSync.class.getName());
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?");
    static final String WRITER = "node-sync";
    private static final int CONSUME_ATTEMPTS = 5;

    /** Settings of one sync. */
    public record Settings(String nodeName, String crNamespace, String crName, String eventNamespace,
            Duration healthInterval) {
        /** Checks the settings. */
        public Settings {
            Objects.requireNonNull(nodeName, "nodeName");
            Objects.requireNonNull(crNamespace, "crNamespace");
            Objects.requireNonNull(crName, "crName");
            Objects.requireNonNull(eventNamespace, "eventNamespace");
            Objects.requireNonNull(healthInterval, "healthInterval");
        }
    }

    /** The CR's coordinates (DESIGN.md). */
    static final ResourceDefinitionContext CRD = new ResourceDefinitionContext.Builder()
            .withGroup(NpuOperatorCtlType.GROUP).withVersion(NpuOperatorCtlType.VERSION).withPlural(NpuOperatorCtlType.PLURAL)
            .withKind(NpuOperatorCtlType.KIND).withNamespaced(NpuOperatorCtlType.NAMESPACED).build();

    private final KubernetesClient client;
    private final Settings settings;
    private final TimeSource time;
    private final MarkerStore markers;
    private final Consumer<String> changeNotifier;
    private final ExecutorService worker;
    private final AtomicBoolean syncQueued = new AtomicBoolean();
    private final MarkerListener markerListener = c -> requestSync();

    private final Map<String, Optional<String>> labels = new ConcurrentHashMap<>();
    private final Map<String, Optional<String>> annotations = new ConcurrentHashMap<>();
    private final Map<String, io.fabric8.kubernetes.api.model.Event> pendingEvents = new LinkedHashMap<>();
    private final Map<String, Boolean> postedEventKeys = new ConcurrentHashMap<>();

    private volatile SharedIndexInformer<Node> nodeInformer;
    private volatile SharedIndexInformer<GenericKubernetesResource> crInformer;
    private volatile Node node;
    private volatile NodePolicy policy = NodePolicy.unknown("the NPUOperatorCtl has not been read yet");
    private volatile String lastPolicyProblem;
    private volatile boolean apiOk;
    private volatile String lastError;
    private volatile Instant lastEventAt;
    private volatile Instant lastWriteAt;
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong relists = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong eventsPosted = new AtomicLong();
    private int nodeNotWatchingTicks;
    private int crNotWatchingTicks;
    private boolean wasWatching;
    private volatile TimeSource.Scheduled tick;
    private volatile boolean stopped;

    /**
     * @param client the fabric8 client (not closed by this class)
     * @param settings node name, CR coordinates, Event namespace, health-check interval
     * @param time the TimeSource (health ticks)
     * @param markers the marker store (the {@code reboot-required} marker is mirrored), may be {@code null}
     * @param changeNotifier called with {@code "approval"} or {@code "policy"} when they change, may be {@code null}
     */
    public NodeSync(KubernetesClient client, Settings settings, TimeSource time, MarkerStore markers,
            Consumer<String> changeNotifier) {
        this.client = Objects.requireNonNull(client);
        this.settings = settings;
        this.time = Objects.requireNonNull(time);
        this.markers = markers;
        this.changeNotifier = changeNotifier;
        this.worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "npu-kube-node-sync");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the informers, the marker mirroring and the health ticks. */
    public void start() {
        LOG.log(Level.INFO, "node sync starting for node " + settings.nodeName() + ", NPUOperatorCtl "
                + settings.crNamespace() + "/" + settings.crName());
        if (markers != null) {
            markers.addListener(markerListener);
            annotations.put(NodeKeys.BOOT_ID, Optional.of(markers.bootId()));
        }
        startInformers();
        scheduleTick();
        requestSync();
    }

    /** Stops everything; desired state not yet written is lost (the writers re-assert it on their next poll). */
    public void stop() {
        stopped = true;
        if (markers != null) {
            markers.removeListener(markerListener);
        }
        TimeSource.Scheduled t = tick;
        if (t != null) {
            t.cancel();
        }
        closeInformers();
        worker.shutdownNow();
    }

    private synchronized void startInformers() {
        SharedIndexInformer<Node> ni = client.nodes().withName(settings.nodeName()).runnableInformer(0);
        ni.addEventHandler(new ResourceEventHandler<Node>() {
            @Override
            public void onAdd(Node obj) {
                onNode(obj);
            }

            @Override
            public void onUpdate(Node oldObj, Node newObj) {
                onNode(newObj);
            }

            @Override
            public void onDelete(Node obj, boolean deletedFinalStateUnknown) {
                lastEventAt = time.now();
                LOG.log(Level.WARNING, "Node " + settings.nodeName() + " was deleted from the API server");
                node = null;
                notifyChange("approval");
            }
        });
        SharedIndexInformer<GenericKubernetesResource> ci = client.genericKubernetesResources(CRD)
                .inNamespace(settings.crNamespace()).withName(settings.crName()).runnableInformer(0);
        ci.addEventHandler(new ResourceEventHandler<GenericKubernetesResource>() {
            @Override
            public void onAdd(GenericKubernetesResource obj) {
                onPolicy(obj);
            }

            @Override
            public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
                onPolicy(newObj);
            }

            @Override
            public void onDelete(GenericKubernetesResource obj, boolean deletedFinalStateUnknown) {
                onPolicy(null);
            }
        });
        nodeInformer = ni;
        crInformer = ci;
        ni.start().whenComplete((v, e) -> started("Node " + settings.nodeName(), e));
        ci.start().whenComplete((v, e) -> started("NPUOperatorCtl " + crWhat(), e));
    }

    private void started(String what, Throwable e) {
        if (e != null) {
            apiOk = false;
            lastError = "informer on " + what + " failed to start: " + e.getMessage();
            LOG.log(Level.WARNING, lastError + " (retried at the next health tick)");
        } else {
            LOG.log(Level.INFO, "informer on " + what + " synced");
            requestSync();
        }
    }

    private synchronized void closeInformers() {
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {nodeInformer, crInformer}) {
            if (i != null) {
                try {
                    i.close();
                } catch (RuntimeException e) {
                    LOG.log(Level.DEBUG, "closing informer: " + e);
                }
            }
        }
        nodeInformer = null;
        crInformer = null;
    }

    private void onNode(Node n) {
        lastEventAt = time.now();
        Node previous = node;
        node = n;
        String before = previous == null ? null : ann(previous).get(NodeKeys.APPROVE_REBOOT);
        String after = ann(n).get(NodeKeys.APPROVE_REBOOT);
        if (previous == null || !Objects.equals(before, after)
                || ann(previous).containsKey(NodeKeys.APPROVE_REBOOT) != ann(n).containsKey(NodeKeys.APPROVE_REBOOT)) {
            notifyChange("approval");
        }
        requestSync();
    }

    private void onPolicy(GenericKubernetesResource cr) {
        lastEventAt = time.now();
        NodePolicy p;
        if (cr == null) {
            p = NodePolicy.unknown("NPUOperatorCtl " + crWhat() + " does not exist");
        } else {
            p = PolicyParser.parse(crWhat(), cr.getAdditionalProperties().get("spec"),
                    cr.getMetadata() == null ? null : cr.getMetadata().getResourceVersion());
        }
        if (p.problem() != null && !p.problem().equals(lastPolicyProblem)) {
            LOG.log(Level.ERROR, p.problem());
        }
        lastPolicyProblem = p.problem();
        NodePolicy old = policy;
        policy = p;
        if (!Objects.equals(stripRv(old), stripRv(p))) {
            LOG.log(Level.INFO, "policy from NPUOperatorCtl " + crWhat() + ": " + describe(p));
            notifyChange("policy");
        }
    }

    private static NodePolicy stripRv(NodePolicy p) {
        return new NodePolicy(p.known(), p.desiredVersion(), p.autoUpgrade(), p.autoRecover(), p.maxReboots(),
                p.window(), p.problem(), null);
    }

    static String describe(NodePolicy p) {
        if (!p.known()) {
            return "unknown (" + p.problem() + ")";
        }
        return "version=" + p.desiredVersion() + " autoUpgrade=" + p.autoUpgrade() + " autoRecover=" + p.autoRecover()
                + " maxReboots=" + p.maxReboots() + " window=" + p.window();
    }

    private void notifyChange(String what) {
        if (changeNotifier != null) {
            try {
                changeNotifier.accept(what);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "node change notification failed", e);
            }
        }
    }

    private String crWhat() {
        return settings.crNamespace() + "/" + settings.crName();
    }

    private static Map<String, String> ann(Node n) {
        Map<String, String> a = n == null || n.getMetadata() == null ? null : n.getMetadata().getAnnotations();
        return a == null ? Map.of() : a;
    }

    private static Map<String, String> lab(Node n) {
        Map<String, String> l = n == null || n.getMetadata() == null ? null : n.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }

    // ---- health ticks ----

    private void scheduleTick() {
        if (stopped) {
            return;
        }
        try {
            tick = time.schedule(this::healthTick, settings.healthInterval());
        } catch (IllegalStateException e) {
            LOG.log(Level.DEBUG, "time source shut down: no more health ticks");
        }
    }

    /** One health check: informers running and watching, else re-created (relist); then a sync. */
    void healthTick() {
        try {
            checkInformers();
            requestSync();
        } finally {
            scheduleTick();
        }
    }

    private synchronized void checkInformers() {
        if (stopped) {
            return;
        }
        SharedIndexInformer<Node> ni = nodeInformer;
        SharedIndexInformer<GenericKubernetesResource> ci = crInformer;
        boolean nodeOk = ni != null && ni.isRunning() && ni.isWatching();
        boolean crOk = ci != null && ci.isRunning() && ci.isWatching();
        nodeNotWatchingTicks = nodeOk ? 0 : nodeNotWatchingTicks + 1;
        crNotWatchingTicks = crOk ? 0 : crNotWatchingTicks + 1;
        boolean stoppedInformer = ni == null || ci == null || !ni.isRunning() || !ci.isRunning();
        if (stoppedInformer || nodeNotWatchingTicks >= 2 || crNotWatchingTicks >= 2) {
            LOG.log(Level.WARNING, "informer health: node informer " + state(ni) + ", NPUOperatorCtl informer "
                    + state(ci) + ": re-creating both informers (relist; the node's state is rebuilt from the objects)");
            relists.incrementAndGet();
            closeInformers();
            nodeNotWatchingTicks = 0;
            crNotWatchingTicks = 0;
            startInformers();
        }
        boolean watching = nodeOk && crOk;
        if (watching && !wasWatching) {
            reconnects.incrementAndGet();
        }
        wasWatching = watching;
    }

    private static String state(SharedIndexInformer<?> i) {
        if (i == null) {
            return "absent";
        }
        return (i.isRunning() ? "running" : "stopped") + (i.isWatching() ? "+watching" : "+not watching");
    }

    // ---- sync: markers -> desired state -> Node; queued Events ----

    /** Queues one sync on the worker (coalesced). */
    public void requestSync() {
        if (stopped || !syncQueued.compareAndSet(false, true)) {
            return;
        }
        try {
            worker.execute(() -> {
                syncQueued.set(false);
                syncNow();
            });
        } catch (RuntimeException e) {
            syncQueued.set(false);
        }
    }

    private void syncNow() {
        try {
            mirrorMarker();
            reconcile();
            flushEvents();
        } catch (RuntimeException e) {
            apiOk = false;
            lastError = String.valueOf(e.getMessage());
            LOG.log(Level.WARNING, "node sync of " + settings.nodeName() + " failed: " + e.getMessage()
                    + " (retried at the next health tick)");
        }
    }

    private void mirrorMarker() {
        if (markers == null) {
            return;
        }
        annotations.put(NodeKeys.BOOT_ID, Optional.of(markers.bootId()));
        MarkerRead r = markers.read(Markers.REBOOT_REQUIRED);
        if (!r.present()) {
            labels.put(NodeKeys.REBOOT_REQUIRED, Optional.empty());
            annotations.put(NodeKeys.REBOOT_REASON, Optional.empty());
            return;
        }
        Marker m = r.marker();
        String reason = m.reason();
        if (!Markers.REASON_RECOVERY.equals(reason) && !Markers.REASON_UPGRADE.equals(reason)) {
            LOG.log(Level.WARNING, "reboot-required marker " + r.path() + " has reason '" + reason
                    + "', expected recovery or upgrade: not mirrored onto the Node");
            labels.put(NodeKeys.REBOOT_REQUIRED, Optional.empty());
            annotations.put(NodeKeys.REBOOT_REASON, Optional.empty());
            return;
        }
        labels.put(NodeKeys.REBOOT_REQUIRED, Optional.of("true"));
        annotations.put(NodeKeys.REBOOT_REASON, Optional.of(reason));
        String since = m.content().getOrDefault(Markers.KEY_SINCE, String.valueOf(m.writtenAt()));
        StringBuilder msg = new StringBuilder("reason=").append(reason);
        m.content().forEach((k, v) -> {
            if (!Markers.KEY_REASON.equals(k)) {
                msg.append(' ').append(k).append('=').append(v);
            }
        });
        msg.append(" bootId=").append(m.bootId());
        recordEvent(NodeKeys.EVENT_REBOOT_REQUIRED + "/" + m.bootId() + "/" + reason + "/" + since, NodeKeys.NORMAL,
                NodeKeys.EVENT_REBOOT_REQUIRED, msg.toString());
    }

    private void reconcile() {
        Node n = node;
        if (n == null) {
            return;
        }
        if (!differs(n)) {
            return;
        }
        for (int attempt = 1; attempt <= CONSUME_ATTEMPTS; attempt++) {
            Node cur = client.nodes().withName(settings.nodeName()).get();
            if (cur == null) {
                return;
            }
            if (!differs(cur)) {
                node = cur;
                apiOk = true;
                return;
            }
            if (cur.getMetadata().getLabels() == null) {
                cur.getMetadata().setLabels(new HashMap<>());
            }
            if (cur.getMetadata().getAnnotations() == null) {
                cur.getMetadata().setAnnotations(new HashMap<>());
            }
            String rv = cur.getMetadata().getResourceVersion();
            apply(labels, cur.getMetadata().getLabels());
            apply(annotations, cur.getMetadata().getAnnotations());
            try {
                // full update with the resourceVersion just read: never overwrites a concurrent change (409 = retry)
                node = client.nodes().resource(cur).lockResourceVersion(rv).update();
                apiOk = true;
                lastWriteAt = time.now();
                writes.incrementAndGet();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        }
    }

    private boolean differs(Node n) {
        return differs(labels, lab(n)) || differs(annotations, ann(n));
    }

    private static boolean differs(Map<String, Optional<String>> desired, Map<String, String> actual) {
        for (Map.Entry<String, Optional<String>> e : desired.entrySet()) {
            if (e.getValue().isPresent() ? !e.getValue().get().equals(actual.get(e.getKey()))
                    : actual.containsKey(e.getKey())) {
                return true;
            }
        }
        return false;
    }

    private static void apply(Map<String, Optional<String>> desired, Map<String, String> target) {
        desired.forEach((k, v) -> {
            if (v.isPresent()) {
                target.put(k, v.get());
            } else {
                target.remove(k);
            }
        });
    }

    private void flushEvents() {
        List<Map.Entry<String, io.fabric8.kubernetes.api.model.Event>> todo;
        synchronized (pendingEvents) {
            todo = new ArrayList<>(pendingEvents.entrySet());
        }
        for (Map.Entry<String, io.fabric8.kubernetes.api.model.Event> e : todo) {
            io.fabric8.kubernetes.api.model.Event ev = e.getValue();
            Node n = node;
            if (n != null && n.getMetadata() != null) {
                ev.getInvolvedObject().setUid(n.getMetadata().getUid());
            }
            try {
                client.v1().events().inNamespace(settings.eventNamespace()).resource(ev).create();
                eventsPosted.incrementAndGet();
                LOG.log(Level.INFO, "Event " + ev.getReason() + " (" + ev.getType() + ") on Node "
                        + settings.nodeName() + ": " + ev.getMessage());
            } catch (KubernetesClientException ex) {
                if (ex.getCode() != 409) {
                    throw ex;
                }
                LOG.log(Level.DEBUG, "Event " + ev.getMetadata().getName() + " already exists");
            }
            apiOk = true;
            synchronized (pendingEvents) {
                pendingEvents.remove(e.getKey());
            }
        }
    }

    // ---- NodeWriter ----

    @Override
    public String nodeName() {
        return settings.nodeName();
    }

    @Override
    public boolean connected() {
        SharedIndexInformer<Node> ni = nodeInformer;
        return apiOk && ni != null && ni.isWatching();
    }

    @Override
    public void setLabel(String key, String value) {
        checkKey(key);
        if (value != null && !LABEL_VALUE.matcher(value).matches()) {
            throw new IllegalArgumentException("label " + key + ": '" + value
                    + "' is not a valid label value (at most 63 characters of [A-Za-z0-9._-], alphanumeric at both ends)");
        }
        Optional<String> v = Optional.ofNullable(value);
        if (!v.equals(labels.put(key, v))) {
            requestSync();
        }
    }

    @Override
    public void setAnnotation(String key, String value) {
        checkKey(key);
        if (value != null && (value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0)) {
            throw new IllegalArgumentException("annotation " + key + ": values are one line");
        }
        Optional<String> v = Optional.ofNullable(value);
        if (!v.equals(annotations.put(key, v))) {
            requestSync();
        }
    }

    private static void checkKey(String key) {
        if (!NodeKeys.writableByNodeAgent(key)) {
            throw new IllegalArgumentException("'" + key + "' is not a key the node agent writes (it owns keys under "
                    + NodeKeys.PREFIX + " except approve-reboot and the control plane's)");
        }
    }

    @Override
    public void recordEvent(String key, String type, String reason, String message) {
        Objects.requireNonNull(key, "key");
        if (postedEventKeys.putIfAbsent(key, Boolean.TRUE) != null) {
            return;
        }
        String now = time.now().toString();
        String name = settings.nodeName() + "." + hash(key);
        io.fabric8.kubernetes.api.model.Event ev = new EventBuilder().withNewMetadata().withName(name)
                .withNamespace(settings.eventNamespace()).endMetadata()
                .withNewInvolvedObject().withApiVersion("v1").withKind("Node").withName(settings.nodeName()).endInvolvedObject()
                .withType(type).withReason(reason).withMessage(message)
                .withNewSource().withComponent("npu-lifecycle-node-agent").withHost(settings.nodeName()).endSource()
                .withReportingComponent("npu-lifecycle-node-agent").withReportingInstance(settings.nodeName())
                .withFirstTimestamp(now).withLastTimestamp(now).withCount(1).build();
        synchronized (pendingEvents) {
            pendingEvents.put(key, ev);
        }
        requestSync();
    }

    static String hash(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- PolicySource / ApprovalService ----

    @Override
    public NodePolicy policy() {
        return policy;
    }

    @Override
    public ApprovalState approval() {
        Node n = node;
        if (n == null) {
            return new ApprovalState(false, false, null, null);
        }
        Map<String, String> a = ann(n);
        return new ApprovalState(true, a.containsKey(NodeKeys.APPROVE_REBOOT), a.get(NodeKeys.APPROVE_REBOOT),
                n.getMetadata().getResourceVersion());
    }

    @Override
    public ConsumeResult consumeApproval(String bootId) {
        Objects.requireNonNull(bootId, "bootId");
        for (int attempt = 1; attempt <= CONSUME_ATTEMPTS; attempt++) {
            Node n;
            try {
                n = client.nodes().withName(settings.nodeName()).get();
            } catch (KubernetesClientException e) {
                return unreachable("read Node for the approval", e);
            }
            if (n == null) {
                LOG.log(Level.WARNING, "Node " + settings.nodeName() + " not found: no approval to consume");
                return ConsumeResult.NOT_APPROVED;
            }
            Map<String, String> a = new HashMap<>(ann(n));
            // consumed = the mark of this boot AND no approval left: the consuming update does both at once, so a
            // mark next to an approval is not a consumption (the approval is then consumed below)
            if (bootId.equals(a.get(NodeKeys.REBOOTING_FROM_BOOT_ID))
                    && !NodeKeys.APPROVE_VALUE.equals(a.get(NodeKeys.APPROVE_REBOOT))) {
                LOG.log(Level.INFO, "approval on Node " + settings.nodeName() + " was already consumed for boot " + bootId);
                return ConsumeResult.ALREADY_CONSUMED;
            }
            if (!NodeKeys.APPROVE_VALUE.equals(a.get(NodeKeys.APPROVE_REBOOT))) {
                return ConsumeResult.NOT_APPROVED;
            }
            String rv = n.getMetadata().getResourceVersion();
            a.remove(NodeKeys.APPROVE_REBOOT);
            a.put(NodeKeys.REBOOTING_FROM_BOOT_ID, bootId);
            n.getMetadata().setAnnotations(a);
            // The writer stops managing the consumption mark while it is being set, so a concurrent flush can neither
            // remove it (an unused approval could then not be restored) nor write it without the approval's removal
            // (the mark alone would read as ALREADY_CONSUMED): the mark and the removal go in this one update.
            Optional<String> previousMark = annotations.remove(NodeKeys.REBOOTING_FROM_BOOT_ID);
            try {
                Node written = client.nodes().resource(n).lockResourceVersion(rv).update();
                apiOk = true;
                writes.incrementAndGet();
                node = written;
                annotations.put(NodeKeys.REBOOTING_FROM_BOOT_ID, Optional.of(bootId));
                LOG.log(Level.INFO, "approval " + NodeKeys.APPROVE_REBOOT + " consumed on Node " + settings.nodeName()
                        + " (resourceVersion " + rv + ") for a reboot leaving boot " + bootId);
                return ConsumeResult.CONSUMED;
            } catch (KubernetesClientException e) {
                restoreDesired(NodeKeys.REBOOTING_FROM_BOOT_ID, previousMark);
                if (e.getCode() == 409) {
                    LOG.log(Level.INFO, "approval consumption on Node " + settings.nodeName() + ": resourceVersion " + rv
                            + " is stale (409), re-reading (attempt " + attempt + ")");
                    continue;
                }
                return unreachable("consume the approval", e);
            }
        }
        return ConsumeResult.CONFLICT;
    }

    private void restoreDesired(String key, Optional<String> previous) {
        if (previous == null) {
            annotations.remove(key);
        } else {
            annotations.put(key, previous);
        }
    }

    private ConsumeResult unreachable(String what, KubernetesClientException e) {
        apiOk = false;
        lastError = "cannot " + what + " on Node " + settings.nodeName() + ": " + e.getMessage();
        LOG.log(Level.WARNING, lastError + ": the approval is not used");
        return ConsumeResult.UNREACHABLE;
    }

    @Override
    public boolean restoreApproval(String bootId) {
        for (int attempt = 1; attempt <= CONSUME_ATTEMPTS; attempt++) {
            try {
                Node n = client.nodes().withName(settings.nodeName()).get();
                if (n == null) {
                    return false;
                }
                Map<String, String> a = new HashMap<>(ann(n));
                if (!bootId.equals(a.get(NodeKeys.REBOOTING_FROM_BOOT_ID))) {
                    // no consumption for this boot on the Node: nothing to put back
                    annotations.put(NodeKeys.REBOOTING_FROM_BOOT_ID, Optional.empty());
                    return true;
                }
                a.remove(NodeKeys.REBOOTING_FROM_BOOT_ID);
                a.putIfAbsent(NodeKeys.APPROVE_REBOOT, NodeKeys.APPROVE_VALUE);
                String rv = n.getMetadata().getResourceVersion();
                n.getMetadata().setAnnotations(a);
                node = client.nodes().resource(n).lockResourceVersion(rv).update();
                // only now: a flush of the desired state before this update would have removed the mark it checks
                annotations.put(NodeKeys.REBOOTING_FROM_BOOT_ID, Optional.empty());
                writes.incrementAndGet();
                LOG.log(Level.INFO, "approval put back on Node " + settings.nodeName()
                        + ": the reboot it was consumed for (leaving boot " + bootId + ") did not happen");
                return true;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409) {
                    continue;
                }
                apiOk = false;
                lastError = "cannot put the approval back on Node " + settings.nodeName() + ": " + e.getMessage();
                LOG.log(Level.WARNING, lastError);
                return false;
            }
        }
        return false;
    }

    @Override
    public boolean flush(long timeoutMillis) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            java.util.concurrent.Future<Boolean> f;
            try {
                f = worker.submit(() -> {
                    syncNow();
                    Node n = node;
                    return n != null && !differs(n) && getPendingEvents() == 0;
                });
            } catch (RuntimeException e) {
                return false;
            }
            try {
                if (f.get(Math.max(1, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS)) {
                    return true;
                }
            } catch (java.util.concurrent.TimeoutException e) {
                f.cancel(true);
                return false;
            } catch (java.util.concurrent.ExecutionException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            if (System.nanoTime() >= deadline || !apiOk) {
                return false;
            }
        }
    }

    // ---- MBean ----

    @Override
    public String getNodeName() {
        return settings.nodeName();
    }

    @Override
    public String getPolicyResource() {
        return crWhat();
    }

    @Override
    public boolean isConnected() {
        return connected();
    }

    @Override
    public boolean isNodeInformerWatching() {
        SharedIndexInformer<Node> i = nodeInformer;
        return i != null && i.isWatching();
    }

    @Override
    public boolean isPolicyInformerWatching() {
        SharedIndexInformer<GenericKubernetesResource> i = crInformer;
        return i != null && i.isWatching();
    }

    @Override
    public String getLastInformerEvent() {
        Instant t = lastEventAt;
        return t == null ? null : t.toString();
    }

    @Override
    public String getLastWrite() {
        Instant t = lastWriteAt;
        return t == null ? null : t.toString();
    }

    @Override
    public long getReconnects() {
        return reconnects.get();
    }

    @Override
    public long getRelists() {
        return relists.get();
    }

    @Override
    public long getWrites() {
        return writes.get();
    }

    @Override
    public long getEventsPosted() {
        return eventsPosted.get();
    }

    @Override
    public int getPendingEvents() {
        synchronized (pendingEvents) {
            return pendingEvents.size();
        }
    }

    @Override
    public String getPolicy() {
        return describe(policy);
    }

    @Override
    public String getPolicyProblem() {
        return policy.problem();
    }

    @Override
    public String getApproval() {
        ApprovalState a = approval();
        return !a.known() ? "unknown (Node not seen yet)" : !a.present() ? "absent"
                : a.approved() ? "approved" : "invalid value '" + a.value() + "'";
    }

    @Override
    public String getLastError() {
        return lastError;
    }

    @Override
    public String relist() {
        LOG.log(Level.INFO, "relist requested through the NodeSync MBean");
        synchronized (this) {
            relists.incrementAndGet();
            closeInformers();
            startInformers();
        }
        return "informers re-created";
    }
}
