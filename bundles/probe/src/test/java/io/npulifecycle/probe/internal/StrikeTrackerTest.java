package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;

/** The strike rules alone: no store, no clock, no probe. */
class StrikeTrackerTest {

    private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    private static final ChipId A = new ChipId(0, 0);
    private static final ChipId B = new ChipId(1, 0);

    private final StrikeTracker tracker = new StrikeTracker();
    private int run;

    /** F failed, H healthy, D degraded, E probe-error chip. */
    private static Classification classification(char c) {
        return switch (c) {
            case 'F' -> Classification.FAILED;
            case 'H' -> Classification.HEALTHY;
            case 'D' -> Classification.DEGRADED;
            case 'E' -> Classification.PROBE_ERROR;
            default -> throw new IllegalArgumentException("run letter " + c);
        };
    }

    /** One run judging every chip of {@code perChip} (chip -> letter). */
    private StrikeTracker.Step run(Map<ChipId, Character> perChip) {
        Map<ChipId, ChipResult> chips = new TreeMap<>();
        Classification verdict = Classification.HEALTHY;
        for (Map.Entry<ChipId, Character> e : perChip.entrySet()) {
            Classification c = classification(e.getValue());
            chips.put(e.getKey(), new ChipResult(e.getKey(), "OK", c, c == Classification.HEALTHY ? null : "why " + c));
            verdict = verdict.worst(c);
        }
        Instant at = T0.plus(Duration.ofMinutes(run++));
        return tracker.apply(new Assessment(verdict, chips, null, null), at, 3, 3);
    }

    private StrikeTracker.Step run(char a) {
        return run(Map.of(A, a));
    }

