package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.MarkerStoreException;
import io.npulifecycle.api.metrics.MetricSource;
import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.HealthWatchEvents;
import io.npulifecycle.api.probe.HealthWatchMXBean;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.api.time.TimeSource;

/**
 * The health-watch, independent of OSGi: orchestrates a probe run's judgement and what follows from it.
 *
 * <p>{@link ProbeRunner} runs the probe every {@code interval} on {@code executor}, never two at a time. Each result is
 * judged against the expected chips ({@link Assessment}: the pinned chips, else the chips of the first good probe of
 * the boot) and handed to the {@link StrikeTracker} (strikes, wedge, suppression, probe errors). A wedge removes
 * {@code driver-ready}, writes {@code reboot-required reason=recovery chips=.. since=..} (never over a
 * {@code reason=upgrade} marker, {@link WedgeMarkers}) and posts {@link HealthWatchEvents#TOPIC_WEDGED}. When every
 * wedged chip answers healthy again within the same boot (false-positive suppression), the health-watch removes its own
 * recovery marker, restores {@code driver-ready} if it was present before the wedge, and posts
 * {@link HealthWatchEvents#TOPIC_SUPPRESSED}. {@code probeErrorThreshold} probe errors in a row post
 * {@link HealthWatchEvents#TOPIC_PROBE_DEGRADED}, and so does the next run that clears it.
 *
 * <p>Strikes, wedge state, learned expected chips and probe-error counters ({@link WatchState}) are kept in the state
 * file {@value #STATE_NAME}{@code .state} of the marker store, stamped with the boot id, so they survive a bundle
 * update or a runtime restart within the same boot and vanish with a reboot. A wedge is in the state file before its
 * markers are written, so an agent killed at any point of a wedge restarts owning the markers it wrote.
 */
public final class HealthWatchEngine {

    /** Receives the engine's OSGi events. */
    @FunctionalInterface
    public interface EventSink {
        /**
         * @param topic event topic
         * @param properties event properties
         */
        void post(String topic, Map<String, Object> properties);
    }

    /** Name of the state file in the marker store and writer name on markers. */
    public static final String STATE_NAME = WedgeMarkers.WRITER;

    /**
     * Start of the INFO line logged once per engine when its first probe has completed and been applied:
     * {@code health-watch first probe completed: method npu-smi, 8 chips answered, verdict HEALTHY, probe took 25 ms,
     * JVM uptime 1830 ms}. The benchmark of the node-agent footprint measures the time to it.
     */
    public static final String FIRST_PROBE_LOG = "health-watch first probe completed";
    private static final System.Logger LOG = System.getLogger(HealthWatchEngine.class.getName());

    private final TimeSource time;
    private final MarkerStore markers;
    private final EventSink events;
    private final Consumer<List<ChipState>> expectedChipsListener;
    private final ProbeRunner runner;
    private final StrikeTracker tracker = new StrikeTracker();
    private final WedgeMarkers wedgeMarkers;
    private final WatchStateFile stateFile;
    private final AtomicBoolean firstProbeLogged = new AtomicBoolean();
    /** What the planted bug {@link PlantedBug#MEMORY_LEAK} keeps; {@code null} without it (always, in the product). */
    private volatile List<ByteBuffer> leak;
    private final ProbeMeasurements measurements = new ProbeMeasurements();

    private final ExpectedChips expected = new ExpectedChips();
    private volatile Instant lastProbeTime;
    private volatile long lastDurationMs = -1;
    private volatile Classification lastVerdict;
    private volatile String lastError;
    private volatile String driverVersion;
    private volatile String lastRaw;
    private volatile String storeError;

    /**
     * @param time clock and scheduler
     * @param markers marker store (markers and the state file)
     * @param executor runs probes; one thread in production, a direct executor in tests
     * @param events receives events, never {@code null}
     * @param expectedChipsListener told the expected chips' states whenever that set changes (to register Chip
     *        MBeans), called outside the engine's lock
     * @param config initial configuration
     * @param probe initial probe
     */
    public HealthWatchEngine(TimeSource time, MarkerStore markers, Executor executor, EventSink events,
            Consumer<List<ChipState>> expectedChipsListener, WatchConfig config, ChipProbe probe) {
        this.time = Objects.requireNonNull(time);
        this.markers = Objects.requireNonNull(markers);
        this.wedgeMarkers = new WedgeMarkers(markers);
        this.stateFile = new WatchStateFile(markers);
        this.events = Objects.requireNonNull(events);
        this.expectedChipsListener = expectedChipsListener;
        this.runner = new ProbeRunner(time, executor, this::onRun, config, probe);
    }

