package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.Combination;
import io.npulifecycle.upgrade.internal.plan.EventSpec;
import io.npulifecycle.upgrade.internal.plan.Progress;

import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Node;

/**
 * One NPU node during one {@link Reconciler#plan}: the facts read from its Node object (final fields) and what the
 * plan decides for it (the mutable fields, filled phase by phase). Used by one plan on one thread, then dropped.
 */
final class PlannedNode {

    /** Start of the held reason of a node with NPU workloads (the condition's reason tells it from bad node info). */
    static final String HELD_BY_WORKLOADS = "NPU workloads on the node: ";

    /** Failure reasons are cut to this many characters (the annotation and the Event message stay readable). */
    static final int MAX_FAILURE_CHARS = 1000;

    final Node node;
    final String name;
    final Map<String, String> labels;
    final Map<String, String> ann;
    /** The node's (chip, kernel, OS), or null with {@link #comboError} naming the missing or malformed field. */
    final Combination combo;
    final String comboError;
    /** The {@code driver-upgrade-state} label; null = none, or a value that is not a state ({@link #badLabel}). */
    final UpgradeState state;
    final boolean badLabel;
    /** The parsed {@code driver-upgrade-progress} annotation; null = absent or malformed. */
    final Progress progress;
    /** The {@code driver-version} label (the loaded driver); null = absent, the node is {@code unknown}. */
    final String loaded;
    /** The {@code boot-id} annotation; null = absent. */
    final String bootId;
    /** Cordoned ({@code spec.unschedulable}) or {@code Ready != True}. */
    final boolean unavailable;
    /**
     * Unavailable for a reason other than this controller's own cordon (NotReady, or cordoned by someone else): it
     * stays unavailable when the controller releases the node and uncordons it.
     */
    final boolean staysUnavailable;
    /** {@code spec.unschedulable} is true (by us or by someone else). */
    final boolean cordoned;
    /** Annotation {@code approve-reboot=true}. */
    final boolean approved;

    /** Loaded driver = target and {@code driver-validated = <target>@<boot-id>}. */
    boolean doneForT;
    /** Not on the target (or labelled and not done): the rollout has to touch it. */
    boolean needsUpgrade;
    /** The state the plan gives it; null = no label (done, or not started). */
    UpgradeState next;
    /** The progress annotation the plan gives it (the observed object when unchanged); null = none. */
    Progress nextProgress;
    /** The failure reason the plan gives it, when it fails in this plan. */
    String failure;
    /** Why the node is held in {@code upgrade-required} (NPU workloads, bad node info); null = not held. */
    String held;
    /** The blocking pods on the node ({@code blockingPodSelector}): it gets no slot; null = none. */
    String blockedBy;
    /**
     * When the maintenance window closes, for a node that holds a slot before its reboot while it is open
     * ({@link WindowGate}): written as {@link NodeKeys#UPGRADE_REBOOT_BEFORE}; null = no such annotation.
     */
    Instant rebootBefore;
    /**
     * The approved node this node gives its slot to in this plan ({@link SlotGrants}): it goes to
     * {@code reboot-deferred}; null = it does not yield.
     */
    String yieldsTo;
    /**
     * Set when the plan would make the node done or {@code upgrade-failed} while it is not back in service yet
     * ({@link DrainStates#releaseFirst}): what it waits for. The node then keeps its observed state and gets no patch
     * in this plan; null = no such wait.
     */
    String releaseWait;
    /**
     * The node's patch removes {@value NodeKeys#CORDONED_BY}: the record of a cordon someone else removed
     * ({@link DrainStates#uncordonedDuringDrain}), which must not make a later cordon look like ours.
     */
    boolean dropCordonRecord;
    /** Events to create once the node's patch went through. */
    final List<EventSpec> events = new ArrayList<>();

