package io.npulifecycle.clock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.npulifecycle.testing.support.Configs;

class ScaledTimeSourceTest {

    /** A wall clock the test moves by hand. */
    static final class HandClock extends Clock {
        final AtomicLong millis = new AtomicLong();

        HandClock(long start) {
            millis.set(start);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis.get());
        }

        @Override
        public long millis() {
            return millis.get();
        }
    }

    @Test
    void scaleOneIsTheWallClock() {
        HandClock wall = new HandClock(1_000_000L);
        AtomicLong nanos = new AtomicLong(500);
        ScaledTimeSource ts = new ScaledTimeSource(wall, nanos::get);
        ts.start(1.0, 0);
        try {
            wall.millis.addAndGet(1234);
            nanos.addAndGet(7_000);
            assertEquals(Instant.ofEpochMilli(1_001_234L), ts.now());
            assertEquals(7_000, ts.monotonicNanos());
        } finally {
            ts.deactivate();
        }
    }

    @Test
    void scaledClockAdvancesScaleTimesFasterFromTheAnchor() {
        HandClock wall = new HandClock(10_000L);
        AtomicLong nanos = new AtomicLong();
        ScaledTimeSource ts = new ScaledTimeSource(wall, nanos::get);
        ts.start(100.0, 10_000L);
        try {
            wall.millis.addAndGet(1_000); // one wall second
            nanos.addAndGet(1_000_000_000L);
            assertEquals(Instant.ofEpochMilli(10_000L + 100_000L), ts.now());
            assertEquals(100_000_000_000L, ts.monotonicNanos());
        } finally {
            ts.deactivate();
        }
    }

    @Test
    void invalidScaleFallsBackToOne() {
        ScaledTimeSource ts = new ScaledTimeSource(new HandClock(0), () -> 0);
        ts.start(-5, 0);
        try {
            assertEquals(1.0, ts.scale());
        } finally {
            ts.deactivate();
        }
    }

    @Test
    void scheduledTaskRunsAndAFailingTaskDoesNotStopOthers() throws Exception {
        ScaledTimeSource ts = new ScaledTimeSource();
        ts.start(1000.0, 0); // 60 simulated seconds = 60 ms of wall time
        try {
            CountDownLatch ran = new CountDownLatch(1);
            ts.schedule(() -> {
                throw new IllegalStateException("boom");
            }, Duration.ZERO);
            ts.schedule(ran::countDown, Duration.ofSeconds(60));
            assertTrue(ran.await(10, TimeUnit.SECONDS), "task scheduled 60 simulated seconds ahead never ran");
        } finally {
            ts.deactivate();
        }
    }

    @Test
    void cancelledTaskNeverRuns() throws Exception {
        ScaledTimeSource ts = new ScaledTimeSource();
        ts.start(1.0, 0);
        try {
            CountDownLatch ran = new CountDownLatch(1);
            var handle = ts.schedule(ran::countDown, Duration.ofHours(1));
            assertTrue(handle.cancel());
            assertEquals(1, ran.getCount());
        } finally {
            ts.deactivate();
        }
    }

    @Test
    void scheduleAfterShutdownIsRefused() {
        ScaledTimeSource ts = new ScaledTimeSource();
        ts.start(1.0, 0);
        ts.deactivate();
        assertThrows(IllegalStateException.class, () -> ts.schedule(() -> { }, Duration.ZERO));
    }

    /** Issue #7: a wall-clock jump (forward or back by an hour) moves now() only, in place. */
    @Test
    void aWallClockJumpMovesNowButNeverMonotonicTime() {
        HandClock wall = new HandClock(10_000L);
        AtomicLong nanos = new AtomicLong();
        ScaledTimeSource ts = new ScaledTimeSource(wall, nanos::get);
        ts.start(100.0, 10_000L);
        try {
            wall.millis.addAndGet(1_000);
            nanos.addAndGet(1_000_000_000L);
            long mono = ts.monotonicNanos();
            ts.jumpTo(3_600_000L);
            assertEquals(Instant.ofEpochMilli(10_000L + 100_000L + 3_600_000L), ts.now());
            assertEquals(mono, ts.monotonicNanos(), "a wall-clock jump does not move monotonic time");
            ts.jumpTo(-3_600_000L);
            assertEquals(Instant.ofEpochMilli(10_000L + 100_000L - 3_600_000L), ts.now());
            assertEquals(mono, ts.monotonicNanos());
            nanos.addAndGet(1_000_000_000L);
            assertEquals(mono + 100_000_000_000L, ts.monotonicNanos());
        } finally {
            ts.deactivate();
        }
    }

    @Test
    void aScaleChangeInPlaceKeepsMonotonicTimeContinuous() {
        HandClock wall = new HandClock(10_000L);
        AtomicLong nanos = new AtomicLong();
        ScaledTimeSource ts = new ScaledTimeSource(wall, nanos::get);
        ts.start(100.0, 10_000L);
        try {
            nanos.addAndGet(1_000_000_000L);
            assertEquals(100_000_000_000L, ts.monotonicNanos());
            ts.modified(config(10.0, 10_000L, 0));
            assertEquals(100_000_000_000L, ts.monotonicNanos(), "no jump at the change");
            nanos.addAndGet(1_000_000_000L);
            assertEquals(110_000_000_000L, ts.monotonicNanos());
            assertEquals(10.0, ts.scale());
        } finally {
            ts.deactivate();
        }
    }

    /** A TimeSourceConfig as DS builds it from these values. */
    static TimeSourceConfig config(double scale, long anchor, long offset) {
        return Configs.of(TimeSourceConfig.class, Map.of("scale", scale, "anchorEpochMillis", anchor,
                "wallOffsetMillis", offset));
    }
}
