package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.Progress;

import io.npulifecycle.api.upgrade.spec.UpgradeState;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

/** {@link DeadlineClock}: ages of in-flight states across wall-clock steps and leader changes. */
class DeadlineClockTest {

    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final long SECOND = 1_000_000_000L;

    @Test
    void aNodeDrivenStateCountsTheWallClockAgeAtFirstSightThenTheMonotonicClock() {
        DeadlineClock c = new DeadlineClock();
        Progress p = new Progress(UpgradeState.REBOOTING, NOW.minusSeconds(7200), "25.5.0", "boot-a");
        assertEquals(Duration.ofSeconds(7200), c.age("n1", p, NOW, 0));
        // the wall clock jumps back an hour: the age keeps growing with the monotonic clock only
        assertEquals(Duration.ofSeconds(7210), c.age("n1", p, NOW.minusSeconds(3600), 10 * SECOND));
    }

    @Test
    void podRestartRequiredStartsAtANewLeadersFirstSight() {
        DeadlineClock c = new DeadlineClock();
        // granted two hours ago, then both control-plane replicas were down: the pod was never deleted
        Progress p = new Progress(UpgradeState.POD_RESTART_REQUIRED, NOW.minusSeconds(7200), "25.5.0", "boot-a");
        assertEquals(Duration.ZERO, c.age("n1", p, NOW, 0));
        assertEquals(Duration.ofSeconds(30), c.age("n1", p, NOW.plusSeconds(30), 30 * SECOND));
    }

    @Test
    void aSinceInTheFutureCountsFromTheFirstSight() {
        DeadlineClock c = new DeadlineClock();
        Progress p = new Progress(UpgradeState.REBOOT_REQUIRED, NOW.plusSeconds(600), "25.5.0", "boot-a");
        assertEquals(Duration.ZERO, c.age("n1", p, NOW, 5 * SECOND));
        assertEquals(Duration.ofSeconds(5), c.age("n1", p, NOW, 10 * SECOND));
    }
}
