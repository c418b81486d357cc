package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.Combination;
import io.npulifecycle.upgrade.internal.plan.DaemonSetApply;
import io.npulifecycle.upgrade.internal.plan.ImageStatus;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.NodePatch;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.PodDelete;
import io.npulifecycle.upgrade.internal.plan.PodFacts;
import io.npulifecycle.upgrade.internal.plan.WhiteListState;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.UpgradeGates;
import io.npulifecycle.api.upgrade.spec.UpgradeState;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * The rollout decision as a pure function of the observed Kubernetes objects and the time: no I/O, no clock, no
 * memory between calls (apart from what the caller passes back in). The controller applies the returned
 * {@link Plan}; because every decision is derived from the objects, a restarted or new leader carries on.
 * States and transitions: {@code docs/upgrade.md}.
 */
public final class Reconciler {

    private Reconciler() {
    }

    /** The image of each combination under one policy, computed once per plan: a few combinations, many nodes. */
    private static final class Images {
        private final Policy pol;
        private final Map<Combination, String> byCombination = new HashMap<>();

        Images(Policy pol) {
            this.pol = pol;
        }

        String of(Combination c) {
            return byCombination.computeIfAbsent(c, k -> k.image(pol));
        }
    }

    /**
     * Computes the plan, phase by phase over the nodes sorted by name: {@link #classify} (on the target? to
     * upgrade?), {@link #imagePreflight}, {@link #advance} (each node's state machine, no slot needed),
     * {@link DrainStates} (cordon and drain done?), {@link WindowGate} (the maintenance window closed before the
     * reboot: the slot is released), {@link Deadlines#check} (in-flight nodes past their deadline fail),
     * {@link DrainStates#uncordonedDuringDrain} (a drain-required node someone uncordoned fails),
     * {@link DrainStates#releaseFirst} (done or failed only once back in service), {@link #hold}
     * (NPU workloads, bad node info, blocking pods), {@link SlotGrants#grant} (slots under maxParallelUpgrades and
     * maxUnavailable, only while the maintenance window is open; in manual mode an unapproved node yields its slot to
     * an approved one), then the writes
     * ({@link #nodePatches},
     * {@link #podDeletes}, {@link #daemonSets}) and the status ({@link RolloutStatus}).
     *
     * @param in the observed objects and the time
     * @return the plan; with an invalid spec only a status (condition InvalidSpec) and no write to any node
     */
    public static Plan plan(Inputs in) {
        List<PlannedNode> ns = observe(in.nodes());
        NpuOperatorCtlStatus prev = in.previous() == null ? new NpuOperatorCtlStatus() : in.previous();
        if (!in.spec().valid()) {
            RolloutStatus.Result s = RolloutStatus.invalidSpec(in, prev, ns);
            return new Plan(List.of(), List.of(), List.of(), List.of(), Set.of(), s.status(), s.nodeStates(), null);
        }
        Policy pol = in.spec().policy();
        Images images = new Images(pol);
        classify(ns, pol.version());
        ImageVerdict verdict = imagePreflight(ns, images, in.images(), in.whiteList());
        for (PlannedNode n : ns) {
            advance(n, pol.version(), verdict.ok(), in.now());
        }
        DrainStates.advance(ns, pol, in);
        WindowGate.release(ns, pol, in.now());
        Instant wake = Deadlines.check(ns, pol, in);
        DrainStates.uncordonedDuringDrain(ns, pol, in);
        Map<String, String> releasing = DrainStates.releaseFirst(ns, pol, in.now());
        hold(ns, in.npuWorkloads(), pol.gates(), in.blockingPods());
        Slots slots = SlotGrants.grant(ns, pol, in.paused() || !verdict.ok() || WindowGate.closed(pol, in.now()),
                in.now());
        WindowGate.afterGrants(ns, pol, in.now());
        List<NodePatch> patches = nodePatches(ns, verdict.ok());
        List<PodDelete> deletes = podDeletes(ns, images, in);
        List<DaemonSetApply> dss = daemonSets(ns, images, in.daemonSetImages(), pol.version(), verdict.ok());
        RolloutStatus.Result s = RolloutStatus.of(in, prev, pol, ns, verdict, slots);
        return new Plan(patches, deletes, dss, s.crEvents(), verdict.needed(), s.status(), s.nodeStates(),
                Deadlines.earliest(Deadlines.earliest(wake, slots.wake()), WindowGate.wake(ns, pol, in.now())),
                releasing);
    }

