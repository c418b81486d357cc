package io.npulifecycle.probe.internal;

import io.npulifecycle.clock.testing.ManualTimeSource;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.markers.MarkerChange;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.HealthWatchEvents;
import io.npulifecycle.api.probe.HealthWatchMXBean;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.markers.internal.FileMarkerStore;

/** The health-watch state machine with a manual clock, a fake probe and the real file marker store. */
@Timeout(60)
class HealthWatchEngineTest {

    private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    private static final Duration MINUTE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private ManualTimeSource clock;
    private FileMarkerStore markers;
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final List<Map<String, Object>> eventProps = new CopyOnWriteArrayList<>();
    private final List<MarkerChange> markerChanges = new CopyOnWriteArrayList<>();
    private final Deque<Supplier<ProbeResult>> script = new ArrayDeque<>();
    private final List<Instant> probeTimes = new ArrayList<>();
    private HealthWatchEngine engine;

    private final ChipProbe fake = new ChipProbe() {
        @Override
        public String method() {
            return "npu-smi";
        }

        @Override
        public ProbeResult probe(Duration timeout) {
            probeTimes.add(clock.now());
            Supplier<ProbeResult> next = script.poll();
            if (next == null) {
                throw new AssertionError("probe ran more often than scripted");
            }
            return next.get();
        }
    };

    @BeforeEach
    void setUp() {
        clock = new ManualTimeSource(T0);
        markers = store("boot-1");
    }

    private FileMarkerStore store(String boot) {
        FileMarkerStore s = new FileMarkerStore(dir, boot, clock::now, markerChanges::add);
        return s;
    }

    private static WatchConfig config(String expected, double timeoutSeconds) throws Exception {
        return WatchConfig.validate(60, timeoutSeconds, 3, 3, "npu-smi", new String[] {"npu-smi", "info"},
                new String[0], "/x/libdcmi.so", expected, false, true, NpuSmiParser.DEFAULT_MAX_BYTES);
    }

    private HealthWatchEngine start(WatchConfig cfg, ChipProbe probe) {
        engine = new HealthWatchEngine(clock, markers, Runnable::run, (t, p) -> {
            events.add(t);
            eventProps.add(p);
        }, null, cfg, probe);
        engine.start();
        return engine;
    }

    private static Supplier<ProbeResult> fixture(String name, int exit) {
        return () -> NpuSmiParser.parse(Fixtures.text(name), exit, ProbeOptions.DEFAULTS);
    }

    private static final Supplier<ProbeResult> OK2 = fixture("910b2_npu-smi-24.1.0.3_healthy.txt", 0);
    private static final Supplier<ProbeResult> E8020 = fixture("error_ret-8020_device-occupied.txt", 1);
    private static final Supplier<ProbeResult> E8005 = fixture("error_ret-8005_dcmi-internal.txt", 1);

    /** An npu-smi table listing {@code chips} with the given health. */
    private static Supplier<ProbeResult> table(String health, String chips) {
        StringBuilder sb = new StringBuilder("| npu-smi 25.2.0  Version: 25.2.0 |\n| NPU Name | Health | Power |\n| Chip | Bus-Id | AICore |\n+====+====+\n");
        for (ChipId c : ChipId.parseList(chips)) {
            sb.append("| ").append(c.npu()).append(" 910B | ").append(health).append(" | 90 |\n| ")
                    .append(c.chip()).append(" | 0000:01:00.0 | 0 |\n+----+----+\n");
        }
        String text = sb.toString();
        return () -> NpuSmiParser.parse(text, 0, ProbeOptions.DEFAULTS);
    }

    private void driverReady() throws Exception {
        markers.write(Markers.DRIVER_READY, Map.of("version", "24.1.0.3"), "driver");
    }

    /** Runs the first probe (scheduled at once) or the next one (one interval later). */
    private void firstProbe() {
        clock.advance(Duration.ZERO);
    }

    private void nextProbe() {
        clock.advance(MINUTE);
    }

    private MarkerRead reboot() {
        return markers.read(Markers.REBOOT_REQUIRED);
    }

