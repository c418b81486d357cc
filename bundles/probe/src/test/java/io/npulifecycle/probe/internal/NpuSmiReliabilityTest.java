package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.clock.testing.ManualTimeSource;
import io.npulifecycle.markers.internal.FileMarkerStore;

/**
 * Reliability matrix (issue #7), category {@code npu-smi}: adversarial npu-smi outputs fed through the real path, end
 * to end: a shell script stands in for {@code npu-smi info} and is run by the real {@link NpuSmiProbe} (process,
 * output cap, timeout, process-tree kill), the real {@link NpuSmiParser}, the real {@link HealthWatchEngine} on a
 * manual clock for three probe intervals (the strike threshold) and the real {@link FileMarkerStore}. A garbled output
 * must give a probe error naming what was wrong, no strike toward a wedge, no {@code reboot-required} marker and the
 * {@code driver-ready} marker left in place. The real fixtures of {@code ../shared/fixtures} get the verdicts of its
 * README.
 */
@Timeout(120)
class NpuSmiReliabilityTest {

    static final ChipId C00 = new ChipId(0, 0);
    static final ChipId C10 = new ChipId(1, 0);
    static final String HEAD = "+----------------------------------------------------------------+\n"
            + "| npu-smi 25.2.0                   Version: 25.2.0               |\n"
            + "+---------------------------+---------------+--------------------+\n"
            + "| NPU   Name                | Health        | Power(W)    Temp(C)|\n"
            + "| Chip                      | Bus-Id        | AICore(%)          |\n"
            + "+===========================+===============+====================+\n";

    @TempDir
    static Path tmp;

    static String block(String npu, String health, String chip) {
        return "| " + npu + "     910B2               | " + health + "            | 96.4        37     |\n"
                + "| " + chip + "                         | 0000:C1:00.0  | 0                  |\n"
                + "+===========================+===============+====================+\n";
    }

    static final String HEALTHY = HEAD + block("0", "OK", "0") + block("1", "OK", "0");

    /** What one case ends in after three probes. */
    record Outcome(HealthWatchEngine engine, FileMarkerStore markers, long wallMs) {
        int strikes(ChipId c) {
            ChipState s = engine.chip(c);
            return s == null ? 0 : s.getConsecutiveFailures();
        }
    }

    private static int scripts;

