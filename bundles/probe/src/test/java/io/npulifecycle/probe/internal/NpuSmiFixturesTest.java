package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.probe.check.CheckNpuSmi;

/** Every fixture gives what /work/shared/fixtures/README.md states. */
class NpuSmiFixturesTest {

    static Stream<Arguments> fixtures() {
        return Stream.of(
                Arguments.of("910b4-1_npu-smi-25.2.0_healthy.txt", 0, "healthy", "25.2.0", "0:0,1:0"),
                Arguments.of("910b2_npu-smi-24.1.0.3_healthy.txt", 0, "healthy", "24.1.0.3", "0:0,1:0"),
                Arguments.of("310p3_npu-smi-25.2.0_healthy.txt", 0, "healthy", "25.2.0", "2:0,2:1"),
                Arguments.of("a3-two-dies-per-npu_healthy.txt", 0, "healthy", null, "0:0,0:1"),
                Arguments.of("910a_npu-smi-23.0.rc3_warning.txt", 0, "degraded", "23.0.rc3", "1:0"),
                Arguments.of("error_ret-8020_device-occupied.txt", 1, "probe-error", null, ""),
                Arguments.of("error_ret-8005_dcmi-internal.txt", 1, "failed", null, ""));
    }

    @Test
    void everyFixtureIsCovered() throws Exception {
        Set<String> covered = fixtures().map(a -> (String) a.get()[0]).collect(Collectors.toSet());
        try (Stream<java.nio.file.Path> files = Files.list(Fixtures.dir())) {
            assertEquals(covered, files.map(p -> p.getFileName().toString()).collect(Collectors.toSet()));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void parserAndClassifier(String file, int exit, String verdict, String version, String chips) {
        ProbeResult r = NpuSmiParser.parse(Fixtures.text(file), exit, ProbeOptions.DEFAULTS);
        Assessment a = Assessment.of(r, Set.of());
        assertEquals(verdict, a.verdict().label(), file + ": " + a.error());
        assertEquals(version, a.driverVersion());
        assertEquals(chips, ChipId.format(r.chips().stream().map(ChipResult::id).toList()));
        if (verdict.equals("healthy")) {
            assertNull(r.error());
            r.chips().forEach(c -> assertEquals("OK", c.health()));
        }
    }

    @Test
    void warningChipIsDegradedNotFailed() {
        ProbeResult r = NpuSmiParser.parse(Fixtures.text("910a_npu-smi-23.0.rc3_warning.txt"), 0, ProbeOptions.DEFAULTS);
        assertEquals(List.of(new ChipResult(new ChipId(1, 0), "Warning", Classification.DEGRADED, "npu-smi Health Warning")),
                r.chips());
    }

    @Test
    void dcmi8005IsAStrikeForEveryExpectedChip() {
        ProbeResult r = NpuSmiParser.parse(Fixtures.text("error_ret-8005_dcmi-internal.txt"), 1, ProbeOptions.DEFAULTS);
        Assessment a = Assessment.of(r, ChipId.parseList("0:0,1:0,2:1"));
        assertEquals(Classification.FAILED, a.verdict());
        assertEquals(3, a.chips().size());
        a.chips().values().forEach(c -> assertEquals(Classification.FAILED, c.classification(), c.toString()));
        assertTrue(a.error().contains("-8005"), a.error());
    }

    @Test
    void dcmi8020IsAProbeErrorForEveryExpectedChip() {
        ProbeResult r = NpuSmiParser.parse(Fixtures.text("error_ret-8020_device-occupied.txt"), 1, ProbeOptions.DEFAULTS);
        Assessment a = Assessment.of(r, ChipId.parseList("0:0,1:0"));
        assertEquals(Classification.PROBE_ERROR, a.verdict());
        a.chips().values().forEach(c -> assertEquals(Classification.PROBE_ERROR, c.classification()));
    }

    @Test
    void expectedChipMissingFromTableIsFailedForThatChipOnly() {
        ProbeResult r = NpuSmiParser.parse(Fixtures.text("910b2_npu-smi-24.1.0.3_healthy.txt"), 0, ProbeOptions.DEFAULTS);
        Assessment a = Assessment.of(r, ChipId.parseList("0:0,1:0,7:0"));
        assertEquals(Classification.FAILED, a.verdict());
        assertEquals(Classification.HEALTHY, a.chips().get(new ChipId(0, 0)).classification());
        assertEquals(Classification.FAILED, a.chips().get(new ChipId(7, 0)).classification());
        assertEquals("expected chips absent: 7:0", a.error());
    }

    // ---- the offline check, same code path ----

    private static JSONObject check(String... args) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = CheckNpuSmi.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
        return (JSONObject) new JSONParser().parse(out.toString(StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "check-npu-smi {0}")
    @MethodSource("fixtures")
    void checkNpuSmiPrintsTheVerdict(String file, int exit, String verdict, String version, String chips) throws Exception {
        JSONObject o = check(Fixtures.file(file).toString(), "--exit-code", String.valueOf(exit));
        assertEquals(verdict, o.get("verdict"));
        assertEquals(version, o.get("driverVersion"));
        assertTrue(o.containsKey("error"));
        JSONArray arr = (JSONArray) o.get("chips");
        assertEquals(chips, arr.stream().map(c -> ((Map<?, ?>) c).get("npu") + ":" + ((Map<?, ?>) c).get("chip"))
                .collect(Collectors.joining(",")));
    }

    @Test
    void checkNpuSmiShape() throws Exception {
        JSONObject o = check(Fixtures.file("310p3_npu-smi-25.2.0_healthy.txt").toString());
        assertEquals(Set.of("verdict", "driverVersion", "chips", "error"), o.keySet());
        Map<?, ?> c = (Map<?, ?>) ((JSONArray) o.get("chips")).get(1);
        assertEquals(2L, ((Number) c.get("npu")).longValue());
        assertEquals(1L, ((Number) c.get("chip")).longValue());
        assertEquals("OK", c.get("health"));
        assertEquals("healthy", c.get("classification"));
        assertNull(o.get("error"));
    }

    @Test
    void checkNpuSmiWithExpectedChips() throws Exception {
        JSONObject o = check(Fixtures.file("error_ret-8005_dcmi-internal.txt").toString(), "--exit-code", "1",
                "--expected-chips", "0:0,1:0");
        assertEquals("failed", o.get("verdict"));
        JSONArray arr = (JSONArray) o.get("chips");
        assertEquals(2, arr.size());
        arr.forEach(c -> assertEquals("failed", ((Map<?, ?>) c).get("classification")));
        JSONObject missing = check(Fixtures.file("910b2_npu-smi-24.1.0.3_healthy.txt").toString(),
                "--expected-chips", "0:0,1:0,2:0");
        assertEquals("failed", missing.get("verdict"));
    }

    @Test
    void checkNpuSmiUnreadableFileExits2() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, CheckNpuSmi.run(new String[] {"/nonexistent/npu-smi.txt"}, new PrintStream(out), new PrintStream(err)));
        assertEquals("", out.toString());
        assertTrue(err.toString().contains("/nonexistent/npu-smi.txt"));
        assertEquals(2, CheckNpuSmi.run(new String[] {}, new PrintStream(out), new PrintStream(err)));
        assertEquals(2, CheckNpuSmi.run(new String[] {"f", "--exit-code", "x"}, new PrintStream(out), new PrintStream(err)));
        assertTrue(err.toString().contains("--exit-code 'x': expected npu-smi's exit status, an integer from 0 to 255"),
                err.toString());
        assertEquals(2, CheckNpuSmi.run(new String[] {"f", "--exit-code", "256"}, new PrintStream(out),
                new PrintStream(err)));
        assertEquals("", out.toString(), "nothing judged on a bad option");
    }

    /** @return {status, stdout, stderr} of the checker */
    private static String[] runCheck(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = CheckNpuSmi.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new String[] {String.valueOf(status), out.toString(StandardCharsets.UTF_8),
            err.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void checkNpuSmiNamesAMissingFileOrADirectoryInPlainWords(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        String missing = dir.resolve("nothing.txt").toString();
        String[] r = runCheck(missing);
        assertEquals("2", r[0]);
        assertEquals("check-npu-smi: cannot read " + missing + ": no such file\n", r[2]);
        r = runCheck(dir.toString());
        assertEquals("2", r[0]);
        assertEquals("check-npu-smi: cannot read " + dir + ": is a directory (expected a file holding the output of "
                + "'npu-smi info')\n", r[2]);
        assertFalse(r[2].contains("Exception"), r[2]);
        assertEquals("", r[1]);
    }

    @Test
    void checkNpuSmiRefusesAnEmptyElementOfExpectedChipsNamingTheOption() {
        for (String v : new String[] {"1:0,,2:0", ",0:0", "0:0,", " "}) {
            String[] r = runCheck("f", "--expected-chips", v);
            assertEquals("2", r[0], v);
            assertTrue(r[2].startsWith("check-npu-smi: --expected-chips '" + v + "': element ")
                    && r[2].contains(" is empty;"), r[2]);
        }
        String[] r = runCheck("f", "--expected-chips", "0:x");
        assertTrue(r[2].startsWith("check-npu-smi: --expected-chips '0:x': "), r[2]);
    }

    @Test
    void checkNpuSmiHelpListsEveryOptionItParses() throws Exception {
        String[] r = runCheck("--help");
        assertEquals("0", r[0]);
        assertEquals("", r[2]);
        assertEquals(r[1], runCheck("-h")[1]);
        java.util.List<String> helpOptions = new java.util.ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^  (-[-a-z]+) ").matcher(r[1]);
        while (m.find()) {
            helpOptions.add(m.group(1));
        }
        assertEquals(new java.util.ArrayList<>(CheckNpuSmi.OPTIONS.keySet()), helpOptions, r[1]);
        // each option the help lists is parsed (not refused as unknown), and one it does not list is refused
        String file = Fixtures.file("910b2_npu-smi-24.1.0.3_healthy.txt").toString();
        for (String o : helpOptions) {
            String[] args = o.equals("--exit-code") ? new String[] {file, o, "0"}
                    : o.equals("--expected-chips") ? new String[] {file, o, "0:0"} : new String[] {file, o};
            String[] c = runCheck(args);
            assertEquals("0", c[0], o + ": " + c[2]);
        }
        String[] unknown = runCheck(file, "--verbose");
        assertEquals("2", unknown[0]);
        assertTrue(unknown[2].contains("unknown option '--verbose' (--help lists the options)"), unknown[2]);
    }
}