    /** The footprint benchmark (docs/benchmarks.md) times the node agent's start to this line: once per engine. */
    @Test
    void theFirstCompletedProbeIsLoggedOnceWithItsDurationAndTheJvmUptime() throws Exception {
        try (LogLines log = new LogLines(HealthWatchEngine.class.getName())) {
            script.addAll(List.of(OK2, OK2));
            start(config("", 20), fake);
            assertTrue(log.messages().stream().noneMatch(l -> l.startsWith(HealthWatchEngine.FIRST_PROBE_LOG)),
                    "before the probe");
            firstProbe();
            nextProbe();
            List<String> first = log.messages().stream().filter(l -> l.startsWith(HealthWatchEngine.FIRST_PROBE_LOG))
                    .toList();
            assertEquals(1, first.size(), String.valueOf(log.messages()));
            assertTrue(first.get(0).matches(HealthWatchEngine.FIRST_PROBE_LOG
                    + ": method npu-smi, 2 chips answered, verdict \\w+, probe took \\d+ ms, JVM uptime \\d+ ms"),
                    first.get(0));
        }
    }

    @Test
    void probeErrorsRaiseAndClearProbeDegradedButNeverWedge() throws Exception {
        driverReady();
        script.addAll(List.of(OK2, E8020, E8020, E8020, OK2));
        start(config("", 20), fake);
        firstProbe();
        nextProbe();
        nextProbe();
        assertFalse(engine.isProbeDegraded());
        nextProbe();
        assertTrue(engine.isProbeDegraded(), "third probe error in a row");
        assertEquals(3, engine.getProbeErrorsInRow());
        assertEquals(0, engine.chip(new ChipId(0, 0)).getConsecutiveFailures(), "no strike from -8020");
        nextProbe();
        assertFalse(engine.isProbeDegraded(), "cleared by the good probe");
        assertEquals(3, engine.getProbeErrorCount());
        assertEquals(List.of(HealthWatchEvents.TOPIC_PROBE_DEGRADED, HealthWatchEvents.TOPIC_PROBE_DEGRADED), events);
        assertEquals(true, eventProps.get(0).get(HealthWatchEvents.PROP_PROBE_DEGRADED));
        assertEquals(false, eventProps.get(1).get(HealthWatchEvents.PROP_PROBE_DEGRADED));
        assertTrue(markers.read(Markers.DRIVER_READY).present());
        assertFalse(reboot().present());
        assertFalse(engine.wedgeActive());
    }

    @Test
    void noStrikeWhileNoDriverModuleIsLoaded() throws Exception {
        driverReady();
        script.addAll(List.of(OK2, E8005, E8005, E8005, E8005));
        start(config("", 20), fake);
        firstProbe();
        engine.driverLoaded(() -> "no NPU driver module is loaded");
        nextProbe();
        nextProbe();
        nextProbe();
        nextProbe();
        assertEquals(0, engine.chip(new ChipId(1, 0)).getConsecutiveFailures(), "a boot without a driver is no wedge");
        assertFalse(reboot().present());
        assertTrue(engine.getLastError().contains("no NPU driver module"), engine.getLastError());
    }

    /** Real clock: the configured deadline; compressed: scaled down to a floor of 1 s, never above the deadline. */
    @Test
    void theProbeDeadlineShrinksWithACompressedClockDownToAFloor() {
        assertEquals(Duration.ofSeconds(20), ProbeRunner.wallTimeout(Duration.ofSeconds(20), 1.0));
        assertEquals(Duration.ofSeconds(2), ProbeRunner.wallTimeout(Duration.ofSeconds(20), 10.0));
        assertEquals(Duration.ofSeconds(1), ProbeRunner.wallTimeout(Duration.ofSeconds(20), 60.0));
        assertEquals(Duration.ofSeconds(1), ProbeRunner.wallTimeout(Duration.ofSeconds(20), 240.0));
        assertEquals(Duration.ofMillis(500), ProbeRunner.wallTimeout(Duration.ofMillis(500), 60.0));
    }

