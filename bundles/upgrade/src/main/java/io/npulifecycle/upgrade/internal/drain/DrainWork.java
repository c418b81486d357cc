package io.npulifecycle.upgrade.internal.drain;

import io.npulifecycle.upgrade.internal.plan.NodeWrites;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.NodePatch;
import io.npulifecycle.upgrade.internal.plan.Plan;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.DrainSettings;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.time.TimeSource;

/**
 * The controller's part of the upgrade drain around each plan ({@code cluster.UpgradeController#reconcile}): before
 * the plan, the pods left on each node being drained ({@link Inputs#drainLeft()}); after it, while leader, the
 * writes of the plan's states: a {@code cordon-required} node is cordoned ({@link CordonGuard}), a
 * {@code drain-required} node's pods are evicted ({@link Drainer}) while it is unschedulable (never from a
 * schedulable node), a node the plan holds until it is back in service ({@link Plan#releasing()}: done
 * or {@code upgrade-failed} once uncordoned) is uncordoned, and a node carrying our cordon record whose state no
 * longer needs the cordon (back to {@code upgrade-required}, {@code reboot-deferred}, no label) is uncordoned: every
 * path ends uncordoned, and only what we cordoned.
 */
public final class DrainWork {

    /** The states in which a node keeps the cordon of its drain: from the cordon until its validation. */
    public static final Set<String> CORDONED_STATES = Set.of(UpgradeState.CORDON_REQUIRED.label(),
            UpgradeState.DRAIN_REQUIRED.label(), UpgradeState.POD_RESTART_REQUIRED.label(),
            UpgradeState.REBOOT_REQUIRED.label(), UpgradeState.REBOOTING.label(),
            UpgradeState.VALIDATION_REQUIRED.label());

    /** When a cordon or uncordon failed (API server unreachable, conflict): the next attempt, simulated time. */
    public static final Duration WRITE_RETRY = Duration.ofSeconds(5);

    private final CordonGuard cordons;
    private final Drainer drainer;

    /**
     * @param client the control plane's client
     * @param time the injected clock
     * @param writer creates Events, records own node patches
     * @param leader whether this replica may write
     */
    public DrainWork(KubernetesClient client, TimeSource time, NodeWrites writer, BooleanSupplier leader) {
        this.cordons = new CordonGuard(client, writer, leader);
        this.drainer = new Drainer(client, time, writer, leader);
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}).
     *
     * @param bug {@link PlantedBug#ADMIN_CORDON_LIFTED}, {@link PlantedBug#DRAIN_SKIPPED}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        drainer.plant(bug);
        cordons.plant(bug);
    }

    /** @return the nodes whose observed state label is {@code cordon-required} or {@code drain-required} */
    private static Set<String> draining(Collection<Node> nodes, Map<String, String> planned) {
        Set<String> out = new HashSet<>();
        for (Node n : nodes) {
            String name = n.getMetadata().getName();
            String s = planned != null ? planned.get(name)
                    : n.getMetadata().getLabels() == null ? null
                            : n.getMetadata().getLabels().get(NodeKeys.DRIVER_UPGRADE_STATE);
            if (UpgradeState.CORDON_REQUIRED.label().equals(s) || UpgradeState.DRAIN_REQUIRED.label().equals(s)) {
                out.add(name);
            }
        }
        return out;
    }

    /**
     * @param nodes the NPU nodes as the plan reads them
     * @param pods every pod
     * @param drain the policy's drain
     * @return the plan's {@link Inputs#drainLeft()}
     */
    public Map<String, List<String>> left(Collection<Node> nodes, Collection<Pod> pods, DrainSettings drain) {
        Map<String, List<String>> out = new HashMap<>();
        DrainScope.podsToDrain(pods, draining(nodes, null), drain).forEach((node, ps) -> out.put(node,
                drainer.describe(ps)));
        return out;
    }

    /**
     * The writes of the plan's cordon and drain states, and the uncordons.
     *
     * @param plan the plan just applied
     * @param nodes the NPU nodes as the plan read them
     * @param pods every pod
     * @param pol the policy
     * @return how long until a refused eviction or a failed cordon write may be tried again, or null
     */
    public Duration act(Plan plan, Collection<Node> nodes, Collection<Pod> pods, Policy pol) {
        return act(plan, nodes, pods, pol, Set.of());
    }

    /**
     * As {@link #act(Plan, Collection, Collection, Policy)}, leaving the cordon of the nodes the recovery
     * holds or patched in this reconcile ({@code recovery.RecoveryWork}) alone.
     *
     * @param plan the plan just applied
     * @param nodes the NPU nodes as the plan read them
     * @param pods every pod
     * @param pol the policy
     * @param recoveryHeld nodes not to uncordon now
     * @return how long until a refused eviction or a failed cordon write may be tried again, or null
     */
    public Duration act(Plan plan, Collection<Node> nodes, Collection<Pod> pods, Policy pol,
            Set<String> recoveryHeld) {
        Map<String, String> states = plan.nodeStates();
        Map<String, String> releasing = plan.releasing();
        Set<String> recordDropped = new HashSet<>();
        for (NodePatch p : plan.nodePatches()) {
            if (p.annotations().containsKey(NodeKeys.CORDONED_BY) && p.annotations().get(NodeKeys.CORDONED_BY) == null) {
                recordDropped.add(p.node());
            }
        }
        Set<String> draining = draining(nodes, states);
        Map<String, List<Pod>> toDrain = DrainScope.podsToDrain(pods, draining, pol.drain());
        Set<String> refs = new HashSet<>();
        toDrain.values().forEach(l -> l.forEach(p -> refs.add(DrainScope.ref(p))));
        drainer.retain(refs);
        Duration wake = null;
        for (Node n : nodes) {
            String name = n.getMetadata().getName();
            String s = states.get(name);
            if (releasing.containsKey(name)) {
                // the state label changes once this uncordon is on the Node (a later plan sees it)
                if (!recoveryHeld.contains(name) && !cordons.uncordon(n, releasing.get(name))) {
                    wake = earlier(wake, WRITE_RETRY);
                }
            } else if (UpgradeState.CORDON_REQUIRED.label().equals(s)) {
                if (!cordons.cordon(n, "driver upgrade to " + pol.version())) {
                    wake = earlier(wake, WRITE_RETRY);
                }
            } else if (UpgradeState.DRAIN_REQUIRED.label().equals(s)) {
                if (!CordonGuard.cordoned(n)) {
                    continue; // schedulable: the plan failed it, or the recovery cordons it again; nothing evicted
                }
                Duration d = drainer.drain(name, toDrain.getOrDefault(name, List.of()), pol.drain());
                wake = d == null ? wake : earlier(wake, d);
            } else if (recordDropped.contains(name)) {
                continue; // schedulable already: the plan's patch removed the record someone else's uncordon left
            } else if (!CORDONED_STATES.contains(s) && !recoveryHeld.contains(name) && !cordons.uncordon(n, s == null || s.isEmpty()
                    ? "no upgrade state" : s.equals("upgraded") ? "upgraded to " + pol.version() + " and validated"
                            : "driver-upgrade-state " + s)) {
                wake = earlier(wake, WRITE_RETRY);
            }
        }
        return wake;
    }

    private static Duration earlier(Duration a, Duration b) {
        return a == null || b.compareTo(a) < 0 ? b : a;
    }
}
