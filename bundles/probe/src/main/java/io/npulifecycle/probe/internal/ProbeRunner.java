package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.api.time.TimeSource;

/**
 * When and how the health-watch's probe runs. Every {@code interval} (TimeSource time, measured from the start of the
 * previous probe) it runs the probe on {@code executor}; the next run is scheduled only when the previous one ended and
 * a run asked for while one is running is refused, so runs never overlap. Every run ends with a {@link ProbeResult}
 * handed to the consumer: a probe that throws or returns {@code null}, or a run while no driver is loaded, gives a
 * whole-probe {@code probe-error}.
 *
 * <p>Logs under the engine's logger name, which operators configure for the health-watch.
 */
final class ProbeRunner {

    /**
     * One finished probe run.
     *
     * @param config the configuration the run used
     * @param method the probe method that ran
     * @param result its result, never {@code null}
     * @param start when the run started (TimeSource time)
     * @param durationMs how long the probe took, milliseconds of monotonic TimeSource time
     */
    record Run(WatchConfig config, String method, ProbeResult result, Instant start, long durationMs) {
    }

    private static final System.Logger LOG = System.getLogger(HealthWatchEngine.class.getName());

    private final TimeSource time;
    private final Executor executor;
    private final Consumer<Run> onRun;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile WatchConfig config;
    private volatile ChipProbe probe;
    private volatile Supplier<String> driverNotLoaded = () -> null;

    private int generation;
    private TimeSource.Scheduled scheduled;
    private boolean started;

    /**
     * @param time clock and scheduler
     * @param executor runs probes; one thread in production, a direct executor in tests
     * @param onRun told every finished run, on the probe thread; an exception it throws is logged
     * @param config initial configuration
     * @param probe initial probe
     */
    ProbeRunner(TimeSource time, Executor executor, Consumer<Run> onRun, WatchConfig config, ChipProbe probe) {
        this.time = Objects.requireNonNull(time);
        this.executor = Objects.requireNonNull(executor);
        this.onRun = Objects.requireNonNull(onRun);
        this.config = Objects.requireNonNull(config);
        this.probe = Objects.requireNonNull(probe);
    }

    /** Schedules the first run at once. */
    synchronized void start() {
        started = true;
        schedule(Duration.ZERO);
    }

    /** Stops scheduling; a run in progress finishes. */
    synchronized void stop() {
        started = false;
        generation++;
        if (scheduled != null) {
            scheduled.cancel();
            scheduled = null;
        }
    }

    /**
     * Applies a new configuration; when the interval changed, the next run is scheduled one new interval from now.
     *
     * @param newConfig validated configuration
     * @param newProbe the probe to use from the next run
     */
    synchronized void reconfigure(WatchConfig newConfig, ChipProbe newProbe) {
        Duration oldInterval = config.interval();
        config = newConfig;
        probe = newProbe;
        if (started && !oldInterval.equals(newConfig.interval())) {
            if (scheduled != null) {
                scheduled.cancel();
            }
            schedule(newConfig.interval());
        }
    }

    /** @return the current configuration */
    WatchConfig config() {
        return config;
    }

    /** @return the current probe */
    ChipProbe probe() {
        return probe;
    }

    /**
     * @param check returns {@code null} when a driver is loaded (or unknown), else why the chips must not be judged
     *        now; {@code null} = always loaded
     */
    void driverLoaded(Supplier<String> check) {
        this.driverNotLoaded = check == null ? () -> null : check;
    }

    private void schedule(Duration delay) {
        int gen = ++generation;
        scheduled = time.schedule(() -> tick(gen), delay);
    }

    private void tick(int gen) {
        synchronized (this) {
            if (gen != generation || !started) {
                return;
            }
        }
        long startNanos = time.monotonicNanos();
        try {
            executor.execute(() -> {
                try {
                    runOnce();
                } finally {
                    scheduleNext(gen, startNanos);
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.log(Level.DEBUG, "health-watch executor closed; no further probe");
        }
    }

    private synchronized void scheduleNext(int gen, long startNanos) {
        if (gen != generation || !started) {
            return;
        }
        Duration elapsed = Duration.ofNanos(time.monotonicNanos() - startNanos);
        Duration delay = config.interval().minus(elapsed);
        schedule(delay.isNegative() ? Duration.ZERO : delay);
    }

    /**
     * Runs one probe now on the calling thread, unless one is running.
     *
     * @return {@code false} if a probe was already running
     */
    boolean runOnce() {
        if (!running.compareAndSet(false, true)) {
            return false;
        }
        try {
            WatchConfig cfg = config;
            ChipProbe p = probe;
            Instant start = time.now();
            long t0 = time.monotonicNanos();
            ProbeResult r;
            try {
                // The probe's deadline is real (a process and a JDK timer): a compressed clock (the simulator)
                // shortens it by the same factor as every other period, down to a floor the emulated npu-smi
                // process needs on a loaded machine (wallTimeout).
                r = p.probe(wallTimeout(cfg.timeout(), time.scale()));
                if (r == null) {
                    r = ProbeResult.whole(Classification.PROBE_ERROR, p.method() + " probe returned no result", null);
                }
            } catch (RuntimeException | LinkageError e) {
                r = ProbeResult.whole(Classification.PROBE_ERROR, p.method() + " probe failed: " + e, null);
            }
            long ms = (time.monotonicNanos() - t0) / 1_000_000;
            String notLoaded = driverNotLoaded.get();
            if (notLoaded != null) {
                r = ProbeResult.whole(Classification.PROBE_ERROR, notLoaded, r.rawOutput());
            }
            onRun.accept(new Run(cfg, p.method(), r, start, ms));
            return true;
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "health-watch run failed", e);
            return true;
        } finally {
            running.set(false);
        }
    }

    /**
     * Starts a run on the executor unless one is running.
     *
     * @return {@code started}, {@code already running}, or {@code health-watch stopped} when the executor is closed
     */
    String probeNow() {
        if (running.get()) {
            return "already running";
        }
        try {
            executor.execute(this::runOnce);
        } catch (RejectedExecutionException e) {
            return "health-watch stopped";
        }
        return "started";
    }

    /**
     * The least wall-clock time a probe gets on a compressed clock, in milliseconds. The emulated {@code npu-smi} is a
     * real process: on a loaded 2-core machine its start alone took over 100 ms (the earlier floor), and at x240 three
     * such probes in a row struck every chip of a healthy emulated node (a chaos run, 2026-12-06: "wedged after 3
     * consecutive strikes", each "npu-smi did not answer within 100 ms"), which autoRecover then rebooted. A hang
     * still ends within one second of wall clock, a few probe periods of simulated time.
     */
    static final long COMPRESSED_WALL_FLOOR_MILLIS = 1000;

    /**
     * @param timeout the configured timeout, in (simulated) time
     * @param scale simulated seconds per wall second
     * @return the wall-clock timeout to give the probe: {@code timeout} on a real clock ({@code scale <= 1}); on a
     *         compressed one {@code timeout / scale}, but at least {@value #COMPRESSED_WALL_FLOOR_MILLIS} ms and never
     *         more than {@code timeout} itself
     */
    static Duration wallTimeout(Duration timeout, double scale) {
        if (scale <= 1.0) {
            return timeout;
        }
        long scaled = (long) (timeout.toMillis() / scale);
        return Duration.ofMillis(Math.min(timeout.toMillis(), Math.max(COMPRESSED_WALL_FLOOR_MILLIS, scaled)));
    }
}