    @Test
    void threeFailuresWedgeExactlyAtTheThirdOnSchedule() throws Exception {
        driverReady();
        script.addAll(List.of(OK2, E8005, E8005, E8005));
        start(config("", 20), fake);
        firstProbe();
        assertEquals("0:0,1:0", engine.getExpectedChips(), "learned at the first good probe");
        nextProbe();
        clock.advance(MINUTE.minusSeconds(1));
        assertEquals(2, probeTimes.size(), "not before the interval");
        clock.advance(Duration.ofSeconds(1));
        assertEquals(2, engine.chip(new ChipId(1, 0)).getConsecutiveFailures());
        assertTrue(markers.read(Markers.DRIVER_READY).present(), "two strikes: nothing yet");
        assertFalse(reboot().present());
        assertTrue(events.isEmpty());
        nextProbe();
        assertEquals(List.of(T0, T0.plus(MINUTE), T0.plusSeconds(120), T0.plusSeconds(180)), probeTimes);
        assertFalse(markers.read(Markers.DRIVER_READY).present(), "driver-ready removed");
        MarkerRead r = reboot();
        assertTrue(r.present());
        assertEquals(Map.of("reason", "recovery", "chips", "0:0,1:0", "since", T0.plusSeconds(180).toString()),
                r.marker().content());
        assertEquals("health-watch", r.marker().writer());
        assertEquals("boot-1", r.marker().bootId());
        assertEquals(List.of(HealthWatchEvents.TOPIC_WEDGED), events);
        assertEquals("0:0,1:0", eventProps.get(0).get(HealthWatchEvents.PROP_CHIPS));
        assertEquals("0:0,1:0", engine.getWedgedChips());
        assertTrue(engine.chip(new ChipId(0, 0)).isWedged());
        // marker changes published for the rebooter: driver-ready removed, then reboot-required written
        List<MarkerChange> mine = markerChanges.subList(1, markerChanges.size());
        assertEquals(new MarkerChange("driver-ready", false, null, "health-watch", 2), mine.get(0));
        assertEquals(new MarkerChange("reboot-required", true, "recovery", "health-watch", 3), mine.get(1));
        assertEquals(2, mine.size());
    }

    @Test
    void recoveryBeforeRebootSuppressesTheWedge() throws Exception {
        driverReady();
        script.addAll(List.of(OK2, E8005, E8005, E8005, E8005, OK2, OK2));
        start(config("", 20), fake);
        firstProbe();
        nextProbe();
        nextProbe();
        nextProbe();
        assertTrue(reboot().present());
        nextProbe();
        assertEquals(4, engine.chip(new ChipId(0, 0)).getConsecutiveFailures());
        assertEquals(1, events.size(), "a further strike does not re-announce the wedge");
        nextProbe();
        assertFalse(reboot().present(), "recovery marker removed");
        MarkerRead dr = markers.read(Markers.DRIVER_READY);
        assertTrue(dr.present(), "driver-ready restored: it was present before the wedge");
        assertEquals("health-watch", dr.marker().writer());
        assertEquals(List.of(HealthWatchEvents.TOPIC_WEDGED, HealthWatchEvents.TOPIC_SUPPRESSED), events);
        assertEquals(true, eventProps.get(1).get(HealthWatchEvents.PROP_DRIVER_READY_RESTORED));
        assertEquals("0:0,1:0", eventProps.get(1).get(HealthWatchEvents.PROP_CHIPS));
        assertFalse(engine.wedgeActive());
        assertEquals(0, engine.chip(new ChipId(0, 0)).getConsecutiveFailures());
        long changes = markers.changeCount();
        nextProbe();
        assertEquals(changes, markers.changeCount(), "a healthy node writes nothing");
    }

    @Test
    void suppressionDoesNotInventDriverReady() throws Exception {
        script.addAll(List.of(OK2, E8005, E8005, E8005, OK2));
        start(config("", 20), fake);
        for (int i = 0; i < 4; i++) {
            clock.advance(i == 0 ? Duration.ZERO : MINUTE);
        }
        assertTrue(reboot().present());
        nextProbe();
        assertFalse(reboot().present());
        assertFalse(markers.read(Markers.DRIVER_READY).present(), "driver-ready was absent before the wedge");
        assertEquals(false, eventProps.get(1).get(HealthWatchEvents.PROP_DRIVER_READY_RESTORED));
    }