    private PlannedNode(Node node) {
        this.node = node;
        this.name = node.getMetadata().getName();
        this.labels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        this.ann = node.getMetadata().getAnnotations() == null ? Map.of() : node.getMetadata().getAnnotations();
        Combination c = null;
        String error = null;
        try {
            c = Combination.of(node);
        } catch (IllegalArgumentException e) {
            error = e.getMessage();
        }
        this.combo = c;
        this.comboError = error;
        String raw = labels.get(NodeKeys.DRIVER_UPGRADE_STATE);
        this.state = UpgradeState.of(raw);
        this.badLabel = raw != null && state == null;
        this.progress = Progress.parse(ann.get(NodeKeys.DRIVER_UPGRADE_PROGRESS));
        this.loaded = emptyToNull(labels.get(NodeKeys.DRIVER_VERSION));
        this.bootId = emptyToNull(ann.get(NodeKeys.BOOT_ID));
        this.approved = "true".equals(ann.get(NodeKeys.APPROVE_REBOOT));
        this.cordoned = node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
        boolean notReady = node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream()
                        .anyMatch(cond -> "Ready".equals(cond.getType()) && !"True".equals(cond.getStatus()));
        this.unavailable = this.cordoned || notReady;
        this.staysUnavailable = notReady
                || this.cordoned && !NodeKeys.CORDONED_BY_VALUE.equals(ann.get(NodeKeys.CORDONED_BY));
    }

    /**
     * @param node an NPU node as observed
     * @return its facts, nothing decided yet
     */
    static PlannedNode observe(Node node) {
        return new PlannedNode(node);
    }

    private static String emptyToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /** @return whether the planned state holds a rollout slot */
    boolean inFlight() {
        return next != null && next.inFlight();
    }

    /**
     * @return whether the node agent asks for the upgrade reboot: label {@code reboot-required=true} with
     *         {@code reboot-reason=upgrade} (the driver is staged)
     */
    boolean agentRequested() {
        return "true".equals(labels.get(NodeKeys.REBOOT_REQUIRED))
                && Markers.REASON_UPGRADE.equals(ann.get(NodeKeys.REBOOT_REASON));
    }

    /** @return the boot id recorded in the observed progress when it got its slot, or "" */
    String progressBootId() {
        return progress == null ? "" : progress.fromBootId();
    }

    /** @return the current boot id, or "" */
    String bootIdOrEmpty() {
        return bootId == null ? "" : bootId;
    }

    /** Enters {@code s} now: a new progress, so the state's deadline starts now. */
    void enter(UpgradeState s, String target, String fromBootId, Instant now) {
        next = s;
        nextProgress = new Progress(s, now, target, fromBootId);
    }

    /**
     * Enters {@code s}, keeping the observed progress (and so the running deadline) when the node is already in
     * {@code s} with a progress of {@code s}.
     */
    void enterIfNew(UpgradeState s, String target, String fromBootId, Instant now) {
        if (progress != null && progress.state() == s && s == state) {
            next = s;
            nextProgress = progress;
        } else {
            enter(s, target, fromBootId, now);
        }
    }

    /**
     * Fails the node: it missed the deadline {@code d} of its planned state. Sets the failure reason (at most
     * {@link #MAX_FAILURE_CHARS} characters) and adds the Warning Event {@code DriverUpgradeFailed} on the Node.
     */
    void fail(Duration d, String detail, Instant now) {
        failBecause("missed the " + next.label() + " deadline of " + d.toSeconds() + "s (since "
                + nextProgress.since() + "): " + detail, now);
    }

    /**
     * Fails the node for {@code reason} (cut to {@link #MAX_FAILURE_CHARS} characters) and adds the Warning Event
     * {@code DriverUpgradeFailed} on the Node; the progress keeps the slot's target and boot id.
     */
    void failBecause(String reason, Instant now) {
        failure = reason.length() > MAX_FAILURE_CHARS ? reason.substring(0, MAX_FAILURE_CHARS) : reason;
        events.add(new EventSpec("Node", name, NodeKeys.WARNING, NodeKeys.EVENT_DRIVER_UPGRADE_FAILED, failure));
        next = UpgradeState.UPGRADE_FAILED;
        nextProgress = new Progress(UpgradeState.UPGRADE_FAILED, now, nextProgress.target(), nextProgress.fromBootId());
    }
}
