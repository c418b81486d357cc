package io.npulifecycle.simulator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.ptr.IntByReference;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.probe.check.CheckNpuSmi;

/**
 * The emulated node at its real interfaces: the generated npu-smi is run as a process and its output is read by the
 * production parser and classifier ({@code check-npu-smi}); the libdcmi.so shim is called through JNA.
 */
class SimulatedNodeTest {

    static final String EIGHT = "0:0,1:0,2:0,3:0,4:0,5:0,6:0,7:0";

    @TempDir
    Path tmp;

    Path markers;
    SimulatedNode node;
    final AtomicInteger boots = new AtomicInteger();

    @BeforeEach
    void create() throws IOException {
        markers = Files.createDirectories(tmp.resolve("run-npu-operator"));
        node = new SimulatedNode(tmp.resolve("sim"), tmp.resolve("sim/boot_id"), markers,
                () -> "boot-" + boots.incrementAndGet());
        node.open("910b", 8, 1, "25.2.0");
    }

    /** Runs the generated npu-smi and classifies its output like the health-watch. */
    JSONObject probe(String expected) throws Exception {
        Process p = new ProcessBuilder(tmp.resolve("sim/bin/npu-smi").toString(), "info").redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        Path file = Files.write(tmp.resolve("out.txt"), out);
        ByteArrayOutputStream json = new ByteArrayOutputStream();
        int rc = CheckNpuSmi.run(new String[] {file.toString(), "--exit-code", String.valueOf(p.exitValue()),
            "--expected-chips", expected}, new PrintStream(json, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertEquals(0, rc);
        return (JSONObject) new JSONParser().parse(json.toString(StandardCharsets.UTF_8));
    }

    static String classification(JSONObject verdict, int npu, int chip) {
        for (Object o : (JSONArray) verdict.get("chips")) {
            JSONObject c = (JSONObject) o;
            if (((Number) c.get("npu")).intValue() == npu && ((Number) c.get("chip")).intValue() == chip) {
                return (String) c.get("classification");
            }
        }
        return null;
    }

    @Test
    void healthyNodeReadsAsHealthyWithItsDriverVersion() throws Exception {
        JSONObject v = probe(EIGHT);
        assertEquals("healthy", v.get("verdict"), v.toString());
        assertEquals("25.2.0", v.get("driverVersion"));
        assertEquals(8, ((JSONArray) v.get("chips")).size());
        assertEquals("boot-1", Files.readString(tmp.resolve("sim/boot_id")).trim());
    }

    @Test
    void oneWedgedChipOfEightFailsOnlyThatChip() throws Exception {
        node.setChip(new ChipId(4, 0), ChipState.WEDGED);
        JSONObject v = probe(EIGHT);
        assertEquals("failed", v.get("verdict"), v.toString());
        assertEquals("failed", classification(v, 4, 0));
        assertEquals("healthy", classification(v, 3, 0));
    }

    @Test
    void everyChipWedgedIsDevNumZeroAndFailsEveryChip() throws Exception {
        for (int n = 0; n < 8; n++) {
            node.setChip(new ChipId(n, 0), ChipState.WEDGED);
        }
        JSONObject v = probe(EIGHT);
        assertEquals("failed", v.get("verdict"), v.toString());
        assertTrue(String.valueOf(v.get("error")).contains("-8005"), v.toString());
    }

    @Test
    void warningOccupiedAndGarbledAreNeverStrikes() throws Exception {
        node.setChip(new ChipId(1, 0), ChipState.WARNING);
        assertEquals("degraded", probe(EIGHT).get("verdict"));
        node.setChip(new ChipId(1, 0), ChipState.OCCUPIED);
        JSONObject occupied = probe(EIGHT);
        assertEquals("probe-error", occupied.get("verdict"), occupied.toString());
        assertTrue(String.valueOf(occupied.get("error")).contains("-8020"));
        node.setChip(new ChipId(1, 0), ChipState.GARBLED);
        assertEquals("probe-error", probe(EIGHT).get("verdict"));
    }

    @Test
    void nextProbesFailThenTheChipsAnswerAgain() throws Exception {
        node.failNext(2, ChipState.OCCUPIED);
        assertEquals("probe-error", probe(EIGHT).get("verdict"));
        assertEquals(1, node.failNextLeft());
        assertEquals("probe-error", probe(EIGHT).get("verdict"));
        assertEquals("healthy", probe(EIGHT).get("verdict"));
        assertThrows(IllegalArgumentException.class, () -> node.failNext(1, ChipState.HEALTHY));
        assertThrows(IllegalArgumentException.class, () -> node.failNext(-1, ChipState.WEDGED));
    }

    @Test
    void hangingChipsMakeNpuSmiHang() throws Exception {
        node.setChip(new ChipId(0, 0), ChipState.HANGING);
        Process p = new ProcessBuilder(tmp.resolve("sim/bin/npu-smi").toString()).start();
        try {
            assertFalse(p.waitFor(700, TimeUnit.MILLISECONDS), "npu-smi must hang");
        } finally {
            p.destroyForcibly();
            p.descendants().forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void rebootGivesANewBootClearsMarkersEndsTransientWedgesAndLoadsNothing() throws Exception {
        Files.writeString(markers.resolve("reboot-required"), "reason=recovery\n");
        node.setChip(new ChipId(4, 0), ChipState.WEDGED);
        node.setChip(new ChipId(5, 0), ChipState.WEDGED);
        node.setPersistent(new ChipId(5, 0), true);
        node.reboot();
        assertEquals("boot-2", node.bootId());
        assertEquals("boot-2", Files.readString(tmp.resolve("sim/boot_id")).trim());
        assertFalse(Files.exists(markers.resolve("reboot-required")), "/run is a tmpfs");
        assertEquals(ChipState.HEALTHY, node.chips().get(new ChipId(4, 0)));
        assertEquals(ChipState.WEDGED, node.chips().get(new ChipId(5, 0)), "a persistent fault survives");
        assertEquals("", Files.readString(tmp.resolve("sim/proc-modules")), "no module loaded after a boot");
        assertEquals("failed", probe(EIGHT).get("verdict"), "no driver, no answer");

        node.loadDriver("25.5.0");
        assertTrue(Files.readString(tmp.resolve("sim/proc-modules")).startsWith(SimulatedNode.NPU_MODULE));
        JSONObject v = probe(EIGHT);
        assertEquals("25.5.0", v.get("driverVersion"));
        assertEquals("failed", classification(v, 5, 0));
        assertEquals("healthy", classification(v, 4, 0));
        assertEquals(1, node.reboots());
        assertTrue(node.violations().isEmpty());
    }

    @Test
    void loadingAnotherVersionIntoARunningKernelIsAViolationAndWedgesEveryChip() throws Exception {
        IOException e = assertThrows(IOException.class, () -> node.loadDriver("25.5.0"));
        assertTrue(e.getMessage().contains("25.2.0") && e.getMessage().contains("violation"), e.getMessage());
        assertEquals(1, node.violations().size());
        assertEquals("failed", probe(EIGHT).get("verdict"));
        node.reboot();
        node.loadDriver("25.5.0");
        assertEquals("healthy", probe(EIGHT).get("verdict"), "a reboot ends dev_num=0");
        assertEquals(1, node.violations().size(), "violations are never forgotten");
    }

    @Test
    void stateSurvivesAReopenAndACorruptStateFileIsKeptAside() throws Exception {
        node.setChip(new ChipId(2, 0), ChipState.WARNING);
        SimulatedNode again = new SimulatedNode(tmp.resolve("sim"), tmp.resolve("sim/boot_id"), markers,
                () -> "boot-x");
        again.open("910b", 8, 1, "25.2.0");
        assertEquals(ChipState.WARNING, again.chips().get(new ChipId(2, 0)));
        assertEquals("boot-1", again.bootId());

        Files.writeString(tmp.resolve("sim/state.properties"), "chipType=quantum\n\u0000garbage");
        SimulatedNode third = new SimulatedNode(tmp.resolve("sim"), tmp.resolve("sim/boot_id"), markers,
                () -> "boot-y");
        String problem = third.open("910b", 8, 1, "25.2.0");
        assertTrue(problem != null && problem.contains("chipType 'quantum'"), problem);
        assertTrue(Files.exists(tmp.resolve("sim/state.properties.corrupt-1")), "the bad file is kept");
        assertEquals(8, third.chips().size());
    }

    @Test
    void chip310pNodeHasTwoChipsPerNpu() throws Exception {
        SimulatedNode p310 = new SimulatedNode(tmp.resolve("sim310"), tmp.resolve("sim310/boot_id"), null,
                () -> "b");
        p310.open("310p", 2, 2, "25.2.0");
        Process p = new ProcessBuilder(tmp.resolve("sim310/bin/npu-smi").toString()).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        p.waitFor(10, TimeUnit.SECONDS);
        Path file = Files.write(tmp.resolve("out310.txt"), out);
        ByteArrayOutputStream json = new ByteArrayOutputStream();
        CheckNpuSmi.run(new String[] {file.toString(), "--expected-chips", "0:0,0:1,1:0,1:1"},
                new PrintStream(json, true, StandardCharsets.UTF_8), System.err);
        JSONObject v = (JSONObject) new JSONParser().parse(json.toString(StandardCharsets.UTF_8));
        assertEquals("healthy", v.get("verdict"), new String(out, StandardCharsets.UTF_8) + "\n" + v);
        assertEquals(4, ((JSONArray) v.get("chips")).size());
    }

    @Test
    void unknownChipIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> node.setChip(new ChipId(9, 0), ChipState.WEDGED));
        assertTrue(e.getMessage().contains("9:0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ChipState.parse("melted"));
    }

    /** The DCMI calls the DCMI probe uses. */
    public interface Dcmi extends Library {
        int dcmi_init();

        int dcmi_get_card_num_list(IntByReference cardNum, int[] cardList, int listLen);

        int dcmi_get_device_num_in_card(int cardId, IntByReference deviceNum);

        int dcmi_get_device_health(int cardId, int deviceId, IntByReference health);
    }

    @Test
    void dcmiShimAnswersFromTheSameState() throws Exception {
        Path shim = Path.of(System.getProperty("npu.sim.dcmi.shim", "missing"));
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(shim), "libdcmi shim not built (no gcc)");
        Path lib = Files.copy(shim, tmp.resolve("sim/lib/libdcmi.so"));
        Dcmi dcmi = Native.load(lib.toString(), Dcmi.class);
        assertEquals(0, dcmi.dcmi_init());
        IntByReference n = new IntByReference();
        int[] cards = new int[64];
        assertEquals(0, dcmi.dcmi_get_card_num_list(n, cards, cards.length));
        assertEquals(8, n.getValue());
        node.setChip(new ChipId(3, 0), ChipState.WARNING);
        node.setChip(new ChipId(4, 0), ChipState.WEDGED);
        IntByReference health = new IntByReference();
        assertEquals(0, dcmi.dcmi_get_device_health(3, 0, health));
        assertEquals(1, health.getValue());
        assertEquals(-8005, dcmi.dcmi_get_device_health(4, 0, health));
        for (int i = 0; i < 8; i++) {
            node.setChip(new ChipId(i, 0), ChipState.WEDGED);
        }
        assertEquals(-8005, dcmi.dcmi_init(), "dev_num=0: the driver refuses DCMI");
        node.setChip(new ChipId(0, 0), ChipState.OCCUPIED);
        assertEquals(-8020, dcmi.dcmi_init());
        assertNotEquals(0, dcmi.dcmi_get_device_num_in_card(0, n));
    }
}
