package io.npulifecycle.probe.internal;

import io.npulifecycle.clock.testing.ManualTimeSource;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.markers.internal.FileMarkerStore;
import io.npulifecycle.testing.support.Configs;
import io.npulifecycle.testing.support.RecordedRefusals;

/** Configuration validation of the component, the raw output kept for the MBean, and the health check. */
@Timeout(60)
class HealthWatchComponentTest {

    @TempDir
    Path dir;

    private final List<String> errors = new CopyOnWriteArrayList<>();
    private final Logger jul = Logger.getLogger(HealthWatchComponent.class.getName());
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= java.util.logging.Level.SEVERE.intValue()) {
                errors.add(r.getMessage());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void setUp() {
        jul.addHandler(handler);
    }

    @AfterEach
    void tearDown() {
        jul.removeHandler(handler);
    }

    /** A Config as DS builds it: the metatype defaults and some values. */
    static HealthWatchComponent.Config config(Map<String, Object> values) {
        return Configs.of(HealthWatchComponent.Config.class, values);
    }

    private static ChipProbe probeNamed(String method) {
        return new ChipProbe() {
            @Override
            public String method() {
                return method;
            }

            @Override
            public ProbeResult probe(Duration timeout) {
                return ProbeResult.whole(Classification.PROBE_ERROR, "test", null);
            }
        };
    }

    private static final Map<String, Object> FILE = Map.of(HealthWatchComponent.FILE_PROPERTY,
            "file:/x/etc/io.npulifecycle.probe.cfg");

    @Test
    void invalidConfigurationIsLoggedWithItsFile() {
        HealthWatchComponent c = new HealthWatchComponent();
        Map<String, Object> o = new HashMap<>();
        o.put("timeout", 90.0);
        assertNull(c.validate(config(o), FILE, "keeping the previous configuration"));
        assertEquals(List.of("PID io.npulifecycle.probe (file:/x/etc/io.npulifecycle.probe.cfg) key timeout: must be "
                + "below interval (60 s), got 90; keeping the previous configuration"), errors);
        errors.clear();
        for (Map<String, Object> bad : List.<Map<String, Object>>of(Map.of("failureThreshold", 0),
                Map.of("interval", 1e308), Map.of("expectedChips", "0:x"),
                Map.of("npuSmiEnvironment", new String[] {"LD LIBRARY=1"}))) {
            assertNull(c.validate(config(bad), FILE, "keeping the previous configuration"), bad.toString());
        }
        assertEquals(4, errors.size(), errors.toString());
        for (String e : errors) {
            assertTrue(e.startsWith("PID io.npulifecycle.probe (file:/x/etc/io.npulifecycle.probe.cfg) key "), e);
        }
        assertTrue(errors.get(3).contains("key npuSmiEnvironment"), errors.get(3));
    }

    @Test
    void everyRefusedKeyIsLoggedAndReportedToTheConfigurationMBean() throws Exception {
        HealthWatchComponent c = new HealthWatchComponent();
        RecordedRefusals refusals = new RecordedRefusals();
        c.bindRefusals(refusals);
        Map<String, Object> props = new HashMap<>(FILE);
        props.put("failureThreshold", 0);
        props.put("maxOutputBytes", 1);
        Map<String, Object> bad = Map.of("failureThreshold", 0, "expectedChips", "0:x", "maxOutputBytes", 1);
        assertNull(c.validate(config(bad), props, "keeping the previous configuration"));
        List<io.npulifecycle.api.management.ConfigurationRefusals.Refusal> reported = refusals.refusals();
        assertEquals(List.of("failureThreshold", "expectedChips", "maxOutputBytes"),
                reported.stream().map(io.npulifecycle.api.management.ConfigurationRefusals.Refusal::key).toList());
        assertEquals(0, reported.get(0).value());
        assertEquals("must be >= 1, got 0", reported.get(0).reason());
        assertEquals(1, errors.size(), errors.toString());
        assertTrue(errors.get(0).contains("key failureThreshold: must be >= 1, got 0; key expectedChips: ")
                && errors.get(0).contains("; key maxOutputBytes: must be between 4096 and "), errors.get(0));
    }

    @Test
    void aConfigurationRefusedAtActivationGivesWayToTheMetatypeDefaults() throws Exception {
        assertEquals(HealthWatchComponent.parse(config(Map.of())), HealthWatchComponent.defaults(),
                "the defaults the component falls back on are the ones DS gives for an empty configuration");
        assertEquals(java.time.Duration.ofSeconds(60), HealthWatchComponent.defaults().interval());
        assertEquals(NpuSmiParser.DEFAULT_MAX_BYTES, HealthWatchComponent.defaults().maxOutputBytes());
    }

    @Test
    void unknownMethodIsRejectedUnlessAChipProbeServiceProvidesIt() {
        HealthWatchComponent c = new HealthWatchComponent();
        assertNull(c.validate(config(Map.of("method", "npu_smi")), FILE, "keeping the previous configuration"));
        assertEquals(1, errors.size());
        assertTrue(errors.get(0).contains("(file:/x/etc/io.npulifecycle.probe.cfg) key method: 'npu_smi'"),
                errors.get(0));
        assertNotNull(c.validate(config(Map.of("method", "dcmi")), FILE, "x"));
        assertNotNull(c.validate(config(Map.of()), FILE, "x"));
        c.bindProbe(probeNamed("simulated"));
        assertEquals("simulated", c.validate(config(Map.of("method", "simulated")), null, "x").method());
        assertTrue(c.hasProbe("simulated"));
        assertTrue(!c.hasProbe("npu_smi"));
    }

    @Test
    void rawOutputForTheMbeanHasNoControlCharactersAndIsValidUtf8() throws Exception {
        String binary = "| npu-smi |\r\n\u0000\u0001\u001b[31m\u007f\u0085ok\tend\n\ud800x";
        ProbeResult r = ProbeResult.whole(Classification.PROBE_ERROR, "binary", binary);
        HealthWatchEngine e = engine(config(Map.of()), probeReturning(r));
        e.runOnce();
        String raw = e.getLastRawOutput();
        assertEquals("| npu-smi |?\n???[31m??ok\tend\n?x", raw);
        for (char ch : raw.toCharArray()) {
            assertTrue(!Character.isISOControl(ch) || ch == '\n' || ch == '\t', "control char " + (int) ch);
        }
        StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).encode(java.nio.CharBuffer.wrap(raw));
    }

    @Test
    void healthCheckIsCriticalWarnOrOk() throws Exception {
        HealthWatchComponent c = new HealthWatchComponent();
        ProbeResult error = ProbeResult.whole(Classification.PROBE_ERROR, "npu-smi printed nothing", null);
        HealthWatchEngine e = engine(config(Map.of()), probeReturning(error));
        HealthWatchCheck check = new HealthWatchCheck(() -> e, c::hasProbe);
        assertEquals(Result.Status.OK, check.execute().getStatus());
        for (int i = 0; i < 3; i++) {
            e.runOnce();
        }
        assertEquals(Result.Status.WARN, check.execute().getStatus());
        // a method without a probe
        HealthWatchComponent.Config sim = config(Map.of("method", "simulated"));
        ChipProbe simulated = probeNamed("simulated");
        c.bindProbe(simulated);
        WatchConfig simCfg = c.validate(sim, null, "x");
        e.reconfigure(simCfg, probeReturning(error));
        c.unbindProbe(simulated);
        assertEquals(Result.Status.CRITICAL, new HealthWatchCheck(() -> e, c::hasProbe).execute().getStatus());
        // marker store not writable
        HealthWatchEngine gone = new HealthWatchEngine(new ManualTimeSource(Instant.parse("2026-11-30T10:00:00Z")),
                new FileMarkerStore(dir.resolve("missing"), "boot-1", Instant::now, ch -> { }), Runnable::run,
                (t, p) -> { }, null, c.validate(config(Map.of()), null, "x"), probeReturning(error));
        Result r = new HealthWatchCheck(() -> gone, c::hasProbe).execute();
        assertEquals(Result.Status.CRITICAL, r.getStatus(), r.toString());
    }

    private HealthWatchEngine engine(HealthWatchComponent.Config raw, ChipProbe p) {
        WatchConfig cfg = new HealthWatchComponent().validate(raw, null, "x");
        ManualTimeSource clock = new ManualTimeSource(Instant.parse("2026-11-30T10:00:00Z"));
        return new HealthWatchEngine(clock, new FileMarkerStore(dir, "boot-1", clock::now, ch -> { }), Runnable::run,
                (t, props) -> { }, null, cfg, p);
    }

    private static ChipProbe probeReturning(ProbeResult r) {
        return new ChipProbe() {
            @Override
            public String method() {
                return "npu-smi";
            }

            @Override
            public ProbeResult probe(Duration timeout) {
                return r;
            }
        };
    }
}
