package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/** Garbage in: a probe error or a correct parse, never a strike from garbage, never an exception. */
class NpuSmiBadInputTest {

    private static final String HEAD = "+----------------------------------------------------------------+\n"
            + "| npu-smi 25.2.0                   Version: 25.2.0               |\n"
            + "+---------------------------+---------------+--------------------+\n"
            + "| NPU   Name                | Health        | Power(W)    Temp(C)|\n"
            + "| Chip                      | Bus-Id        | AICore(%)          |\n"
            + "+===========================+===============+====================+\n";

    private static String block(String npu, String health, String chip) {
        return "| " + npu + "     910B2               | " + health + "            | 96.4        37     |\n"
                + "| " + chip + "                         | 0000:C1:00.0  | 0                  |\n"
                + "+===========================+===============+====================+\n";
    }

    /** Probe error whatever the expected chips: no strike. */
    private static ProbeResult assertProbeError(String text, String errorPart) {
        ProbeResult r = NpuSmiParser.parse(text, 0, ProbeOptions.DEFAULTS);
        assertEquals(Classification.PROBE_ERROR, r.outcome(), r.error());
        assertTrue(r.error().contains(errorPart), r.error());
        Assessment a = Assessment.of(r, ChipId.parseList("0:0,1:0"));
        a.chips().values().forEach(c -> assertEquals(Classification.PROBE_ERROR, c.classification()));
        return r;
    }

    @Test
    void emptyOutput() {
        assertProbeError("", "printed nothing");
        assertProbeError("\n\n  \n", "printed nothing");
        assertEquals(Classification.PROBE_ERROR, NpuSmiParser.parse(new byte[0], 0, ProbeOptions.DEFAULTS).outcome());
    }

    @Test
    void binaryGarbage() {
        Random rnd = new Random(42);
        for (int i = 0; i < 200; i++) {
            byte[] b = new byte[rnd.nextInt(5000)];
            rnd.nextBytes(b);
            ProbeResult r = NpuSmiParser.parse(b, rnd.nextInt(3), ProbeOptions.DEFAULTS);
            assertTrue(r.outcome() == Classification.PROBE_ERROR, "garbage #" + i + " gave " + r);
        }
        // garbage made of table characters
        for (int i = 0; i < 200; i++) {
            char[] alphabet = "|+-=/ \n0123456789NPUHealthChipOK".toCharArray();
            char[] c = new char[rnd.nextInt(3000)];
            for (int j = 0; j < c.length; j++) {
                c[j] = alphabet[rnd.nextInt(alphabet.length)];
            }
            ProbeResult r = NpuSmiParser.parse(new String(c), 0, ProbeOptions.DEFAULTS);
            assertTrue(r.outcome() != Classification.FAILED, "table garbage must never strike: " + r.error());
        }
    }

    @Test
    void unknownHealthValue() {
        assertProbeError(HEAD + block("0", "OK", "0") + block("1", "Unknown", "0"), "unknown Health value 'Unknown'");
        assertProbeError(HEAD + block("0", "", "0"), "unknown Health value");
    }

    @Test
    void negativeOrNonNumericIds() {
        assertProbeError(HEAD + block("-1", "OK", "0"), "NPU id '-1'");
        assertProbeError(HEAD + block("0", "OK", "-3"), "chip id '-3'");
        assertProbeError(HEAD + block("x", "OK", "0"), "NPU id 'x'");
        assertProbeError(HEAD + block("99999999999", "OK", "0"), "NPU id");
    }

    @Test
    void duplicateChips() {
        assertProbeError(HEAD + block("0", "OK", "0") + block("0", "OK", "0"), "chip 0:0 is listed twice");
    }

    @Test
    void blockCutInTheMiddle() {
        String cut = HEAD + block("0", "OK", "0") + "| 1     910B2               | OK            | 96.4        37     |\n";
        assertProbeError(cut, "output ends inside the chip block of NPU 1");
        assertProbeError(cut + "+===========================+\n", "has no chip row");
    }

    @Test
    void missingClosingBorderAndCutLastCellAreFine() {
        String text = HEAD + block("0", "OK", "0") + "| 1     910B2               | OK            | 96.4\n| 0    | 0000:C2";
        ProbeResult r = NpuSmiParser.parse(text, 0, ProbeOptions.DEFAULTS);
        assertNull(r.outcome(), r.error());
        assertEquals("0:0,1:0", ChipId.format(r.chips().stream().map(c -> c.id()).toList()));
    }

