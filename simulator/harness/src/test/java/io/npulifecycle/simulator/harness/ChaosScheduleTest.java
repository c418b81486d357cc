package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The chaos schedules: reproducible from the seed, valid scenario files, faults only before the quiet period. */
class ChaosScheduleTest {

    static ChaosSchedule.Settings settings(long seed, boolean real) {
        return new ChaosSchedule.Settings(seed, 4, Duration.ofDays(1), 120, real, null);
    }

    @Test
    void aSeedAlwaysGivesTheSameScheduleAndAnotherSeedAnother() {
        assertEquals(ChaosSchedule.draw(settings(7, true)), ChaosSchedule.draw(settings(7, true)));
        assertNotEquals(ChaosSchedule.draw(settings(7, true)), ChaosSchedule.draw(settings(8, true)));
    }

    @Test
    void everyScheduleIsAValidScenarioWithItsFaultsBeforeTheQuietPeriod() throws Exception {
        Set<String> faults = Set.of("wedge", "approve", "annotate", "setVersion", "setPolicy", "cordon", "pod",
                "pdb", "killAgent", "killControlPlane", "apiUnreachable");
        for (long seed = 1; seed <= 30; seed++) {
            Scenario s = Scenario.parse("chaos-seed-" + seed + ".yaml", ChaosSchedule.draw(settings(seed, true)));
            assertEquals(4, s.nodes);
            assertEquals(ChaosSchedule.START, s.startTime);
            assertEquals(Invariants.ALL, s.invariants);
            long quiet = 86_400 - 86_400 / 4;
            // at the quiet period's first second: the cluster given back to the policy, nothing else
            assertTrue(s.steps.stream().filter(x -> x.at().toSeconds() == quiet).allMatch(x -> Set.of("setPolicy",
                    "uncordon", "deletePdb", "expect").contains(x.action().kind())), "seed " + seed);
            long lastFault = s.steps.stream().filter(x -> faults.contains(x.action().kind())
                    && x.at().toSeconds() != quiet).mapToLong(x -> x.at().toSeconds()).max().orElse(0);
            assertTrue(lastFault < quiet, "seed " + seed + ": a fault at " + lastFault + " s, in the quiet period");
            assertTrue(s.steps.size() > 20, "seed " + seed + ": " + s.steps.size() + " steps");
            List<Scenario.Step> expects = s.steps.stream().filter(x -> x.action() instanceof Action.Expect).toList();
            assertEquals(3, expects.size(), "the quiet period's expectations");
            assertEquals(quiet, expects.get(0).at().toSeconds());
        }
    }

    @Test
    void budgetsOnlyOnTheRealApiServer() throws Exception {
        boolean anyReal = false;
        for (long seed = 1; seed <= 20; seed++) {
            assertFalse(ChaosSchedule.draw(settings(seed, false)).contains("pdb:"), "seed " + seed);
            anyReal |= ChaosSchedule.draw(settings(seed, true)).contains("pdb:");
        }
        assertTrue(anyReal, "some real schedule has a blocking budget");
    }

    @Test
    void badSettingsAreNamed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new ChaosSchedule.Settings(1, 0,
                Duration.ofDays(1), 120, false, null)).getMessage().contains("--nodes 0 is outside 1..16"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new ChaosSchedule.Settings(1, 3,
                Duration.ofHours(1), 120, false, null)).getMessage().contains("outside 4h..30d"));
        assertEquals(Duration.ofDays(3), ChaosCommand.duration("3d"));
        assertEquals(Duration.ofHours(12), ChaosCommand.duration("12h"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosCommand.duration("3 days"))
                .getMessage().contains("expected a whole number of minutes, hours or days"));
    }

    @Test
    void aPolicyFileIsCheckedAsAScenariosPolicy(@TempDir Path dir) throws Exception {
        Path good = Files.writeString(dir.resolve("good.yaml"), "autoUpgrade: false\nmaxParallelUpgrades: 2\n");
        String flow = ChaosCommand.policy(good);
        assertTrue(flow.contains("\"maxParallelUpgrades\":2"), flow);
        assertTrue(ChaosSchedule.draw(new ChaosSchedule.Settings(1, 2, Duration.ofHours(8), 120, false, flow))
                .contains("policy: " + flow));
        Path bad = Files.writeString(dir.resolve("bad.yaml"), "autoRecover: maybe\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosCommand.policy(bad)).getMessage()
                .contains("autoRecover"));
        Path list = Files.writeString(dir.resolve("list.yaml"), "- a\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosCommand.policy(list)).getMessage()
                .contains("expected a mapping of the policy shorthand"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosCommand.policy(dir.resolve("none.yaml")))
                .getMessage().contains("cannot be read"));
    }

    @Test
    void commandLineErrorsExitTwo() {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream e = new java.io.PrintStream(err, true);
        assertEquals(2, ChaosCommand.run(new String[] {"--nodes", "3"}, Path.of("."), System.out, e));
        assertTrue(err.toString().contains("give --seed N or --seeds A..B"), err.toString());
        assertEquals(2, ChaosCommand.run(new String[] {"--seeds", "9..2"}, Path.of("."), System.out, e));
        assertEquals(2, ChaosCommand.run(new String[] {"--seed", "x"}, Path.of("."), System.out, e));
        assertEquals(2, ChaosCommand.run(new String[] {"--seed", "1", "--time-scale", "5000"}, Path.of("."),
                System.out, e));
        assertEquals(2, ChaosCommand.run(new String[] {"--seed", "1", "--bogus"}, Path.of("."), System.out, e));
        assertEquals(2, ChaosCommand.run(new String[] {"--seed", "1", "--duration", "1h"}, Path.of("."), System.out,
                e));
        assertTrue(err.toString().contains("outside 4h..30d"), err.toString());
    }
}
