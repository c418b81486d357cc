package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.EventSpec;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.WhiteListState;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.Condition;
import io.npulifecycle.api.upgrade.model.NodeIssue;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * The CR's status, its conditions and the rollout Events on the CR, built from the nodes as a {@link Reconciler#plan}
 * left them (docs/upgrade.md "Status"). Pure: the previous status is an input, so {@code startTime},
 * {@code completionTime} and each condition's {@code lastTransitionTime} carry over while they hold.
 */
public final class RolloutStatus {

    /** Condition messages are cut to this many characters (plus "..."). */
    static final int MAX_MESSAGE_CHARS = 4000;

    private RolloutStatus() {
    }

    /**
     * @param status the status to write
     * @param nodeStates per node: its state label, or "upgraded", "unknown", "pending", "unvalidated" ("" with an
     *        invalid spec and no label)
     * @param crEvents Events on the CR: RolloutStarted, RolloutComplete, NodeUpgradeFailed
     */
    record Result(NpuOperatorCtlStatus status, Map<String, String> nodeStates, List<EventSpec> crEvents) {
    }

    /** Per-node tallies of the status. */
    private record Tally(Map<String, Integer> counts, Map<String, String> nodeStates, int upgraded,
            List<String> awaiting, List<NodeIssue> failed, List<NodeIssue> held, List<NodeIssue> slotHolders,
            boolean complete) {
    }

    /**
     * The status of a CR whose spec is invalid: the counts of the labels as they are, the target, progress, start
     * and completion of the previous status, {@code InvalidSpec=True} naming every problem and
     * {@code Progressing=False InvalidSpec}.
     *
     * @param in the inputs (their spec is invalid)
     * @param prev the previous status (empty when none)
     * @param ns the nodes as observed
     * @return the status and node states; no Events
     */
    static Result invalidSpec(Inputs in, NpuOperatorCtlStatus prev, List<PlannedNode> ns) {
        NpuOperatorCtlStatus st = base(in);
        Map<String, String> nodeStates = new TreeMap<>();
        Map<String, Integer> counts = emptyCounts();
        for (PlannedNode n : ns) {
            String s = n.state == null ? "" : n.state.label();
            nodeStates.put(n.name, s);
            if (n.state != null) {
                counts.merge(s, 1, Integer::sum);
            }
        }
        st.setTargetVersion(prev.getTargetVersion());
        st.setNodeCounts(counts);
        st.setProgress(prev.getProgress());
        st.setStartTime(prev.getStartTime());
        st.setCompletionTime(prev.getCompletionTime());
        List<Condition> conds = new ArrayList<>();
        conds.add(cond(prev, "InvalidSpec", "True", "InvalidSpec", String.join("; ", in.spec().problems()), in.now()));
        conds.add(cond(prev, "Progressing", "False", "InvalidSpec", "nothing is touched until the spec is fixed", in.now()));
        st.setConditions(conds);
        return new Result(st, nodeStates, List.of());
    }

