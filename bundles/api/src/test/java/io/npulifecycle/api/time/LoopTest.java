package io.npulifecycle.api.time;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class LoopTest {

    /** Records what the loop schedules; the test fires it by hand. */
    static final class RecordingTime implements TimeSource {
        final List<Duration> delays = new CopyOnWriteArrayList<>();
        final List<Runnable> tasks = new CopyOnWriteArrayList<>();
        final List<Boolean> cancelled = new CopyOnWriteArrayList<>();

        @Override
        public Instant now() {
            return Instant.EPOCH;
        }

        @Override
        public long monotonicNanos() {
            return 0;
        }

        @Override
        public Scheduled schedule(Runnable task, Duration delay) {
            delays.add(delay);
            tasks.add(task);
            int i = cancelled.size();
            cancelled.add(false);
            return () -> {
                cancelled.set(i, true);
                return true;
            };
        }

        @Override
        public double scale() {
            return 1;
        }
    }

    @Test
    void runsAtStartAfterEachPeriodAndWhenWokenAndSurvivesAFailingRound() throws Exception {
        RecordingTime time = new RecordingTime();
        Semaphore rounds = new Semaphore(0);
        int[] n = {0};
        Loop loop = new Loop("test-loop", time, Duration.ofSeconds(30), () -> {
            n[0]++;
            rounds.release();
            if (n[0] == 2) {
                throw new IllegalStateException("a failing round");
            }
        });
        try {
            loop.start();
            assertTrue(rounds.tryAcquire(10, TimeUnit.SECONDS), "first round at start");
            awaitScheduled(time, 1);
            assertEquals(Duration.ofSeconds(30), time.delays.get(0));
            time.tasks.get(0).run(); // the period elapsed
            assertTrue(rounds.tryAcquire(10, TimeUnit.SECONDS), "periodic round");
            awaitScheduled(time, 2);
            loop.period(Duration.ofSeconds(5));
            loop.wake(); // a marker changed
            assertTrue(rounds.tryAcquire(10, TimeUnit.SECONDS), "woken round, after the failing one");
            awaitScheduled(time, 3);
            assertTrue(time.cancelled.get(1), "a wake restarts the period");
            assertEquals(Duration.ofSeconds(5), time.delays.get(2));
        } finally {
            loop.stop();
        }
        loop.wake();
        assertTrue(!rounds.tryAcquire(200, TimeUnit.MILLISECONDS), "no round after stop");
        assertThrows(IllegalArgumentException.class, () -> loop.period(Duration.ZERO));
    }

    static void awaitScheduled(RecordingTime time, int count) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (time.tasks.size() < count && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertEquals(count, time.tasks.size());
    }
}
