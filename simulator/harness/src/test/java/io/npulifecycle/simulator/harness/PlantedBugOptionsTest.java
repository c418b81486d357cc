package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.faults.PlantedBug;

/**
 * {@code --planted-bug} of {@code scenario} and {@code chaos}: the names checked before anything runs, the JVM option
 * the runtimes get, the line a run starts with, and the shrunk file's header (no cluster is started).
 */
class PlantedBugOptionsTest {

    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
    private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);

    private String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void everyPlantedBugBreaksAnInvariantTheCheckerNames() {
        for (PlantedBug b : PlantedBug.values()) {
            assertTrue(Invariants.ALL.contains(b.invariant()), b + " breaks " + b.invariant());
        }
        assertEquals(Invariants.ALL.size(), PlantedBug.values().length, "one bug per invariant");
    }

    @Test
    void chaosRefusesAnUnknownBugNamingTheValidOnes() {
        assertEquals(2, ChaosCommand.run(new String[] {"--seed", "1", "--planted-bug", "leak", "--print"}, Path.of("."),
                out, err));
        assertTrue(err().contains("npu-lifecycle chaos: --planted-bug 'leak': no such bug; expected one of "
                + "reboot-unannounced, reboot-unauthorised, approval-reused, admin-cordon-lifted, module-reloaded, "
                + "window-ignored, drain-skipped, memory-leak"), err());
        errBytes.reset();
        assertEquals(2, ChaosCommand.run(new String[] {"--seed", "1", "--planted-bug"}, Path.of("."), out, err));
        assertTrue(err().contains("--planted-bug needs a value"), err());
        assertEquals(0, ChaosCommand.run(new String[] {"--seed", "1", "--planted-bug", "memory-leak", "--print"},
                Path.of("."), out, err), err());
    }

    @Test
    void scenarioRefusesAnUnknownBugAndABugOnTheRealNode() {
        String install = System.getProperty("npu.lifecycle.install");
        System.setProperty("npu.lifecycle.install", ".");
        try {
            assertEquals(2, HarnessMain.run(new String[] {"scenario", "x.yaml", "--planted-bug", "nope"}, out, err));
            assertTrue(err().contains("npu-lifecycle scenario: --planted-bug 'nope': no such bug; expected one of "
                    + PlantedBug.names()), err());
            errBytes.reset();
            assertEquals(2, HarnessMain.run(new String[] {"scenario", "x.yaml", "--api", "real", "--kubelet",
                "--planted-bug", "memory-leak"}, out, err));
            assertTrue(err().contains("--planted-bug cannot be used with --kubelet"), err());
            errBytes.reset();
            assertEquals(2, HarnessMain.run(new String[] {"demo", "--planted-bug", "memory-leak"}, out, err));
            assertTrue(err().contains("unknown option '--planted-bug' for demo"), err());
        } finally {
            if (install == null) {
                System.clearProperty("npu.lifecycle.install");
            } else {
                System.setProperty("npu.lifecycle.install", install);
            }
        }
    }

    @Test
    void theRuntimesGetTheBugAsASystemPropertyAndTheRunSaysSoFirst() {
        assertEquals("-Dnpu.lifecycle.plantedBug=window-ignored", SimCluster.plantedBugOption(PlantedBug.WINDOW_IGNORED));
        assertEquals("-Dnpu.lifecycle.plantedBug=memory-leak -XX:MaxDirectMemorySize=512m",
                SimCluster.plantedBugOption(PlantedBug.MEMORY_LEAK));
        assertEquals("planted bug: window-ignored (breaks invariant no-upgrade-reboot-outside-window on purpose: every "
                + "runtime runs with -Dnpu.lifecycle.plantedBug=window-ignored, testing the chaos checker only)",
                ScenarioCommand.plantedBugLine(PlantedBug.WINDOW_IGNORED));
    }

    @Test
    void theShrunkFileSaysToRunItAgainWithTheBug() {
        ChaosSchedule.Drawn d = ChaosShrinkerTest.schedule(3, 2, false);
        List<ChaosSchedule.Unit> kept = d.faults().subList(0, 1);
        String header = ChaosShrinker.header(Path.of("/w/chaos-seed-3-shrunk.yaml"), d, kept,
                "invariant node-agent-memory-bounded broken", "embedded", PlantedBug.MEMORY_LEAK, 4, true);
        List<String> lines = header.lines().toList();
        assertEquals("# from seed 3: npu-lifecycle chaos --seed 3 --nodes 2 --duration 24h --api embedded "
                + "--time-scale 120 --planted-bug memory-leak", lines.get(1));
        assertEquals("# run again with: npu-lifecycle scenario chaos-seed-3-shrunk.yaml --api embedded "
                + "--planted-bug memory-leak", lines.get(3));
        String plain = ChaosShrinker.header(Path.of("/w/chaos-seed-3-shrunk.yaml"), d, kept,
                "invariant node-agent-memory-bounded broken", "embedded", null, 4, true);
        assertEquals("# run again with: npu-lifecycle scenario chaos-seed-3-shrunk.yaml --api embedded",
                plain.lines().toList().get(3));
    }
}