    /**
     * The status of a valid spec after the plan's transitions and grants.
     *
     * @param in the inputs
     * @param prev the previous status (empty when none)
     * @param pol the parsed spec
     * @param ns the nodes with their planned state
     * @param images the registry preflight's verdict
     * @param slots the slot counts after the grants
     * @return the status, the state of every node and the Events on the CR
     */
    static Result of(Inputs in, NpuOperatorCtlStatus prev, Policy pol, List<PlannedNode> ns,
            ImageVerdict images, Slots slots) {
        String t = pol.version();
        Instant now = in.now();
        int total = ns.size();
        Tally tally = tally(ns, pol);
        NpuOperatorCtlStatus st = base(in);
        st.setTargetVersion(t);
        st.setNodeCounts(tally.counts());
        st.setProgress(tally.upgraded() + "/" + total);
        st.setAwaitingApproval(tally.awaiting());
        st.setFailedNodes(tally.failed());
        st.setHeldNodes(tally.held());
        st.setSlotHolders(tally.slotHolders());
        st.setDrainingNodes(DrainStates.draining(ns, in.drainLeft()));
        st.setBlockedNodes(ns.stream().filter(n -> n.blockedBy != null).map(n -> new NodeIssue(n.name, n.blockedBy))
                .toList());
        st.setWaitingForWindow(WindowGate.waiting(ns, pol, now));
        List<EventSpec> crEvents = new ArrayList<>();
        boolean sameTarget = t.equals(prev.getTargetVersion());
        st.setStartTime(sameTarget && prev.getStartTime() != null ? prev.getStartTime() : now.toString());
        if (!sameTarget || prev.getStartTime() == null) {
            crEvents.add(crEvent(NodeKeys.NORMAL, NpuOperatorCtlType.EVENT_ROLLOUT_STARTED, "driver rollout to " + t
                    + " started: " + (total - tally.upgraded()) + " of " + total + " NPU nodes to upgrade"));
        }
        if (tally.complete()) {
            st.setCompletionTime(sameTarget && prev.getCompletionTime() != null ? prev.getCompletionTime() : now.toString());
            if (!sameTarget || prev.getCompletionTime() == null) {
                crEvents.add(crEvent(NodeKeys.NORMAL, NpuOperatorCtlType.EVENT_ROLLOUT_COMPLETE,
                        "driver " + t + " validated on all " + total + " NPU nodes"));
            }
        }
        for (PlannedNode n : ns) {
            for (EventSpec e : n.events) {
                if (NodeKeys.EVENT_DRIVER_UPGRADE_FAILED.equals(e.reason())) {
                    crEvents.add(crEvent(NodeKeys.WARNING, NpuOperatorCtlType.EVENT_NODE_UPGRADE_FAILED,
                            "node " + n.name + ": " + e.message()));
                }
            }
        }
        List<Condition> conds = new ArrayList<>();
        conds.add(cond(prev, "InvalidSpec", "False", "Valid", "spec is valid", now));
        conds.add(preflight(prev, images, tally.held(), now));
        conds.add(progressing(prev, in.paused(), t, total, images, slots, tally, now));
        conds.add(cond(prev, "Complete", tally.complete() ? "True" : "False", tally.complete() ? "Complete" : "InProgress",
                tally.upgraded() + "/" + total + " NPU nodes validated on " + t, now));
        conds.add(degraded(prev, tally.failed(), now));
        st.setConditions(conds);
        return new Result(st, tally.nodeStates(), crEvents);
    }

    private static NpuOperatorCtlStatus base(Inputs in) {
        NpuOperatorCtlStatus st = new NpuOperatorCtlStatus();
        st.setObservedGeneration(in.generation());
        st.setPaused(in.paused());
        return st;
    }

    private static EventSpec crEvent(String type, String reason, String message) {
        return new EventSpec(NpuOperatorCtlType.KIND, null, type, reason, message);
    }

    /** Counts and lists per node: complete = every node upgraded (done on the target, validated). */
    private static Tally tally(List<PlannedNode> ns, Policy pol) {
        Map<String, Integer> counts = emptyCounts();
        Map<String, String> nodeStates = new TreeMap<>();
        int upgraded = 0;
        List<String> awaiting = new ArrayList<>();
        List<NodeIssue> failed = new ArrayList<>();
        List<NodeIssue> held = new ArrayList<>();
        List<NodeIssue> holders = new ArrayList<>();
        boolean complete = true;
        for (PlannedNode n : ns) {
            String s;
            if (n.next != null) {
                s = n.next.label();
            } else if (n.loaded == null) {
                s = "unknown";
            } else if (n.doneForT) {
                s = "upgraded";
                upgraded++;
            } else if (n.needsUpgrade) {
                s = "pending";
            } else {
                s = "unvalidated";
            }
            complete &= "upgraded".equals(s);
            counts.merge(s, 1, Integer::sum);
            nodeStates.put(n.name, s);
            if ((n.next == UpgradeState.REBOOT_REQUIRED || n.next == UpgradeState.REBOOT_DEFERRED)
                    && !pol.autoUpgrade() && !n.approved) {
                awaiting.add(n.name);
            }
            String why = slotReason(n, pol);
            if (why != null) {
                holders.add(new NodeIssue(n.name, why));
            }
            if (n.next == UpgradeState.UPGRADE_FAILED) {
                failed.add(new NodeIssue(n.name, n.failure != null ? n.failure
                        : Objects.requireNonNullElse(n.ann.get(NodeKeys.DRIVER_UPGRADE_FAILURE), "upgrade-failed")));
            }
            if (n.held != null) {
                held.add(new NodeIssue(n.name, n.held));
            }
        }
        return new Tally(counts, nodeStates, upgraded, awaiting, failed, held, holders, complete);
    }

