package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.markers.MarkerListener;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.ConsumeResult;
import io.npulifecycle.api.node.NodePolicy;
import io.npulifecycle.api.node.NodeSyncMXBean;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.node.PolicySource;
import io.npulifecycle.api.time.TimeSource;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

/**
 * The node-side Kubernetes sync, usable without OSGi: wires its parts and offers them as {@link PolicySource},
 * {@link ApprovalService} and {@link NodeWriter}; its MBean {@code io.npulifecycle:type=NodeSync} is the adapter
 * {@link NodeSyncMBean}.
 * <ul>
 * <li>{@link NodeInformers}: informers on this runtime's Node and on the {@code NPUOperatorCtl}, kept alive by the
 * {@link InformerWatchdog} (every {@code healthInterval});</li>
 * <li>{@link PolicyTracker}: the policy read from the {@code NPUOperatorCtl};</li>
 * <li>{@link NodeApprovals}: the approval and its exactly-once consumption;</li>
 * <li>{@link DesiredNodeState}, {@link NodeEventQueue}, {@link RebootRequiredMirror}: the node agent's desired
 * labels, annotations and queued Events, the {@code reboot-required} marker mirrored into them;</li>
 * <li>{@link NodeApi}: the Node as last seen and the one guarded read-modify-write of every change;</li>
 * <li>{@link PendingWrites}: what the API server has not received yet, kept on the host across a SIGKILL and a
 * reboot;</li>
 * <li>{@link NpuHealthCondition}: the NodeCondition {@code NpuHealthy} of the Node, derived from the desired state,
 * written (nodes/status) only when it changes;</li>
 * <li>{@link SyncWorker}: the thread that writes, a round on every informer event, marker change, write request and
 * health tick, and after a relist.</li>
 * </ul>
 */
public final class NodeSync implements PolicySource, ApprovalService, NodeWriter {

    private static final System.Logger LOG = System.getLogger(NodeSync.class.getName());

    /**
     * Settings of one sync, built with {@link #builder(String)}: each value not set is its default, the default of the
     * node sync's metatype ({@link NodeSyncComponent.Config}, whose {@code default}s are these constants and those of
     * {@link NpuOperatorCtlType}), except {@code stateDir}, which a sync without OSGi leaves unset (in memory).
     *
     * @param nodeName this runtime's Node
     * @param crNamespace namespace of the {@code NPUOperatorCtl}
     * @param crName name of the {@code NPUOperatorCtl}
     * @param eventNamespace where the Events about the Node are created
     * @param healthInterval time between two informer health checks (TimeSource time)
     * @param stateDir the state folder on the host where the writes the API server has not received yet are kept
     *        ({@value PendingWritesFile#NAME}), or {@code null}: kept in memory only, lost when the runtime ends
     */
    public record Settings(String nodeName, String crNamespace, String crName, String eventNamespace,
            Duration healthInterval, Path stateDir) {

        /** Default {@code eventNamespace}: where {@code kubectl describe node} shows the Events. */
        public static final String DEFAULT_EVENT_NAMESPACE = "default";
        /** Default {@code healthInterval}, in seconds. */
        public static final int DEFAULT_HEALTH_INTERVAL_SECONDS = 30;

        /**
         * Checks the settings.
         *
         * @throws NullPointerException when one other than {@code stateDir} is {@code null}, naming it
         */
        public Settings {
            Objects.requireNonNull(nodeName, "nodeName");
            Objects.requireNonNull(crNamespace, "crNamespace");
            Objects.requireNonNull(crName, "crName");
            Objects.requireNonNull(eventNamespace, "eventNamespace");
            Objects.requireNonNull(healthInterval, "healthInterval");
        }

        /**
         * @param nodeName this runtime's Node
         * @return a builder holding the defaults: the {@code NPUOperatorCtl} {@value NpuOperatorCtlType#DEFAULT_NAME}
         *         in {@value NpuOperatorCtlType#DEFAULT_NAMESPACE}, Events in {@value #DEFAULT_EVENT_NAMESPACE}, a
         *         health check every {@value #DEFAULT_HEALTH_INTERVAL_SECONDS} s, pending writes in memory only
         */
        public static Builder builder(String nodeName) {
            return new Builder(nodeName);
        }

        /** Builds {@link Settings}; each value not set keeps its default. Not thread-safe. */
        public static final class Builder {
            private final String nodeName;
            private String crNamespace = NpuOperatorCtlType.DEFAULT_NAMESPACE;
            private String crName = NpuOperatorCtlType.DEFAULT_NAME;
            private String eventNamespace = DEFAULT_EVENT_NAMESPACE;
            private Duration healthInterval = Duration.ofSeconds(DEFAULT_HEALTH_INTERVAL_SECONDS);
            private Path stateDir;

            private Builder(String nodeName) {
                this.nodeName = nodeName;
            }

            /**
             * @param namespace namespace of the {@code NPUOperatorCtl}
             * @return this builder
             */
            public Builder crNamespace(String namespace) {
                this.crNamespace = namespace;
                return this;
            }

            /**
             * @param name name of the {@code NPUOperatorCtl}
             * @return this builder
             */
            public Builder crName(String name) {
                this.crName = name;
                return this;
            }

            /**
             * @param namespace where the Events about the Node are created
             * @return this builder
             */
            public Builder eventNamespace(String namespace) {
                this.eventNamespace = namespace;
                return this;
            }

            /**
             * @param interval time between two informer health checks (TimeSource time)
             * @return this builder
             */
            public Builder healthInterval(Duration interval) {
                this.healthInterval = interval;
                return this;
            }

            /**
             * @param dir the host folder of the pending writes (it must outlive a reboot), or {@code null}: memory only
             * @return this builder
             */
            public Builder stateDir(Path dir) {
                this.stateDir = dir;
                return this;
            }

            /**
             * @return the settings
             * @throws NullPointerException when the node name, or a value set to {@code null} other than the state
             *         folder, is {@code null}, naming it
             */
            public Settings build() {
                return new Settings(nodeName, crNamespace, crName, eventNamespace, healthInterval, stateDir);
            }
        }
    }

