package io.npulifecycle.rebooter.internal;

import io.npulifecycle.api.reboot.RebooterMXBean;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.ConsumeResult;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodePolicy;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.node.PolicySource;
import io.npulifecycle.api.reboot.RebootExecutor;
import io.npulifecycle.api.time.TimeSource;

/**
 * The rebooter's decision path, usable without OSGi. {@link #evaluate()} is called on every poll, marker change and
 * node change; it is synchronized, so one decision runs at a time.
 *
 * <p>Order of one evaluation: settle past steps (a reboot whose boot id has changed is completed) → read the
 * {@code reboot-required} marker of the current boot → authorise (a consumption already recorded for this boot; else
 * {@code autoRecover}/{@code autoUpgrade}; else a valid approval, consumed exactly once) → loop protection for
 * automatic recovery → re-check the marker and the policy → record the reboot in the state file → flush the Node
 * writes → call the {@link RebootExecutor}. Every branch that does not reboot sets {@link #decision()} and says why.
 */
public final class RebootEngine implements RebooterMXBean {

    private static final System.Logger LOG = System.getLogger(RebootEngine.class.getName());

    /** Settings. */
    public record Settings(Path stateDir, int maxReboots, Duration window, boolean dryRun, long flushTimeoutMillis) {
        /** Checks. */
        public Settings {
            Objects.requireNonNull(stateDir);
            Objects.requireNonNull(window);
        }
    }

    /** Decision kinds (the MBean shows the name and the why). */
    public enum Decision {
        /** No valid reboot-required marker for this boot. */
        NONE,
        /** A request waits for an approval (or for a valid one). */
        WAITING_FOR_APPROVAL,
        /** Authorised, but the API server could not be reached to consume the approval. */
        WAITING_FOR_API,
        /** Recovery reboot limit reached: a person is needed. */
        RECOVERY_BLOCKED,
        /** The re-check right before the reboot failed. */
        RECHECK_FAILED,
        /** Would reboot, but dry-run or no executor. */
        DRY_RUN,
        /** The executor was called. */
        REBOOTING,
        /** The executor failed. */
        FAILED,
        /** The state file is corrupt: nothing reboots until a person resets it. */
        STATE_CORRUPT,
        /** The marker is not usable (unknown reason). */
        INVALID_REQUEST
    }

    private final MarkerStore markers;
    private final Supplier<PolicySource> policies;
    private final Supplier<ApprovalService> approvals;
    private final Supplier<NodeWriter> writers;
    private final Supplier<RebootExecutor> executors;
    private final TimeSource time;
    private volatile Settings settings;
    private volatile StateFile stateFile;

    private RebooterState state;
    private volatile String corruptProblem;
    private volatile Decision decision = Decision.NONE;
    private volatile String why = "not evaluated yet";
    private volatile String pendingRequest;
    private volatile String lastError;
    private String lastLogged;
    private String dryRunRecordedFor;
    /** Whether this engine (this runtime process) called the executor; a restarted agent starts with false. */
    private boolean calledHere;
    /** Monotonic time at which this engine first saw a reboot called by a previous process in this boot. */
    private Long sawForeignCallNanos;

    /**
     * How long a restarted node agent waits, in the same boot, after finding a reboot called by its predecessor before
     * concluding that the call never took effect and making it again (simulated time, monotonic, so a wall-clock jump
     * changes nothing). Found by the reliability matrix (issue #7): an agent SIGKILLed between recording the call and
     * the executor's work left the node in this boot forever, its approval consumed, the request never served.
     */
    static final Duration NOT_REBOOTED_GRACE = Duration.ofMinutes(10);

    /**
     * @param markers the marker store
     * @param policies the current policy source, or a supplier of {@code null} (unknown policy)
     * @param approvals the approval service, or a supplier of {@code null} (no approval can be used)
     * @param writers the Node writer, or a supplier of {@code null} (nothing reported)
     * @param executors the reboot executor, or a supplier of {@code null} (none configured: never reboots)
     * @param time the TimeSource
     * @param settings the settings
     */
    public RebootEngine(MarkerStore markers, Supplier<PolicySource> policies, Supplier<ApprovalService> approvals,
            Supplier<NodeWriter> writers, Supplier<RebootExecutor> executors, TimeSource time, Settings settings) {
        this.markers = Objects.requireNonNull(markers);
        this.policies = policies;
        this.approvals = approvals;
        this.writers = writers;
        this.executors = executors;
        this.time = time;
        reconfigure(settings);
    }

