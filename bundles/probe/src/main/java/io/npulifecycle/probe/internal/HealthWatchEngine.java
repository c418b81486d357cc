package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.MarkerStoreException;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.HealthWatchEvents;
import io.npulifecycle.api.probe.HealthWatchMXBean;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.api.time.TimeSource;

/**
 * The health-watch state machine, independent of OSGi.
 *
 * <p>Every {@code interval} (TimeSource time, measured from the start of the previous probe) it runs the probe on
 * {@code executor} (one thread: runs never overlap; the next run is scheduled only when the previous one ended), judges
 * the result against the expected chips ({@link Assessment}) and per chip: {@code failed} = one strike;
 * {@code healthy} or {@code degraded} = strikes reset; {@code probe-error} = nothing. {@code failureThreshold} strikes
 * in a row make a chip wedged: {@code driver-ready} is removed, {@code reboot-required reason=recovery chips=.. since=..}
 * written (never over a {@code reason=upgrade} marker) and {@link HealthWatchEvents#TOPIC_WEDGED} posted. When every
 * wedged chip answers healthy again within the same boot (false-positive suppression), the health-watch removes its
 * own recovery marker, restores {@code driver-ready} if it was present before the wedge, and posts
 * {@link HealthWatchEvents#TOPIC_SUPPRESSED}.
 *
 * <p>Probe errors never strike; {@code probeErrorThreshold} in a row raise {@code probe-degraded}, cleared by the next
 * probe that is not a probe error.
 *
 * <p>Strikes, wedge state, learned expected chips and probe-error counters are kept in the state file
 * {@value #STATE_NAME}{@code .state} of the marker store, stamped with the boot id, so they survive a bundle update or
 * a runtime restart within the same boot and vanish with a reboot.
 */
public final class HealthWatchEngine implements HealthWatchMXBean {

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
    public static final String STATE_NAME = "health-watch";
    private static final String WRITER = "health-watch";
    private static final System.Logger LOG = System.getLogger(HealthWatchEngine.class.getName());

    private final TimeSource time;
    private final MarkerStore markers;
    private final Executor executor;
    private final EventSink events;
    private final Consumer<List<ChipState>> expectedChipsListener;
    private final AtomicBoolean running = new AtomicBoolean();

    private volatile WatchConfig config;
    private volatile ChipProbe probe;
    private final Map<ChipId, ChipState> chips = new TreeMap<>();
    private SortedSet<ChipId> learned = new TreeSet<>();
    private SortedSet<ChipId> publishedExpected = new TreeSet<>();
    private boolean wedgeActive;
    private Instant wedgeSince;
    private boolean driverReadyBefore;
    private SortedSet<ChipId> wedgeChips = new TreeSet<>();
    private boolean markersDirty;
    private boolean upgradeLogged;
    private volatile int probeErrorsInRow;
    private volatile boolean probeDegraded;
    private volatile long probeErrorCount;
    private volatile Instant lastProbeTime;
    private volatile long lastDurationMs = -1;
    private volatile Classification lastVerdict;
    private volatile String lastError;
    private volatile String driverVersion;
    private volatile String lastRaw;
    private Map<String, String> lastPersisted = Map.of();
    private String stateError;
    private volatile String storeError;