    @Test
    void hangingNpuSmiTimesOutStrikesAndTheNextProbeRunsOnTime() throws Exception {
        WatchConfig cfg = config("0:0", 0.5);
        NpuSmiProbe hanging = new NpuSmiProbe(List.of("sleep", "30"), Map.of(), NpuSmiParser.DEFAULT_MAX_BYTES, cfg.options());
        List<Instant> starts = new ArrayList<>();
        ChipProbe timed = new ChipProbe() {
            @Override
            public String method() {
                return "npu-smi";
            }

            @Override
            public ProbeResult probe(Duration timeout) {
                starts.add(clock.now());
                return hanging.probe(timeout);
            }
        };
        start(cfg, timed);
        firstProbe();
        ChipMXBean chip = new ChipMBean(engine.chip(new ChipId(0, 0)));
        assertEquals(1, chip.getConsecutiveFailures(), "a hang is a strike (timeoutIsFailure=true)");
        assertTrue(chip.getLastError().contains("did not answer within 500 ms"), chip.getLastError());
        assertEquals("failed", engine.getLastVerdict());
        assertEquals(1, clock.pending(), "next probe scheduled");
        nextProbe();
        assertEquals(List.of(T0, T0.plus(MINUTE)), starts, "the next probe runs on time");
        assertEquals(2, chip.getConsecutiveFailures());
    }

    @Test
    void warningFiveTimesIsDegradedWithoutStrike() throws Exception {
        driverReady();
        for (int i = 0; i < 5; i++) {
            script.add(fixture("910a_npu-smi-23.0.rc3_warning.txt", 0));
        }
        start(config("", 20), fake);
        firstProbe();
        for (int i = 0; i < 4; i++) {
            nextProbe();
        }
        ChipMXBean c = new ChipMBean(engine.chip(new ChipId(1, 0)));
        assertEquals("degraded", c.getClassification());
        assertEquals("Warning", c.getHealth());
        assertEquals(0, c.getConsecutiveFailures());
        assertFalse(c.isWedged());
        assertEquals("degraded", engine.getLastVerdict());
        assertTrue(events.isEmpty());
        assertTrue(markers.read(Markers.DRIVER_READY).present());
        assertFalse(reboot().present());
        assertTrue(script.isEmpty());
    }

    @Test
    void oneChipOfEightFailingOnlyThatChipCounts() throws Exception {
        String eight = "0:0,1:0,2:0,3:0,4:0,5:0,6:0,7:0";
        String seven = "0:0,1:0,2:0,4:0,5:0,6:0,7:0";
        script.addAll(List.of(table("OK", eight), table("OK", seven), table("OK", seven), table("OK", seven)));
        start(config(eight, 20), fake);
        firstProbe();
        nextProbe();
        nextProbe();
        nextProbe();
        for (ChipId id : ChipId.parseList(eight)) {
            ChipState s = engine.chip(id);
            if (id.npu() == 3) {
                assertEquals(3, s.getConsecutiveFailures());
                assertTrue(s.isWedged());
                assertEquals("expected chip absent from the probe output", s.getLastError());
            } else {
                assertEquals(0, s.getConsecutiveFailures(), id.toString());
                assertFalse(s.isWedged());
                assertEquals("healthy", s.getClassification());
            }
        }
        assertEquals("3:0", reboot().marker().content().get("chips"));
    }

    @Test
    void expectedChipThatDisappearsStrikes() throws Exception {
        Supplier<ProbeResult> only0 = table("OK", "0:0");
        script.addAll(List.of(OK2, only0, only0, only0));
        start(config("", 20), fake);
        firstProbe();
        assertEquals("0:0,1:0", engine.getExpectedChips());
        nextProbe();
        assertEquals(1, engine.chip(new ChipId(1, 0)).getConsecutiveFailures());
        nextProbe();
        nextProbe();
        assertEquals("1:0", engine.getWedgedChips());
        assertEquals("1:0", reboot().marker().content().get("chips"));
    }