    /**
     * Why a node holds a slot after this plan, or null when it holds none. A node yielding in this plan still holds
     * its slot until its {@code reboot-deferred} patch is on the Node, so it is listed, naming the node it yields to.
     */
    static String slotReason(PlannedNode n, Policy pol) {
        String approval = pol.autoUpgrade() ? "autoUpgrade" : n.approved ? "approved" : "not approved";
        if (n.yieldsTo != null) {
            return n.state.label() + ", not approved: yields its slot to " + n.yieldsTo
                    + " (approved, waiting); goes to " + UpgradeState.REBOOT_DEFERRED.label();
        }
        if (!n.inFlight()) {
            return null;
        }
        if (n.releaseWait != null) {
            return n.next.label() + ": " + n.releaseWait;
        }
        switch (n.next) {
            case POD_RESTART_REQUIRED:
                return n.next.label() + ", " + approval + ": the driver pod restarts with the target image, then the "
                        + "node agent stages it" + (pol.autoUpgrade() || n.approved ? ""
                                : " (gives the slot up to an approved node that waits)");
            case REBOOT_REQUIRED:
                return n.next.label() + ", " + approval + (pol.autoUpgrade() || n.approved
                        ? ": staged, the node agent reboots it"
                        : ": staged, waiting for " + NodeKeys.APPROVE_REBOOT + "=true (gives the slot up to an "
                                + "approved node that waits)");
            case REBOOTING:
                return n.next.label() + ": leaving boot " + n.nextProgress.fromBootId();
            case VALIDATION_REQUIRED:
                return n.next.label() + ": waiting for " + NodeKeys.DRIVER_VALIDATED + "=" + pol.version() + "@"
                        + n.bootId;
            default:
                return n.next.label();
        }
    }

    /**
     * {@code PreflightPassed}: missing or unconfirmed images first, then the ImageWhiteList, then held nodes (NPU
     * workloads, node info); when it passes, what the ImageWhiteList check found (listed, does not apply, disabled).
     */
    private static Condition preflight(NpuOperatorCtlStatus prev, ImageVerdict images, List<NodeIssue> held,
            Instant now) {
        List<String> pf = new ArrayList<>();
        String reason = "Passed";
        if (!images.missing().isEmpty()) {
            reason = "ImageMissing";
            pf.add("driver images missing from the registry: " + String.join(", ", images.missing()));
        }
        if (!images.errors().isEmpty()) {
            reason = images.missing().isEmpty() ? "ImageCheckFailed" : reason;
            pf.add("driver images not confirmed: " + String.join(", ", images.errors()));
        }
        WhiteListState.Verdict wl = images.whiteList();
        if (!wl.ok()) {
            reason = pf.isEmpty() ? wl.reason() : reason;
            pf.add(wl.message());
        }
        if (!held.isEmpty()) {
            boolean workloads = held.stream().anyMatch(h -> h.getReason().startsWith(PlannedNode.HELD_BY_WORKLOADS));
            reason = pf.isEmpty() ? (workloads ? "NpuWorkloadsPresent" : "NodeInfoInvalid") : reason;
            pf.add("nodes held: " + held.stream().map(NodeIssue::toString).collect(Collectors.joining("; ")));
        }
        return cond(prev, "PreflightPassed", pf.isEmpty() ? "True" : "False", reason,
                pf.isEmpty() ? "driver images present for every combination; no NPU workloads on nodes to upgrade"
                        + (wl.message().isEmpty() ? "" : "; " + wl.message())
                        : String.join("; ", pf), now);
    }