    /** Loads the state of this boot and schedules the first probe at once; called once per engine. */
    public void start() {
        synchronized (this) {
            loadState();
        }
        runner.start();
        notifyExpected();
    }

    /** @return the counters and durations for {@code /metrics} (a {@code MetricSource} the component registers) */
    MetricSource measurements() {
        return measurements;
    }

    /** Stops scheduling; a probe in progress finishes. */
    public void stop() {
        runner.stop();
    }

    /**
     * Applies a new configuration; when the interval changed, the next probe is scheduled one new interval from now.
     *
     * @param newConfig validated configuration
     * @param newProbe the probe to use from the next run
     */
    public void reconfigure(WatchConfig newConfig, ChipProbe newProbe) {
        runner.reconfigure(newConfig, newProbe);
        notifyExpected();
    }

    /** @return the current configuration */
    public WatchConfig config() {
        return runner.config();
    }

    /**
     * Runs one probe now on the calling thread, unless one is running.
     *
     * @return {@code false} if a probe was already running
     */
    public boolean runOnce() {
        return runner.runOnce();
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}); called before {@link #start()}.
     *
     * @param bug {@link PlantedBug#MEMORY_LEAK}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        leak = bug == PlantedBug.MEMORY_LEAK ? Collections.synchronizedList(new ArrayList<>()) : null;
    }

    private void onRun(ProbeRunner.Run run) {
        List<ByteBuffer> kept = leak;
        if (kept != null && kept.size() * PlantedBug.LEAK_MIB_PER_PROBE < PlantedBug.LEAK_CAP_MIB) {
            // planted bug (testing the chaos checker only): breaks "node-agent memory bounded", as every probe keeps
            // native memory (allocateDirect zeroes it: resident) that nothing frees while the engine lives
            kept.add(ByteBuffer.allocateDirect(PlantedBug.LEAK_MIB_PER_PROBE << 20));
        }
        measurements.probed(run.durationMs());
        if (apply(run.result(), run.start(), run.durationMs(), run.config())) {
            notifyExpected();
        }
        if (firstProbeLogged.compareAndSet(false, true)) {
            // the benchmark (docs/benchmarks.md, node-agent footprint) waits for this line
            LOG.log(Level.INFO, FIRST_PROBE_LOG + ": method " + run.method() + ", " + run.result().chips().size()
                    + " chips answered, verdict " + lastVerdict + ", probe took " + run.durationMs()
                    + " ms, JVM uptime " + jvmUptimeMs() + " ms");
        }
    }

    private static long jvmUptimeMs() {
        try {
            return java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime();
        } catch (RuntimeException | LinkageError e) {
            return -1;
        }
    }

    private synchronized boolean apply(ProbeResult r, Instant start, long ms, WatchConfig cfg) {
        if (expected.learnFrom(r, cfg)) {
            LOG.log(Level.INFO, "expected chips for boot " + markers.bootId() + " learned from the first good probe: "
                    + ChipId.format(expected.learned()));
        }
        Assessment a = Assessment.of(r, expected.of(cfg));
        lastProbeTime = start;
        lastDurationMs = ms;
        lastVerdict = a.verdict();
        lastError = a.error();
        lastRaw = NpuSmiParser.printable(r.rawOutput());
        if (a.driverVersion() != null) {
            driverVersion = a.driverVersion();
        }
        if (expected.of(cfg).isEmpty() && r.outcome() != null) {
            LOG.log(Level.WARNING, "health-watch: no expected chips known yet and the " + cfg.method() + " probe gave "
                    + r.outcome() + " (" + r.error() + "): nothing to strike");
        }
        StrikeTracker.Step step = tracker.apply(a, start, cfg.failureThreshold(), cfg.probeErrorThreshold());
        logAndPost(step, a, cfg);
        if (step.probeError()) {
            measurements.probeError(cfg.method());
        }
        if (step.wedgeStarted()) {
            measurements.wedge();
        }
        if (!step.newlyWedged().isEmpty()) {
            onWedge(step.wedgeStarted());
        } else if (step.suppress()) {
            onRecovered();
        } else if (tracker.wedgeActive() && wedgeMarkers.dirty()) {
            ensureWedgeMarkers();
        }
        persist();
        return expected.changedSincePublished(cfg);
    }

    private void logAndPost(StrikeTracker.Step step, Assessment a, WatchConfig cfg) {
        if (step.probeError()) {
            LOG.log(Level.WARNING, "health-watch " + cfg.method() + " probe error (" + tracker.probeErrorsInRow()
                    + " in a row, no strike): " + a.error());
        }
        switch (step.degraded()) {
            case RAISED -> {
                LOG.log(Level.ERROR, "health-watch probe-degraded: " + tracker.probeErrorsInRow() + " " + cfg.method()
                        + " probe errors in a row; chips cannot be judged (never a reboot reason)");
                postProbeDegraded(a.error());
            }
            case CLEARED -> {
                LOG.log(Level.INFO, "health-watch probe-degraded cleared: the " + cfg.method() + " probe answers again");
                postProbeDegraded(null);
            }
            default -> {
            }
        }
        for (StrikeTracker.Strike s : step.strikes()) {
            LOG.log(Level.WARNING, "chip " + s.chip() + " strike " + s.count() + "/" + cfg.failureThreshold() + ": "
                    + s.detail());
        }
        for (ChipId id : step.healed()) {
            LOG.log(Level.WARNING, "wedged chip " + id + " answers healthy again");
        }
        if (!step.newlyWedged().isEmpty()) {
            LOG.log(Level.ERROR, "chip(s) " + ChipId.format(step.newlyWedged()) + " wedged after "
                    + cfg.failureThreshold() + " consecutive strikes: removing driver-ready, writing reboot-required "
                    + "reason=recovery");
        }
    }

    private void onWedge(boolean started) {
        if (started) {
            wedgeMarkers.wedgeStarted();
        }
        // The state file learns of the wedge before its markers are written. A SIGKILL between the two writes then
        // leaves a restarted health-watch that knows the wedge: it re-checks the markers at its next probe, or
        // suppresses the wedge when the chips answer again (driver-ready restored). In the other order the kill leaves
        // a recovery marker that no state owns: nothing takes it back when the chips answer again, so it asks for a
        // reboot the node does not need. A failed state write does not hold the markers back: the request matters more.
        wedgeMarkers.markDirty();
        persist();
        ensureWedgeMarkers();
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(HealthWatchEvents.PROP_CHIPS, ChipId.format(tracker.wedged()));
        events.post(HealthWatchEvents.TOPIC_WEDGED, props);
    }

    /** Makes the markers say "wedged"; after a write error they stay dirty and are retried at the next run. */
    private void ensureWedgeMarkers() {
        try {
            wedgeMarkers.ensureWedged(tracker.wedged(), tracker.wedgeSince());
            storeError = null;
        } catch (MarkerStoreException e) {
            markerWriteFailed("cannot update markers on wedge: ", e);
        }
    }

    private void onRecovered() {
        SortedSet<ChipId> chipsOfWedge = tracker.wedgeChips();
        try {
            boolean restored = wedgeMarkers.suppress(chipsOfWedge);
            tracker.endWedge();
            Map<String, Object> props = new LinkedHashMap<>();
            props.put(HealthWatchEvents.PROP_CHIPS, ChipId.format(chipsOfWedge));
            props.put(HealthWatchEvents.PROP_DRIVER_READY_RESTORED, restored);
            measurements.suppressed();
            events.post(HealthWatchEvents.TOPIC_SUPPRESSED, props);
        } catch (MarkerStoreException e) {
            markerWriteFailed("cannot clear markers on recovery: ", e);
        }
    }

    private void markerWriteFailed(String what, MarkerStoreException e) {
        lastError = what + e.getMessage();
        storeError = lastError;
        LOG.log(Level.ERROR, "health-watch " + lastError + " (retried at the next probe)");
    }

    private void postProbeDegraded(String error) {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(HealthWatchEvents.PROP_PROBE_DEGRADED, tracker.probeDegraded());
        if (error != null) {
            props.put(HealthWatchEvents.PROP_ERROR, error);
        }
        events.post(HealthWatchEvents.TOPIC_PROBE_DEGRADED, props);
    }

    // ---- state file ----

    private WatchState snapshot() {
        return new WatchState(expected.learned(), tracker.wedgeActive(), tracker.wedgeSince(), tracker.wedgeChips(),
                wedgeMarkers.driverReadyBefore(), wedgeMarkers.dirty(), tracker.probeErrorsInRow(),
                tracker.probeDegraded(), tracker.strikes());
    }

    private void persist() {
        switch (stateFile.save(snapshot())) {
            case WRITTEN -> storeError = null;
            case FAILED -> storeError = stateFile.error();
            default -> {
            }
        }
    }

    /** Restores the state of this boot, if the store holds a valid one. */
    private void loadState() {
        WatchState s = stateFile.load();
        if (s == null) {
            return;
        }
        expected.restore(s.expectedChips());
        tracker.restore(s, time.now());
        // a restored wedge re-checks its markers at the next probe: they may have changed while no agent ran
        wedgeMarkers.restore(s.driverReadyBeforeWedge(), s.markersDirty() || s.wedgeActive());
        LOG.log(Level.INFO, "health-watch state of boot " + markers.bootId() + " restored: expected chips "
                + ChipId.format(expected.learned()) + ", wedged " + ChipId.format(tracker.wedged()) + ", strikes "
                + tracker.describeStrikes());
    }

    private void notifyExpected() {
        List<ChipState> states = new ArrayList<>();
        synchronized (this) {
            for (ChipId id : expected.publish(config())) {
                states.add(tracker.state(id));
            }
        }
        if (expectedChipsListener != null) {
            expectedChipsListener.accept(Collections.unmodifiableList(states));
        }
    }

    /**
     * @param id a chip
     * @return its state, or {@code null} if never seen nor expected
     */
    public synchronized ChipState chip(ChipId id) {
        return tracker.find(id);
    }

    /**
     * @return the last failed write to the marker store (marker or state file) when no write has succeeded since,
     *         else {@code null}; read by the health check
     */
    public String markerStoreError() {
        return storeError;
    }

    /** @return the marker store of this engine */
    MarkerStore markers() {
        return markers;
    }

    /**
     * @param check returns {@code null} when a driver is loaded (or unknown), else why the chips must not be judged
     *        now; such a probe is a probe error, never a strike
     */
    public void driverLoaded(Supplier<String> check) {
        runner.driverLoaded(check);
    }

    /** @return the current probe */
    ChipProbe probe() {
        return runner.probe();
    }

    /** @return whether a wedge is active (markers written, not yet suppressed) */
    public synchronized boolean wedgeActive() {
        return tracker.wedgeActive();
    }

    // ---- HealthWatchMXBean ----

    /** @return what the MBean attribute {@link HealthWatchMXBean#getIntervalSeconds()} shows */
    public long getIntervalSeconds() {
        return config().interval().toSeconds();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getTimeoutSeconds()} shows */
    public long getTimeoutSeconds() {
        return config().timeout().toSeconds();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getFailureThreshold()} shows */
    public int getFailureThreshold() {
        return config().failureThreshold();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getMethod()} shows */
    public String getMethod() {
        return config().method();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getExpectedChips()} shows */
    public synchronized String getExpectedChips() {
        return ChipId.format(expected.of(config()));
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getWedgedChips()} shows */
    public synchronized String getWedgedChips() {
        return ChipId.format(tracker.wedged());
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getLastProbeTime()} shows */
    public String getLastProbeTime() {
        Instant t = lastProbeTime;
        return t == null ? null : t.toString();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getLastProbeDurationMs()} shows */
    public long getLastProbeDurationMs() {
        return lastDurationMs;
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getLastVerdict()} shows */
    public String getLastVerdict() {
        Classification c = lastVerdict;
        return c == null ? null : c.label();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getLastError()} shows */
    public String getLastError() {
        return lastError;
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getDriverVersion()} shows */
    public String getDriverVersion() {
        return driverVersion;
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getProbeErrorCount()} shows */
    public long getProbeErrorCount() {
        return tracker.probeErrorCount();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getProbeErrorsInRow()} shows */
    public int getProbeErrorsInRow() {
        return tracker.probeErrorsInRow();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#isProbeDegraded()} shows */
    public boolean isProbeDegraded() {
        return tracker.probeDegraded();
    }

    /** @return what the MBean attribute {@link HealthWatchMXBean#getLastRawOutput()} shows */
    public String getLastRawOutput() {
        return lastRaw;
    }

    /** @return what the MBean operation {@link HealthWatchMXBean#probeNow()} answers */
    public String probeNow() {
        return runner.probeNow();
    }
}