    /** @return the facts of every node, sorted by name */
    private static List<PlannedNode> observe(Collection<Node> nodes) {
        List<PlannedNode> ns = new ArrayList<>();
        for (Node node : nodes) {
            ns.add(PlannedNode.observe(node));
        }
        ns.sort(Comparator.comparing(n -> n.name));
        return ns;
    }

    /**
     * Done = the loaded driver is the target and {@code driver-validated = <target>@<boot-id>}. To upgrade = the
     * loaded driver is known and not the target, or the node carries a state label and is not done, or the node runs
     * the target but its agent asks for an upgrade reboot (it staged another version: its driver pod was replaced
     * for an earlier target, which then changed back; through the slot, cordon and drain its pod is replaced at the
     * target, the agent drops what it staged and validates, with no reboot). A node without {@code driver-version}
     * and without a label is neither ({@code unknown}, not touched).
     */
    private static void classify(List<PlannedNode> ns, String t) {
        for (PlannedNode n : ns) {
            n.doneForT = n.loaded != null && t.equals(n.loaded) && n.bootId != null
                    && (t + "@" + n.bootId).equals(n.ann.get(NodeKeys.DRIVER_VALIDATED));
            n.needsUpgrade = n.loaded != null && !t.equals(n.loaded) || n.state != null && !n.doneForT
                    || n.loaded != null && !n.doneForT && n.agentRequested();
        }
    }

    /**
     * @param results the registry's answers by image reference; absent = not checked yet
     * @param whiteList the ImageWhiteList as last read
     * @return which images the nodes to upgrade need, which of them are missing or unconfirmed, and which tags the
     *         whitelist does not list
     */
    private static ImageVerdict imagePreflight(List<PlannedNode> ns, Images images, Map<String, ImageStatus> results,
            WhiteListState whiteList) {
        Set<String> needed = new LinkedHashSet<>();
        for (PlannedNode n : ns) {
            if (n.needsUpgrade && n.combo != null) {
                needed.add(images.of(n.combo));
            }
        }
        List<String> missing = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        for (String img : needed) {
            ImageStatus s = results.get(img);
            if (s == null) {
                errors.add(img + " (not checked yet)");
            } else if (s.missing()) {
                missing.add(img);
            } else if (!s.present()) {
                errors.add(img + " (" + s.detail() + ")");
            }
        }
        return new ImageVerdict(needed, missing, errors, whiteList.verdict(needed));
    }

    /**
     * The transitions that need no slot. A node without a label that needs the upgrade becomes
     * {@code upgrade-required}, only when the images are confirmed; a done node loses its label; an
     * {@code upgrade-required} or {@code upgrade-failed} node keeps its state (its progress rewritten when missing
     * or malformed); an in-flight node follows {@link #advanceInFlight}.
     */
    private static void advance(PlannedNode n, String t, boolean imagesOk, Instant now) {
        n.next = n.state;
        n.nextProgress = n.progress != null && n.progress.state() == n.state ? n.progress : null;
        if (n.state == null) {
            if (n.needsUpgrade && imagesOk) {
                n.enter(UpgradeState.UPGRADE_REQUIRED, t, "", now);
            }
        } else if (n.doneForT) {
            n.next = null;
            n.nextProgress = null;
        } else if (n.state == UpgradeState.UPGRADE_REQUIRED || n.state == UpgradeState.UPGRADE_FAILED) {
            if (n.nextProgress == null) {
                n.enter(n.state, t, n.progressBootId(), now);
            }
        } else {
            advanceInFlight(n, t, now);
        }
    }