    /** {@code Progressing}: True only while rolling out (not complete, not paused, images confirmed). */
    private static Condition progressing(NpuOperatorCtlStatus prev, boolean paused, String t, int total,
            ImageVerdict images, Slots slots, Tally tally, Instant now) {
        String reason;
        String msg;
        if (tally.complete()) {
            reason = "Complete";
            msg = "every NPU node runs and validated " + t;
        } else if (paused) {
            reason = "Paused";
            msg = "paused (annotation " + NpuOperatorCtlType.PAUSED_ANNOTATION + "=true); nodes in flight finish their current step";
        } else if (!images.ok()) {
            reason = "PreflightFailed";
            msg = images.registryOk() ? "held: " + images.whiteList().message()
                    : "held: driver images are missing or not confirmed";
        } else {
            reason = "RollingOut";
            msg = tally.upgraded() + "/" + total + " upgraded, " + slots.inFlight() + " in flight, " + slots.unavailable()
                    + "/" + slots.maxUnavailable() + " unavailable"
                    + (tally.awaiting().isEmpty() ? "" : ", " + tally.awaiting().size() + " awaiting approval");
        }
        return cond(prev, "Progressing", !tally.complete() && !paused && images.ok() ? "True" : "False", reason, msg, now);
    }

    /** {@code Degraded}: True while any node is {@code upgrade-failed}, naming them. */
    private static Condition degraded(NpuOperatorCtlStatus prev, List<NodeIssue> failed, Instant now) {
        return cond(prev, "Degraded", failed.isEmpty() ? "False" : "True", failed.isEmpty() ? "NoFailures" : "NodesFailed",
                failed.isEmpty() ? "no node failed" : failed.size() + " node(s) upgrade-failed: "
                        + failed.stream().map(NodeIssue::getName).collect(Collectors.joining(", ")), now);
    }

    /** @return zero for every state label and for pending, upgraded, unvalidated, unknown, in that order */
    static Map<String, Integer> emptyCounts() {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (UpgradeState s : UpgradeState.values()) {
            m.put(s.label(), 0);
        }
        m.put("pending", 0);
        m.put("upgraded", 0);
        m.put("unvalidated", 0);
        m.put("unknown", 0);
        return m;
    }

    /**
     * A condition whose {@code lastTransitionTime} is the previous one's while its status is unchanged, else now; the
     * message is cut to {@link #MAX_MESSAGE_CHARS} characters.
     *
     * @param prev the status last written (its conditions give the previous transition times); never null
     * @param type the condition's type, e.g. {@code Progressing}
     * @param status {@code True}, {@code False} or {@code Unknown}
     * @param reason the condition's reason, one CamelCase word
     * @param msg the condition's message
     * @param now the plan's time, the transition time of a changed status
     * @return the condition
     */
    public static Condition cond(NpuOperatorCtlStatus prev, String type, String status, String reason, String msg, Instant now) {
        Condition c = new Condition();
        c.setType(type);
        c.setStatus(status);
        c.setReason(reason);
        c.setMessage(msg.length() > MAX_MESSAGE_CHARS ? msg.substring(0, MAX_MESSAGE_CHARS) + "..." : msg);
        c.setLastTransitionTime(now.toString());
        if (prev.getConditions() != null) {
            for (Condition p : prev.getConditions()) {
                if (type.equals(p.getType()) && status.equals(p.getStatus()) && p.getLastTransitionTime() != null) {
                    c.setLastTransitionTime(p.getLastTransitionTime());
                }
            }
        }
        return c;
    }
}
