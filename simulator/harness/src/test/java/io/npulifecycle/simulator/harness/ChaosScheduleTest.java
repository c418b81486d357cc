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
                "pdb", "killAgent", "killControlPlane", "apiUnreachable", "deleteNode", "nodeNotReady", "deleteCr",
                "restartApiServer");
        for (long seed = 1; seed <= 30; seed++) {
            Scenario s = Scenario.parse("chaos-seed-" + seed + ".yaml", ChaosSchedule.draw(settings(seed, true)));
            assertEquals(4, s.nodes);
            assertEquals(ChaosSchedule.START, s.startTime);
            assertEquals(Invariants.ALL, s.invariants);
            long quiet = 86_400 - 86_400 / 4;
            // at the quiet period's first second: the cluster given back to the policy, nothing else
            assertTrue(s.steps.stream().filter(x -> x.at().toSeconds() == quiet).allMatch(x -> Set.of("setPolicy",
                    "uncordon", "deletePdb", "expect", "registerNode", "nodeReady", "createCr")
                    .contains(x.action().kind())), "seed " + seed);
            long lastFault = s.steps.stream().filter(x -> faults.contains(x.action().kind())
                    && x.at().toSeconds() != quiet).mapToLong(x -> x.at().toSeconds()).max().orElse(0);
            assertTrue(lastFault < quiet, "seed " + seed + ": a fault at " + lastFault + " s, in the quiet period");
            assertTrue(s.steps.size() > 20, "seed " + seed + ": " + s.steps.size() + " steps");
            // the quiet period's three (a CR deleted by a fault is awaited gone before it is created again)
            List<Scenario.Step> expects = s.steps.stream().filter(x -> x.action() instanceof Action.Expect e
                    && e.npuOperatorCtl() == null).toList();
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

    /**
     * Walks a schedule's steps in order as the runner would do them and fails on a step that would fail or mean
     * nothing: a step naming a node whose Node object is deleted, a deletion or NotReady of a node that is already,
     * a registration or a Ready of one that is not, a change of the NPUOperatorCtl while it is deleted, a creation
     * while it exists or before its deletion was awaited; and at the end (after the quiet period's first second)
     * every node and the CR back.
     */
    static void coherent(String text, String where) throws Exception {
        Scenario s = Scenario.parse("chaos.yaml", text);
        Set<String> deleted = new java.util.HashSet<>();
        Set<String> notReady = new java.util.HashSet<>();
        boolean crDeleted = false;
        boolean crAwaited = false;
        for (Scenario.Step st : s.steps) {
            String at = where + " at " + st.at().toSeconds() + "s " + st.yaml();
            Action a = st.action();
            if (a instanceof Action.RegisterNode n) {
                assertTrue(deleted.remove(n.node()), at + ": the node is not deleted");
            } else if (a instanceof Action.DeleteNode n) {
                assertFalse(notReady.contains(n.node()), at + ": the node is NotReady");
                assertTrue(deleted.add(n.node()), at + ": the node is deleted already");
            } else if (a instanceof Action.NodeNotReady n) {
                assertFalse(deleted.contains(n.node()), at + ": the node is deleted");
                assertTrue(notReady.add(n.node()), at + ": the node is NotReady already");
            } else if (a instanceof Action.NodeReady n) {
                assertTrue(notReady.remove(n.node()), at + ": the node is not NotReady");
            } else if (a instanceof Action.OnNode n) {
                assertFalse(deleted.contains(n.node()), at + ": its Node is deleted");
            } else if (a instanceof Action.PodStep p) {
                assertFalse(deleted.contains(p.node()), at + ": its Node is deleted");
            } else if (a instanceof Action.DeleteCr) {
                assertFalse(crDeleted, at + ": the CR is deleted already");
                crDeleted = true;
                crAwaited = false;
            } else if (a instanceof Action.Expect e && e.npuOperatorCtl() != null) {
                assertTrue(crDeleted, at);
                crAwaited = true;
            } else if (a instanceof Action.CreateCr) {
                assertTrue(crDeleted && crAwaited, at + ": the CR exists, or its deletion was not awaited");
                crDeleted = false;
            } else if (a instanceof Action.SetPolicy || a instanceof Action.SetVersion) {
                assertFalse(crDeleted, at + ": the CR is deleted");
            }
        }
        assertEquals(Set.of(), deleted, where + ": nodes left deleted");
        assertEquals(Set.of(), notReady, where + ": nodes left NotReady");
        assertFalse(crDeleted, where + ": the CR left deleted");
        // a standing window is removed by the quiet period's setPolicy
        String quietPolicy = s.steps.stream().filter(x -> x.action() instanceof Action.SetPolicy
                && x.yaml().contains("autoUpgrade: true, autoRecover: true")).reduce((x, y) -> y).orElseThrow().yaml();
        long windows = s.steps.stream().filter(x -> x.yaml().contains("maintenanceWindow: {")).count();
        long removals = s.steps.stream().filter(x -> x.yaml().contains("maintenanceWindow: null")).count();
        assertTrue(windows == 0 || removals >= 1, where + ": a window and no removal");
        assertTrue(s.steps.stream().filter(x -> x.yaml().contains("maintenanceWindow")).reduce((x, y) -> y)
                .map(x -> x.yaml().contains("maintenanceWindow: null")).orElse(true), where + ": a window stands at "
                        + "the end (" + quietPolicy + ")");
    }

    @Test
    void noStepFailsForADeletedNodeOrCrAndTheQuietPeriodGivesEverythingBack() throws Exception {
        for (long seed = 1; seed <= 60; seed++) {
            for (boolean real : List.of(false, true)) {
                coherent(ChaosSchedule.draw(new ChaosSchedule.Settings(seed, 3, Duration.ofHours(12), 120, real,
                        null)), "seed " + seed + (real ? " real" : " embedded"));
            }
        }
    }

    /** The shrinker keeps any subset of units: each must still be a coherent scenario (ddmin tries many). */
    @Test
    void anySubsetOfUnitsIsACoherentScenario() throws Exception {
        java.util.SplittableRandom pick = new java.util.SplittableRandom(42);
        for (long seed = 1; seed <= 12; seed++) {
            ChaosSchedule.Drawn d = ChaosSchedule.schedule(settings(seed, seed % 2 == 0));
            List<ChaosSchedule.Unit> all = d.faults();
            for (int i = 0; i < all.size(); i++) {
                coherent(d.render(List.of(all.get(i))), "seed " + seed + " unit " + i + " alone");
                List<ChaosSchedule.Unit> without = new java.util.ArrayList<>(all);
                without.remove(i);
                coherent(d.render(without), "seed " + seed + " without unit " + i);
            }
            for (int k = 0; k < 20; k++) {
                List<ChaosSchedule.Unit> some = all.stream().filter(u -> pick.nextBoolean()).toList();
                coherent(d.render(some), "seed " + seed + " subset " + some.stream().map(ChaosSchedule.Unit::index)
                        .toList());
            }
        }
    }

    /** A unit and the schedule it was drawn in. */
    private record Found(ChaosSchedule.Drawn drawn, ChaosSchedule.Unit unit) {
    }

    /** @return the first unit of kind {@code k} with steps, standing or not as asked, over seeds 1..400 */
    private static Found find(ChaosSchedule.Kind k, boolean real, boolean standing) {
        for (long seed = 1; seed <= 400; seed++) {
            ChaosSchedule.Drawn d = ChaosSchedule.schedule(new ChaosSchedule.Settings(seed, 3, Duration.ofHours(8),
                    120, real, null));
            for (ChaosSchedule.Unit u : d.faults()) {
                if (u.kind() == k && (u.standing() != null) == standing) {
                    return new Found(d, u);
                }
            }
        }
        throw new AssertionError("no " + k + (standing ? " standing" : "") + " in seeds 1..400");
    }

    @Test
    void eachNewKindIsDrawnWithItsStepsAndWhatStandsIsGivenBackByTheQuietPeriod() throws Exception {
        // lifted before the quiet period: the steps, and nothing for the quiet period to give back
        for (ChaosSchedule.Kind k : List.of(ChaosSchedule.Kind.NODE_DELETED, ChaosSchedule.Kind.NODE_NOT_READY,
                ChaosSchedule.Kind.MAINTENANCE_WINDOW, ChaosSchedule.Kind.CR_DELETED)) {
            Found f = find(k, true, false);
            ChaosSchedule.Unit u = f.unit();
            ChaosSchedule.Drawn d = f.drawn();
            List<String> texts = u.steps().stream().map(ChaosSchedule.Step::text).toList();
            long gap = u.steps().get(u.steps().size() - 1).at() - u.steps().get(0).at();
            String alone = d.render(List.of(u));
            coherent(alone, k + " alone");
            String quiet = alone.substring(alone.indexOf("  - at: " + d.quietStart() + "s"));
            switch (k) {
                case NODE_DELETED -> {
                    assertTrue(texts.get(0).matches("deleteNode: \\{node: node-[0-2]\\}"), texts.toString());
                    assertEquals(texts.get(0).replace("deleteNode", "registerNode"), texts.get(1));
                    assertTrue(gap >= 300 && gap < 1800, gap + " s");
                    assertFalse(quiet.contains("registerNode"), quiet);
                }
                case NODE_NOT_READY -> {
                    assertTrue(texts.get(0).matches("nodeNotReady: \\{node: node-[0-2]\\}"), texts.toString());
                    assertEquals(texts.get(0).replace("nodeNotReady", "nodeReady"), texts.get(1));
                    assertTrue(gap >= 120 && gap < 1200, gap + " s");
                    assertFalse(quiet.contains("nodeReady"), quiet);
                }
                case MAINTENANCE_WINDOW -> {
                    assertTrue(texts.get(0).matches("setPolicy: \\{upgradePolicy: \\{maintenanceWindow: \\{(days: "
                            + "[a-z]{2}, )?startTime: \"[0-2][0-9]:[0-5][05]\", endTime: \"[0-2][0-9]:[0-5][05]\", "
                            + "timeZone: (UTC|Asia/Shanghai)\\}\\}\\}"), texts.toString());
                    assertEquals("setPolicy: {upgradePolicy: {maintenanceWindow: null}}", texts.get(1));
                    assertTrue(gap >= 3600 && gap < 6 * 3600, gap + " s");
                    assertTrue(quiet.contains("setPolicy: {autoUpgrade: true, autoRecover: true}\n"), quiet);
                }
                default -> {
                    assertEquals(List.of("deleteCr: {}", "expect: {npuOperatorCtl: absent, within: 1800s}",
                            "createCr: {}"), texts);
                    assertEquals(u.steps().get(1).at(), u.steps().get(2).at(), "awaited gone, then created");
                    assertTrue(gap >= 300 && gap < 1800, gap + " s");
                    assertFalse(quiet.contains("createCr"), quiet);
                }
            }
        }
        // standing into the quiet period: its first second gives it back, before the policy and the expectations
        for (ChaosSchedule.Kind k : List.of(ChaosSchedule.Kind.NODE_DELETED, ChaosSchedule.Kind.NODE_NOT_READY,
                ChaosSchedule.Kind.MAINTENANCE_WINDOW, ChaosSchedule.Kind.CR_DELETED)) {
            Found f = find(k, true, true);
            ChaosSchedule.Unit u = f.unit();
            ChaosSchedule.Drawn d = f.drawn();
            assertEquals(1, u.steps().size(), u.describe());
            String alone = d.render(List.of(u));
            coherent(alone, k + " standing alone");
            Scenario s = Scenario.parse("alone.yaml", alone);
            List<String> quiet = s.steps.stream().filter(x -> x.at().toSeconds() == d.quietStart())
                    .map(Scenario.Step::yaml).toList();
            List<String> want = switch (k) {
                case NODE_DELETED -> List.of("registerNode: {node: " + u.standing().deletedNode() + "}",
                        "setPolicy: {autoUpgrade: true, autoRecover: true}");
                case NODE_NOT_READY -> List.of("nodeReady: {node: " + u.standing().notReadyNode() + "}",
                        "setPolicy: {autoUpgrade: true, autoRecover: true}");
                case MAINTENANCE_WINDOW -> List.of("setPolicy: {autoUpgrade: true, autoRecover: true, upgradePolicy: "
                        + "{maintenanceWindow: null}}");
                default -> List.of("expect: {npuOperatorCtl: absent, within: 1800s}", "createCr: {}",
                        "setPolicy: {autoUpgrade: true, autoRecover: true}");
            };
            assertEquals(want, quiet.subList(0, want.size()), k.toString());
            assertEquals(want.size() + 3, quiet.size(), quiet.toString());
        }
        // the API server's restart: one step
        ChaosSchedule.Unit restart = find(ChaosSchedule.Kind.API_SERVER_RESTART, true, false).unit();
        assertEquals(List.of("restartApiServer: {}"), restart.steps().stream().map(ChaosSchedule.Step::text).toList());
        // on the embedded mock too: a node deleted, a window
        assertEquals(ChaosSchedule.Kind.NODE_DELETED, find(ChaosSchedule.Kind.NODE_DELETED, false, true).unit().kind());
        assertEquals(ChaosSchedule.Kind.MAINTENANCE_WINDOW, find(ChaosSchedule.Kind.MAINTENANCE_WINDOW, false,
                false).unit().kind());
    }

    /** A window opens between 1 h before and 2 h after the simulated instant of its step, and lasts 1 to 4 h. */
    @Test
    void aWindowIsDrawnAroundTheSimulatedTimeOfItsStep() throws Exception {
        int seen = 0;
        for (long seed = 1; seed <= 100; seed++) {
            for (ChaosSchedule.Unit u : ChaosSchedule.schedule(settings(seed, false)).faults()) {
                if (u.kind() != ChaosSchedule.Kind.MAINTENANCE_WINDOW) {
                    continue;
                }
                seen++;
                String text = u.steps().get(0).text();
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("startTime: \"(\\d\\d):(\\d\\d)\", "
                        + "endTime: \"(\\d\\d):(\\d\\d)\", timeZone: ([A-Za-z/]+)").matcher(text);
                assertTrue(m.find(), text);
                java.time.ZoneId zone = java.time.ZoneId.of(m.group(5));
                java.time.ZonedDateTime step = ChaosSchedule.START.plusSeconds(u.steps().get(0).at()).atZone(zone);
                int open = Integer.parseInt(m.group(1)) * 60 + Integer.parseInt(m.group(2));
                int close = Integer.parseInt(m.group(3)) * 60 + Integer.parseInt(m.group(4));
                int length = Math.floorMod(close - open, 1440);
                assertTrue(length >= 60 && length <= 240, text);
                int now = step.getHour() * 60 + step.getMinute();
                // the opening's distance from the step's local time of day, -60..+120 minutes (modulo a day)
                int d = Math.floorMod(open - now + 720, 1440) - 720;
                assertTrue(d >= -65 && d <= 120, text + " at " + step);
                assertEquals(0, open % 5, text);
                if (text.contains("days: ")) {
                    java.time.ZonedDateTime opens = step.plusMinutes(d);
                    assertTrue(text.contains("days: " + opens.getDayOfWeek().name().substring(0, 2)
                            .toLowerCase(java.util.Locale.ROOT) + ","), text + " at " + step);
                }
            }
        }
        assertTrue(seen > 20, seen + " windows in 100 seeds");
    }

    @Test
    void theRealOnlyKindsAreNeverDrawnOnTheMock() throws Exception {
        Set<ChaosSchedule.Kind> realSeen = new java.util.HashSet<>();
        for (long seed = 1; seed <= 50; seed++) {
            ChaosSchedule.Drawn mock = ChaosSchedule.schedule(settings(seed, false));
            for (ChaosSchedule.Unit u : mock.units()) {
                assertFalse(ChaosSchedule.REAL_ONLY.contains(u.kind()), "seed " + seed + ": " + u.kind());
            }
            assertEquals(List.of(), ScenarioCommand.embeddedRefusals(Scenario.parse("m.yaml", mock.render())),
                    "seed " + seed);
            ChaosSchedule.schedule(settings(seed, true)).faults().forEach(u -> realSeen.add(u.kind()));
        }
        assertTrue(realSeen.containsAll(ChaosSchedule.REAL_ONLY), realSeen.toString());
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

    /** A policy file's errors name its own lines, every error at once; a key given twice is refused. */
    @Test
    void aPolicyFilesErrorsNameItsOwnLines(@TempDir Path dir) throws Exception {
        Path bad = Files.writeString(dir.resolve("bad.yaml"), String.join("\n",
                "# my policy",
                "autoUpgrade: true",
                "maxParallelUpgrades: 2",
                "autoRecover: maybe",
                "maxReboots: -1",
                ""));
        String m = assertThrows(IllegalArgumentException.class, () -> ChaosCommand.policy(bad)).getMessage();
        assertTrue(m.startsWith("--policy " + bad + ":line 4: ") && m.contains("autoRecover"), m);
        assertTrue(m.contains("\n--policy " + bad + ":line 5: ") && m.contains("maxReboots"), m);
        Path twice = Files.writeString(dir.resolve("twice.yaml"), "autoUpgrade: true\nwindow: 1h\nautoUpgrade: false\n");
        m = assertThrows(IllegalArgumentException.class, () -> ChaosCommand.policy(twice)).getMessage();
        assertTrue(m.startsWith("--policy " + twice + ":line 3: ") && m.contains("autoUpgrade"), m);
        Path broken = Files.writeString(dir.resolve("broken.yaml"), "autoUpgrade: true\nwindow: [1h\n");
        m = assertThrows(IllegalArgumentException.class, () -> ChaosCommand.policy(broken)).getMessage();
        assertTrue(m.startsWith("--policy " + broken + ":line "), m);
        Path flow = Files.writeString(dir.resolve("flow.yaml"), "{autoUpgrade: true, maxReboots: -1}\n");
        m = assertThrows(IllegalArgumentException.class, () -> ChaosCommand.policy(flow)).getMessage();
        assertTrue(m.startsWith("--policy " + flow + ":line 1: ") && m.contains("maxReboots"), m);
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