    @Test
    void neverOverwritesOrRemovesAnUpgradeMarker() throws Exception {
        driverReady();
        markers.write(Markers.REBOOT_REQUIRED, Map.of("reason", "upgrade", "chips", "0:0,1:0"), "upgrade");
        script.addAll(List.of(OK2, E8005, E8005, E8005, OK2));
        start(config("", 20), fake);
        firstProbe();
        nextProbe();
        nextProbe();
        nextProbe();
        assertTrue(engine.wedgeActive());
        MarkerRead r = reboot();
        assertEquals("upgrade", r.marker().reason(), "upgrade marker kept");
        assertEquals("upgrade", r.marker().writer());
        assertFalse(markers.read(Markers.DRIVER_READY).present(), "driver-ready still removed: a chip is wedged");
        nextProbe();
        assertEquals("upgrade", reboot().marker().reason(), "suppression does not touch it either");
        assertTrue(markers.read(Markers.DRIVER_READY).present());
    }

    @Test
    void strikesAndWedgeSurviveARestartWithinTheBootButNotAReboot() throws Exception {
        script.addAll(List.of(OK2, E8005, E8005));
        start(config("", 20), fake);
        firstProbe();
        nextProbe();
        nextProbe();
        engine.stop();
        assertEquals(0, clock.pending(), "stopped: nothing scheduled");
        // bundle update / runtime restart: a new engine and a new store instance on the same folder and boot
        markers = store("boot-1");
        script.add(E8005);
        start(config("", 20), fake);
        assertEquals(2, engine.chip(new ChipId(0, 0)).getConsecutiveFailures(), "strikes restored");
        assertEquals("0:0,1:0", engine.getExpectedChips(), "learned expected chips restored");
        firstProbe();
        assertTrue(reboot().present(), "wedged at the third strike across the restart");
        engine.stop();
        // after the restart the wedge state is known too: a healthy answer suppresses
        markers = store("boot-1");
        script.add(OK2);
        start(config("", 20), fake);
        assertTrue(engine.wedgeActive());
        firstProbe();
        assertFalse(reboot().present());
        engine.stop();
        // a reboot (new boot id): nothing carried over
        markers = store("boot-2");
        script.add(E8005);
        start(config("", 20), fake);
        assertEquals("", engine.getExpectedChips());
        firstProbe();
        assertNull(engine.chip(new ChipId(0, 0)), "nothing expected yet on the new boot: no strike possible");
    }

