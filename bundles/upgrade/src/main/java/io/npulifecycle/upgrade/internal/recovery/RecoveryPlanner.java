package io.npulifecycle.upgrade.internal.recovery;

import io.npulifecycle.upgrade.internal.drain.CordonGuard;
import io.npulifecycle.upgrade.internal.drain.DrainScope;
import io.npulifecycle.upgrade.internal.drain.DrainWork;
import io.npulifecycle.upgrade.internal.plan.NodeFacts;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.PodFacts;

import io.npulifecycle.api.upgrade.spec.MaintenanceWindow;
import io.npulifecycle.api.upgrade.spec.RecoverySettings;

import io.npulifecycle.api.node.NodeKeys;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Node;

/**
 * The recovery flow of the control plane (docs/upgrade.md "Recovery drain"), decided from the Nodes alone: no I/O, no
 * clock. A node agent declares a wedge with the label {@value NodeKeys#REBOOT_REQUIRED} and the annotation
 * {@value NodeKeys#REBOOT_REASON}{@code =recovery}; then, per node:
 * <ol>
 * <li>the taint {@value NodeKeys#NPU_UNHEALTHY_TAINT}{@code =true:NoSchedule} at once (storms aside);</li>
 * <li>with {@code recoveryPolicy.drain.enable}: admitted by the storm protection (at most
 * {@code recoveryPolicy.maxUnavailable} NPU nodes unavailable, those already unavailable counted; a node already
 * unavailable costs nothing), the node is cordoned when schedulable (with {@value NodeKeys#CORDONED_BY}), its pods are
 * drained ({@link DrainScope}, by the caller), and once none is left the reboot is granted:
 * {@value NodeKeys#RECOVERY_REBOOT_GRANTED}{@code =<boot id>};</li>
 * <li>once the request is gone and the driver validated in the node's current boot
 * ({@value NodeKeys#DRIVER_VALIDATED} ending with {@code @<boot id>}), and no reboot is being called from this boot
 * ({@value NodeKeys#REBOOTING_FROM_BOOT_ID}): the taint and the grant are removed, and the node is released to
 * {@link DrainWork}, which uncordons it when it carries our record. This one rule covers the fresh boot after the
 * recovery reboot (validated in the new boot) and false-positive suppression (the request withdrawn in a boot that
 * had validated: undone at once); a request withdrawn in a boot that never validated keeps the taint until it
 * does.</li>
 * </ol>
 * A node without the drain keeps only the taint: its node agent reboots without a grant.
 *
 * <p>Holds on the way, from the Node, the pods and the time passed in: while a pod
 * {@code recoveryPolicy.blockingPodSelector} matches runs on it, a wedged node is neither cordoned, drained nor granted
 * (as for the window below); with {@code recoveryPolicy.maintenanceWindow}
 * enforced and closed, a wedged node is neither admitted, cordoned, drained nor granted (a grant its agent has not
 * used yet is withdrawn, our cordon given back; the taint stays); a drain past {@code recoveryPolicy.drain.timeoutSeconds}
 * (measured by the caller) is granted anyway with {@code onTimeout: reboot}, and otherwise recorded as failed on the
 * Node ({@value NodeKeys#RECOVERY_DRAIN_FAILED}{@code =<boot id>: <reason>}): no grant, our cordon given back, the
 * taint kept while the request stands; not tried again in that boot until the record is removed.
 */
final class RecoveryPlanner {

    private RecoveryPlanner() {
    }

    /** Where a node is in its recovery. */
    enum Step {
        /** Nothing to do: no request, nothing of ours on the Node. */
        NONE,
        /** A request, the drain disabled: tainted only, the node agent reboots by itself. */
        TAINTED,
        /** A request, waiting for the storm protection. */
        STORM_WAIT,
        /** Admitted, not cordoned yet. */
        CORDON,
        /** Cordoned, pods left. */
        DRAIN,
        /** Drained: the grant is (to be) written. */
        GRANTED,
        /** Rebooted, waiting for the validation in the new boot. */
        VALIDATING,
        /** The enforced maintenance window is closed: tainted only, no cordon (ours given back), no grant. */
        WINDOW_WAIT,
        /** A pod {@code recoveryPolicy.blockingPodSelector} matches runs on it: tainted only, no cordon, no grant. */
        BLOCKED,
        /** The drain timed out with {@code onTimeout: fail} in this boot: tainted only, no cordon of ours, no grant. */
        DRAIN_FAILED,
        /** Done or suppressed: remove the taint and the grant, give the cordon back. */
        RELEASE
    }