    /** @param s new settings; the state is re-read from the (possibly new) state folder */
    public synchronized void reconfigure(Settings s) {
        this.settings = s;
        this.stateFile = new StateFile(s.stateDir());
        loadState();
    }

    private void loadState() {
        try {
            state = stateFile.load();
            corruptProblem = null;
        } catch (StateFile.Corrupt e) {
            corruptProblem = e.getMessage();
            String copy;
            try {
                copy = stateFile.quarantine(String.valueOf(time.now().toEpochMilli())).toString();
            } catch (IOException io) {
                copy = "no copy (" + io + ")";
            }
            LOG.log(Level.ERROR, e.getMessage() + ": NO reboot until a person inspects it (copy: " + copy
                    + ") and calls resetState() on io.npulifecycle:type=Rebooter");
            state = null;
        } catch (IOException e) {
            corruptProblem = "cannot read state file " + stateFile.path() + ": " + e;
            LOG.log(Level.ERROR, corruptProblem + ": NO reboot until it can be read");
            state = null;
        }
    }

    /** @return the current decision */
    public Decision decision() {
        return decision;
    }

    /** One decision round. Never throws. */
    public synchronized void evaluate() {
        try {
            doEvaluate();
        } catch (RuntimeException e) {
            lastError = "evaluation failed: " + e;
            LOG.log(Level.ERROR, "rebooter evaluation failed (no reboot)", e);
        }
    }

