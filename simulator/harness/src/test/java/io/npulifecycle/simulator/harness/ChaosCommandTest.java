package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code npu-lifecycle chaos}'s shrink options and the shrink of the failing seeds (no cluster is started). */
class ChaosCommandTest {

    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
    private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);

    private int run(String... args) {
        return ChaosCommand.run(args, Path.of("."), out, err);
    }

    private String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void badShrinkOptionsExitTwoNamingTheOptionAndWhatWasExpected() {
        assertEquals(2, run("--seed", "1", "--shrink-runs", "-1"));
        assertTrue(err().contains("npu-lifecycle chaos: --shrink-runs '-1': expected a whole number of runs from 0 "
                + "(no shrinking) to 1000"), err());
        errBytes.reset();
        assertEquals(2, run("--seed", "1", "--shrink-runs", "abc"));
        assertTrue(err().contains("--shrink-runs 'abc': expected a whole number of runs"), err());
        errBytes.reset();
        assertEquals(2, run("--seed", "1", "--shrink-runs", "1001"));
        assertTrue(err().contains("--shrink-runs '1001': expected"), err());
        errBytes.reset();
        assertEquals(2, run("--seed", "1", "--shrink-runs"));
        assertTrue(err().contains("--shrink-runs needs a value"), err());
        errBytes.reset();
        assertEquals(2, run("--seed", "1", "--no-shrink", "--shrink-runs", "5"));
        assertTrue(err().contains("--no-shrink and --shrink-runs 5 contradict each other"), err());
    }

    @Test
    void oneSeedOptionOnlyAndEverySeedALongCanHold() {
        assertEquals(2, run("--seed", "7", "--seeds", "1..2", "--print"));
        assertTrue(err().contains("npu-lifecycle chaos: --seeds after --seed: give one of --seed N or --seeds A..B, "
                + "once"), err());
        assertEquals(2, run("--seeds", "1..2", "--seed", "7", "--print"));
        assertTrue(err().contains("--seed after --seeds"), err());
        assertEquals(0, run("--seed", String.valueOf(Long.MIN_VALUE), "--print"), err());
        assertEquals(0, run("--seed", String.valueOf(Long.MAX_VALUE), "--print"), err());
        assertEquals(1, outBytes.toString(StandardCharsets.UTF_8).split("# npu-lifecycle chaos --seed "
                + Long.MAX_VALUE + " ", -1).length - 1, "one schedule for the largest seed");
        assertEquals(2, run("--seeds", Long.MIN_VALUE + ".." + Long.MAX_VALUE, "--print"));
        assertEquals(2, run("--seed", "99999999999999999999", "--print"));
        assertTrue(err().contains("--seed '99999999999999999999' is not a whole number from " + Long.MIN_VALUE
                + " to " + Long.MAX_VALUE), err());
    }

    @Test
    void aPolicyFileOrDurationThatCannotBeUsedIsNamedAsGiven(@TempDir Path dir) throws Exception {
        assertEquals(2, run("--seed", "1", "--policy", dir.resolve("nope.yaml").toString(), "--print"));
        assertTrue(err().contains("--policy " + dir.resolve("nope.yaml") + ": cannot be read: no such file"), err());
        Path empty = Files.writeString(dir.resolve("empty.yaml"), "\n");
        assertEquals(2, run("--seed", "1", "--policy", empty.toString(), "--print"));
        assertTrue(err().contains("--policy " + empty + ": the file is empty: expected a mapping"), err());
        assertEquals(2, run("--seed", "1", "--policy", dir.toString(), "--print"));
        assertTrue(err().contains("--policy " + dir + ": cannot be read: is a directory"), err());
        assertEquals(2, run("--seed", "1", "--duration", "239m", "--print"));
        assertTrue(err().contains("--duration 239m is outside 4h..30d"), err());
    }

    @Test
    void goodShrinkOptionsAreAccepted() {
        assertEquals(0, run("--seed", "1", "--shrink-runs", "0", "--print"));
        assertEquals(0, run("--seed", "1", "--shrink-runs", "12", "--print"));
        assertEquals(0, run("--seed", "1", "--no-shrink", "--shrink-runs", "0", "--print"));
        assertEquals(0, run("--seed", "1", "--no-shrink", "--print"));
        assertEquals("", err());
        assertEquals(4, outBytes.toString(StandardCharsets.UTF_8).split("# npu-lifecycle chaos --seed 1 ", -1).length
                - 1);
    }

    @Test
    void helpNamesTheShrinkOptions() {
        assertEquals(0, run("--help"));
        String help = outBytes.toString(StandardCharsets.UTF_8);
        assertTrue(help.contains("[--shrink-runs N | --no-shrink]"), help);
        assertTrue(help.contains("  --shrink-runs N the most runs of a candidate per failing seed when shrinking, 0 to "
                + "1000 (default 30);"), help);
        assertTrue(help.contains("  --no-shrink     as --shrink-runs 0"), help);
        assertTrue(help.contains("chaos-seed-<N>-shrunk.yaml"), help);
    }

    @Test
    void onlyTheFailingSeedsAreShrunkOneAfterTheOther(@TempDir Path work) throws Exception {
        List<ChaosSchedule.Drawn> schedules = new ArrayList<>();
        for (long seed = 4; seed <= 6; seed++) {
            schedules.add(ChaosShrinkerTest.schedule(seed, 3, false));
        }
        String broken = "invariant one-reboot-per-approval broken at simulated 100s: node-2";
        List<ScenarioResult> verdicts = List.of(
                new ScenarioResult("seed 4", "chaos-seed-4.yaml", 1, broken, List.of(), ""),
                new ScenarioResult("seed 5", "chaos-seed-5.yaml", 1, null, List.of(), ""),
                new ScenarioResult("seed 6", "chaos-seed-6.yaml", 1, "the harness failed: x", List.of(), ""));
        List<String> ran = new ArrayList<>();
        ChaosSchedule.Unit needed = schedules.get(0).faults().get(2);
        ChaosShrinker.Runner fake = (file, scenario, dir) -> {
            ran.add(file.getFileName().toString());
            return ChaosShrinkerTest.has(Files.readString(file), needed) ? broken : null;
        };
        ChaosCommand.shrinkFailed(schedules, verdicts, "embedded", work, 30, fake, out, err);
        assertTrue(ran.stream().allMatch(f -> f.startsWith("chaos-seed-4-candidate-")), ran.toString());
        String printed = outBytes.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("chaos: seed 4 shrunk to 1 of "), printed);
        assertTrue(printed.contains("chaos: seed 6 not shrunk"), printed);
        assertFalse(printed.contains("seed 5"), printed);
        assertTrue(Files.exists(work.resolve("chaos-seed-4-shrunk.yaml")));
        assertEquals("", err());

        // a runner that cannot run: the seed's shrink stops, said on standard error, and the next seed is shrunk
        outBytes.reset();
        List<ScenarioResult> both = List.of(verdicts.get(0), new ScenarioResult("seed 5", "chaos-seed-5.yaml", 1,
                broken, List.of(), ""));
        ChaosCommand.shrinkFailed(schedules.subList(0, 2), both, "embedded", work.resolve("again"), 30,
                (file, scenario, dir) -> {
                    throw new java.io.IOException("no space left on device");
                }, out, err);
        assertTrue(err().contains("npu-lifecycle chaos: seed 4: the shrink stopped: "), err());
        assertTrue(err().contains("npu-lifecycle chaos: seed 5: the shrink stopped: "), err());
        assertTrue(err().contains("no space left on device"), err());
    }
}