    /**
     * What one node needs.
     *
     * @param node the node name
     * @param step its step
     * @param taint whether the taint must be on the Node
     * @param cordon whether the node must be cordoned now (schedulable and admitted)
     * @param grant the value {@value NodeKeys#RECOVERY_REBOOT_GRANTED} must have, or null for none
     * @param chips the chips of the request (annotation {@value NodeKeys#REBOOT_CHIPS}), or null
     * @param detail for the status
     * @param failed with {@link Step#DRAIN_FAILED}: the value {@value NodeKeys#RECOVERY_DRAIN_FAILED} must have
     *        ({@code <boot id>: <reason>}); else null (the record is removed on {@link Step#RELEASE} only)
     */
    record NodePlan(String node, Step step, boolean taint, boolean cordon, String grant, String chips, String detail,
            String failed) {

        /** A plan of a step other than {@link Step#DRAIN_FAILED}. */
        NodePlan(String node, Step step, boolean taint, boolean cordon, String grant, String chips, String detail) {
            this(node, step, taint, cordon, grant, chips, detail, null);
        }

        /** @return whether the recovery gives our cordon back now (the node waits or failed, the request stands) */
        boolean givesCordonBack() {
            return step == Step.RELEASE || step == Step.WINDOW_WAIT || step == Step.BLOCKED
                    || step == Step.DRAIN_FAILED;
        }

        /** @return whether the recovery holds the node's cordon (DrainWork must not uncordon it) */
        boolean holdsCordon() {
            return step == Step.CORDON || step == Step.DRAIN || step == Step.GRANTED || step == Step.VALIDATING;
        }
    }

    /**
     * The plan of one reconcile.
     *
     * @param nodes per node with a request or something of ours on it, sorted by name
     * @param storm the nodes waiting for the storm protection, sorted
     * @param limit the storm limit in force
     * @param unavailable the NPU nodes counted unavailable, the admitted ones included
     */
    record Plan(List<NodePlan> nodes, List<String> storm, int limit, int unavailable) {

        /** @return the nodes whose cordon the recovery holds */
        Set<String> holdingCordon() {
            return Set.copyOf(nodes.stream().filter(NodePlan::holdsCordon).map(NodePlan::node).toList());
        }
    }

    /**
     * As {@link #plan(Collection, Map, RecoverySettings, Set, Instant, Map)} with no window enforced and no drain
     * timed out.
     */
    static Plan plan(Collection<Node> npuNodes, Map<String, List<String>> drainLeft, RecoverySettings settings,
            Set<String> upgradeInFlight) {
        return plan(npuNodes, drainLeft, settings, upgradeInFlight, null, Map.of());
    }

    /**
     * @param npuNodes every NPU node as last read
     * @param drainLeft per node being drained for its recovery, the pods of its drain still on it (described)
     * @param settings the recovery settings
     * @param upgradeInFlight upgrade states that hold a rollout slot (a node in one is unavailable)
     * @param now the time of the plan (the injected clock's), for the enforced maintenance window; null = open
     * @param timedOut per node whose drain is past {@code drain.timeoutSeconds}, how long it took (seconds)
     * @return the plan
     */
    static Plan plan(Collection<Node> npuNodes, Map<String, List<String>> drainLeft, RecoverySettings settings,
            Set<String> upgradeInFlight, Instant now, Map<String, Long> timedOut) {
        return plan(npuNodes, drainLeft, settings, upgradeInFlight, now, timedOut, Map.of());
    }