    private void doEvaluate() {
        if (state == null) {
            loadState();
            if (state == null) {
                decide(Decision.STATE_CORRUPT, corruptProblem + ": no reboot until resetState()");
                return;
            }
        }
        String boot = markers.bootId();
        settlePastSteps(boot);
        MarkerRead read = markers.read(Markers.REBOOT_REQUIRED);
        if (!read.present()) {
            pendingRequest = null;
            noRequest(boot, read);
            return;
        }
        Marker m = read.marker();
        String reason = m.reason();
        pendingRequest = m.toString();
        if (!Markers.REASON_RECOVERY.equals(reason) && !Markers.REASON_UPGRADE.equals(reason)) {
            decide(Decision.INVALID_REQUEST, "reboot-required marker " + read.path() + " has reason '" + reason
                    + "', expected recovery or upgrade: no reboot");
            return;
        }
        boolean recovery = Markers.REASON_RECOVERY.equals(reason);
        String requestId = boot + "/" + reason + "/" + m.content().getOrDefault(Markers.KEY_SINCE, String.valueOf(m.writtenAt()));
        NodePolicy policy = policy();

        if (state.reboot != null && state.reboot.bootId().equals(boot)) {
            if (calledHere) {
                decide(Decision.REBOOTING, "the reboot was called at " + state.reboot.at() + " (reason="
                        + state.reboot.reason() + "); waiting for the new boot (the reboot is never called twice in "
                        + "one boot by one agent)");
                return;
            }
            long nowNanos = time.monotonicNanos();
            if (sawForeignCallNanos == null) {
                sawForeignCallNanos = nowNanos;
            }
            long waited = nowNanos - sawForeignCallNanos;
            if (waited < NOT_REBOOTED_GRACE.toNanos()) {
                decide(Decision.REBOOTING, "the reboot was called at " + state.reboot.at() + " (reason="
                        + state.reboot.reason() + ") by the previous node agent; waiting for the new boot; if the host "
                        + "is still in boot " + boot + " " + NOT_REBOOTED_GRACE.toSeconds() + " s after this agent "
                        + "found it, the call did not take effect and is made again under the same authority");
                return;
            }
            // The previous agent recorded the call, then died before the executor's work took effect: the host never
            // left this boot. The authority (the approval consumed for this boot, or the policy) was not used by any
            // reboot, so the request is served again, re-checked as always; the boot id proves no reboot happened.
            LOG.log(Level.WARNING, "the reboot called at " + state.reboot.at() + " (reason=" + state.reboot.reason()
                    + ", via " + state.reboot.via() + ") did not take effect: the host is still in boot " + boot + " "
                    + NOT_REBOOTED_GRACE.toSeconds() + " s after this node agent started; calling it again");
            for (int i = state.history.size() - 1; i >= 0; i--) {
                RebooterState.Entry e = state.history.get(i);
                if (e.fromBootId().equals(boot) && "called".equals(e.outcome())) {
                    state.history.set(i, new RebooterState.Entry(e.at(), e.reason(), e.fromBootId(), e.via(), "failed",
                            "the host did not leave boot " + boot + ": the node agent stopped before the call took "
                                    + "effect"));
                    break;
                }
            }
            state.reboot = null;
            sawForeignCallNanos = null;
            if (!save("record the reboot call that did not take effect")) {
                decide(Decision.FAILED, "cannot write the state file " + stateFile.path() + ": no reboot");
                return;
            }
        }
        String via;
        if (state.consumed != null && state.consumed.bootId().equals(boot)) {
            via = "approval consumed at " + state.consumed.at() + " (before a runtime restart)";
        } else if (state.intent != null && state.intent.bootId().equals(boot)) {
            via = consume(boot, reason, "finishing a consumption interrupted by a restart");
            if (via == null) {
                return;
            }
        } else {
            boolean auto = recovery ? policy.allowsAutoRecover() : policy.allowsAutoUpgrade();
            ApprovalState approval = approvalState();
            if (recovery && auto && !approval.approved()) {
                String limit = limitReached();
                if (limit != null) {
                    blockRecovery(requestId, m, limit);
                    return;
                }
            }
            clearRecoveryBlocked();
            if (auto && !approval.approved()) {
                via = recovery ? "autoRecover=true" : "autoUpgrade=true";
            } else if (approval.approved()) {
                if (!armed()) {
                    wouldReboot(requestId, reason, boot, "approval (not consumed: " + unarmedWhy() + ")");
                    return;
                }
                via = consume(boot, reason, "valid approval");
                if (via == null) {
                    return;
                }
            } else {
                if (approval.invalid()) {
                    String shown = quoteValue(approval.value());
                    report(w -> w.recordEvent(NodeKeys.EVENT_APPROVAL_INVALID + "/" + requestId + "/" + approval.value(),
                            NodeKeys.WARNING, NodeKeys.EVENT_APPROVAL_INVALID, "annotation " + NodeKeys.APPROVE_REBOOT
                                    + "=" + shown + " is not an approval (only the value 'true' is): no reboot"
                                    + " (reason=" + reason + ")"));
                    decide(Decision.WAITING_FOR_APPROVAL, "reason=" + reason + ": annotation " + NodeKeys.APPROVE_REBOOT
                            + " has the value " + shown + ", which is not an approval (only 'true' is)");
                } else {
                    decide(Decision.WAITING_FOR_APPROVAL, "reason=" + reason + ": waiting for " + NodeKeys.APPROVE_REBOOT
                            + "=true (" + (recovery ? "autoRecover" : "autoUpgrade") + " is "
                            + (policy.known() ? "false" : "unknown: " + policy.problem()) + ")"
                            + (approval.known() ? "" : "; the Node has not been read yet"));
                }
                return;
            }
        }
        rebootIfStillNeeded(boot, reason, via, requestId);
    }