    /** A fake npu-smi: {@code body} is shell, run with stdin closed like the real one. */
    static List<String> script(String body) throws IOException {
        Path p = tmp.resolve("npu-smi-" + (++scripts) + ".sh");
        Files.writeString(p, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
        return List.of(p.toString());
    }

    /** A fake npu-smi printing {@code bytes} and exiting with {@code exit}. */
    static List<String> printing(byte[] bytes, int exit) throws IOException {
        Path out = tmp.resolve("output-" + (scripts + 1) + ".bin");
        Files.write(out, bytes);
        return script("cat '" + out + "'\nexit " + exit);
    }

    static List<String> printing(String text, int exit) throws IOException {
        return printing(text.getBytes(StandardCharsets.UTF_8), exit);
    }

    /**
     * Runs the health-watch over {@code command} for three probes (first at once, then one every 60 s of the manual
     * clock), expecting chips 0:0 and 1:0, with a driver-ready marker in place beforehand.
     */
    static Outcome run(List<String> command, double timeoutSeconds, boolean timeoutIsFailure) throws Exception {
        return run(command, timeoutSeconds, timeoutIsFailure, "0:0,1:0");
    }

    /** As above with the expected chips pinned to {@code expected} ("" = learned at the first good probe). */
    static Outcome run(List<String> command, double timeoutSeconds, boolean timeoutIsFailure, String expected)
            throws Exception {
        Path dir = Files.createTempDirectory(tmp, "run");
        ManualTimeSource clock = new ManualTimeSource(Instant.parse("2026-11-30T10:00:00Z"));
        FileMarkerStore markers = new FileMarkerStore(dir, "boot-1", clock::now, null);
        markers.write(Markers.DRIVER_READY, Map.of("version", "25.2.0"), "driver");
        WatchConfig cfg = WatchConfig.validate(60, timeoutSeconds, 3, 3, "npu-smi", command.toArray(String[]::new),
                new String[0], "/x/libdcmi.so", expected, false, timeoutIsFailure, NpuSmiParser.DEFAULT_MAX_BYTES);
        NpuSmiProbe probe = new NpuSmiProbe(cfg.command(), Map.of(), cfg.maxOutputBytes(), cfg.options());
        HealthWatchEngine engine = new HealthWatchEngine(clock, markers, Runnable::run, (t, p) -> { }, null, cfg, probe);
        long t0 = System.nanoTime();
        engine.start();
        clock.advance(Duration.ZERO);
        clock.advance(Duration.ofSeconds(60));
        clock.advance(Duration.ofSeconds(60));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        engine.stop();
        return new Outcome(engine, markers, ms);
    }

    /** Probe error naming {@code errorPart}, no strike, no reboot-required marker, driver-ready untouched. */
    static void assertProbeErrorNoStrike(List<String> command, String errorPart) throws Exception {
        Outcome o = run(command, 5, true);
        String err = o.engine().getLastError();
        assertNotNull(err, "a probe error must be recorded");
        assertTrue(err.contains(errorPart), "error must say '" + errorPart + "': " + err);
        assertEquals("probe-error", o.engine().getLastVerdict(), err);
        assertEquals(3, o.engine().getProbeErrorsInRow(), err);
        assertTrue(o.engine().isProbeDegraded(), "three probe errors in a row: probe degraded, " + err);
        assertNoStrikeNoMarker(o);
    }

    static void assertNoStrikeNoMarker(Outcome o) {
        assertEquals(0, o.strikes(C00), "no strike for 0:0");
        assertEquals(0, o.strikes(C10), "no strike for 1:0");
        assertFalse(o.engine().wedgeActive(), "no wedge");
        assertFalse(o.markers().read(Markers.REBOOT_REQUIRED).present(), "no reboot-required marker");
        assertTrue(o.markers().read(Markers.DRIVER_READY).present(), "driver-ready left in place");
    }

    static DynamicTest test(String input, String expected, org.junit.jupiter.api.function.Executable body) {
        return DynamicTest.dynamicTest("npu-smi | " + input + " | " + expected, body);
    }

    @TestFactory
    Stream<DynamicTest> cases() {
        List<DynamicTest> l = new ArrayList<>();
        l.add(test("5 MiB of output", "probe error 'printed more than 1048576 bytes', process killed, no strike, no marker",
                () -> assertProbeErrorNoStrike(script("head -c 5242880 /dev/zero | tr '\\0' '|'"), "printed more than 1048576 bytes")));
        l.add(test("endless output (never exits)", "output cap hit within the timeout, probe error, no strike, no marker",
                () -> {
                    assertProbeErrorNoStrike(script("while :; do echo '| 0     910B2   | OK   | 96.4 |'; done"),
                            "printed more than");
                }));
        l.add(test("binary bytes with NULs", "probe error (not a table), no strike, no marker", () -> {
            byte[] b = new byte[64 * 1024];
            new java.util.Random(7).nextBytes(b);
            for (int i = 0; i < b.length; i += 17) {
                b[i] = 0;
            }
            assertProbeErrorNoStrike(printing(b, 0), "");
        }));
        l.add(test("NUL bytes inside a healthy table", "probe error or the healthy chips, never a strike", () -> {
            Outcome o = run(printing(HEALTHY.replace("OK ", "O\0K"), 0), 5, true);
            assertNoStrikeNoMarker(o);
        }));
        l.add(test("10,000 chips", "parsed; the 2 expected chips healthy, unexpected chips no strike, no marker", () -> {
            StringBuilder sb = new StringBuilder(HEAD);
            for (int npu = 0; npu < 5000; npu++) {
                for (int chip = 0; chip < 2; chip++) {
                    sb.append("| ").append(npu).append(" 910B2 | OK | 96.4 |\n| ").append(chip)
                            .append(" | 0000:C1:00.0 | 0 |\n+==+==+\n");
                }
            }
            Outcome o = run(printing(sb.toString(), 0), 5, true);
            assertNoStrikeNoMarker(o);
            assertEquals("healthy", o.engine().getLastVerdict(), o.engine().getLastError());
            assertEquals("0:0,1:0", o.engine().getExpectedChips(), "the pinned expectation is kept");
        }));
        l.add(test("negative NPU id -1", "probe error naming NPU id '-1', no strike, no marker",
                () -> assertProbeErrorNoStrike(printing(HEAD + block("0", "OK", "0") + block("-1", "OK", "0"), 0), "NPU id '-1'")));
        l.add(test("negative chip id -3", "probe error naming chip id '-3', no strike, no marker",
                () -> assertProbeErrorNoStrike(printing(HEAD + block("0", "OK", "-3") + block("1", "OK", "0"), 0), "chip id '-3'")));
        l.add(test("duplicate chip 0:0", "probe error 'chip 0:0 is listed twice', no strike, no marker",
                () -> assertProbeErrorNoStrike(printing(HEAD + block("0", "OK", "0") + block("0", "OK", "0") + block("1", "OK", "0"), 0),
                        "chip 0:0 is listed twice")));
        l.add(test("table truncated inside a chip block", "probe error 'output ends inside the chip block', no strike, no marker",
                () -> assertProbeErrorNoStrike(printing(HEAD + block("0", "OK", "0")
                        + "| 1     910B2               | OK            | 96.4        37     |\n", 0), "output ends inside the chip block")));
        l.add(test("wrong column count (Health column missing)", "probe error, no strike, no marker", () -> {
            String text = HEAD + "| 0     910B2               | 96.4        37     |\n| 0     | 0000:C1:00.0 |\n+===+\n"
                    + "| 1     910B2               | 96.4        37     |\n| 0     | 0000:C2:00.0 |\n+===+\n";
            assertProbeErrorNoStrike(printing(text, 0), "");
        }));
        l.add(test("unknown Health value 'Unknown'", "probe error naming the value, no strike, no marker",
                () -> assertProbeErrorNoStrike(printing(HEAD + block("0", "OK", "0") + block("1", "Unknown", "0"), 0),
                        "unknown Health value 'Unknown'")));
        l.add(test("empty output, exit 0", "probe error 'printed nothing', no strike, no marker",
                () -> assertProbeErrorNoStrike(printing("", 0), "printed nothing")));
        l.add(test("non-UTF-8 bytes (Latin-1, GBK) around the table", "healthy chips parsed or a probe error, no strike, no marker", () -> {
            byte[] gbk = "设备".getBytes(java.nio.charset.Charset.forName("GBK"));
            byte[] latin = "\u00e9\u00e8\u00ff".getBytes(StandardCharsets.ISO_8859_1);
            byte[] table = HEALTHY.getBytes(StandardCharsets.UTF_8);
            byte[] all = new byte[gbk.length + latin.length + table.length];
            System.arraycopy(gbk, 0, all, 0, gbk.length);
            System.arraycopy(latin, 0, all, gbk.length, latin.length);
            System.arraycopy(table, 0, all, gbk.length + latin.length, table.length);
            assertNoStrikeNoMarker(run(printing(all, 0), 5, true));
        }));
        l.add(test("exit code 3 with a healthy-looking table", "probe error 'exited with code 3', no strike, no marker",
                () -> assertProbeErrorNoStrike(printing(HEALTHY, 3), "exited with code 3")));
        l.add(test("hangs forever, timeoutIsFailure=false", "killed at the 1 s timeout, probe error, no strike, no marker", () -> {
            Outcome o = run(script("sleep 600"), 1, false);
            assertTrue(o.engine().getLastError().contains("did not answer within 1000 ms"), o.engine().getLastError());
            assertNoStrikeNoMarker(o);
            assertTrue(o.wallMs() < 30_000, "three 1 s timeouts took " + o.wallMs() + " ms");
        }));
        l.add(test("hangs once then healthy (default timeoutIsFailure=true)", "one strike (documented wedge symptom) cleared by the next probe, no marker", () -> {
            Path flag = tmp.resolve("hung-once");
            Outcome o = run(script("if [ ! -e '" + flag + "' ]; then touch '" + flag + "'; sleep 600; fi\ncat <<'EOF'\n" + HEALTHY + "EOF"), 1, true);
            assertEquals("healthy", o.engine().getLastVerdict(), o.engine().getLastError());
            assertNoStrikeNoMarker(o);
        }));
        l.add(test("binary missing (exit 127)", "probe error 'missing or not executable', no strike, no marker",
                () -> assertProbeErrorNoStrike(List.of(tmp.resolve("no-such-npu-smi").toString()), "")));
        l.add(test("prompts for input on stdin", "stdin is closed: EOF, probe error, no strike, no marker",
                () -> assertProbeErrorNoStrike(script("printf 'Continue? [y/N] '\nread answer || exit 4\necho \"$answer\""), "")));
        // the real outputs of ../shared/fixtures, verdicts from its README; expected chips learned at the first probe
        for (String[] f : new String[][] {{"910b4-1_npu-smi-25.2.0_healthy.txt", "0:0,1:0"},
            {"910b2_npu-smi-24.1.0.3_healthy.txt", "0:0,1:0"}, {"310p3_npu-smi-25.2.0_healthy.txt", "2:0,2:1"},
            {"a3-two-dies-per-npu_healthy.txt", "0:0,0:1"}}) {
            l.add(test("fixture " + f[0], "healthy " + f[1] + ", no strike, no marker", () -> {
                Outcome o = run(printing(Files.readAllBytes(Fixtures.file(f[0])), 0), 5, true, "");
                assertEquals("healthy", o.engine().getLastVerdict(), o.engine().getLastError());
                assertEquals(f[1], o.engine().getExpectedChips());
                assertFalse(o.markers().read(Markers.REBOOT_REQUIRED).present(), "no reboot-required marker");
                assertTrue(o.markers().read(Markers.DRIVER_READY).present(), "driver-ready left in place");
            }));
        }
        l.add(test("fixture 910a_npu-smi-23.0.rc3_warning.txt", "chip (1,0) Warning: degraded, no strike, no marker", () -> {
            Outcome o = run(printing(Files.readAllBytes(Fixtures.file("910a_npu-smi-23.0.rc3_warning.txt")), 0), 5, true, "");
            assertEquals("degraded", o.engine().getLastVerdict(), o.engine().getLastError());
            assertEquals(0, o.strikes(C10), "Warning is no strike");
            assertFalse(o.markers().read(Markers.REBOOT_REQUIRED).present(), "no reboot-required marker");
            assertTrue(o.markers().read(Markers.DRIVER_READY).present(), "driver-ready left in place");
        }));
        l.add(test("fixture error_ret-8020_device-occupied.txt, exit 1", "probe error naming -8020 (device occupied), no strike, no marker",
                () -> assertProbeErrorNoStrike(printing(Files.readAllBytes(Fixtures.file("error_ret-8020_device-occupied.txt")), 1), "-8020")));
        l.add(test("fixture error_ret-8005_dcmi-internal.txt, exit 1, three probes",
                "a strike per probe for every expected chip; at the 3rd a recovery reboot-required marker, driver-ready removed (the reboot itself is the rebooter's, by policy)", () -> {
                    Outcome o = run(printing(Files.readAllBytes(Fixtures.file("error_ret-8005_dcmi-internal.txt")), 1), 5, true);
                    assertEquals(3, o.strikes(C00));
                    assertEquals(3, o.strikes(C10));
                    assertTrue(o.engine().wedgeActive());
                    assertEquals(Markers.REASON_RECOVERY, o.markers().read(Markers.REBOOT_REQUIRED).marker().reason());
                    assertFalse(o.markers().read(Markers.DRIVER_READY).present());
                }));
        return l.stream();
    }
}
