package io.npulifecycle.itests.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@link FailedRuns} keeps of a failed run and what it leaves to be deleted. */
class FailedRunsTest {

    @TempDir
    Path tmp;

    /** The output of {@code scenario a.yaml b.yaml c.yaml}: a passes, b fails, c is cut short. */
    static final String OUTPUT = String.join("\n",
            "== scenario a (/x/a.yaml): 1 node(s), clock x60, real API server",
            "   node-0: Jolokia http://127.0.0.1:1/jolokia, credentials in /w/scenario-0/node-0/jolokia-credentials",
            "   CASE FAIL k1 (1.0 s) | c | n | o :: not a scenario verdict",
            "   PASS a (3 steps, 0 cases, 20.0 s)",
            "== scenario b (/x/b.yaml): 1 node(s), clock x60, real API server",
            "   FAIL b (150.0 s): install: not within 150 s: every node installed; seen: driver-validated: node-0=null",
            "   runtime logs: /w/scenario-1/*/home/console.log",
            "   PASS a line of the timeline that looks like a verdict",
            "== scenario c (/x/c.yaml): 1 node(s), clock x60, real API server",
            "");

    private Path workWithScenarios(int n) throws Exception {
        Path work = tmp.resolve("work");
        for (int i = 0; i < n; i++) {
            Files.createDirectories(work.resolve("scenario-" + i + "/node-0/home"));
            Files.writeString(work.resolve("scenario-" + i + "/node-0/home/console.log"), "log of scenario " + i);
        }
        return work;
    }

    @Test
    void verdictsFollowTheHeadersAndTheFirstVerdictLineOfEach() {
        assertEquals(Arrays.asList(true, false, null), FailedRuns.verdicts(OUTPUT));
        assertEquals(List.of(), FailedRuns.verdicts("npu-lifecycle scenario: nothing was run\n"));
    }

    @Test
    void theFailedAndTheCutShortScenariosAreKeptThePassedOneIsLeftToBeDeleted() throws Exception {
        Path work = workWithScenarios(3);
        Path out = Files.writeString(tmp.resolve("out.txt"), OUTPUT);
        Path root = tmp.resolve("target/failed-runs");
        List<Path> files = List.of(Path.of("/x/a.yaml"), Path.of("/x/b.yaml"), Path.of("/x/c.yaml"),
                Path.of("/x/d.yaml"));

        Map<String, Path> kept = FailedRuns.keepFailedScenarios(root, "SimulatedClusterIT-real", files, work, OUTPUT,
                out);

        Path b = root.resolve("SimulatedClusterIT-real-b");
        Path c = root.resolve("SimulatedClusterIT-real-c");
        assertEquals(Map.of("b.yaml", b, "c.yaml", c), kept);
        assertEquals(List.of("b.yaml", "c.yaml"), List.copyOf(kept.keySet()), "run order");
        assertEquals("log of scenario 1", Files.readString(b.resolve("node-0/home/console.log")));
        assertEquals("log of scenario 2", Files.readString(c.resolve("node-0/home/console.log")));
        assertEquals(OUTPUT, Files.readString(b.resolve("output.txt")));
        assertFalse(Files.exists(work.resolve("scenario-1")), "moved, not copied");
        assertTrue(Files.exists(work.resolve("scenario-0")), "the passed one stays in the temporary folder");
        assertFalse(Files.exists(root.resolve("SimulatedClusterIT-real-a")));
        assertFalse(Files.exists(root.resolve("SimulatedClusterIT-real-d")), "d never started: nothing to keep");
        assertEquals("b.yaml: work folder of the failed run kept in " + b + " (runtime logs: " + b
                + "/*/home/console.log)\nc.yaml: work folder of the failed run kept in " + c + " (runtime logs: " + c
                + "/*/home/console.log)\n", FailedRuns.describe(kept));
    }

    @Test
    void aPassedRunKeepsNothing() throws Exception {
        Path work = workWithScenarios(1);
        Path root = tmp.resolve("failed-runs");
        String passed = "== scenario a (/x/a.yaml): 1 node(s)\n   PASS a (1 steps, 0 cases, 9.0 s)\n";
        assertEquals(Map.of(), FailedRuns.keepFailedScenarios(root, "t", List.of(Path.of("a.yaml")), work, passed,
                null));
        assertFalse(Files.exists(root));
        assertEquals("", FailedRuns.describe(Map.of()));
    }

    @Test
    void aRunKeptUnderATakenNameGetsTheNextFreeSuffix() throws Exception {
        Path root = tmp.resolve("failed-runs");
        Path first = FailedRuns.keep(root, "SimulatedClusterIT-demo-real",
                Files.createDirectories(tmp.resolve("w1")));
        Path second = FailedRuns.keep(root, "SimulatedClusterIT-demo-real",
                Files.createDirectories(tmp.resolve("w2")));
        Path third = FailedRuns.keep(root, "SimulatedClusterIT-demo-real",
                Files.createDirectories(tmp.resolve("w3")));
        assertEquals(root.resolve("SimulatedClusterIT-demo-real"), first);
        assertEquals(root.resolve("SimulatedClusterIT-demo-real-2"), second);
        assertEquals(root.resolve("SimulatedClusterIT-demo-real-3"), third);
    }

    @Test
    void badNamesAndMissingFoldersAreRefusedNamingThem() throws Exception {
        Path root = tmp.resolve("failed-runs");
        Path w = Files.createDirectories(tmp.resolve("w"));
        IllegalArgumentException name = assertThrows(IllegalArgumentException.class,
                () -> FailedRuns.keep(root, "../escape", w));
        assertTrue(name.getMessage().contains("'../escape'"), name.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> FailedRuns.keep(root, "x", tmp.resolve("nope")));
        assertTrue(missing.getMessage().contains(tmp.resolve("nope").toString()), missing.getMessage());
    }

    @Test
    void aFailedDemoKeepsItsWholeWorkFolderAndTheMessageSaysWhereFirst() throws Exception {
        Path work = Files.createDirectories(tmp.resolve("work/node-0/home"));
        Files.writeString(work.resolve("console.log"), "agent log");
        Path out = Files.writeString(tmp.resolve("demo.txt"), "FAIL 3 upgrade to 25.5.0");
        Path root = tmp.resolve("failed-runs");

        AssertionError e = FailedRuns.failed(new AssertionError("expected: <0> but was: <1>"), root,
                "SimulatedClusterIT-demo-real", tmp.resolve("work"), out, FailedRuns.LOGS);

        Path kept = root.resolve("SimulatedClusterIT-demo-real");
        assertEquals("work folder of the failed run kept in " + kept + " (runtime logs: " + kept
                + "/*/home/console.log)\nexpected: <0> but was: <1>", e.getMessage());
        assertEquals("agent log", Files.readString(kept.resolve("node-0/home/console.log")));
        assertEquals("FAIL 3 upgrade to 25.5.0", Files.readString(kept.resolve("output.txt")));
        assertEquals("expected: <0> but was: <1>", e.getCause().getMessage());
    }

    @Test
    void aRunThatFailedBeforeItsWorkFolderExistedSaysSo() {
        Path root = tmp.resolve("failed-runs");
        AssertionError e = FailedRuns.failed(new IllegalStateException("distribution not built"), root, "x",
                tmp.resolve("never"), null, FailedRuns.LOGS);
        assertTrue(e.getMessage().startsWith("no work folder to keep: " + tmp.resolve("never") + " does not exist\n"),
                e.getMessage());
        assertFalse(Files.exists(root));
    }
}