    /**
     * An annotation value as shown in Events and the log: quoted, control characters escaped, and cut to 64 characters
     * with its length when longer (reliability matrix: a 10 KB value must not make a 10 KB Event message; an
     * events.k8s.io note is limited to 1 KiB).
     *
     * @param value the value, may be {@code null}
     * @return e.g. {@code 'yes'}, {@code 'true\n'}, {@code 'xxxx...' (10240 characters)}
     */
    static String quoteValue(String value) {
        if (value == null) {
            return "(none)";
        }
        StringBuilder sb = new StringBuilder("'");
        int shown = Math.min(value.length(), 64);
        for (int i = 0; i < shown; i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (Character.isISOControl(c)) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append(value.length() > shown ? "...' (" + value.length() + " characters)" : "'");
        return sb.toString();
    }

    /** Consumes the approval; returns the "via" text, or null when it must not reboot now. */
    private String consume(String boot, String reason, String context) {
        ApprovalService as = approvals == null ? null : approvals.get();
        if (as == null) {
            decide(Decision.WAITING_FOR_API, "reason=" + reason + ": no Kubernetes connection service: approval not used");
            return null;
        }
        if (state.intent == null || !state.intent.bootId().equals(boot)) {
            state.intent = new RebooterState.Step(boot, reason, time.now(), "approval");
            if (!save("record the approval consumption intent")) {
                state.intent = null;
                decide(Decision.FAILED, "cannot write the state file " + stateFile.path() + ": approval not used");
                return null;
            }
        }
        ConsumeResult r = as.consumeApproval(boot);
        switch (r) {
            case CONSUMED, ALREADY_CONSUMED -> {
                state.consumed = new RebooterState.Step(boot, reason, time.now(), "approval");
                state.intent = null;
                if (!save("record the consumed approval")) {
                    // the Node shows the consumption (rebooting-from-boot-id): the intent path finds it again
                    state.intent = state.consumed;
                    state.consumed = null;
                    decide(Decision.FAILED, "approval consumed but the state file " + stateFile.path()
                            + " cannot be written: no reboot now");
                    return null;
                }
                LOG.log(Level.INFO, "approval consumed for reason=" + reason + " leaving boot " + boot + " (" + context
                        + ", " + r + ")");
                return "approval (" + r + ")";
            }
            case NOT_APPROVED -> {
                state.intent = null;
                save("clear the consumption intent");
                decide(Decision.WAITING_FOR_APPROVAL, "reason=" + reason
                        + ": the approval was withdrawn before it could be consumed: no reboot");
                return null;
            }
            default -> {
                decide(Decision.WAITING_FOR_API, "reason=" + reason + ": cannot consume the approval (" + r
                        + "): the approval is not used, no reboot");
                return null;
            }
        }
    }

    private void rebootIfStillNeeded(String boot, String reason, String via, String requestId) {
        // re-check right before the reboot: the marker (suppression), the policy for automatic reboots
        MarkerRead again = markers.read(Markers.REBOOT_REQUIRED);
        String problem = null;
        if (!again.present() || !reason.equals(again.marker().reason())) {
            problem = "the reboot-required marker is gone or changed (" + again.status() + ")";
        } else if (via.startsWith("auto")) {
            NodePolicy p = policy();
            boolean still = Markers.REASON_RECOVERY.equals(reason) ? p.allowsAutoRecover() : p.allowsAutoUpgrade();
            if (!still) {
                problem = "the policy no longer allows it (" + (p.known() ? "auto=false" : p.problem()) + ")";
            }
        }
        if (problem != null) {
            decide(Decision.RECHECK_FAILED, "re-check before the reboot failed: " + problem + ": no reboot");
            giveBackApproval(boot);
            return;
        }
        if (!armed()) {
            wouldReboot(requestId, reason, boot, via);
            giveBackApproval(boot);
            return;
        }
        RebootExecutor ex = executors.get();
        Instant now = time.now();
        state.reboot = new RebooterState.Step(boot, reason, now, via);
        state.add(new RebooterState.Entry(now, reason, boot, via, "called", ex.describe()));
        if (!save("record the reboot")) {
            state.reboot = null;
            state.history.remove(state.history.size() - 1);
            decide(Decision.FAILED, "cannot write the state file " + stateFile.path() + ": no reboot");
            return;
        }
        report(w -> {
            w.setAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, boot);
            w.recordEvent(NodeKeys.EVENT_REBOOTING + "/" + boot, NodeKeys.NORMAL, NodeKeys.EVENT_REBOOTING,
                    "rebooting: reason=" + reason + ", authorised by " + via + ", leaving boot " + boot);
        });
        NodeWriter w = writers == null ? null : writers.get();
        if (w != null && !w.flush(settings.flushTimeoutMillis())) {
            LOG.log(Level.WARNING, "the Node writes (Rebooting Event, labels) could not all be made before the reboot;"
                    + " they are written when the API server answers again");
        }
        decide(Decision.REBOOTING, "rebooting: reason=" + reason + " via " + via + " with " + ex.describe());
        calledHere = true;
        try {
            ex.reboot(reason);
        } catch (IOException | RuntimeException e) {
            lastError = "reboot executor " + ex.describe() + " failed: " + e.getMessage();
            state.reboot = null;
            calledHere = false;
            state.history.set(state.history.size() - 1,
                    new RebooterState.Entry(now, reason, boot, via, "failed", e.getMessage()));
            save("record the failed reboot");
            decide(Decision.FAILED, lastError + ": no reboot");
            giveBackApproval(boot);
        }
    }