    /**
     * The latest fact the node shows wins: a new boot id (validated another version: back to
     * {@code upgrade-required}; the target not loaded and the agent asking for the upgrade reboot:
     * {@code reboot-required} from this boot; else {@code validation-required}); the agent's {@code rebooting-from-boot-id} for the
     * current boot ({@code rebooting}); the agent's upgrade reboot request ({@code reboot-required}; not while the
     * target is loaded: that request is for another version). A state
     * entered before keeps its progress, so its deadline keeps running. A {@code reboot-deferred} node holds no slot,
     * but a reboot it made anyway (the agent used an approval before it saw the label) is counted again: it goes
     * to {@code rebooting} or, after the new boot, on like any other.
     */
    private static void advanceInFlight(PlannedNode n, String t, Instant now) {
        String validated = n.ann.get(NodeKeys.DRIVER_VALIDATED);
        boolean rebooted = n.progress != null && !n.progress.fromBootId().isEmpty() && n.bootId != null
                && !n.bootId.equals(n.progress.fromBootId());
        boolean validatedOther = n.loaded != null && !t.equals(n.loaded) && validated != null
                && validated.equals(n.loaded + "@" + n.bootId);
        String rebootingFrom = n.ann.get(NodeKeys.REBOOTING_FROM_BOOT_ID);
        boolean agentRequested = n.agentRequested();
        String from = n.progressBootId();
        if (rebooted && agentRequested && n.loaded != null && !t.equals(n.loaded)
                && (n.state == UpgradeState.REBOOTING || n.state == UpgradeState.VALIDATION_REQUIRED)) {
            // the reboot since the slot did not load the target (it was another reboot, e.g. a recovery reboot in
            // flight when the slot came): the agent, its pod at the target, staged it and asks for the upgrade
            // reboot; granted from this boot, as waiting for a validation that cannot come fails the node
            n.enterIfNew(UpgradeState.REBOOT_REQUIRED, t, n.bootIdOrEmpty(), now);
        } else if (rebooted) {
            n.enterIfNew(validatedOther ? UpgradeState.UPGRADE_REQUIRED : UpgradeState.VALIDATION_REQUIRED, t, from, now);
        } else if (rebootingFrom != null && rebootingFrom.equals(n.bootId)
                && (n.state == UpgradeState.POD_RESTART_REQUIRED || n.state == UpgradeState.REBOOT_REQUIRED
                        || n.state == UpgradeState.REBOOT_DEFERRED)) {
            n.enterIfNew(UpgradeState.REBOOTING, t, from, now);
        } else if (n.state == UpgradeState.POD_RESTART_REQUIRED && agentRequested && !t.equals(n.loaded)) {
            // a request while the target is loaded is for another version, staged from a pod of an earlier target:
            // the pod is replaced at the target instead, and the agent drops what it staged
            n.enterIfNew(UpgradeState.REBOOT_REQUIRED, t, from, now);
        } else if (n.nextProgress == null) {
            // a person changed the label, or the annotation is malformed: the deadline starts now
            n.enter(n.state, t, n.bootIdOrEmpty(), now);
        }
    }

    /**
     * Holds a node waiting for a slot ({@code upgrade-required}, {@code reboot-deferred}) with NPU workloads (unless
     * {@code holdNodesWithNpuWorkloads: false}: the drain evicts them), or without a combination (bad node info); and
     * blocks one with a pod that {@code blockingPodSelector} matches ({@link PlannedNode#blockedBy}).
     */
    private static void hold(List<PlannedNode> ns, Map<String, List<String>> npuWorkloads, UpgradeGates gates,
            Map<String, List<String>> blockingPods) {
        for (PlannedNode n : ns) {
            if (n.next == UpgradeState.UPGRADE_REQUIRED || n.next == UpgradeState.REBOOT_DEFERRED) {
                List<String> pods = gates.holdNpuWorkloads() ? npuWorkloads.getOrDefault(n.name, List.of()) : List.of();
                if (n.combo == null) {
                    n.held = n.comboError;
                } else if (!pods.isEmpty()) {
                    n.held = PlannedNode.HELD_BY_WORKLOADS + String.join(", ", pods);
                }
                List<String> blocking = gates.blockingPods() == null ? List.of()
                        : blockingPods.getOrDefault(n.name, List.of());
                if (!blocking.isEmpty()) {
                    n.blockedBy = "blocking pods (blockingPodSelector " + gates.blockingPods().text() + "): "
                            + String.join(", ", blocking);
                }
            }
        }
    }

