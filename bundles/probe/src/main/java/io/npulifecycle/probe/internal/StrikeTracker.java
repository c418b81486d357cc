package io.npulifecycle.probe.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;

/**
 * The health-watch's judgement of probe runs: strikes per chip, wedge declaration, false-positive suppression and the
 * probe-error count. No I/O and no clock: the time of a run is passed in; what the engine must write or post is
 * returned as a {@link Step}.
 *
 * <p>Rules, per assessed chip: {@code failed} = one strike; {@code healthy} or {@code degraded} = strikes reset;
 * {@code probe-error} (or any other classification) = nothing. {@code failureThreshold} strikes in a row make a chip
 * wedged, declared once. The first wedged chip starts a wedge; the wedge collects every chip wedged until it ends.
 * When a wedge is active and no chip is wedged any more (every wedged chip answered healthy), the step asks for
 * suppression; the wedge ends when the engine calls {@link #endWedge()} after its markers are cleared, so a failed
 * marker write asks again at the next run.
 *
 * <p>A run is a probe error when its verdict or any chip is {@code probe-error}: it never strikes a chip,
 * {@code probeErrorThreshold} of them in a row raise {@code probe-degraded}, and the next run that is not a probe error
 * clears it.
 *
 * <p>Not thread-safe: guarded by the engine's lock. The counters the MBean reads without that lock are volatile, and
 * the {@link ChipState}s are the Chip MBeans' views.
 */
final class StrikeTracker {

    /** How a run changed {@code probe-degraded}. */
    enum Degraded {
        /** No change. */
        UNCHANGED,
        /** This run raised it. */
        RAISED,
        /** This run cleared it. */
        CLEARED
    }

    /**
     * One strike of one chip.
     *
     * @param chip the chip
     * @param count its consecutive strikes including this one
     * @param detail why the chip failed, may be {@code null}
     */
    record Strike(ChipId chip, int count, String detail) {
    }

    /**
     * What one run changed.
     *
     * @param probeError whether the run was a probe error
     * @param degraded the change of {@code probe-degraded}
     * @param strikes the chips struck by this run, in chip order
     * @param healed the wedged chips that answered healthy in this run
     * @param newlyWedged the chips wedged by this run
     * @param wedgeStarted whether this run started a wedge (none was active)
     * @param suppress whether the active wedge must be suppressed: no chip is wedged any more
     */
    record Step(boolean probeError, Degraded degraded, List<Strike> strikes, List<ChipId> healed,
            List<ChipId> newlyWedged, boolean wedgeStarted, boolean suppress) {
    }

    private final Map<ChipId, ChipState> chips = new TreeMap<>();
    private boolean wedgeActive;
    private Instant wedgeSince;
    private SortedSet<ChipId> wedgeChips = new TreeSet<>();
    private volatile int probeErrorsInRow;
    private volatile boolean probeDegraded;
    private volatile long probeErrorCount;

    /**
     * Judges one assessed run.
     *
     * @param a the run judged against the expected chips
     * @param at when the run started (the last-seen time of chips that answered)
     * @param failureThreshold strikes in a row that wedge a chip, {@code >= 1}
     * @param probeErrorThreshold probe errors in a row that raise {@code probe-degraded}, {@code >= 1}
     * @return what changed
     */
    Step apply(Assessment a, Instant at, int failureThreshold, int probeErrorThreshold) {
        boolean probeError = a.verdict() == Classification.PROBE_ERROR
                || a.chips().values().stream().anyMatch(c -> c.classification() == Classification.PROBE_ERROR);
        Degraded degraded = countProbeError(probeError, probeErrorThreshold);
        List<Strike> strikes = new ArrayList<>();
        List<ChipId> healed = new ArrayList<>();
        List<ChipId> newlyWedged = new ArrayList<>();
        for (ChipResult c : a.chips().values()) {
            judge(c, at, failureThreshold, strikes, healed, newlyWedged);
        }
        boolean started = false;
        if (!newlyWedged.isEmpty()) {
            started = !wedgeActive;
            if (started) {
                wedgeActive = true;
                wedgeSince = at;
            }
            wedgeChips.addAll(newlyWedged);
        }
        boolean suppress = newlyWedged.isEmpty() && wedgeActive && wedged().isEmpty();
        return new Step(probeError, degraded, List.copyOf(strikes), List.copyOf(healed), List.copyOf(newlyWedged),
                started, suppress);
    }

    private Degraded countProbeError(boolean probeError, int probeErrorThreshold) {
        if (probeError) {
            probeErrorCount++;
            probeErrorsInRow++;
            if (probeErrorsInRow >= probeErrorThreshold && !probeDegraded) {
                probeDegraded = true;
                return Degraded.RAISED;
            }
        } else {
            probeErrorsInRow = 0;
            if (probeDegraded) {
                probeDegraded = false;
                return Degraded.CLEARED;
            }
        }
        return Degraded.UNCHANGED;
    }

