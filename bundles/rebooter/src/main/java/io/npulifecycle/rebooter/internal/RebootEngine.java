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

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.ApprovalService;
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
 * {@code reboot-required} marker of the current boot → wait for a reboot already called in this boot → authorise
 * ({@link Authorisation}: a consumption already recorded for this boot; else loop protection for automatic recovery;
 * else a recovery with the drain enabled waits for the control plane's grant; else {@code autoRecover}/{@code autoUpgrade};
 * else a valid approval, consumed exactly once by the {@link ApprovalLedger}) → re-check the marker, the policy and
 * the grant (read from the API server) → record the reboot in the state file → flush the Node
 * writes → call the {@link RebootExecutor}. Every branch that does not reboot sets {@link #decision()} and says why.
 */
public final class RebootEngine {

    private static final System.Logger LOG = System.getLogger(RebootEngine.class.getName());
    private static final String NO_EXECUTOR = "(set PID io.npulifecycle.rebooter.executor type=libc or type=command)";

    /**
     * Settings, built with {@link #builder()}: each value not set is its default, the default of the rebooter's
     * metatype ({@link RebooterComponent.Config}, whose {@code default}s are the constants below).
     *
     * @param stateDir folder of the state file; it must outlive a reboot
     * @param maxReboots loop protection: recovery reboots allowed in {@code window}, unless the policy sets it
     * @param window loop protection window, unless the policy sets it
     * @param dryRun decide, record and report, but never call the executor; a valid approval is not consumed
     * @param flushTimeoutMillis longest wait for the Node writes before a reboot, ms of wall-clock time
     */
    public record Settings(Path stateDir, int maxReboots, Duration window, boolean dryRun, long flushTimeoutMillis) {

        /** Default {@code stateDir}: a persistent host folder. */
        public static final String DEFAULT_STATE_DIR = "/var/lib/npu-operator/";
        /** Default {@code maxReboots}: recovery reboots per window. */
        public static final int DEFAULT_MAX_REBOOTS = 3;
        /** Default {@code window}, in hours. */
        public static final int DEFAULT_WINDOW_HOURS = 24;
        /** Default flush timeout, in seconds (the metatype's unit; {@code flushTimeoutMillis} is 1000 times it). */
        public static final int DEFAULT_FLUSH_TIMEOUT_SECONDS = 5;

        /**
         * Checks.
         *
         * @throws NullPointerException when {@code stateDir} or {@code window} is {@code null}
         */
        public Settings {
            Objects.requireNonNull(stateDir, "stateDir");
            Objects.requireNonNull(window, "window");
        }

        /** @return a builder holding the defaults: {@value #DEFAULT_STATE_DIR}, 3 reboots in 24 h, no dry run, 5 s */
        public static Builder builder() {
            return new Builder();
        }

        /** Builds {@link Settings}; each value not set keeps its default. Not thread-safe. */
        public static final class Builder {
            private Path stateDir = Path.of(DEFAULT_STATE_DIR);
            private int maxReboots = DEFAULT_MAX_REBOOTS;
            private Duration window = Duration.ofHours(DEFAULT_WINDOW_HOURS);
            private boolean dryRun;
            private long flushTimeoutMillis = DEFAULT_FLUSH_TIMEOUT_SECONDS * 1000L;

            private Builder() {
            }

            /**
             * @param dir folder of the state file; it must outlive a reboot
             * @return this builder
             */
            public Builder stateDir(Path dir) {
                this.stateDir = dir;
                return this;
            }

            /**
             * @param n recovery reboots allowed in the window (0 or more), unless the policy sets it
             * @return this builder
             */
            public Builder maxReboots(int n) {
                this.maxReboots = n;
                return this;
            }

            /**
             * @param w the loop protection window, unless the policy sets it
             * @return this builder
             */
            public Builder window(Duration w) {
                this.window = w;
                return this;
            }

            /**
             * @param on decide, record and report, but never call the executor
             * @return this builder
             */
            public Builder dryRun(boolean on) {
                this.dryRun = on;
                return this;
            }

            /**
             * @param millis longest wait for the Node writes before a reboot, ms of wall-clock time
             * @return this builder
             */
            public Builder flushTimeoutMillis(long millis) {
                this.flushTimeoutMillis = millis;
                return this;
            }

            /**
             * @return the settings
             * @throws NullPointerException when the state folder or the window was set to {@code null}
             */
            public Settings build() {
                return new Settings(stateDir, maxReboots, window, dryRun, flushTimeoutMillis);
            }
        }
    }

    /** How long a restarted agent waits for a reboot its predecessor called in this boot: {@link CallWatch#GRACE}. */
    static final Duration NOT_REBOOTED_GRACE = CallWatch.GRACE;

    private final MarkerStore markers;
    private final Supplier<PolicySource> policies;
    private final Supplier<RebootExecutor> executors;
    private final TimeSource time;
    private final NodeReports node;
    private final ApprovalLedger approvals;
    private final LoopProtection loops;
    private final CallWatch calls = new CallWatch();
    private volatile Settings settings;
    private volatile StateFile stateFile;

    private RebooterState state;
    private volatile String corruptProblem;
    /** The corruption last logged at ERROR: the same one found again by a later evaluation is logged at DEBUG. */
    private String loggedCorruption;
    private volatile Decision decision = Decision.NONE;
    private volatile String why = "not evaluated yet";
    private volatile String pendingRequest;
    private volatile String pendingReason;
    private volatile String recoveryGrant;
    private volatile String lastError;
    private String lastLogged;
    private String dryRunRecordedFor;
    /** The planted bug of the chaos checker's tests, or {@code null} (always, in the product). */
    private volatile PlantedBug plantedBug;

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
        this.executors = executors;
        this.time = time;
        this.node = new NodeReports(writers);
        this.approvals = new ApprovalLedger(approvals, time, this::save, this::decide);
        this.loops = new LoopProtection(this::policy, () -> this.settings, time);
        reconfigure(settings);
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}); called once, before the first evaluation.
     *
     * @param bug {@link PlantedBug#REBOOT_UNANNOUNCED}, {@link PlantedBug#REBOOT_UNAUTHORISED}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        this.plantedBug = bug;
        node.plant(bug);
    }

    /** @param s new settings; the state is re-read from the (possibly new) state folder */
    public synchronized void reconfigure(Settings s) {
        this.settings = s;
        this.stateFile = new StateFile(s.stateDir());
        loadState();
    }

    private void loadState() {
        try {
            state = stateFile.loadOrQuarantine(time.now());
            corruptProblem = null;
            loggedCorruption = null;
        } catch (StateFile.Unusable e) {
            corruptProblem = e.problem();
            // each evaluation (every poll) reads the file again: a corruption is an ERROR once, until it changes
            boolean fresh = !e.problem().equals(loggedCorruption);
            loggedCorruption = e.problem();
            LOG.log(fresh ? Level.ERROR : Level.DEBUG, e.getMessage());
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
            recoveryGrant = null;
            pendingRequest = null;
            pendingReason = null;
            noRequest(boot, read);
            return;
        }
        Marker m = read.marker();
        String reason = m.reason();
        pendingRequest = m.toString();
        pendingReason = reason;
        if (!Markers.REASON_RECOVERY.equals(reason) && !Markers.REASON_UPGRADE.equals(reason)) {
            decide(Decision.INVALID_REQUEST, "reboot-required marker " + read.path() + " has reason '" + reason
                    + "', expected recovery or upgrade: no reboot");
            return;
        }
        recoveryGrant = Markers.REASON_RECOVERY.equals(reason)
                ? approvals.grantView(boot, policy().recoveryNeedsGrant()) : null;
        String requestId = boot + "/" + reason + "/" + m.content().getOrDefault(Markers.KEY_SINCE, String.valueOf(m.writtenAt()));
        if (rebootInFlight(boot)) {
            return;
        }
        if (Markers.REASON_UPGRADE.equals(reason) && !recordedFor(boot)) {
            // before any approval is used: the control plane's rollout slot, drain and maintenance window
            String held = approvals.upgradeRebootRefusal();
            if (held != null) {
                decide(Decision.UPGRADE_HELD, "reason=upgrade: the control plane does not allow the upgrade reboot "
                        + "now: " + held);
                return;
            }
        }
        Authorisation auth = Authorisation.authorise(new Authorisation.Request(boot, reason,
                m.content().getOrDefault(Markers.KEY_CHIPS, ""), state.consumed, state.intent, policy(),
                approvals.approval(), armed(), unarmedWhy(), loops.limitReached(state), approvals.grantSeen(boot)));
        act(auth, boot, reason, requestId);
    }

    /** The decision code: acts on what authorises the request (or not). */
    private void act(Authorisation auth, String boot, String reason, String requestId) {
        if (auth.decidedAfresh()) {
            node.recoveryUnblocked();
        }
        String via = null;
        if (auth instanceof Authorisation.Allowed a) {
            via = a.via();
        } else if (auth instanceof Authorisation.Consume c) {
            via = approvals.consume(state, boot, reason, c.context(), stateFile.path());
        } else if (auth instanceof Authorisation.DryRun d) {
            wouldReboot(requestId, reason, boot, d.via());
        } else if (auth instanceof Authorisation.Refused r) {
            node.recoveryBlocked(requestId, r.why());
            decide(Decision.RECOVERY_BLOCKED, r.why());
        } else if (auth instanceof Authorisation.AwaitingDrain w) {
            decide(Decision.WAITING_FOR_DRAIN, w.why());
        } else if (auth instanceof Authorisation.Held h) {
            if (h.invalidValue() != null) {
                node.approvalInvalid(requestId, h.invalidValue(), reason);
            }
            decide(Decision.WAITING_FOR_APPROVAL, h.why());
        }
        if (via != null) {
            rebootIfStillNeeded(boot, reason, via, requestId);
        }
    }

    /**
     * A reboot recorded as called in this boot: the agent that called it waits for the new boot; a restarted agent
     * waits {@link #NOT_REBOOTED_GRACE} and then takes the call as failed, so the request is served again.
     *
     * @param boot the current boot id
     * @return whether the evaluation ends here (decided)
     */
    private boolean rebootInFlight(String boot) {
        if (state.reboot == null || !state.reboot.bootId().equals(boot)) {
            return false;
        }
        String waiting = calls.waiting(state.reboot, boot, time.monotonicNanos());
        if (waiting != null) {
            decide(Decision.REBOOTING, waiting);
            return true;
        }
        // The previous agent recorded the call, then died before the executor's work took effect: the host never
        // left this boot. The authority (the approval consumed for this boot, or the policy) was not used by any
        // reboot, so the request is served again, re-checked as always; the boot id proves no reboot happened.
        LOG.log(Level.WARNING, "the reboot called at " + state.reboot.at() + " (reason=" + state.reboot.reason()
                + ", via " + state.reboot.via() + ") did not take effect: the host is still in boot " + boot + " "
                + NOT_REBOOTED_GRACE.toSeconds() + " s after this node agent started; calling it again");
        state.settleCall(boot, "failed", "the host did not leave boot " + boot + ": the node agent stopped before the "
                + "call took effect");
        state.reboot = null;
        if (!save("record the reboot call that did not take effect")) {
            decide(Decision.FAILED, "cannot write the state file " + stateFile.path() + ": no reboot");
            return true;
        }
        return false;
    }

    /** @return whether an approval consumption (finished or started) is recorded for {@code boot}: it stands */
    private boolean recordedFor(String boot) {
        return state.consumed != null && state.consumed.bootId().equals(boot)
                || state.intent != null && state.intent.bootId().equals(boot);
    }

    /**
     * The second reboot guard: re-checks the marker and, for an automatic reboot, the policy and the control plane's
     * hold of an upgrade reboot, then reboots.
     */
    private void rebootIfStillNeeded(String boot, String reason, String via, String requestId) {
        String problem = Authorisation.recheck(markers.read(Markers.REBOOT_REQUIRED), reason, via, policy(),
                () -> approvals.grantConfirmed(boot));
        if (problem == null && Markers.REASON_UPGRADE.equals(reason) && via.startsWith("auto")) {
            // an approval consumed is the point of no return (its write was decided on the Node read right before
            // it); an automatic upgrade reboot checks the window again here, right before the call
            problem = approvals.upgradeRebootRefusal();
        }
        if (problem != null) {
            decide(Decision.RECHECK_FAILED, "re-check before the reboot failed: " + problem + ": no reboot");
            approvals.giveBack(state, boot);
            return;
        }
        if (!armed()) {
            wouldReboot(requestId, reason, boot, via);
            approvals.giveBack(state, boot);
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
        node.rebooting(boot, reason, via);
        node.flushBeforeReboot(settings.flushTimeoutMillis());
        decide(Decision.REBOOTING, "rebooting: reason=" + reason + " via " + via + " with " + ex.describe());
        calls.calling();
        try {
            ex.reboot(reason);
        } catch (IOException | RuntimeException e) {
            lastError = "reboot executor " + ex.describe() + " failed: " + e.getMessage();
            state.reboot = null;
            calls.callFailed();
            state.settleCall(boot, "failed", e.getMessage());
            save("record the failed reboot");
            decide(Decision.FAILED, lastError + ": no reboot");
            approvals.giveBack(state, boot);
        }
    }

    private void settlePastSteps(String boot) {
        boolean changed = false;
        if (state.reboot != null && !state.reboot.bootId().equals(boot)) {
            LOG.log(Level.INFO, "reboot completed: left boot " + state.reboot.bootId() + " (reason="
                    + state.reboot.reason() + "), now boot " + boot);
            state.settleCall(state.reboot.bootId(), "completed", "now boot " + boot);
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
            node.previousBootSettled();
        }
    }

    private void noRequest(String boot, MarkerRead read) {
        node.recoveryUnblocked();
        approvals.giveBack(state, boot);
        approvals.withdrawIntent(state, boot);
        String w = switch (read.status()) {
            case STALE -> "the reboot-required marker is from a previous boot (" + read.error() + "): ignored";
            case INVALID -> "the reboot-required marker is invalid (" + read.error() + "): never a reason to reboot";
            default -> "no reboot required";
        };
        decide(Decision.NONE, w);
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
        return "no reboot executor is configured " + NO_EXECUTOR;
    }

    private NodePolicy policy() {
        PolicySource ps = policies == null ? null : policies.get();
        NodePolicy p = ps == null ? null : ps.policy();
        if (p != null && p.known() && plantedBug == PlantedBug.REBOOT_UNAUTHORISED) {
            // planted bug (testing the chaos checker only): breaks "no reboot without autoRecover or a consumed
            // approval", as both reboot guards (authorise, recheck) read autoRecover=true and need no drain grant
            return new NodePolicy(true, p.desiredVersion(), p.autoUpgrade(), true, p.maxReboots(), p.window(),
                    p.problem(), p.resourceVersion(), false);
        }
        return p == null ? NodePolicy.unknown("no Kubernetes connection service") : p;
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

    /** @return what the MBean attribute {@link RebooterMXBean#getDecision()} shows */
    public String getDecision() {
        return decision.name();
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getDecisionReason()} shows */
    public String getDecisionReason() {
        return why;
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getPendingRequest()} shows */
    public String getPendingRequest() {
        return pendingRequest;
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getRecoveryGrant()} shows */
    public String getRecoveryGrant() {
        return recoveryGrant;
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getLastReboot()} shows */
    public synchronized String getLastReboot() {
        RebooterState.Entry e = state == null ? null : state.lastReboot();
        return e == null ? null : e.toString();
    }

    /** @return the reason of the reboot-required marker of this boot, or {@code null} when there is none */
    String pendingReason() {
        return pendingReason;
    }

    /**
     * @return per (reason, via) the reboots called, from the persisted history (at most
     *         {@value RebooterState#MAX_HISTORY} entries, across reboots); dry runs and failed calls left out
     */
    synchronized java.util.Map<List<String>, Long> rebootsCalled() {
        java.util.Map<List<String>, Long> out = new java.util.TreeMap<>(java.util.Comparator.comparing(Object::toString));
        if (state != null) {
            for (RebooterState.Entry e : state.history) {
                if ("called".equals(e.outcome()) || "completed".equals(e.outcome())) {
                    // via in the history says which approval or policy key; the label keeps only the kind (bounded)
                    String via = e.via() != null && e.via().startsWith("approval") ? "approval" : "policy";
                    out.merge(List.of(String.valueOf(e.reason()), via), 1L, Long::sum);
                }
            }
        }
        return out;
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getHistory()} shows */
    public synchronized List<String> getHistory() {
        List<String> out = new ArrayList<>();
        if (state != null) {
            state.history.forEach(e -> out.add(e.toString()));
        }
        return out;
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getRecoveryRebootsInWindow()} shows */
    public synchronized int getRecoveryRebootsInWindow() {
        return state == null ? -1 : loops.inWindow(state);
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getMaxReboots()} shows */
    public int getMaxReboots() {
        return loops.maxReboots();
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getWindowSeconds()} shows */
    public long getWindowSeconds() {
        return loops.window().toSeconds();
    }

    /** @return what the MBean attribute {@link RebooterMXBean#isDryRun()} shows */
    public boolean isDryRun() {
        return settings.dryRun();
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getExecutor()} shows */
    public String getExecutor() {
        RebootExecutor ex = executors == null ? null : executors.get();
        return ex == null ? "none configured: the rebooter never reboots " + NO_EXECUTOR : ex.describe();
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getStateFile()} shows */
    public String getStateFile() {
        return stateFile.path().toString();
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getStateProblem()} shows */
    public String getStateProblem() {
        return corruptProblem;
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getConsumedApproval()} shows */
    public synchronized String getConsumedApproval() {
        return state == null || state.consumed == null ? null
                : "boot " + state.consumed.bootId() + " reason=" + state.consumed.reason() + " at " + state.consumed.at();
    }

    /** @return what the MBean attribute {@link RebooterMXBean#getLastError()} shows */
    public String getLastError() {
        return lastError;
    }

    /** @return what the MBean operation {@link RebooterMXBean#evaluateNow()} answers */
    public String evaluateNow() {
        LOG.log(Level.INFO, "rebooter evaluation requested through the Rebooter MBean (same checks as the poll)");
        evaluate();
        return decision + ": " + why;
    }

    /** @return what the MBean operation {@link RebooterMXBean#resetState()} answers */
    public synchronized String resetState() {
        if (corruptProblem == null) {
            return "the state file is not corrupt: nothing reset";
        }
        LOG.log(Level.WARNING, "rebooter state reset through the Rebooter MBean: starting an empty state in "
                + stateFile.path() + " (the corrupt file was kept as a copy)");
        state = new RebooterState();
        corruptProblem = null;
        loggedCorruption = null;
        save("write the reset state");
        // the decision STATE_CORRUPT no longer holds; the next evaluation (the poll, or evaluateNow) decides anew
        decide(Decision.NONE, "the state was reset through resetState(): not evaluated since (the next poll "
                + "evaluates, or evaluateNow() at once)");
        return "state reset";
    }
}