    /**
     * One merge patch per node whose label, progress or failure annotation changes; the {@code driver-combination}
     * label rides on it, or goes alone only while the images are confirmed ({@code touchNodes}). None for a node
     * waiting to be back in service ({@link PlannedNode#releaseWait}): its uncordon, guarded by the resourceVersion
     * this plan read, goes first.
     */
    private static List<NodePatch> nodePatches(List<PlannedNode> ns, boolean touchNodes) {
        List<NodePatch> patches = new ArrayList<>();
        for (PlannedNode n : ns) {
            if (n.releaseWait != null) {
                continue;
            }
            Map<String, String> lab = new LinkedHashMap<>();
            Map<String, String> ann = new LinkedHashMap<>();
            if (n.next != n.state || n.badLabel) {
                lab.put(NodeKeys.DRIVER_UPGRADE_STATE, n.next == null ? null : n.next.label());
            }
            String prog = n.nextProgress == null ? null : n.nextProgress.format();
            if (!Objects.equals(prog, n.ann.get(NodeKeys.DRIVER_UPGRADE_PROGRESS))) {
                ann.put(NodeKeys.DRIVER_UPGRADE_PROGRESS, prog);
            }
            String failure = n.next == UpgradeState.UPGRADE_FAILED
                    ? (n.failure != null ? n.failure : n.ann.get(NodeKeys.DRIVER_UPGRADE_FAILURE)) : null;
            if (!Objects.equals(failure, n.ann.get(NodeKeys.DRIVER_UPGRADE_FAILURE))) {
                ann.put(NodeKeys.DRIVER_UPGRADE_FAILURE, failure);
            }
            if (n.dropCordonRecord) {
                ann.put(NodeKeys.CORDONED_BY, null);
            }
            String before = n.rebootBefore == null ? null : n.rebootBefore.toString();
            if (!Objects.equals(before, n.ann.get(NodeKeys.UPGRADE_REBOOT_BEFORE))) {
                ann.put(NodeKeys.UPGRADE_REBOOT_BEFORE, before);
            }
            if (n.combo != null && !n.combo.key().equals(n.labels.get(NodeKeys.DRIVER_COMBINATION))
                    && (touchNodes || !lab.isEmpty() || !ann.isEmpty())) {
                lab.put(NodeKeys.DRIVER_COMBINATION, n.combo.key());
            }
            if (!lab.isEmpty() || !ann.isEmpty()) {
                patches.add(new NodePatch(n.name, n.node.getMetadata().getResourceVersion(), lab, ann,
                        (n.state == null ? "none" : n.state.label()) + " -> " + (n.next == null ? "none" : n.next.label()),
                        n.events));
            }
        }
        return patches;
    }

    /**
     * The driver pod of each {@code pod-restart-required} node whose image is not its combination's target image,
     * unless it is being deleted or this controller deleted it recently.
     */
    private static List<PodDelete> podDeletes(List<PlannedNode> ns, Images images, Inputs in) {
        List<PodDelete> deletes = new ArrayList<>();
        for (PlannedNode n : ns) {
            if (n.next == UpgradeState.POD_RESTART_REQUIRED && n.combo != null) {
                Pod p = in.driverPods().get(n.name);
                String want = images.of(n.combo);
                if (p != null && p.getMetadata().getDeletionTimestamp() == null
                        && !in.recentlyDeletedPods().contains(p.getMetadata().getUid()) && !want.equals(PodFacts.image(p))) {
                    deletes.add(new PodDelete(p.getMetadata().getNamespace(), p.getMetadata().getName(),
                            p.getMetadata().getUid(), n.name, "image " + PodFacts.image(p) + " -> " + want));
                }
            }
        }
        return deletes;
    }

    /**
     * The DaemonSet of every combination among the nodes, in order of first appearance, whose image is not the
     * target's; none while the images are not confirmed.
     */
    private static List<DaemonSetApply> daemonSets(List<PlannedNode> ns, Images images, Map<String, String> existing,
            String t, boolean imagesOk) {
        List<DaemonSetApply> dss = new ArrayList<>();
        if (!imagesOk) {
            return dss;
        }
        Map<Combination, String> comboImages = new LinkedHashMap<>();
        for (PlannedNode n : ns) {
            if (n.combo != null) {
                comboImages.putIfAbsent(n.combo, images.of(n.combo));
            }
        }
        for (Map.Entry<Combination, String> e : comboImages.entrySet()) {
            if (!e.getValue().equals(existing.get(e.getKey().daemonSetName()))) {
                dss.add(new DaemonSetApply(e.getKey(), e.getKey().daemonSetName(), e.getValue(), t));
            }
        }
        return dss;
    }
}