    /**
     * One chip, threshold 3: after each run the chip's strikes and what the step asks (w = newly wedged, s = suppress,
     * . = nothing).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "three failures wedge at the third,               FFF,     123,     ..w",
        "healthy resets the strikes,                      FFHFF,   12012,   .....",
        "degraded resets the strikes,                     FFDFF,   12012,   .....",
        "a probe error neither strikes nor resets,        FFEF,    1223,    ...w",
        "a wedge is declared once,                        FFFFF,   12345,   ..w..",
        "healthy again suppresses the wedge,              FFFH,    1230,    ..ws",
        "degraded does not heal a wedged chip,            FFFDD,   12300,   ..w..",
        "a probe error does not heal a wedged chip,       FFFEH,   12330,   ..w.s",
        "a chip wedges again after a suppression,         FFFHFFF, 1230123, ..ws..w",
    })
    void oneChip(String name, String runs, String failures, String asks) {
        for (int i = 0; i < runs.length(); i++) {
            StrikeTracker.Step step = run(runs.charAt(i));
            String at = name + ", run " + (i + 1);
            assertEquals(failures.charAt(i) - '0', tracker.find(A).getConsecutiveFailures(), at);
            assertEquals(asks.charAt(i) == 'w', step.newlyWedged().equals(List.of(A)), at);
            assertEquals(asks.charAt(i) == 's', step.suppress(), at);
            if (step.suppress()) {
                tracker.endWedge(); // the engine does so once the markers are cleared
            }
        }
    }

    /** Probe errors, threshold 3: after each run the errors in a row and the change of probe-degraded. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "the third in a row raises it,            EEE,   123,   ..R",
        "raised once however many follow,         EEEEE, 12345, ..R..",
        "the next good run clears it,             EEEH,  1230,  ..RC",
        "a failed chip is no probe error,         EEFEE, 12012, .....",
        "a good run between resets the count,     EEHEE, 12012, .....",
    })
    void probeErrors(String name, String runs, String inRow, String degraded) {
        boolean raised = false;
        for (int i = 0; i < runs.length(); i++) {
            StrikeTracker.Step step = run(runs.charAt(i));
            String at = name + ", run " + (i + 1);
            assertEquals(inRow.charAt(i) - '0', tracker.probeErrorsInRow(), at);
            assertEquals(runs.charAt(i) == 'E', step.probeError(), at);
            StrikeTracker.Degraded want = switch (degraded.charAt(i)) {
                case 'R' -> StrikeTracker.Degraded.RAISED;
                case 'C' -> StrikeTracker.Degraded.CLEARED;
                default -> StrikeTracker.Degraded.UNCHANGED;
            };
            assertEquals(want, step.degraded(), at);
            raised = want == StrikeTracker.Degraded.RAISED || raised && want != StrikeTracker.Degraded.CLEARED;
            assertEquals(raised, tracker.probeDegraded(), at);
        }
        assertEquals(runs.chars().filter(c -> c == 'E').count(), tracker.probeErrorCount());
    }

    @Test
    void aProbeErrorChipAmongOthersMakesTheRunAProbeErrorButTheOthersAreStillJudged() {
        StrikeTracker.Step step = run(Map.of(A, 'E', B, 'F'));
        assertTrue(step.probeError());
        assertEquals(0, tracker.find(A).getConsecutiveFailures());
        assertEquals(1, tracker.find(B).getConsecutiveFailures());
        assertEquals(List.of(new StrikeTracker.Strike(B, 1, "why failed")), step.strikes());
    }

    @Test
    void theWedgeStartsOnceCollectsEveryWedgedChipAndIsSuppressedOnlyWhenAllAreHealthy() {
        run(Map.of(A, 'F', B, 'H'));
        run(Map.of(A, 'F', B, 'F'));
        StrikeTracker.Step third = run(Map.of(A, 'F', B, 'F'));
        assertEquals(List.of(A), third.newlyWedged());
        assertTrue(third.wedgeStarted());
        assertEquals(T0.plus(Duration.ofMinutes(2)), tracker.wedgeSince());
        StrikeTracker.Step fourth = run(Map.of(A, 'H', B, 'F'));
        assertEquals(List.of(B), fourth.newlyWedged());
        assertFalse(fourth.wedgeStarted(), "the wedge of A goes on");
        assertEquals(List.of(A), fourth.healed());
        assertFalse(fourth.suppress(), "B is wedged");
        assertEquals(T0.plus(Duration.ofMinutes(2)), tracker.wedgeSince(), "the wedge keeps its start");
        assertEquals("0:0,1:0", ChipId.format(tracker.wedgeChips()));
        assertEquals("1:0", ChipId.format(tracker.wedged()));
        StrikeTracker.Step fifth = run(Map.of(A, 'H', B, 'H'));
        assertTrue(fifth.suppress());
        assertEquals(List.of(B), fifth.healed());
    }

    @Test
    void aSuppressionNotEndedByTheEngineIsAskedForAgain() {
        for (char c : "FFFH".toCharArray()) {
            run(c);
        }
        assertTrue(tracker.wedgeActive());
        assertTrue(run('H').suppress(), "markers not cleared yet: asked again");
        tracker.endWedge();
        assertFalse(tracker.wedgeActive());
        assertNull(tracker.wedgeSince());
        assertTrue(tracker.wedgeChips().isEmpty());
        assertFalse(run('H').suppress());
    }

    @Test
    void chipStateShowsTheLastAnswer() {
        run('F');
        ChipState s = tracker.find(A);
        assertEquals("failed", s.getClassification());
        assertEquals("why failed", s.getLastError());
        assertNull(s.getLastSeen(), "a failed chip was not seen");
        run('D');
        assertEquals("why degraded", s.getLastError());
        assertEquals(T0.plus(Duration.ofMinutes(1)).toString(), s.getLastSeen());
        run('H');
        assertNull(s.getLastError());
        assertEquals(T0.plus(Duration.ofMinutes(2)).toString(), s.getLastSeen());
        assertEquals("healthy", s.getClassification());
    }

    @Test
    void restoreReplacesTheStateAndDatesAnUndatedWedgeAtTheGivenTime() {
        run(Map.of(B, 'F'));
        Map<ChipId, WatchState.Strikes> strikes = new LinkedHashMap<>();
        strikes.put(A, new WatchState.Strikes(3, true));
        WatchState s = new WatchState(null, true, null, new TreeSet<>(List.of(A)), true, false, 2, true,
                new TreeMap<>(strikes));
        Instant now = T0.plusSeconds(600);
        tracker.restore(s, now);
        assertNull(tracker.find(B), "replaced, not merged");
        assertEquals(3, tracker.find(A).getConsecutiveFailures());
        assertTrue(tracker.find(A).isWedged());
        assertTrue(tracker.wedgeActive());
        assertEquals(now, tracker.wedgeSince());
        assertEquals(2, tracker.probeErrorsInRow());
        assertTrue(tracker.probeDegraded());
        assertEquals(strikes, tracker.strikes());
        assertEquals("0:0=3", tracker.describeStrikes());
        assertTrue(run('H').suppress(), "a restored wedge is suppressed like any other");
    }

    @Test
    void describeStrikesNamesNoneWhenThereAreNone() {
        List<String> seen = new ArrayList<>();
        seen.add(tracker.describeStrikes());
        run(Map.of(A, 'F', B, 'F'));
        seen.add(tracker.describeStrikes());
        assertEquals(List.of("none", "0:0=1,1:0=1"), seen);
    }
}