    /** Applies one chip's classification to its state, adding it to the lists it belongs to. */
    private void judge(ChipResult c, Instant at, int failureThreshold, List<Strike> strikes, List<ChipId> healed,
            List<ChipId> newlyWedged) {
        ChipState s = state(c.id());
        s.health = c.health();
        s.classification = c.classification();
        switch (c.classification()) {
            case FAILED -> {
                s.consecutiveFailures++;
                s.lastError = c.detail();
                strikes.add(new Strike(c.id(), s.consecutiveFailures, c.detail()));
                if (s.consecutiveFailures >= failureThreshold && !s.wedged) {
                    s.wedged = true;
                    newlyWedged.add(c.id());
                }
            }
            case HEALTHY -> {
                s.consecutiveFailures = 0;
                s.lastError = null;
                s.lastSeen = at;
                if (s.wedged) {
                    s.wedged = false;
                    healed.add(c.id());
                }
            }
            case DEGRADED -> {
                s.consecutiveFailures = 0;
                s.lastError = c.detail();
                s.lastSeen = at;
            }
            default -> s.lastError = c.detail();
        }
    }

    /** Ends the active wedge (its markers are cleared): the wedge chips and the wedge time are forgotten. */
    void endWedge() {
        wedgeActive = false;
        wedgeSince = null;
        wedgeChips = new TreeSet<>();
    }

    /**
     * Replaces the state with a restored one.
     *
     * @param s the restored state
     * @param now the time a restored active wedge without a time is taken to have started
     */
    void restore(WatchState s, Instant now) {
        chips.clear();
        for (Map.Entry<ChipId, WatchState.Strikes> e : s.chips().entrySet()) {
            ChipState c = state(e.getKey());
            c.consecutiveFailures = e.getValue().failures();
            c.wedged = e.getValue().wedged();
        }
        wedgeActive = s.wedgeActive();
        wedgeSince = s.wedgeActive() && s.wedgeSince() == null ? now : s.wedgeSince();
        wedgeChips = new TreeSet<>(s.wedgeChips());
        probeErrorsInRow = s.probeErrorsInRow();
        probeDegraded = s.probeDegraded();
    }

    /** @return strikes and wedged flag of every chip known */
    SortedMap<ChipId, WatchState.Strikes> strikes() {
        SortedMap<ChipId, WatchState.Strikes> out = new TreeMap<>();
        for (ChipState c : chips.values()) {
            out.put(c.id, new WatchState.Strikes(c.consecutiveFailures, c.wedged));
        }
        return out;
    }

    /**
     * @param id a chip
     * @return its state, created when it is not known yet
     */
    ChipState state(ChipId id) {
        return chips.computeIfAbsent(id, ChipState::new);
    }

    /**
     * @param id a chip
     * @return its state, or {@code null} when never assessed nor restored nor asked for by {@link #state}
     */
    ChipState find(ChipId id) {
        return chips.get(id);
    }

    /** @return the chips wedged now */
    SortedSet<ChipId> wedged() {
        SortedSet<ChipId> out = new TreeSet<>();
        for (ChipState s : chips.values()) {
            if (s.wedged) {
                out.add(s.id);
            }
        }
        return out;
    }

    /** @return the chips with strikes, e.g. {@code 0:0=2,1:0=1}, or {@code none} */
    String describeStrikes() {
        StringBuilder sb = new StringBuilder();
        for (ChipState c : chips.values()) {
            if (c.consecutiveFailures > 0) {
                sb.append(sb.length() == 0 ? "" : ",").append(c.id).append('=').append(c.consecutiveFailures);
            }
        }
        return sb.length() == 0 ? "none" : sb.toString();
    }

    /** @return whether a wedge is active (declared, not yet suppressed) */
    boolean wedgeActive() {
        return wedgeActive;
    }

    /** @return when the active wedge was declared, {@code null} when none */
    Instant wedgeSince() {
        return wedgeSince;
    }

    /** @return every chip wedged since the active wedge was declared */
    SortedSet<ChipId> wedgeChips() {
        return new TreeSet<>(wedgeChips);
    }

    /** @return probe errors in a row */
    int probeErrorsInRow() {
        return probeErrorsInRow;
    }

    /** @return whether {@code probe-degraded} is raised */
    boolean probeDegraded() {
        return probeDegraded;
    }

    /** @return probe errors since this tracker was created */
    long probeErrorCount() {
        return probeErrorCount;
    }
}