    /**
     * As {@link #plan(Collection, Map, RecoverySettings, Set, Instant, Map)}, with the pods that hold nodes.
     *
     * @param blockingPods per node: its non-terminal pods {@code recoveryPolicy.blockingPodSelector} matches
     *        ({@link PodFacts#blocking}), each as {@code namespace/name}; a node absent here has none
     */
    static Plan plan(Collection<Node> npuNodes, Map<String, List<String>> drainLeft, RecoverySettings settings,
            Set<String> upgradeInFlight, Instant now, Map<String, Long> timedOut,
            Map<String, List<String>> blockingPods) {
        MaintenanceWindow window = settings.window();
        boolean closed = window != null && now != null && !window.isOpen(now);
        List<Node> sorted = new ArrayList<>(npuNodes);
        sorted.sort(Comparator.comparing(n -> n.getMetadata().getName()));
        int limit = settings.limit(sorted.size());
        int unavailable = 0;
        for (Node n : sorted) {
            if (unavailable(n, upgradeInFlight)) {
                unavailable++;
            }
        }
        List<NodePlan> out = new ArrayList<>();
        List<String> storm = new ArrayList<>();
        for (Node n : sorted) {
            String name = n.getMetadata().getName();
            Map<String, String> ann = annotations(n);
            String boot = ann.get(NodeKeys.BOOT_ID);
            String grant = ann.get(NodeKeys.RECOVERY_REBOOT_GRANTED);
            String chips = ann.get(NodeKeys.REBOOT_CHIPS);
            boolean ours = NodeFacts.tainted(n) || grant != null || ann.containsKey(NodeKeys.RECOVERY_DRAIN_FAILED);
            boolean rebootCalled = boot != null && boot.equals(ann.get(NodeKeys.REBOOTING_FROM_BOOT_ID));
            if (!NodeFacts.recoveryRequested(n)) {
                if (!ours) {
                    continue;
                }
                if (boot != null && validatedIn(n, boot) && !rebootCalled) {
                    out.add(new NodePlan(name, Step.RELEASE, false, false, null, chips, grant != null
                            && !grant.equals(boot) ? "validated after the recovery reboot" : "request withdrawn"));
                } else {
                    out.add(new NodePlan(name, Step.VALIDATING, true, false, grant, chips, rebootCalled
                            ? "rebooting (leaving boot " + boot + ")"
                            : "waiting for the driver validation in boot " + boot));
                }
                continue;
            }
            if (!settings.drain().enable()) {
                out.add(new NodePlan(name, Step.TAINTED, true, false, null, chips,
                        "tainted; drain disabled: the node agent reboots without a grant"));
                continue;
            }
            List<String> blocking = settings.blocking() == null ? List.of()
                    : blockingPods.getOrDefault(name, List.of());
            if (boot != null && boot.equals(grant) && (!closed && blocking.isEmpty() || rebootCalled)) {
                out.add(new NodePlan(name, Step.GRANTED, true, false, grant, chips,
                        "drained, reboot granted for boot " + boot));
                continue;
            }
            String failed = ann.get(NodeKeys.RECOVERY_DRAIN_FAILED);
            if (failedInBoot(n)) {
                out.add(new NodePlan(name, Step.DRAIN_FAILED, true, false, null, chips, "drain failed in boot " + boot
                        + ", not rebooted: " + failed.substring(boot.length() + 2) + "; to drain again: kubectl "
                        + "annotate node " + name + " " + NodeKeys.RECOVERY_DRAIN_FAILED + "-", failed));
                continue;
            }
            if (!blocking.isEmpty()) {
                out.add(new NodePlan(name, Step.BLOCKED, true, false, null, chips, "blocked: blocking pods "
                        + "(recoveryPolicy.blockingPodSelector " + settings.blocking().text() + "): "
                        + String.join(", ", blocking)));
                continue;
            }
            if (closed) {
                out.add(new NodePlan(name, Step.WINDOW_WAIT, true, false, null, chips, "waiting: maintenance window "
                        + window.describe() + " closed (recoveryPolicy.maintenanceWindow.enforce); opens at "
                        + window.nextOpening(now)));
                continue;
            }
            // a node already unavailable (cordoned, NotReady, granted, in an upgrade) costs the limit nothing
            if (!unavailable(n, upgradeInFlight)) {
                if (unavailable + 1 > limit) {
                    storm.add(name);
                    out.add(new NodePlan(name, Step.STORM_WAIT, true, false, grant, chips, "waiting: " + unavailable
                            + " of " + sorted.size() + " NPU nodes unavailable, recoveryPolicy.maxUnavailable allows "
                            + limit));
                    continue;
                }
                unavailable++;
            }
            if (!CordonGuard.cordoned(n)) {
                out.add(new NodePlan(name, Step.CORDON, true, true, grant, chips, "cordoning"));
                continue;
            }
            List<String> left = drainLeft.getOrDefault(name, List.of());
            if (boot == null) {
                out.add(new NodePlan(name, Step.DRAIN, true, false, grant, chips,
                        "no boot id on the Node yet: the reboot cannot be granted"));
            } else if (!left.isEmpty() && timedOut.containsKey(name)) {
                String why = "drain timed out after " + timedOut.get(name) + " s (recoveryPolicy.drain.timeoutSeconds "
                        + settings.drain().timeout().toSeconds() + "): pods left: " + String.join(", ", left);
                out.add(settings.drain().rebootOnTimeout()
                        ? new NodePlan(name, Step.GRANTED, true, false, boot, chips, why + "; onTimeout: reboot: reboot "
                                + "granted for boot " + boot + " with those pods on the node")
                        : new NodePlan(name, Step.DRAIN_FAILED, true, false, null, chips, "drain failed in boot "
                                + boot + ", not rebooted: " + why + "; to drain again: kubectl annotate node " + name
                                + " " + NodeKeys.RECOVERY_DRAIN_FAILED + "-", boot + ": " + why));
            } else if (!left.isEmpty()) {
                out.add(new NodePlan(name, Step.DRAIN, true, false, grant, chips,
                        "draining: pods left: " + String.join(", ", left)));
            } else {
                out.add(new NodePlan(name, Step.GRANTED, true, false, boot, chips,
                        "drained, reboot granted for boot " + boot));
            }
        }
        return new Plan(out, storm, limit, unavailable);
    }