    /**
     * Wedges chips 0:0 and 1:0 (driver-ready present before) with a store whose listener copies the marker folder the
     * moment {@code reboot-required} is written: the host as a SIGKILL of the node agent right after that write leaves
     * it (the kill point of agent-killed-recovery.yaml#recovery-killed-marker-written).
     *
     * @return the copy of the marker folder
     */
    private Path wedgeAndKillRightAfterTheRecoveryMarker() throws Exception {
        Path killed = Files.createDirectories(dir.resolve("at-the-kill"));
        markers = new FileMarkerStore(dir, "boot-1", clock::now, c -> {
            markerChanges.add(c);
            if (c.marker().equals(Markers.REBOOT_REQUIRED) && c.present()) {
                try (var files = Files.list(dir)) {
                    for (Path f : files.filter(Files::isRegularFile).toList()) {
                        Files.copy(f, killed.resolve(f.getFileName()));
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        });
        driverReady();
        script.addAll(List.of(OK2, E8005, E8005, E8005));
        start(config("", 20), fake);
        firstProbe();
        nextProbe();
        nextProbe();
        nextProbe();
        engine.stop();
        assertTrue(Files.exists(killed.resolve(Markers.REBOOT_REQUIRED)), "the kill came after the marker's write");
        return killed;
    }

    @Test
    void aKillRightAfterTheRecoveryMarkerLeavesAStateThatKnowsTheWedge() throws Exception {
        Path killed = wedgeAndKillRightAfterTheRecoveryMarker();
        String since = T0.plusSeconds(180).toString();
        // the restarted agent: its health-watch on the folder as the kill left it, same boot
        markers = new FileMarkerStore(killed, "boot-1", clock::now, markerChanges::add);
        events.clear();
        eventProps.clear();
        script.addAll(List.of(E8005, OK2));
        start(config("", 20), fake);
        assertTrue(engine.wedgeActive(), "the wedge was in the state file before its marker was written");
        assertEquals("0:0,1:0", engine.getWedgedChips());
        firstProbe();
        assertEquals(4, engine.chip(new ChipId(0, 0)).getConsecutiveFailures(), "strike 4, not a new wedge");
        assertEquals(List.of(), events, "the wedge is not declared a second time");
        assertEquals(since, reboot().marker().content().get("since"), "the same request: not written again");
        // the chips answer again before the reboot: suppression undoes the whole wedge, driver-ready included
        nextProbe();
        assertFalse(reboot().present(), "recovery marker removed");
        assertTrue(markers.read(Markers.DRIVER_READY).present(), "driver-ready restored: present before the wedge");
        assertEquals(List.of(HealthWatchEvents.TOPIC_SUPPRESSED), events);
        assertEquals(true, eventProps.get(0).get(HealthWatchEvents.PROP_DRIVER_READY_RESTORED));
    }

    @Test
    void chipsHealthyWhenTheKilledAgentIsBackLeaveNoRecoveryMarkerBehind() throws Exception {
        Path killed = wedgeAndKillRightAfterTheRecoveryMarker();
        // the chips answered again while no agent ran (a transient wedge): the restarted agent's first probe is good
        markers = new FileMarkerStore(killed, "boot-1", clock::now, markerChanges::add);
        events.clear();
        script.add(OK2);
        start(config("", 20), fake);
        firstProbe();
        assertFalse(reboot().present(), "a recovery marker of a wedge nobody knows would ask for a needless reboot");
        assertTrue(markers.read(Markers.DRIVER_READY).present(), "driver-ready restored: present before the wedge");
        assertEquals(List.of(HealthWatchEvents.TOPIC_SUPPRESSED), events);
        assertFalse(engine.wedgeActive());
    }

    @Test
    void probeRunsNeverOverlap() throws Exception {
        List<String> nested = new ArrayList<>();
        script.add(() -> {
            nested.add(engine.probeNow());
            nested.add(String.valueOf(engine.runOnce()));
            return OK2.get();
        });
        start(config("", 20), fake);
        firstProbe();
        assertEquals(List.of("already running", "false"), nested);
        assertEquals(1, probeTimes.size());
    }

    @Test
    void probeExceptionsAreProbeErrors() throws Exception {
        script.add(() -> {
            throw new IllegalStateException("boom");
        });
        start(config("0:0", 20), fake);
        firstProbe();
        assertEquals("probe-error", engine.getLastVerdict());
        assertEquals(0, engine.chip(new ChipId(0, 0)).getConsecutiveFailures());
        assertEquals(1, clock.pending(), "still scheduled");
    }

    @Test
    void markerFolderNotWritableIsLoggedAndRetried() throws Exception {
        Path file = Files.writeString(dir.resolve("not-a-folder"), "x");
        markers = new FileMarkerStore(file.resolve("npu-operator"), "boot-1", clock::now, markerChanges::add);
        script.addAll(List.of(OK2, E8005, E8005, E8005, E8005));
        start(config("", 20), fake);
        for (int i = 0; i < 4; i++) {
            clock.advance(i == 0 ? Duration.ZERO : MINUTE);
        }
        assertTrue(engine.wedgeActive());
        assertTrue(engine.getLastError().contains("cannot update markers"), engine.getLastError());
        nextProbe(); // retried, still failing, no exception
        assertEquals(1, clock.pending());
    }

    @Test
    void mbeansAreCompliantAndRender() throws Exception {
        script.addAll(List.of(OK2));
        start(config("", 20), fake);
        firstProbe();
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName hw = new ObjectName(HealthWatchMXBean.OBJECT_NAME + ",test=engine");
        ObjectName chip = new ObjectName("io.npulifecycle:type=Chip,name=npu1-chip0,test=engine");
        server.registerMBean(new StandardMBean(new HealthWatchMBean(engine), HealthWatchMXBean.class, true), hw);
        server.registerMBean(new StandardMBean(new ChipMBean(engine.chip(new ChipId(1, 0))), ChipMXBean.class,
                true), chip);
        try {
            assertEquals(60L, server.getAttribute(hw, "IntervalSeconds"));
            assertEquals("healthy", server.getAttribute(hw, "LastVerdict"));
            assertEquals("24.1.0.3", server.getAttribute(hw, "DriverVersion"));
            assertTrue(((String) server.getAttribute(hw, "LastRawOutput")).contains("910B2"));
            assertEquals(T0.toString(), server.getAttribute(hw, "LastProbeTime"));
            assertEquals("healthy", server.getAttribute(chip, "Classification"));
            assertEquals(T0.toString(), server.getAttribute(chip, "LastSeen"));
            script.add(OK2);
            assertEquals("started", server.invoke(hw, "probeNow", null, null));
            assertEquals(2, probeTimes.size());
        } finally {
            server.unregisterMBean(hw);
            server.unregisterMBean(chip);
        }
    }

    @Test
    void stateFileFormat() throws Exception {
        script.addAll(List.of(OK2, E8005));
        start(config("", 20), fake);
        firstProbe();
        nextProbe();
        Map<String, String> s = new LinkedHashMap<>(markers.readState(HealthWatchEngine.STATE_NAME));
        assertEquals("0:0,1:0", s.get("expectedChips"));
        assertEquals("1", s.get("chip.0:0.failures"));
        assertEquals("false", s.get("chip.0:0.wedged"));
        assertEquals("false", s.get("wedgeActive"));
        assertTrue(Files.readString(dir.resolve("health-watch.state")).startsWith("bootId=boot-1\n"));
    }

    @Test
    void aMalformedStateFileStartsCleanAndIsReplaced() throws Exception {
        markers.writeState(HealthWatchEngine.STATE_NAME,
                Map.of("expectedChips", "0:0,1:0", "chip.0:0.failures", "two", "wedgeActive", "true"));
        script.addAll(List.of(E8020));
        start(config("", 20), fake);
        assertEquals("", engine.getExpectedChips(), "nothing restored from an invalid file");
        assertFalse(engine.wedgeActive());
        assertNull(engine.chip(new ChipId(0, 0)));
        firstProbe();
        assertEquals("1", markers.readState(HealthWatchEngine.STATE_NAME).get("probeErrorsInRow"),
                "the clean state written over it");
        assertEquals("", markers.readState(HealthWatchEngine.STATE_NAME).get("expectedChips"));
        assertEquals(1, engine.getProbeErrorsInRow());
    }

    @Test
    void configurationValidationNamesPidAndKey() {
        String[] cmd = {"npu-smi", "info"};
        String[][] bad = {{"60", "60", "3", "interval"}, {"60", "70", "3", "timeout"}, {"60", "20", "0", "failureThreshold"},
            {"0", "20", "3", "interval"}, {"60", "-1", "3", "timeout"}};
        for (String[] b : bad) {
            try {
                WatchConfig.validate(Double.parseDouble(b[0]), Double.parseDouble(b[1]), Integer.parseInt(b[2]), 3,
                        "npu-smi", cmd, new String[0], "x", "", false, true, 1 << 20);
                throw new AssertionError("accepted " + String.join(",", b));
            } catch (WatchConfig.Invalid e) {
                assertTrue(e.getMessage().startsWith("PID io.npulifecycle.probe key "), e.getMessage());
                String expectedKey = b[3].equals("interval") && b[1].equals("60") ? "timeout" : b[3];
                assertTrue(e.getMessage().contains("key " + expectedKey) || e.getMessage().contains("key " + b[3]), e.getMessage());
            }
        }
        try {
            WatchConfig.validate(60, 20, 3, 3, "npu-smi", cmd, new String[0], "x", "0:0,zz", false, true, 1 << 20);
            throw new AssertionError("accepted bad expectedChips");
        } catch (WatchConfig.Invalid e) {
            assertTrue(e.getMessage().contains("key expectedChips"));
        }
    }

    @Test
    void reconfigureKeepsStateAndReschedules() throws Exception {
        script.addAll(List.of(OK2, E8005, E8005));
        start(config("", 20), fake);
        firstProbe();
        nextProbe();
        engine.reconfigure(WatchConfig.validate(30, 10, 2, 3, "npu-smi", new String[] {"npu-smi"}, new String[0], "x",
                "", false, true, 1 << 20), fake);
        clock.advance(Duration.ofSeconds(30));
        assertEquals(T0.plusSeconds(90), probeTimes.get(2), "new interval from now");
        assertTrue(engine.wedgeActive(), "new threshold 2 reached");
        assertTrue(reboot().present());
        assertEquals(Classification.FAILED.label(), engine.getLastVerdict());
    }
}