    private final Settings settings;
    private final MarkerStore markers;
    private final Consumer<String> changeNotifier;
    private final MarkerListener markerListener = c -> requestSync();
    private final ApiHealth health = new ApiHealth();
    private final DesiredNodeState desired = new DesiredNodeState();
    private final NodeApi api;
    private final NodeEventQueue events;
    private final RebootRequiredMirror mirror;
    private final PendingWrites pending;
    private final NodeApprovals approvals;
    private final PolicyTracker policy;
    private final NodeInformers informers;
    private final InformerWatchdog watchdog;
    private final SyncWorker worker;
    private final NpuHealthCondition condition;

    /**
     * @param client the fabric8 client (not closed by this class)
     * @param settings node name, CR coordinates, Event namespace, health-check interval
     * @param time the TimeSource (health ticks, timestamps)
     * @param markers the marker store (the {@code reboot-required} marker is mirrored), may be {@code null}
     * @param changeNotifier called with {@code "approval"} or {@code "policy"} when they change, may be {@code null}
     */
    public NodeSync(KubernetesClient client, Settings settings, TimeSource time, MarkerStore markers,
            Consumer<String> changeNotifier) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(time, "time");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.markers = markers;
        this.changeNotifier = changeNotifier;
        api = new NodeApi(client, settings.nodeName(), time, health);
        events = new NodeEventQueue(client, settings.nodeName(), settings.eventNamespace(), time, health, api::cached);
        mirror = markers == null ? null : new RebootRequiredMirror(markers, desired, events);
        pending = new PendingWrites(settings.stateDir(), time, desired, events, api::cached);
        approvals = new NodeApprovals(api, desired);
        condition = new NpuHealthCondition(client, settings.nodeName(), time);
        informers = new NodeInformers(client, settings, time, health, new InformerEvents());
        policy = new PolicyTracker(informers.policyResource(), this::notifyChange);
        worker = new SyncWorker("npu-kube-node-sync", this::syncRound);
        watchdog = new InformerWatchdog(informers, time, settings.healthInterval(), this::requestSync);
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}); called before {@link #start()}.
     *
     * @param bug {@link PlantedBug#APPROVAL_REUSED}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        approvals.plant(bug);
    }

    /**
     * Gives back the writes an earlier runtime kept on the host ({@link PendingWrites#restore()}), then starts the
     * informers, the marker mirroring and the health ticks.
     */
    public void start() {
        LOG.log(Level.INFO, "node sync starting for node " + settings.nodeName() + ", NPUOperatorCtl "
                + informers.policyResource() + ", pending writes kept in "
                + (pending.path() == null ? "memory only" : pending.path()));
        pending.restore();
        if (markers != null) {
            markers.addListener(markerListener);
        }
        informers.start();
        watchdog.start();
        requestSync();
    }

    /**
     * Stops everything. What the API server has not received yet is in the pending-writes file already (kept at
     * every change), so stopping adds nothing to it; without a state folder it is lost.
     */
    public void stop() {
        worker.stop();
        if (markers != null) {
            markers.removeListener(markerListener);
        }
        watchdog.stop();
        informers.stop();
    }

    /** What the informers deliver: the Node into the cache (an approval change announced), the policy. */
    private final class InformerEvents implements NodeInformers.Listener {
        @Override
        public void onNode(Node node) {
            Node previous = api.remember(node);
            if (NodeApprovals.approvalChanged(previous, node)) {
                notifyChange("approval");
            }
            requestSync();
        }

        @Override
        public void onNodeDeleted() {
            api.remember(null);
            notifyChange("approval");
        }

        @Override
        public void onPolicy(GenericKubernetesResource cr) {
            policy.update(cr);
        }

        @Override
        public void onSynced() {
            requestSync();
        }
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

    /** Queues one sync round on the worker (coalesced): markers mirrored, desired state written, Events created. */
    public void requestSync() {
        worker.request();
    }

    private void syncRound() {
        try {
            if (mirror != null) {
                mirror.mirror();
            }
            desired.reconcile(api);
            Node afterCondition = condition.reconcile(NpuHealthCondition.decide(desired), api.cached());
            if (afterCondition != null) {
                api.remember(afterCondition);
            }
            events.flush();
        } catch (RuntimeException e) {
            if (!(e instanceof KubernetesClientException)) {
                // an API failure is recorded where it happened, naming the request; anything else is recorded here
                health.failed(String.valueOf(e.getMessage()));
            }
            LOG.log(Level.WARNING, "node sync of " + settings.nodeName() + " failed: " + health.lastError()
                    + " (retried at the next health tick; what is not written is kept in "
                    + (pending.path() == null ? "memory" : pending.path()) + ")");
        } finally {
            // what the mirror added and what was written since the last round
            pending.keep();
        }
    }

    // ---- NodeWriter ----

    @Override
    public String nodeName() {
        return settings.nodeName();
    }

    @Override
    public boolean connected() {
        return health.ok() && informers.nodeWatching();
    }

    @Override
    public void setLabel(String key, String value) {
        if (desired.setLabel(key, value)) {
            pending.keep();
            requestSync();
        }
    }

    @Override
    public void setAnnotation(String key, String value) {
        if (desired.setAnnotation(key, value)) {
            pending.keep();
            requestSync();
        }
    }

    @Override
    public void recordEvent(String key, String type, String reason, String message) {
        if (events.record(key, type, reason, message)) {
            pending.keep();
            requestSync();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Before it waits, the markers are mirrored and everything not yet on the Node is kept on the host (on the
     * calling thread, so a reboot that follows cannot cut it short); after it, the file is brought up to date again.
     */
    @Override
    public boolean flush(long timeoutMillis) {
        if (mirror != null) {
            try {
                mirror.mirror();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "cannot mirror the markers of " + settings.nodeName() + ": " + e.getMessage());
            }
        }
        pending.keep();
        boolean done = worker.flush(timeoutMillis, () -> desired.satisfiedBy(api.cached()) && events.pending() == 0,
                health::ok);
        pending.keep();
        return done;
    }

    // ---- PolicySource / ApprovalService ----

    @Override
    public NodePolicy policy() {
        return policy.policy();
    }

    @Override
    public ApprovalState approval() {
        return approvals.approval();
    }

    @Override
    public ConsumeResult consumeApproval(String bootId) {
        return approvals.consumeApproval(bootId);
    }

    @Override
    public boolean restoreApproval(String bootId) {
        return approvals.restoreApproval(bootId);
    }

    @Override
    public String upgradeRebootRefusal(java.time.Instant now) {
        return approvals.upgradeRebootRefusal(now);
    }

    @Override
    public String rebootGrant() {
        return approvals.rebootGrant();
    }

    @Override
    public boolean rebootGranted(String bootId) {
        return approvals.rebootGranted(bootId);
    }

    // ---- MBean ----

    /** @return what the MBean attribute {@link NodeSyncMXBean#getNodeName()} shows */
    public String getNodeName() {
        return settings.nodeName();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getPolicyResource()} shows */
    public String getPolicyResource() {
        return informers.policyResource();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#isConnected()} shows */
    public boolean isConnected() {
        return connected();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#isNodeInformerWatching()} shows */
    public boolean isNodeInformerWatching() {
        return informers.nodeWatching();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#isPolicyInformerWatching()} shows */
    public boolean isPolicyInformerWatching() {
        return informers.policyWatching();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getLastInformerEvent()} shows */
    public String getLastInformerEvent() {
        return iso(informers.lastEventAt());
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getLastWrite()} shows */
    public String getLastWrite() {
        return iso(api.lastWriteAt());
    }

    private static String iso(Instant t) {
        return t == null ? null : t.toString();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getReconnects()} shows */
    public long getReconnects() {
        return watchdog.reconnects();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getRelists()} shows */
    public long getRelists() {
        return watchdog.relists();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getWrites()} shows */
    public long getWrites() {
        return api.writes();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getEventsPosted()} shows */
    public long getEventsPosted() {
        return events.posted();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getPendingEvents()} shows */
    public int getPendingEvents() {
        return events.pending();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getPendingWrites()} shows */
    public List<String> getPendingWrites() {
        return pending.describe(settings.nodeName());
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getPendingWritesFile()} shows */
    public String getPendingWritesFile() {
        return pending.path() == null ? null : pending.path().toString();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getPendingWritesProblem()} shows */
    public String getPendingWritesProblem() {
        return pending.problem();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getPolicy()} shows */
    public String getPolicy() {
        return PolicyTracker.describe(policy.policy());
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getPolicyProblem()} shows */
    public String getPolicyProblem() {
        return policy.policy().problem();
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getApproval()} shows */
    public String getApproval() {
        ApprovalState a = approval();
        return !a.known() ? "unknown (Node not seen yet)" : !a.present() ? "absent"
                : a.approved() ? "approved" : "invalid value '" + a.value() + "'";
    }

    /** @return what the MBean attribute {@link NodeSyncMXBean#getLastError()} shows */
    public String getLastError() {
        return health.lastError();
    }

    /** @return what the MBean operation {@link NodeSyncMXBean#relist()} answers */
    public String relist() {
        return watchdog.relist();
    }
}