    /**
     * @return whether {@value NodeKeys#RECOVERY_DRAIN_FAILED} records a failed recovery drain in the node's current
     *         boot
     */
    static boolean failedInBoot(Node n) {
        String boot = annotations(n).get(NodeKeys.BOOT_ID);
        String failed = annotations(n).get(NodeKeys.RECOVERY_DRAIN_FAILED);
        return boot != null && failed != null && failed.startsWith(boot + ": ");
    }

    /** @return whether {@value NodeKeys#DRIVER_VALIDATED} says the driver validated in {@code boot} */
    static boolean validatedIn(Node n, String boot) {
        String v = annotations(n).get(NodeKeys.DRIVER_VALIDATED);
        return v != null && v.endsWith("@" + boot);
    }

    /**
     * @return whether the node counts as unavailable for the storm protection: cordoned, not Ready, granted a recovery
     *         reboot, or in an upgrade state that holds a slot
     */
    static boolean unavailable(Node n, Set<String> upgradeInFlight) {
        if (CordonGuard.cordoned(n) || annotations(n).get(NodeKeys.RECOVERY_REBOOT_GRANTED) != null) {
            return true;
        }
        Map<String, String> l = n.getMetadata().getLabels();
        String state = l == null ? null : l.get(NodeKeys.DRIVER_UPGRADE_STATE);
        if (state != null && upgradeInFlight.contains(state)) {
            return true;
        }
        return n.getStatus() != null && n.getStatus().getConditions() != null && n.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && !"True".equals(c.getStatus()));
    }

    private static Map<String, String> annotations(Node n) {
        Map<String, String> a = n.getMetadata().getAnnotations();
        return a == null ? Map.of() : a;
    }
}
