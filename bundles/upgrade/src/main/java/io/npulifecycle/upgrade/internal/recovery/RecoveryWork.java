package io.npulifecycle.upgrade.internal.recovery;

import io.npulifecycle.upgrade.internal.plan.NodeWrites;
import io.npulifecycle.upgrade.internal.drain.CordonGuard;
import io.npulifecycle.upgrade.internal.drain.DrainScope;
import io.npulifecycle.upgrade.internal.drain.DrainWork;
import io.npulifecycle.upgrade.internal.drain.Drainer;
import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.upgrade.internal.plan.EventSpec;
import io.npulifecycle.upgrade.internal.plan.NodeFacts;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.PodFacts;
import io.npulifecycle.upgrade.internal.rollout.RolloutStatus;

import io.npulifecycle.api.upgrade.spec.MaintenanceWindow;
import io.npulifecycle.api.upgrade.spec.RecoverySettings;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.model.NodeIssue;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.api.time.TimeSource;

/**
 * The control plane's writes of the recovery flow ({@link RecoveryPlanner}): per node one JSON merge patch guarded by
 * its resourceVersion that sets what the plan asks for: the taint {@value NodeKeys#NPU_UNHEALTHY_TAINT} (the other
 * taints kept), the cordon of a schedulable admitted node with {@value NodeKeys#CORDONED_BY} (never a node someone
 * else cordoned), the grant {@value NodeKeys#RECOVERY_REBOOT_GRANTED}, and on release the removal of all three (the
 * cordon only when it carries our record and no upgrade state holds it); the drain of each cordoned node through its
 * own {@link Drainer} (Eviction API, backoff, {@code DrainBlocked}) with {@code recoveryPolicy.drain}. Events on the
 * Node: {@code NpuUnhealthy} (the chips), {@code Cordoned}, {@code DrainStarted}, {@code RecoveryRebootGranted},
 * {@code RecoveryStorm}, {@code OutsideMaintenanceWindow}, {@code DrainFailed}, {@code Uncordoned}, {@code NpuHealthy}.
 * Writes only while leader. Memory: which nodes were announced as draining or waiting (storm protection, the window;
 * one Event each), lost with the process, which only means one Event more; and since when each node's drain runs
 * (the monotonic clock, from the first reconcile that sees it cordoned for its recovery), for
 * {@code recoveryPolicy.drain.timeoutSeconds}: a new leader measures the timeout again from its first sight, so a
 * drain may take longer across a leader change, and is never granted or failed early. Reconcile thread only.
 */
public final class RecoveryWork {

    private static final System.Logger LOG = System.getLogger(RecoveryWork.class.getName());

    private final KubernetesClient client;
    private final NodeWrites writer;
    private final BooleanSupplier leader;
    private final Drainer drainer;
    private final Set<String> drainAnnounced = new HashSet<>();
    private final Set<String> stormAnnounced = new HashSet<>();
    private final Set<String> windowAnnounced = new HashSet<>();
    /** Per node being drained for its recovery: when this replica first saw it cordoned (monotonic nanos). */
    private final Map<String, Long> drainSince = new HashMap<>();
    private final TimeSource time;