    private void giveBackApproval(String boot) {
        if (state.consumed == null || !state.consumed.bootId().equals(boot)) {
            return;
        }
        if (state.reboot != null && state.reboot.bootId().equals(boot)) {
            // The executor was called in this boot: the approval was used. The node may still be running for a
            // moment (a reboot command returns before the host goes down); the marker vanishing now must not put
            // the approval back for a later reboot.
            return;
        }
        ApprovalService as = approvals == null ? null : approvals.get();
        if (as != null && as.restoreApproval(boot)) {
            state.consumed = null;
            save("clear the consumed approval");
        }
    }

    private void settlePastSteps(String boot) {
        boolean changed = false;
        if (state.reboot != null && !state.reboot.bootId().equals(boot)) {
            LOG.log(Level.INFO, "reboot completed: left boot " + state.reboot.bootId() + " (reason="
                    + state.reboot.reason() + "), now boot " + boot);
            for (int i = state.history.size() - 1; i >= 0; i--) {
                RebooterState.Entry e = state.history.get(i);
                if (e.fromBootId().equals(state.reboot.bootId()) && "called".equals(e.outcome())) {
                    state.history.set(i, new RebooterState.Entry(e.at(), e.reason(), e.fromBootId(), e.via(),
                            "completed", "now boot " + boot));
                    break;
                }
            }
            state.reboot = null;
            changed = true;
        }
        if (state.consumed != null && !state.consumed.bootId().equals(boot)) {
            state.consumed = null;
            changed = true;
        }
        if (state.intent != null && !state.intent.bootId().equals(boot)) {
            state.intent = null;
            changed = true;
        }
        if (changed) {
            save("settle the previous boot");
            report(w -> w.setAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, null));
        }
    }

    private void noRequest(String boot, MarkerRead read) {
        clearRecoveryBlocked();
        if (state.consumed != null && state.consumed.bootId().equals(boot)) {
            giveBackApproval(boot);
        }
        if (state.intent != null && state.intent.bootId().equals(boot)) {
            ApprovalService as = approvals == null ? null : approvals.get();
            if (as != null && as.restoreApproval(boot)) {
                state.intent = null;
                save("clear the consumption intent");
            }
        }
        String w = switch (read.status()) {
            case STALE -> "the reboot-required marker is from a previous boot (" + read.error() + "): ignored";
            case INVALID -> "the reboot-required marker is invalid (" + read.error() + "): never a reason to reboot";
            default -> "no reboot required";
        };
        decide(Decision.NONE, w);
    }

    private String limitReached() {
        int max = maxReboots();
        Duration window = window();
        Instant since = time.now().minus(window);
        long n = state.history.stream().filter(RebooterState.Entry::countsForLoopProtection)
                .filter(e -> e.at().isAfter(since)).count();
        return n >= max ? n + " recovery reboots in the last " + window + " (limit " + max + ")" : null;
    }

    private void blockRecovery(String requestId, Marker m, String limit) {
        String chips = m.content().getOrDefault(Markers.KEY_CHIPS, "");
        String text = "recovery reboot limit reached: " + limit + "; chips " + chips
                + " still wedged: a person is needed (approve a reboot with " + NodeKeys.APPROVE_REBOOT + "=true)";
        report(w -> {
            w.setLabel(NodeKeys.RECOVERY_BLOCKED, "true");
            w.setAnnotation(NodeKeys.RECOVERY_FAILURE, text);
            w.recordEvent(NodeKeys.EVENT_RECOVERY_FAILED + "/" + requestId, NodeKeys.WARNING,
                    NodeKeys.EVENT_RECOVERY_FAILED, text);
        });
        decide(Decision.RECOVERY_BLOCKED, text);
    }

    private void clearRecoveryBlocked() {
        report(w -> {
            w.setLabel(NodeKeys.RECOVERY_BLOCKED, null);
            w.setAnnotation(NodeKeys.RECOVERY_FAILURE, null);
        });
    }

    private void wouldReboot(String requestId, String reason, String boot, String via) {
        String text = "would reboot now (reason=" + reason + ", via " + via + ") but " + unarmedWhy();
        if (!requestId.equals(dryRunRecordedFor)) {
            dryRunRecordedFor = requestId;
            state.add(new RebooterState.Entry(time.now(), reason, boot, via, "dry-run", unarmedWhy()));
            save("record the dry run");
        }
        decide(Decision.DRY_RUN, text);
    }

    private boolean armed() {
        return !settings.dryRun() && executors != null && executors.get() != null;
    }

    private String unarmedWhy() {
        if (settings.dryRun()) {
            return "dryRun=true (PID io.npulifecycle.rebooter)";
        }
        return "no reboot executor is configured (set PID io.npulifecycle.rebooter.executor type=libc or type=command)";
    }

    private NodePolicy policy() {
        PolicySource ps = policies == null ? null : policies.get();
        NodePolicy p = ps == null ? null : ps.policy();
        return p == null ? NodePolicy.unknown("no Kubernetes connection service") : p;
    }

    private ApprovalState approvalState() {
        ApprovalService as = approvals == null ? null : approvals.get();
        ApprovalState a = as == null ? null : as.approval();
        return a == null ? new ApprovalState(false, false, null, null) : a;
    }

    private int maxReboots() {
        Integer fromCr = policy().maxReboots();
        return fromCr != null ? fromCr : settings.maxReboots();
    }

    private Duration window() {
        Duration fromCr = policy().window();
        return fromCr != null ? fromCr : settings.window();
    }

    private interface WriterAction {
        void run(NodeWriter w);
    }

    private void report(WriterAction a) {
        NodeWriter w = writers == null ? null : writers.get();
        if (w == null) {
            return;
        }
        try {
            a.run(w);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot report to the Node: " + e.getMessage());
        }
    }

    private boolean save(String what) {
        try {
            stateFile.save(state);
            return true;
        } catch (IOException e) {
            lastError = "cannot " + what + " in " + stateFile.path() + ": " + e;
            LOG.log(Level.ERROR, lastError);
            return false;
        }
    }

    private void decide(Decision d, String text) {
        decision = d;
        why = text;
        String key = d + ":" + text;
        if (!key.equals(lastLogged)) {
            lastLogged = key;
            LOG.log(d == Decision.NONE ? Level.DEBUG : Level.INFO, "rebooter decision " + d + ": " + text);
        }
    }

    // ---- MBean ----

    @Override
    public String getDecision() {
        return decision.name();
    }

    @Override
    public String getDecisionReason() {
        return why;
    }

    @Override
    public String getPendingRequest() {
        return pendingRequest;
    }

    @Override
    public synchronized String getLastReboot() {
        if (state == null) {
            return null;
        }
        for (int i = state.history.size() - 1; i >= 0; i--) {
            RebooterState.Entry e = state.history.get(i);
            if (!"dry-run".equals(e.outcome())) {
                return e.toString();
            }
        }
        return null;
    }

    @Override
    public synchronized List<String> getHistory() {
        List<String> out = new ArrayList<>();
        if (state != null) {
            state.history.forEach(e -> out.add(e.toString()));
        }
        return out;
    }

    @Override
    public synchronized int getRecoveryRebootsInWindow() {
        if (state == null) {
            return -1;
        }
        Instant since = time.now().minus(window());
        return (int) state.history.stream().filter(RebooterState.Entry::countsForLoopProtection)
                .filter(e -> e.at().isAfter(since)).count();
    }

    @Override
    public int getMaxReboots() {
        return maxReboots();
    }

    @Override
    public long getWindowSeconds() {
        return window().toSeconds();
    }

    @Override
    public boolean isDryRun() {
        return settings.dryRun();
    }

    @Override
    public String getExecutor() {
        RebootExecutor ex = executors == null ? null : executors.get();
        return ex == null ? "none configured: the rebooter never reboots (set PID io.npulifecycle.rebooter.executor type=libc or type=command)"
                : ex.describe();
    }

    @Override
    public String getStateFile() {
        return stateFile.path().toString();
    }

    @Override
    public String getStateProblem() {
        return corruptProblem;
    }

    @Override
    public synchronized String getConsumedApproval() {
        return state == null || state.consumed == null ? null
                : "boot " + state.consumed.bootId() + " reason=" + state.consumed.reason() + " at " + state.consumed.at();
    }

    @Override
    public String getLastError() {
        return lastError;
    }

    @Override
    public String evaluateNow() {
        LOG.log(Level.INFO, "rebooter evaluation requested through the Rebooter MBean (same checks as the poll)");
        evaluate();
        return decision + ": " + why;
    }

    @Override
    public synchronized String resetState() {
        if (corruptProblem == null) {
            return "the state file is not corrupt: nothing reset";
        }
        LOG.log(Level.WARNING, "rebooter state reset through the Rebooter MBean: starting an empty state in "
                + stateFile.path() + " (the corrupt file was kept as a copy)");
        state = new RebooterState();
        corruptProblem = null;
        save("write the reset state");
        return "state reset";
    }
}