    private int generation;
    private TimeSource.Scheduled scheduled;
    private boolean started;
    private final AtomicBoolean firstProbeLogged = new AtomicBoolean();

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
        this.executor = Objects.requireNonNull(executor);
        this.events = Objects.requireNonNull(events);
        this.expectedChipsListener = expectedChipsListener;
        this.config = Objects.requireNonNull(config);
        this.probe = Objects.requireNonNull(probe);
    }

    /**
     * Start of the INFO line logged once per engine when its first probe has completed and been applied:
     * {@code health-watch first probe completed: method npu-smi, 8 chips answered, verdict HEALTHY, probe took 25 ms,
     * JVM uptime 1830 ms}. The benchmark of the node-agent footprint measures the time to it.
     */
    public static final String FIRST_PROBE_LOG = "health-watch first probe completed";

    private static long jvmUptimeMs() {
        try {
            return java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime();
        } catch (RuntimeException | LinkageError e) {
            return -1;
        }
    }

    /** Loads the state of this boot and schedules the first probe at once. */
    public void start() {
        synchronized (this) {
            loadState();
            started = true;
            schedule(Duration.ZERO);
        }
        notifyExpected();
    }

    /** Stops scheduling; a probe in progress finishes. */
    public synchronized void stop() {
        started = false;
        generation++;
        if (scheduled != null) {
            scheduled.cancel();
            scheduled = null;
        }
    }

    /**
     * Applies a new configuration; the next probe is scheduled one new interval from now.
     *
     * @param newConfig validated configuration
     * @param newProbe the probe to use from the next run
     */
    public void reconfigure(WatchConfig newConfig, ChipProbe newProbe) {
        synchronized (this) {
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
        notifyExpected();
    }

    /** @return the current configuration */
    public WatchConfig config() {
        return config;
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
    public boolean runOnce() {
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
                // shortens it by the same factor as every other period, so a hang still costs one probe period.
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
            boolean expectedChanged = apply(r, start, ms, cfg);
            if (expectedChanged) {
                notifyExpected();
            }
            if (firstProbeLogged.compareAndSet(false, true)) {
                // the benchmark (docs/benchmarks.md, node-agent footprint) waits for this line
                LOG.log(Level.INFO, FIRST_PROBE_LOG + ": method " + p.method() + ", " + r.chips().size()
                        + " chips answered, verdict " + lastVerdict + ", probe took " + ms + " ms, JVM uptime "
                        + jvmUptimeMs() + " ms");
            }
            return true;
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "health-watch run failed", e);
            return true;
        } finally {
            running.set(false);
        }
    }

    private synchronized SortedSet<ChipId> expected(WatchConfig cfg) {
        return cfg.pinnedChips().isEmpty() ? learned : cfg.pinnedChips();
    }

    private synchronized boolean apply(ProbeResult r, Instant start, long ms, WatchConfig cfg) {
        SortedSet<ChipId> expected = expected(cfg);
        if (expected.isEmpty() && r.outcome() == null && !r.chips().isEmpty()
                && r.chips().stream().noneMatch(c -> c.classification() == Classification.PROBE_ERROR)) {
            for (ChipResult c : r.chips()) {
                learned.add(c.id());
            }
            expected = learned;
            LOG.log(Level.INFO, "expected chips for boot " + markers.bootId() + " learned from the first good probe: "
                    + ChipId.format(learned));
        }
        Assessment a = Assessment.of(r, expected);
        lastProbeTime = start;
        lastDurationMs = ms;
        lastVerdict = a.verdict();
        lastError = a.error();
        lastRaw = NpuSmiParser.printable(r.rawOutput());
        if (a.driverVersion() != null) {
            driverVersion = a.driverVersion();
        }
        if (expected.isEmpty() && r.outcome() != null) {
            LOG.log(Level.WARNING, "health-watch: no expected chips known yet and the " + cfg.method() + " probe gave "
                    + r.outcome() + " (" + r.error() + "): nothing to strike");
        }

        boolean probeErrorRun = a.verdict() == Classification.PROBE_ERROR
                || a.chips().values().stream().anyMatch(c -> c.classification() == Classification.PROBE_ERROR);
        if (probeErrorRun) {
            probeErrorCount++;
            probeErrorsInRow++;
            LOG.log(Level.WARNING, "health-watch " + cfg.method() + " probe error (" + probeErrorsInRow
                    + " in a row, no strike): " + a.error());
            if (probeErrorsInRow >= cfg.probeErrorThreshold() && !probeDegraded) {
                probeDegraded = true;
                LOG.log(Level.ERROR, "health-watch probe-degraded: " + probeErrorsInRow + " " + cfg.method()
                        + " probe errors in a row; chips cannot be judged (never a reboot reason)");
                postProbeDegraded(a.error());
            }
        } else {
            probeErrorsInRow = 0;
            if (probeDegraded) {
                probeDegraded = false;
                LOG.log(Level.INFO, "health-watch probe-degraded cleared: the " + cfg.method() + " probe answers again");
                postProbeDegraded(null);
            }
        }

        List<ChipId> newlyWedged = new ArrayList<>();
        for (ChipResult c : a.chips().values()) {
            ChipState s = chips.computeIfAbsent(c.id(), ChipState::new);
            s.health = c.health();
            s.classification = c.classification();
            switch (c.classification()) {
                case FAILED:
                    s.consecutiveFailures++;
                    s.lastError = c.detail();
                    LOG.log(Level.WARNING, "chip " + c.id() + " strike " + s.consecutiveFailures + "/"
                            + cfg.failureThreshold() + ": " + c.detail());
                    if (s.consecutiveFailures >= cfg.failureThreshold() && !s.wedged) {
                        s.wedged = true;
                        newlyWedged.add(c.id());
                    }
                    break;
                case HEALTHY:
                    s.consecutiveFailures = 0;
                    s.lastError = null;
                    s.lastSeen = start;
                    if (s.wedged) {
                        s.wedged = false;
                        LOG.log(Level.WARNING, "wedged chip " + c.id() + " answers healthy again");
                    }
                    break;
                case DEGRADED:
                    s.consecutiveFailures = 0;
                    s.lastError = c.detail();
                    s.lastSeen = start;
                    break;
                default:
                    s.lastError = c.detail();
                    break;
            }
        }
        if (!newlyWedged.isEmpty()) {
            LOG.log(Level.ERROR, "chip(s) " + ChipId.format(newlyWedged) + " wedged after " + cfg.failureThreshold()
                    + " consecutive strikes: removing driver-ready, writing reboot-required reason=recovery");
            onWedge(start, newlyWedged);
        } else if (wedgeActive && wedged().isEmpty()) {
            onRecovered();
        } else if (wedgeActive && markersDirty) {
            ensureWedgeMarkers();
        }
        persist();
        return !expected.equals(publishedExpected);
    }

    private SortedSet<ChipId> wedged() {
        SortedSet<ChipId> out = new TreeSet<>();
        for (ChipState s : chips.values()) {
            if (s.wedged) {
                out.add(s.id);
            }
        }
        return out;
    }

    private void onWedge(Instant now, List<ChipId> newlyWedged) {
        if (!wedgeActive) {
            wedgeActive = true;
            wedgeSince = now;
            driverReadyBefore = markers.read(Markers.DRIVER_READY).present();
            upgradeLogged = false;
        }
        wedgeChips.addAll(newlyWedged);
        markersDirty = true;
        ensureWedgeMarkers();
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(HealthWatchEvents.PROP_CHIPS, ChipId.format(wedged()));
        events.post(HealthWatchEvents.TOPIC_WEDGED, props);
    }

    /** Makes the markers say "wedged": idempotent, retried at the next run after a write error. */
    private void ensureWedgeMarkers() {
        try {
            if (markers.read(Markers.DRIVER_READY).status() != MarkerStatus.ABSENT) {
                markers.remove(Markers.DRIVER_READY, WRITER);
            }
            MarkerRead rr = markers.read(Markers.REBOOT_REQUIRED);
            String chipList = ChipId.format(wedged());
            if (rr.present() && Markers.REASON_UPGRADE.equals(rr.marker().reason())) {
                if (!upgradeLogged) {
                    upgradeLogged = true;
                    LOG.log(Level.WARNING, "marker reboot-required reason=upgrade present: left untouched; the upgrade "
                            + "reboot also recovers wedged chip(s) " + chipList);
                }
            } else if (!(rr.present() && Markers.REASON_RECOVERY.equals(rr.marker().reason())
                    && chipList.equals(rr.marker().content().get(Markers.KEY_CHIPS))
                    && String.valueOf(wedgeSince).equals(rr.marker().content().get(Markers.KEY_SINCE)))) {
                Map<String, String> content = new LinkedHashMap<>();
                content.put(Markers.KEY_REASON, Markers.REASON_RECOVERY);
                content.put(Markers.KEY_CHIPS, chipList);
                content.put(Markers.KEY_SINCE, String.valueOf(wedgeSince));
                markers.write(Markers.REBOOT_REQUIRED, content, WRITER);
            }
            markersDirty = false;
            storeError = null;
        } catch (MarkerStoreException e) {
            markersDirty = true;
            lastError = "cannot update markers on wedge: " + e.getMessage();
            storeError = lastError;
            LOG.log(Level.ERROR, "health-watch " + lastError + " (retried at the next probe)");
        }
    }

    private void onRecovered() {
        String chipList = ChipId.format(wedgeChips);
        try {
            MarkerRead rr = markers.read(Markers.REBOOT_REQUIRED);
            if (rr.present() && Markers.REASON_RECOVERY.equals(rr.marker().reason())
                    && WRITER.equals(rr.marker().writer())) {
                markers.remove(Markers.REBOOT_REQUIRED, WRITER);
            } else if (rr.present()) {
                LOG.log(Level.INFO, "marker reboot-required reason=" + rr.marker().reason() + " written by "
                        + rr.marker().writer() + " is not the health-watch's recovery marker: left untouched");
            }
            boolean restored = false;
            if (driverReadyBefore && !markers.read(Markers.DRIVER_READY).present()) {
                Map<String, String> content = new LinkedHashMap<>();
                content.put("restoredBy", "false-positive-suppression");
                content.put(Markers.KEY_CHIPS, chipList);
                markers.write(Markers.DRIVER_READY, content, WRITER);
                restored = true;
            }
            LOG.log(Level.WARNING, "false-positive suppression: wedged chip(s) " + chipList + " answer healthy again "
                    + "before a reboot; recovery marker removed" + (restored ? ", driver-ready restored" : ""));
            wedgeActive = false;
            wedgeSince = null;
            driverReadyBefore = false;
            wedgeChips = new TreeSet<>();
            markersDirty = false;
            Map<String, Object> props = new LinkedHashMap<>();
            props.put(HealthWatchEvents.PROP_CHIPS, chipList);
            props.put(HealthWatchEvents.PROP_DRIVER_READY_RESTORED, restored);
            events.post(HealthWatchEvents.TOPIC_SUPPRESSED, props);
        } catch (MarkerStoreException e) {
            lastError = "cannot clear markers on recovery: " + e.getMessage();
            storeError = lastError;
            LOG.log(Level.ERROR, "health-watch " + lastError + " (retried at the next probe)");
        }
    }

    private void postProbeDegraded(String error) {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(HealthWatchEvents.PROP_PROBE_DEGRADED, probeDegraded);
        if (error != null) {
            props.put(HealthWatchEvents.PROP_ERROR, error);
        }
        events.post(HealthWatchEvents.TOPIC_PROBE_DEGRADED, props);
    }

    // ---- state file ----

    private void persist() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("expectedChips", ChipId.format(learned));
        s.put("wedgeActive", String.valueOf(wedgeActive));
        s.put("wedgeSince", wedgeSince == null ? "" : wedgeSince.toString());
        s.put("wedgeChips", ChipId.format(wedgeChips));
        s.put("driverReadyBeforeWedge", String.valueOf(driverReadyBefore));
        s.put("markersDirty", String.valueOf(markersDirty));
        s.put("probeErrorsInRow", String.valueOf(probeErrorsInRow));
        s.put("probeDegraded", String.valueOf(probeDegraded));
        for (ChipState c : chips.values()) {
            if (c.consecutiveFailures > 0 || c.wedged) {
                s.put("chip." + c.id + ".failures", String.valueOf(c.consecutiveFailures));
                s.put("chip." + c.id + ".wedged", String.valueOf(c.wedged));
            }
        }
        if (s.equals(lastPersisted)) {
            return;
        }
        try {
            markers.writeState(STATE_NAME, s);
            lastPersisted = s;
            stateError = null;
            storeError = null;
        } catch (MarkerStoreException e) {
            storeError = "cannot write the state file: " + e.getMessage();
            if (!e.getMessage().equals(stateError)) { // once per distinct error, not at every probe
                stateError = e.getMessage();
                LOG.log(Level.ERROR, "health-watch cannot write its state file (strikes would not survive a restart): "
                        + e.getMessage());
            }
        }
    }

    private void loadState() {
        Map<String, String> s = markers.readState(STATE_NAME);
        if (s.isEmpty()) {
            return;
        }
        try {
            learned = ChipId.parseList(s.getOrDefault("expectedChips", ""));
            wedgeActive = Boolean.parseBoolean(s.get("wedgeActive"));
            String since = s.getOrDefault("wedgeSince", "");
            wedgeSince = since.isEmpty() ? null : Instant.parse(since);
            wedgeChips = ChipId.parseList(s.getOrDefault("wedgeChips", ""));
            driverReadyBefore = Boolean.parseBoolean(s.get("driverReadyBeforeWedge"));
            markersDirty = Boolean.parseBoolean(s.get("markersDirty")) || wedgeActive;
            probeErrorsInRow = Integer.parseInt(s.getOrDefault("probeErrorsInRow", "0"));
            probeDegraded = Boolean.parseBoolean(s.get("probeDegraded"));
            for (Map.Entry<String, String> e : s.entrySet()) {
                String k = e.getKey();
                if (k.startsWith("chip.") && k.endsWith(".failures")) {
                    ChipId id = ChipId.parse(k.substring(5, k.length() - ".failures".length()));
                    ChipState c = chips.computeIfAbsent(id, ChipState::new);
                    c.consecutiveFailures = Integer.parseInt(e.getValue());
                    c.wedged = Boolean.parseBoolean(s.get("chip." + id + ".wedged"));
                }
            }
            if (wedgeActive && wedgeSince == null) {
                wedgeSince = time.now();
            }
            lastPersisted = new LinkedHashMap<>(s);
            LOG.log(Level.INFO, "health-watch state of boot " + markers.bootId() + " restored: expected chips "
                    + ChipId.format(learned) + ", wedged " + ChipId.format(wedged()) + ", strikes " + strikes());
        } catch (IllegalArgumentException | DateTimeParseException e) {
            LOG.log(Level.ERROR, "health-watch state file in " + markers.folder() + " is invalid (" + e
                    + "): starting from a clean state");
            chips.clear();
            learned = new TreeSet<>();
            wedgeActive = false;
            wedgeSince = null;
            wedgeChips = new TreeSet<>();
            driverReadyBefore = false;
            markersDirty = false;
            probeErrorsInRow = 0;
            probeDegraded = false;
        }
    }

    private String strikes() {
        StringBuilder sb = new StringBuilder();
        for (ChipState c : chips.values()) {
            if (c.consecutiveFailures > 0) {
                sb.append(sb.length() == 0 ? "" : ",").append(c.id).append('=').append(c.consecutiveFailures);
            }
        }
        return sb.length() == 0 ? "none" : sb.toString();
    }

    private void notifyExpected() {
        List<ChipState> states = new ArrayList<>();
        synchronized (this) {
            SortedSet<ChipId> expected = expected(config);
            publishedExpected = new TreeSet<>(expected);
            for (ChipId id : expected) {
                states.add(chips.computeIfAbsent(id, ChipState::new));
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
        return chips.get(id);
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

    /** @return the current probe */
    /**
     * @param timeout the configured timeout, in (simulated) time
     * @param scale simulated seconds per wall second
     * @return the wall-clock timeout to give the probe, at least 100 ms
     */
    static Duration wallTimeout(Duration timeout, double scale) {
        if (scale <= 1.0) {
            return timeout;
        }
        return Duration.ofMillis(Math.max(100, (long) (timeout.toMillis() / scale)));
    }

    private volatile java.util.function.Supplier<String> driverNotLoaded = () -> null;

    /**
     * @param check returns {@code null} when a driver is loaded (or unknown), else why the chips must not be judged
     *        now; such a probe is a probe error, never a strike
     */
    public void driverLoaded(java.util.function.Supplier<String> check) {
        this.driverNotLoaded = check == null ? () -> null : check;
    }

    ChipProbe probe() {
        return probe;
    }

    /** @return whether a wedge is active (markers written, not yet suppressed) */
    public synchronized boolean wedgeActive() {
        return wedgeActive;
    }

    // ---- HealthWatchMXBean ----

    @Override
    public long getIntervalSeconds() {
        return config.interval().toSeconds();
    }

    @Override
    public long getTimeoutSeconds() {
        return config.timeout().toSeconds();
    }

    @Override
    public int getFailureThreshold() {
        return config.failureThreshold();
    }

    @Override
    public String getMethod() {
        return config.method();
    }

    @Override
    public synchronized String getExpectedChips() {
        return ChipId.format(expected(config));
    }

    @Override
    public synchronized String getWedgedChips() {
        return ChipId.format(wedged());
    }

    @Override
    public String getLastProbeTime() {
        Instant t = lastProbeTime;
        return t == null ? null : t.toString();
    }

    @Override
    public long getLastProbeDurationMs() {
        return lastDurationMs;
    }

    @Override
    public String getLastVerdict() {
        Classification c = lastVerdict;
        return c == null ? null : c.label();
    }

    @Override
    public String getLastError() {
        return lastError;
    }

    @Override
    public String getDriverVersion() {
        return driverVersion;
    }

    @Override
    public long getProbeErrorCount() {
        return probeErrorCount;
    }

    @Override
    public int getProbeErrorsInRow() {
        return probeErrorsInRow;
    }

    @Override
    public boolean isProbeDegraded() {
        return probeDegraded;
    }

    @Override
    public String getLastRawOutput() {
        return lastRaw;
    }

    @Override
    public String probeNow() {
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
}