    /**
     * @param client the control plane's client ({@code nodes patch}, {@code pods/eviction create})
     * @param time the injected clock (the drain's backoff)
     * @param writer creates Events, records own node patches, counts requests
     * @param leader whether this replica may write, checked before each request
     */
    public RecoveryWork(KubernetesClient client, TimeSource time, NodeWrites writer, BooleanSupplier leader) {
        this.client = client;
        this.writer = writer;
        this.leader = leader;
        this.time = time;
        this.drainer = new Drainer(client, time, writer, leader);
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}) in the recovery drain.
     *
     * @param bug {@link PlantedBug#DRAIN_SKIPPED}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        drainer.plant(bug);
    }

    /**
     * One reconcile's recovery.
     *
     * @param plan the plan
     * @param toDrain the pods each draining node still has
     * @param settings the recovery settings
     * @param wake when a drain times out or the enforced window opens or closes next, from now; or null
     */
    public record Round(RecoveryPlanner.Plan plan, Map<String, List<Pod>> toDrain, RecoverySettings settings, Duration wake) {
    }

    /**
     * @param nodes the NPU nodes as the reconcile reads them
     * @param pods every pod
     * @param settings the recovery settings
     * @param now the injected clock's time of the reconcile (the enforced maintenance window)
     * @return the plan of this reconcile
     */
    public Round plan(Collection<Node> nodes, Collection<Pod> pods, RecoverySettings settings, Instant now) {
        MaintenanceWindow window = settings.window();
        boolean open = window == null || window.isOpen(now);
        long mono = time.monotonicNanos();
        long timeout = settings.drain().timeout().toNanos();
        Set<String> candidates = new HashSet<>();
        Map<String, Long> timedOut = new HashMap<>();
        Duration wake = null;
        boolean anyRequest = false;
        Map<String, List<String>> blocking = PodFacts.blocking(pods, settings.blocking());
        for (Node n : nodes) {
            if (!NodeFacts.recoveryRequested(n)) {
                continue;
            }
            anyRequest = true;
            if (open && CordonGuard.cordoned(n) && !RecoveryPlanner.failedInBoot(n)
                    && !blocking.containsKey(n.getMetadata().getName())) {
                String name = n.getMetadata().getName();
                candidates.add(name);
                Map<String, String> ann = n.getMetadata().getAnnotations();
                String boot = ann == null ? null : ann.get(NodeKeys.BOOT_ID);
                if (boot != null && boot.equals(ann.get(NodeKeys.RECOVERY_REBOOT_GRANTED))) {
                    continue; // granted: its drain is over, no timeout to measure
                }
                long ran = mono - drainSince.computeIfAbsent(name, k -> mono);
                if (ran >= timeout) {
                    timedOut.put(name, Duration.ofNanos(ran).toSeconds());
                } else {
                    wake = earlier(wake, Duration.ofNanos(timeout - ran));
                }
            }
        }
        Map<String, List<Pod>> toDrain = settings.drain().enable()
                ? DrainScope.podsToDrain(pods, candidates, settings.drain()) : Map.of();
        Map<String, List<String>> left = new HashMap<>();
        toDrain.forEach((node, ps) -> left.put(node, drainer.describe(ps)));
        RecoveryPlanner.Plan plan = RecoveryPlanner.plan(nodes, left, settings, DrainWork.CORDONED_STATES, now,
                timedOut, blocking);
        Set<String> draining = new HashSet<>();
        plan.nodes().stream().filter(p -> p.step() == RecoveryPlanner.Step.DRAIN).forEach(p -> draining.add(p.node()));
        drainSince.keySet().retainAll(draining);
        if (window != null && anyRequest) {
            wake = earlier(wake, Duration.between(now, window.nextChange(now)));
        }
        return new Round(plan, toDrain, settings, wake);
    }

    /**
     * Puts the recovery's part into the status: {@code recoveringNodes}, and the condition {@code RecoveryStorm}
     * (True while wedged nodes wait; False once none waits, only when it was there before).
     *
     * @param r this reconcile's round
     * @param status the plan's status (changed)
     * @param previous the status last written, or null
     * @param now for the condition's transition time
     */
    public static void status(Round r, NpuOperatorCtlStatus status, NpuOperatorCtlStatus previous, Instant now) {
        List<NodeIssue> recovering = new ArrayList<>();
        r.plan().nodes().stream().filter(p -> p.step() != RecoveryPlanner.Step.RELEASE)
                .forEach(p -> recovering.add(new NodeIssue(p.node(), p.detail())));
        status.setRecoveringNodes(recovering);
        NpuOperatorCtlStatus prev = previous == null ? new NpuOperatorCtlStatus() : previous;
        boolean had = prev.getConditions() != null && prev.getConditions().stream()
                .anyMatch(c -> NodeKeys.CONDITION_RECOVERY_STORM.equals(c.getType()));
        Condition c = null;
        if (!r.plan().storm().isEmpty()) {
            c = RolloutStatus.cond(prev, NodeKeys.CONDITION_RECOVERY_STORM, "True", "MaxUnavailableReached",
                    r.plan().storm().size() + " wedged nodes wait for their drain and recovery reboot ("
                            + String.join(", ", r.plan().storm()) + "): " + r.plan().unavailable() + " NPU nodes "
                            + "unavailable, spec.driver.recoveryPolicy.maxUnavailable allows " + r.plan().limit(), now);
        } else if (had) {
            c = RolloutStatus.cond(prev, NodeKeys.CONDITION_RECOVERY_STORM, "False", "WithinMaxUnavailable",
                    "no wedged node waits for the storm protection", now);
        }
        if (c != null) {
            List<Condition> conds = new ArrayList<>(status.getConditions());
            conds.removeIf(x -> NodeKeys.CONDITION_RECOVERY_STORM.equals(x.getType()));
            conds.add(c);
            status.setConditions(conds);
        }
    }

    /**
     * The writes of the round, while leader.
     *
     * @param r this reconcile's round
     * @param nodes the NPU nodes as the round read them
     * @param upgradeReleasing nodes the upgrade plan holds until our cordon is released
     *        ({@link Plan#releasing()}): a recovery that gives its cordon back uncordons them although
     *        their upgrade state label still holds the cordon (it changes once the uncordon is on the Node)
     * @return the nodes whose cordon DrainWork must leave alone this reconcile (held by the recovery, or patched
     *         here); with the wait until a refused eviction or a failed write may be tried again, or null
     */
    public Acted act(Round r, Collection<Node> nodes, Set<String> upgradeReleasing) {
        Set<String> skip = new HashSet<>(r.plan().holdingCordon());
        if (!leader.getAsBoolean()) {
            return new Acted(skip, null);
        }
        Map<String, Node> byName = new HashMap<>();
        nodes.forEach(n -> byName.put(n.getMetadata().getName(), n));
        Duration wake = null;
        Set<String> draining = new HashSet<>();
        Set<String> refs = new HashSet<>();
        r.toDrain().values().forEach(l -> l.forEach(p -> refs.add(DrainScope.ref(p))));
        drainer.retain(refs);
        for (RecoveryPlanner.NodePlan p : r.plan().nodes()) {
            Node n = byName.get(p.node());
            if (n == null) {
                continue;
            }
            if (!apply(p, n, upgradeReleasing.contains(p.node()))) {
                wake = earlier(wake, DrainWork.WRITE_RETRY);
            }
            skip.add(p.node());
            if (p.step() == RecoveryPlanner.Step.DRAIN) {
                draining.add(p.node());
                List<Pod> pods = r.toDrain().getOrDefault(p.node(), List.of());
                if (drainAnnounced.add(p.node())) {
                    event(p.node(), NodeKeys.NORMAL, NodeKeys.EVENT_DRAIN_STARTED, "draining for the recovery reboot"
                            + chips(p) + ": " + (pods.isEmpty() ? "no pod to evict" : pods.size() + " pods to evict: "
                                    + String.join(", ", pods.stream().map(DrainScope::ref).toList())));
                }
                Duration d = drainer.drain(p.node(), pods, r.settings().drain());
                wake = d == null ? wake : earlier(wake, d);
            }
        }
        drainAnnounced.retainAll(draining);
        Set<String> windowWaiting = new HashSet<>();
        for (RecoveryPlanner.NodePlan p : r.plan().nodes()) {
            if (p.step() == RecoveryPlanner.Step.WINDOW_WAIT) {
                windowWaiting.add(p.node());
                if (windowAnnounced.add(p.node())) {
                    event(p.node(), NodeKeys.WARNING, NodeKeys.EVENT_OUTSIDE_MAINTENANCE_WINDOW, "the recovery"
                            + chips(p) + " waits: " + p.detail().substring("waiting: ".length()));
                }
            }
        }
        windowAnnounced.retainAll(windowWaiting);
        if (r.wake() != null) {
            wake = earlier(wake, r.wake().isNegative() ? Duration.ZERO : r.wake());
        }
        for (String s : r.plan().storm()) {
            if (stormAnnounced.add(s)) {
                event(s, NodeKeys.WARNING, NodeKeys.EVENT_RECOVERY_STORM, "the drain and recovery reboot wait: "
                        + r.plan().unavailable() + " NPU nodes unavailable, spec.driver.recoveryPolicy.maxUnavailable "
                        + "allows " + r.plan().limit());
            }
        }
        stormAnnounced.retainAll(r.plan().storm());
        return new Acted(skip, wake);
    }

    /**
     * What {@link #act} did.
     *
     * @param skipUncordon the nodes DrainWork must not uncordon this reconcile
     * @param retry the wait until the next attempt, or null
     */
    public record Acted(Set<String> skipUncordon, Duration retry) {
    }

    /**
     * @param upgradeReleasing the upgrade plan waits for our cordon's release before it changes the state label
     * @return false when the patch failed (the caller tries again)
     */
    private boolean apply(RecoveryPlanner.NodePlan p, Node n, boolean upgradeReleasing) {
        boolean tainted = NodeFacts.tainted(n);
        String grant = n.getMetadata().getAnnotations() == null ? null
                : n.getMetadata().getAnnotations().get(NodeKeys.RECOVERY_REBOOT_GRANTED);
        boolean cordon = p.cordon() && !CordonGuard.cordoned(n);
        boolean release = p.step() == RecoveryPlanner.Step.RELEASE;
        String state = n.getMetadata().getLabels() == null ? null
                : n.getMetadata().getLabels().get(NodeKeys.DRIVER_UPGRADE_STATE);
        boolean uncordon = p.givesCordonBack() && CordonGuard.cordonedByUs(n)
                && (state == null || !DrainWork.CORDONED_STATES.contains(state) || upgradeReleasing);
        boolean taintChange = tainted != p.taint();
        boolean grantChange = !Objects.equals(grant, p.grant());
        String failed = n.getMetadata().getAnnotations() == null ? null
                : n.getMetadata().getAnnotations().get(NodeKeys.RECOVERY_DRAIN_FAILED);
        boolean failedChange = p.step() == RecoveryPlanner.Step.DRAIN_FAILED ? !Objects.equals(failed, p.failed())
                : release && failed != null;
        if (!taintChange && !grantChange && !cordon && !uncordon && !failedChange) {
            return true;
        }
        Map<String, Object> ann = new LinkedHashMap<>();
        if (grantChange) {
            ann.put(NodeKeys.RECOVERY_REBOOT_GRANTED, p.grant());
        }
        if (failedChange) {
            ann.put(NodeKeys.RECOVERY_DRAIN_FAILED, release ? null : p.failed());
        }
        Map<String, Object> spec = new LinkedHashMap<>();
        if (cordon || uncordon) {
            ann.put(NodeKeys.CORDONED_BY, cordon ? NodeKeys.CORDONED_BY_VALUE : null);
            spec.put("unschedulable", cordon ? Boolean.TRUE : null);
        }
        if (taintChange) {
            List<Taint> taints = new ArrayList<>(n.getSpec() == null || n.getSpec().getTaints() == null ? List.of()
                    : n.getSpec().getTaints());
            taints.removeIf(t -> NodeKeys.NPU_UNHEALTHY_TAINT.equals(t.getKey()));
            if (p.taint()) {
                taints.add(new TaintBuilder().withKey(NodeKeys.NPU_UNHEALTHY_TAINT)
                        .withValue(NodeKeys.NPU_UNHEALTHY_VALUE).withEffect(NodeKeys.NPU_UNHEALTHY_EFFECT).build());
            }
            spec.put("taints", taints);
        }
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("resourceVersion", n.getMetadata().getResourceVersion());
        if (!ann.isEmpty()) {
            meta.put("annotations", ann);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("metadata", meta);
        if (!spec.isEmpty()) {
            body.put("spec", spec);
        }
        String name = p.node();
        try {
            Node after = client.nodes().resource(NodeWrites.nodeStub(name))
                    .patch(PatchContext.of(PatchType.JSON_MERGE), client.getKubernetesSerialization().asJson(body));
            writer.count("recovery-patch");
            writer.patchedElsewhere(name, n.getMetadata().getResourceVersion(), after);
        } catch (KubernetesClientException e) {
            LOG.log(e.getCode() == 409 ? Level.DEBUG : Level.WARNING, "node " + name + ": recovery patch failed ("
                    + e.getCode() + "): " + e.getMessage());
            return false;
        }
        LOG.log(Level.INFO, "node " + name + ": recovery " + p.step() + (failedChange && !release ? ", drain failed: "
                + p.failed() : "") + (taintChange ? p.taint() ? ", tainted"
                : ", untainted" : "") + (cordon ? ", cordoned" : "") + (uncordon ? ", uncordoned" : "")
                + (grantChange ? p.grant() == null ? ", grant removed" : ", reboot granted for boot " + p.grant() : ""));
        if (taintChange && p.taint()) {
            event(name, NodeKeys.WARNING, NodeKeys.EVENT_NPU_UNHEALTHY, "tainted " + NodeKeys.NPU_UNHEALTHY_TAINT + "="
                    + NodeKeys.NPU_UNHEALTHY_VALUE + ":" + NodeKeys.NPU_UNHEALTHY_EFFECT + ": wedged" + chips(p)
                    + " (reboot-required reason=recovery)");
        }
        if (cordon) {
            event(name, NodeKeys.NORMAL, NodeKeys.EVENT_CORDONED, "cordoned for the recovery reboot" + chips(p) + " ("
                    + NodeKeys.CORDONED_BY + "=" + NodeKeys.CORDONED_BY_VALUE + ")");
        }
        if (grantChange && p.grant() != null) {
            event(name, NodeKeys.NORMAL, NodeKeys.EVENT_RECOVERY_REBOOT_GRANTED, "the recovery reboot of boot "
                    + p.grant() + " is granted (" + NodeKeys.RECOVERY_REBOOT_GRANTED + "): " + p.detail());
        }
        if (failedChange && !release) {
            event(name, NodeKeys.WARNING, NodeKeys.EVENT_DRAIN_FAILED, "the recovery drain" + chips(p) + " failed, "
                    + "the node is not rebooted: " + p.failed().substring(p.failed().indexOf(": ") + 2)
                    + (uncordon ? "; uncordoned (cordoned for its drain)" : CordonGuard.cordoned(n)
                            ? "; left cordoned (not cordoned by " + NodeKeys.CORDONED_BY_VALUE + ")" : "")
                    + "; the taint " + NodeKeys.NPU_UNHEALTHY_TAINT + " stays while the chips are wedged; to drain "
                    + "again: kubectl annotate node " + name + " " + NodeKeys.RECOVERY_DRAIN_FAILED + "-");
        }
        if (uncordon) {
            event(name, NodeKeys.NORMAL, NodeKeys.EVENT_UNCORDONED, "uncordoned: " + p.detail());
        }
        if (taintChange && !p.taint()) {
            event(name, NodeKeys.NORMAL, NodeKeys.EVENT_NPU_HEALTHY, "taint " + NodeKeys.NPU_UNHEALTHY_TAINT
                    + " removed: " + p.detail());
        }
        return true;
    }

    private static String chips(RecoveryPlanner.NodePlan p) {
        return p.chips() == null ? "" : " of chips " + p.chips();
    }

    private void event(String node, String type, String reason, String message) {
        writer.nodeEvent(new EventSpec("Node", node, type, reason, message));
    }

    private static Duration earlier(Duration a, Duration b) {
        return a == null || b.compareTo(a) < 0 ? b : a;
    }
}
