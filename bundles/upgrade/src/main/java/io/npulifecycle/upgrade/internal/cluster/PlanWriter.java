package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.plan.NodeWrites;

import io.npulifecycle.upgrade.internal.plan.DaemonSetApply;
import io.npulifecycle.upgrade.internal.plan.EventSpec;
import io.npulifecycle.upgrade.internal.plan.NodePatch;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.PodDelete;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.api.time.TimeSource;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * Applies a {@link Plan} to the API server (docs/upgrade.md "Requests"), in this order: DaemonSets, one
 * merge patch per node (guarded by the node's {@code resourceVersion}), driver pod deletions (only of nodes whose
 * patch went through), Events on the CR, the status ({@code PUT …/status}, paced by {@link #statusWriteInterval}).
 * Every request is sent only while this replica leads (checked right before each one).
 *
 * <p>Bookkeeping of its own writes, which the next plan's inputs come from: the nodes it patched whose watch event has
 * not arrived yet ({@link OwnWrites}), the driver pods it deleted in the last {@link #RECENT_DELETE} (never deleted
 * twice), the status it wrote last (the next plan's {@code previous}), and counters by kind for the MBean.
 *
 * <p>Not thread-safe except for the counters: used by the controller's reconcile under its lock.
 */
final class PlanWriter implements NodeWrites {

    private static final System.Logger LOG = System.getLogger(PlanWriter.class.getName());
    /** Progress-only status changes are written at most every this many status intervals. */
    static final int PROGRESS_INTERVALS = 5;
    /** How long a deleted driver pod's uid is remembered (a second delete would only cost a request). */
    static final Duration RECENT_DELETE = Duration.ofMinutes(2);

    private final KubernetesClient client;
    private final TimeSource time;
    private final ControllerConfig cfg;
    private final BooleanSupplier leader;
    private final Runnable trigger;
    /** The template of this reconcile (null: unusable, no DaemonSet is written; DriverModes). */
    private DriverDaemonSets daemonSets;
    private final Function<String, Node> cachedNode;
    private final Function<String, DaemonSet> cachedDaemonSet;
    /** Nodes this controller patched that the informer has not delivered yet. */
    private final OwnWrites ownWrites = new OwnWrites();
    private final Map<String, Long> recentlyDeleted = new ConcurrentHashMap<>();
    private NpuOperatorCtlStatus lastStatus;
    private String lastStatusUid;
    private long lastStatusWriteNanos = Long.MIN_VALUE / 2;
    /** Write counters by kind (node-patch, pod-delete, event, daemonset, status, cr-annotation). */
    private final Map<String, AtomicLong> writes = new ConcurrentHashMap<>();
    private final AtomicLong conflicts = new AtomicLong();
    private final AtomicLong staleSkipped = new AtomicLong();

    /**
     * @param client the Kubernetes client
     * @param time the time source (monotonic clock of the status pacing, timestamps of Events)
     * @param cfg namespace and name of the CR, status interval
     * @param leader whether this replica leads now
     * @param trigger asks for a reconcile (after a 409, a skipped patch, a deferred status)
     * @param cachedNode the node informer's current copy by name, or null
     * @param cachedDaemonSet the DaemonSet informer's current copy by name (namespace {@code npu-operator}), or null
     */
    PlanWriter(KubernetesClient client, TimeSource time, ControllerConfig cfg, BooleanSupplier leader, Runnable trigger,
            Function<String, Node> cachedNode, Function<String, DaemonSet> cachedDaemonSet) {
        this.client = client;
        this.time = time;
        this.cfg = cfg;
        this.leader = leader;
        this.trigger = trigger;
        this.cachedNode = cachedNode;
        this.cachedDaemonSet = cachedDaemonSet;
    }

    /**
     * @param renderer the driver DaemonSet template of this reconcile, read from its ConfigMap; null = unusable (no
     *        DaemonSet is written)
     */
    void template(DriverDaemonSets renderer) {
        this.daemonSets = renderer;
    }

    /**
     * @param cached the node informer's copies
     * @return the same nodes, with the response of our own patch where the informer has not delivered it yet
     */
    Collection<Node> asWritten(Collection<Node> cached) {
        return ownWrites.view(cached);
    }

    /**
     * @param mono the monotonic clock now
     * @return the uids of the driver pods deleted within {@link #RECENT_DELETE} (a live view)
     */
    Set<String> recentlyDeletedPods(long mono) {
        recentlyDeleted.entrySet().removeIf(e -> mono - e.getValue() > RECENT_DELETE.toNanos());
        return recentlyDeleted.keySet();
    }

    /**
     * @param cr the CR as the informer holds it
     * @return the status last written to this CR, else the one read from it (null when absent or unreadable)
     */
    NpuOperatorCtlStatus previousStatus(GenericKubernetesResource cr) {
        if (lastStatus == null || !cr.getMetadata().getUid().equals(lastStatusUid)) {
            lastStatus = readStatus(cr);
            lastStatusUid = cr.getMetadata().getUid();
        }
        return lastStatus;
    }

    /** Forgets the status last written: the next plan reads the CR's (another leader may have written since). */
    void forgetStatus() {
        lastStatus = null;
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

    /**
     * Sends the plan's writes while this replica leads.
     *
     * @param plan the plan
     * @param cr the CR the plan was made from (Events' object, the status' {@code resourceVersion})
     * @param mono the monotonic clock now
     * @return false when the lease was lost during the pod deletions (nothing after them was sent), else true
     */
    boolean apply(Plan plan, GenericKubernetesResource cr, long mono) {
        for (DaemonSetApply d : plan.daemonSets()) {
            applyDaemonSet(d, cachedDaemonSet.apply(d.name()));
        }
        Set<String> notPatched = new HashSet<>();
        for (NodePatch p : plan.nodePatches()) {
            if (!patchNode(p, cr)) {
                notPatched.add(p.node());
            }
        }
        for (PodDelete d : plan.podDeletes()) {
            if (!leader.getAsBoolean()) {
                return false;
            }
            // a node whose patch (its slot: pod-restart-required) did not go through keeps its driver pod: no pod
            // is deleted outside a slot; the next reconcile decides again from the newer node
            if (!notPatched.contains(d.node())) {
                deletePod(d, mono);
            }
        }
        for (EventSpec e : plan.crEvents()) {
            event(e, cr);
        }
        if (!plan.status().equals(lastStatus)) {
            long since = mono - lastStatusWriteNanos;
            long interval = statusWriteInterval(lastStatus, plan.status(), cfg.statusInterval()).toNanos();
            if (since >= interval) {
                writeStatus(cr, plan.status());
                lastStatusWriteNanos = mono;
            } else {
                time.schedule(trigger, Duration.ofNanos(interval - since));
            }
        }
        return true;
    }

    /**
     * How long after the last status write the next one may go out: {@code statusInterval} when anything a person
     * or a tool acts on changed (a condition's status or reason, awaiting approval, failed or held nodes, target,
     * pause, start or completion), {@link #PROGRESS_INTERVALS} × {@code statusInterval} (10 s by default) when only
     * the counts, {@code progress} and the condition messages that quote them changed. Why: every node transition
     * changes the counts, so writing each would make the status PUTs grow with the rollout's length (0.05 per node
     * upgrade at 5,000 nodes, maxParallelUpgrades 50, docs/upgrade.md "Status").
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
        return Arrays.asList(s.getObservedGeneration(), s.getTargetVersion(), s.getPaused(), s.getStartTime(),
                s.getCompletionTime(), s.getAwaitingApproval(), s.getFailedNodes(), s.getHeldNodes(),
                s.getDrainingNodes(), s.getBlockedNodes(), s.getWaitingForWindow(), conds);
    }

    /** @return whether the patch went through */
    private boolean patchNode(NodePatch p, GenericKubernetesResource cr) {
        if (!leader.getAsBoolean()) {
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
        Node cached = cachedNode.apply(p.node());
        if (cached != null && !Objects.equals(ownWrites.currentVersion(cached), p.resourceVersion())) {
            staleSkipped.incrementAndGet();
            trigger.run();
            return false;
        }
        String json = client.getKubernetesSerialization().asJson(Map.of("metadata", meta));
        try {
            // resource(stub).patch(..), not withName(..).patch(..): fabric8 8.0.0 GETs the object before a patch
            // unless it holds one (one read per write, measured: 3.95 GET per node upgrade at 1,000 nodes,
            // docs/upgrade.md "Requests"); the merge patch needs no current object, the resourceVersion guards it
            Node after = client.nodes().resource(NodeWrites.nodeStub(p.node())).patch(PatchContext.of(PatchType.JSON_MERGE), json);
            count("node-patch");
            ownWrites.patched(p.node(), p.resourceVersion(), after);
            if (p.labels().containsKey(NodeKeys.DRIVER_UPGRADE_STATE)) {
                LOG.log(Level.INFO, "node " + p.node() + ": driver-upgrade-state " + p.why());
            }
            for (EventSpec e : p.events()) {
                LOG.log(NodeKeys.WARNING.equals(e.type()) ? Level.WARNING : Level.INFO, "node " + p.node() + ": "
                        + e.reason() + ": " + e.message());
                event(e, cr);
            }
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                conflicts.incrementAndGet();
                trigger.run(); // the node changed since (its agent wrote): decide again from the newer object
            } else {
                LOG.log(Level.WARNING, "node " + p.node() + ": patch failed (" + e.getCode() + "): " + e.getMessage());
            }
            return false;
        }
    }

    @Override
    public void nodeEvent(EventSpec e) {
        event(e, null);
    }

    @Override
    public void patchedElsewhere(String node, String fromVersion, Node after) {
        ownWrites.patched(node, fromVersion, after);
    }


    private void deletePod(PodDelete d, long mono) {
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

    private void event(EventSpec e, GenericKubernetesResource cr) {
        if (!leader.getAsBoolean()) {
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

    private void applyDaemonSet(DaemonSetApply d, DaemonSet existing) {
        if (!leader.getAsBoolean() || daemonSets == null) {
            return;
        }
        try {
            if (existing == null) {
                client.apps().daemonSets().inNamespace(NodeKeys.DRIVER_NAMESPACE)
                        .resource(daemonSets.render(d.combination(), d.name(), d.image(), d.version())).create();
            } else {
                // JSON patch (RFC 6902): the whole pod template, rendered from the manifest template with the new
                // image and DRIVER_VERSION (OnDelete: no pod restarts until the rollout deletes it); on the
                // informer's object, not withName(..): fabric8 GETs the object first otherwise (RBAC: no get)
                client.apps().daemonSets().inNamespace(NodeKeys.DRIVER_NAMESPACE).resource(existing)
                        .patch(PatchContext.of(PatchType.JSON), daemonSets.templatePatch(d.combination(), d.image(), d.version()));
            }
            count("daemonset");
            LOG.log(Level.INFO, "driver DaemonSet " + d.name() + " (" + d.combination() + "): image " + d.image()
                    + ", template " + daemonSets.source() + " digest " + daemonSets.hash());
        } catch (KubernetesClientException e) {
            LOG.log(Level.WARNING, "driver DaemonSet " + d.name() + ": " + e.getMessage());
        }
    }

    private void writeStatus(GenericKubernetesResource cr, NpuOperatorCtlStatus st) {
        if (!leader.getAsBoolean()) {
            return;
        }
        // Untyped on purpose: the server answers with the whole object, spec included, and a spec with a value of
        // the wrong type (maxParallelUpgrades: 1.5, autoUpgrade: "yes", an unknown field) cannot be bound to the
        // typed NpuOperatorCtl, so a typed write would fail on exactly the CR whose InvalidSpec condition it carries
        GenericKubernetesResource out = new GenericKubernetesResource();
        out.setApiVersion(cr.getApiVersion());
        out.setKind(cr.getKind());
        // the informer's resourceVersion: without one, fabric8 8.0.0 GETs the object before every updateStatus()
        out.setMetadata(new ObjectMetaBuilder().withName(cr.getMetadata().getName())
                .withNamespace(cr.getMetadata().getNamespace())
                .withResourceVersion(cr.getMetadata().getResourceVersion()).build());
        try {
            out.setAdditionalProperty("status", client.getKubernetesSerialization().convertValue(st, Map.class));
            // a full replace of the status subresource (PUT .../status): a JSON merge patch would merge the lists
            // on some servers (the mock appends conditions). Guarded by the resourceVersion the informer holds.
            client.genericKubernetesResources(UpgradeController.CTX).inNamespace(cfg.namespace()).resource(out).updateStatus();
            count("status");
            lastStatus = st;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                // the CR changed since the informer's copy (a spec edit, our previous status write): the informer's
                // update event brings a reconcile that writes the status again with the newer resourceVersion
                conflicts.incrementAndGet();
                trigger.run();
            } else {
                LOG.log(Level.WARNING, "status of NPUOperatorCtl " + cfg.resourceName() + ": " + e.getMessage()
                        + (e.getCause() != null ? " (" + e.getCause().getMessage() + ")" : ""));
            }
        }
    }

    @Override
    public void count(String kind) {
        writes.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    }

    /**
     * Adds the counters to {@code m} (thread-safe): writes by kind, {@code conflicts(409)}, {@code stale-skipped}.
     *
     * @param m the map to fill
     */
    void countsInto(Map<String, Long> m) {
        writes.forEach((k, v) -> m.put(k, v.get()));
        m.put("conflicts(409)", conflicts.get());
        m.put("stale-skipped", staleSkipped.get());
    }
}