    @Test
    void headerButNoChipIsDevNumZero() {
        ProbeResult r = NpuSmiParser.parse(HEAD, 0, ProbeOptions.DEFAULTS);
        assertNull(r.outcome());
        assertTrue(r.chips().isEmpty());
        assertEquals(Classification.FAILED, Assessment.of(r, Set.of()).verdict(), "the driver lists no chip");
        assertEquals(Classification.FAILED, Assessment.of(r, ChipId.parseList("0:0")).chips().get(new ChipId(0, 0)).classification());
    }

    @Test
    void getPhysicalDeviceNumberFailedIsAStrike() {
        ProbeResult r = NpuSmiParser.parse("Get physical device number failed.\n", 255, ProbeOptions.DEFAULTS);
        assertEquals(Classification.FAILED, r.outcome());
    }

    @Test
    void dcmiCodesInOutput() {
        int[] probeErrors = {-8020, -8013, -9005, -8012, -8017, -8999};
        for (int code : probeErrors) {
            ProbeResult r = NpuSmiParser.parse("dcmi module initialize failed. ret is " + code + "\n", 1, ProbeOptions.DEFAULTS);
            assertEquals(Classification.PROBE_ERROR, r.outcome(), "code " + code);
        }
        for (int code : new int[] {-8005, -8008, -8006}) {
            ProbeResult r = NpuSmiParser.parse("ret is " + code, 1, ProbeOptions.DEFAULTS);
            assertEquals(Classification.FAILED, r.outcome(), "code " + code);
        }
        assertEquals(Classification.PROBE_ERROR,
                NpuSmiParser.parse("ret is -8006", 1, new ProbeOptions(false, false)).outcome());
        assertEquals(Classification.PROBE_ERROR, NpuSmiParser.parse("Segmentation fault\n", 139, ProbeOptions.DEFAULTS).outcome());
    }

    @Test
    void alarmIsFailureSwitch() {
        String text = HEAD + block("0", "Alarm", "0") + block("1", "Critical", "0");
        assertEquals(Classification.DEGRADED, Assessment.of(NpuSmiParser.parse(text, 0, ProbeOptions.DEFAULTS), Set.of()).verdict());
        assertEquals(Classification.FAILED,
                Assessment.of(NpuSmiParser.parse(text, 0, new ProbeOptions(true, true)), Set.of()).verdict());
    }

    @Test
    void tenThousandChips() {
        StringBuilder sb = new StringBuilder(HEAD);
        for (int npu = 0; npu < 5000; npu++) {
            // narrow rows (columns widen and shrink between releases): 10,000 chips under the 1 MiB cap
            for (int chip = 0; chip < 2; chip++) {
                sb.append("| ").append(npu).append(" 910B2 | OK | 96.4 |\n| ").append(chip).append(" | 0000:C1:00.0 | 0 |\n+==+==+\n");
            }
        }
        assertTrue(sb.length() < NpuSmiParser.DEFAULT_MAX_BYTES);
        ProbeResult r = NpuSmiParser.parse(sb.toString(), 0, ProbeOptions.DEFAULTS);
        assertNull(r.outcome(), r.error());
        assertEquals(10_000, r.chips().size());
        assertEquals(new ChipId(4999, 1), r.chips().get(9999).id());
        assertEquals(NpuSmiParser.RAW_KEEP_CHARS, r.rawOutput().length(), "raw output cut to 4 KiB");
    }

    @Test
    void fiveMebibyteOutput() {
        byte[] big = new byte[5 * 1024 * 1024];
        Arrays.fill(big, (byte) '|');
        ProbeResult r = NpuSmiParser.parse(big, 0, ProbeOptions.DEFAULTS);
        assertEquals(Classification.PROBE_ERROR, r.outcome());
        assertTrue(r.error().contains("more than"), r.error());
        String bigText = HEAD + block("0", "OK", "0").repeat(1).concat("x".repeat(5 * 1024 * 1024));
        assertEquals(Classification.PROBE_ERROR, NpuSmiParser.parse(bigText, 0, ProbeOptions.DEFAULTS).outcome());
        assertEquals(Classification.PROBE_ERROR,
                NpuSmiParser.parse(bigText.getBytes(StandardCharsets.UTF_8), 0, ProbeOptions.DEFAULTS).outcome());
    }
}
