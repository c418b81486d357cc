package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shrinking a failing chaos schedule: delta debugging on synthetic tests, the schedule's units, the candidates' quiet
 * period, the same-failure rule, and a whole shrink through a fake runner (no cluster is started).
 */
class ChaosShrinkerTest {

    private static final List<Integer> TWENTY = IntStream.range(0, 20).boxed().toList();

    static ChaosSchedule.Drawn schedule(long seed, int nodes, boolean real) {
        return ChaosSchedule.schedule(new ChaosSchedule.Settings(seed, nodes, Duration.ofDays(1), 120, real, null));
    }

    /** A test that records every candidate it is asked about, and fails when {@code fails} says so. */
    private static final class Recorder implements Predicate<List<Integer>> {
        final Predicate<List<Integer>> fails;
        final List<List<Integer>> asked = new ArrayList<>();
        List<Integer> smallestFailing = TWENTY;

        Recorder(Predicate<List<Integer>> fails) {
            this.fails = fails;
        }

        @Override
        public boolean test(List<Integer> c) {
            asked.add(c);
            boolean f = fails.test(c);
            if (f && c.size() < smallestFailing.size()) {
                smallestFailing = c;
            }
            return f;
        }
    }

    @Test
    void ddminFindsExactlyTheTwoUnitsThatFailTogether() {
        Recorder r = new Recorder(c -> c.contains(3) && c.contains(7));
        ChaosShrinker.Result<Integer> res = ChaosShrinker.ddmin(TWENTY, r, 1000);
        assertEquals(List.of(3, 7), res.kept());
        assertTrue(res.minimal());
        assertEquals(r.asked.size(), res.runs());
        assertEquals(r.asked.size(), new HashSet<>(r.asked).size(), "a candidate tried twice: " + r.asked);
        assertFalse(r.asked.contains(TWENTY), "the whole list is known to fail and is not run again");
    }

    @Test
    void ddminFindsASingleUnitThatSuffices() {
        Recorder r = new Recorder(c -> c.contains(13));
        ChaosShrinker.Result<Integer> res = ChaosShrinker.ddmin(TWENTY, r, 1000);
        assertEquals(List.of(13), res.kept());
        assertTrue(res.minimal());
        assertTrue(res.runs() <= 10, res.runs() + " runs for one unit of 20");
    }

    @Test
    void whenTheBudgetRunsOutTheSmallestFailingCandidateSeenIsTheResult() {
        for (int budget = 0; budget <= 12; budget++) {
            Recorder r = new Recorder(c -> c.contains(3) && c.contains(7));
            ChaosShrinker.Result<Integer> res = ChaosShrinker.ddmin(TWENTY, r, budget);
            assertEquals(budget, res.runs(), "budget " + budget);
            assertEquals(budget, r.asked.size());
            assertFalse(res.minimal(), "budget " + budget);
            assertEquals(r.smallestFailing, res.kept(), "budget " + budget);
        }
        // the first halving fails (0..9 holds 3 and 7), its halves pass, then the budget of 3 is spent
        assertEquals(IntStream.range(0, 10).boxed().toList(),
                ChaosShrinker.ddmin(TWENTY, c -> c.contains(3) && c.contains(7), 3).kept());
        assertThrows(IllegalArgumentException.class, () -> ChaosShrinker.ddmin(TWENTY, c -> true, -1));
    }

    @Test
    void ddminOfNothingOrOneItemRunsNothing() {
        assertEquals(List.of(), ChaosShrinker.ddmin(List.<Integer>of(), c -> true, 5).kept());
        ChaosShrinker.Result<Integer> one = ChaosShrinker.ddmin(List.of(4), c -> {
            throw new AssertionError("no run needed");
        }, 5);
        assertEquals(List.of(4), one.kept());
        assertEquals(0, one.runs());
        assertTrue(one.minimal());
    }

    @Test
    void aUnitKeepsAWedgeWithItsRecoverACordonWithItsUncordonAndAPodWithItsBudget() {
        Set<ChaosSchedule.Kind> seen = new HashSet<>();
        for (long seed = 1; seed <= 40; seed++) {
            for (boolean real : List.of(false, true)) {
                ChaosSchedule.Drawn d = schedule(seed, 3, real);
                for (ChaosSchedule.Unit u : d.units()) {
                    List<String> texts = u.steps().stream().map(ChaosSchedule.Step::text).toList();
                    String where = "seed " + seed + " unit " + u.index() + ": " + texts;
                    if (texts.isEmpty()) {
                        // drawn where it would fail or change nothing (a node deleted, the CR deleted, a node
                        // cordoned already): no step, and nothing for the quiet period
                        assertNull(u.standing(), where);
                        assertNull(u.version(), where);
                        continue;
                    }
                    switch (u.kind()) {
                        case TRANSIENT_WEDGE -> {
                            assertEquals(2, texts.size(), where);
                            assertTrue(texts.get(0).startsWith("wedge: "), where);
                            assertEquals(texts.get(0).replace("wedge: ", "recover: "), texts.get(1), where);
                            assertTrue(u.steps().get(1).at() > u.steps().get(0).at(), where);
                        }
                        case ADMIN_CORDON -> {
                            if (texts.isEmpty()) {
                                continue; // a cordon of a node cordoned already: drawn, no step
                            }
                            assertTrue(texts.get(0).startsWith("cordon: "), where);
                            if (u.standingCordon() == null) {
                                assertEquals(List.of(texts.get(0), texts.get(0).replace("cordon: ", "uncordon: ")),
                                        texts, where);
                            } else {
                                assertEquals(1, texts.size(), where);
                                assertEquals("cordon: {node: " + u.standingCordon() + "}", texts.get(0), where);
                            }
                        }
                        case BLOCKING_POD -> {
                            String name = texts.get(0).replaceAll(".*name: (work-[0-9]+),.*", "$1");
                            assertTrue(texts.get(0).startsWith("pod: "), where);
                            assertTrue(texts.get(1).startsWith("pdb: {name: " + name + ","), where);
                            if (u.standingBudget() == null) {
                                assertEquals("deletePdb: {name: " + name + ", namespace: chaos}", texts.get(2), where);
                            } else {
                                assertEquals(name, u.standingBudget(), where);
                                assertEquals(2, texts.size(), where);
                            }
                        }
                        case NODE_DELETED, NODE_NOT_READY, MAINTENANCE_WINDOW, CR_DELETED -> {
                            if (texts.isEmpty()) {
                                continue; // drawn where it would clash with another unit: no step
                            }
                            String first = texts.get(0);
                            String last = texts.get(texts.size() - 1);
                            boolean lifted = u.standing() == null;
                            assertEquals(lifted ? (u.kind() == ChaosSchedule.Kind.CR_DELETED ? 3 : 2) : 1,
                                    texts.size(), where);
                            switch (u.kind()) {
                                case NODE_DELETED -> {
                                    assertTrue(first.startsWith("deleteNode: {node: "), where);
                                    assertTrue(!lifted || last.equals(first.replace("deleteNode", "registerNode")),
                                            where);
                                    assertTrue(lifted || first.contains(u.standing().deletedNode() + "}"), where);
                                }
                                case NODE_NOT_READY -> {
                                    assertTrue(first.startsWith("nodeNotReady: {node: "), where);
                                    assertTrue(!lifted || last.equals(first.replace("nodeNotReady", "nodeReady")),
                                            where);
                                    assertTrue(lifted || first.contains(u.standing().notReadyNode() + "}"), where);
                                }
                                case MAINTENANCE_WINDOW -> {
                                    assertTrue(first.startsWith("setPolicy: {upgradePolicy: {maintenanceWindow: {"),
                                            where);
                                    assertTrue(!lifted || last.equals("setPolicy: {upgradePolicy: "
                                            + "{maintenanceWindow: null}}"), where);
                                    assertTrue(lifted || u.standing().window(), where);
                                }
                                default -> {
                                    assertEquals("deleteCr: {}", first, where);
                                    assertTrue(!lifted || texts.get(1).startsWith("expect: {npuOperatorCtl: "
                                            + "absent, within: "), where);
                                    assertTrue(!lifted || last.equals("createCr: {}"), where);
                                    assertTrue(lifted || u.standing().crDeleted(), where);
                                }
                            }
                        }
                        default -> assertEquals(1, texts.size(), where);
                    }
                    assertEquals(u.kind() == ChaosSchedule.Kind.SET_VERSION, u.version() != null, where);
                    seen.add(u.kind());
                }
            }
        }
        assertEquals(Set.of(ChaosSchedule.Kind.values()), seen, "every kind drawn in seeds 1..40");
    }

    @Test
    void theWholeScheduleRendersAsDrawnAndTheDrawIsUnchanged() {
        ChaosSchedule.Drawn d = schedule(1, 3, false);
        assertEquals(ChaosSchedule.draw(d.settings()), d.render(d.units()));
        // these settings' files, pinned by SHA-256: a seed keeps giving its file, byte for byte, until the draw itself
        // or the default policy is changed on purpose (a new fault kind changes what every seed draws: then these are
        // pinned again, and docs/chaos-runs.md says which draw its runs were made with)
        assertEquals(List.of("431766715577ba750555a66aa1d89855dc620c5d849f26380a242861ff0fd3c8",
                "476756162aa45635e8d072db4d7e91b53a9416f4aed5d315639a59236d50c74a",
                "5075b5d5883c32639ad49de4d71dbbcc3710e6d0489e0e4e38bdd32976c230b3"),
                List.of(sha256(ChaosSchedule.draw(d.settings())),
                sha256(ChaosSchedule.draw(new ChaosSchedule.Settings(7, 4, Duration.ofDays(1), 120, true, null))),
                sha256(ChaosSchedule.draw(new ChaosSchedule.Settings(3, 16, Duration.ofDays(3), 240, true,
                        "{\"autoUpgrade\":false}")))));
    }

    private static String sha256(String text) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aSubsetRendersAsAValidScenarioWithTheQuietPeriodItNeeds() throws Exception {
        ChaosSchedule.Drawn d = null;
        ChaosSchedule.Unit standing = null;
        // a schedule with a cordon that stands into the quiet period and a version set
        for (long seed = 1; standing == null; seed++) {
            assertTrue(seed < 500, "no seed up to 500 has a cordon standing into the quiet period");
            d = schedule(seed, 3, true);
            standing = d.faults().stream().filter(u -> u.standingCordon() != null).findFirst().orElse(null);
            if (d.faults().stream().noneMatch(u -> u.version() != null)) {
                standing = null;
            }
        }
        long q = d.quietStart();
        ChaosSchedule.Unit firstVersion = d.faults().stream().filter(u -> u.version() != null).findFirst()
                .orElseThrow();
        assertEquals("25.5.0", firstVersion.version());

        // the standing cordon alone: lifted by the quiet period, and the installed version expected
        Scenario alone = Scenario.parse("alone.yaml", d.render(List.of(standing)));
        assertEquals(steps(standing, q), faultSteps(alone, q));
        assertTrue(quietSteps(alone, q).contains("uncordon: {node: " + standing.standingCordon() + "}"));
        assertTrue(finalExpect(alone).contains("driverVersion: 25.2.0"), finalExpect(alone));
        assertTrue(alone.name.contains("shrunk to 1 of " + d.faults().size() + " faults"), alone.name);

        // with the first version set: that version expected; nothing of the other units
        Scenario two = Scenario.parse("two.yaml", d.render(List.of(firstVersion, standing)));
        assertTrue(finalExpect(two).contains("driverVersion: 25.5.0"), finalExpect(two));
        List<String> want = new ArrayList<>(steps(firstVersion, q));
        want.addAll(steps(standing, q));
        assertEquals(want.stream().sorted().toList(), faultSteps(two, q).stream().sorted().toList());

        // the whole schedule's last version set is expected
        String last = d.faults().stream().filter(u -> u.version() != null).reduce((a, b) -> b).orElseThrow()
                .version();
        assertTrue(finalExpect(Scenario.parse("all.yaml", d.render())).contains("driverVersion: " + last));

        // no fault at all: the quiet period alone
        String none = d.render(List.of());
        Scenario empty = Scenario.parse("none.yaml", none);
        assertTrue(none.contains("# faults: none; quiet from " + q + " s"), none);
        assertEquals(List.of(), faultSteps(empty, q));
        assertEquals(List.of("setPolicy", "expect", "expect", "expect"),
                empty.steps.stream().map(Scenario.Step::kind).toList());
        assertEquals(Invariants.ALL, empty.invariants);
    }

    /** @return a unit's steps as {@code <at>s <text>}, those at the quiet start or later left out */
    private static List<String> steps(ChaosSchedule.Unit u, long q) {
        return u.steps().stream().filter(x -> x.at() < q).map(x -> x.at() + "s " + x.text()).toList();
    }

    private static List<String> faultSteps(Scenario s, long q) {
        return s.steps.stream().filter(x -> x.at().toSeconds() < q).map(x -> x.at().toSeconds() + "s " + x.yaml())
                .toList();
    }

    private static List<String> quietSteps(Scenario s, long q) {
        return s.steps.stream().filter(x -> x.at().toSeconds() == q).map(Scenario.Step::yaml).toList();
    }

    private static String finalExpect(Scenario s) {
        return s.steps.stream().filter(x -> x.yaml().contains("driverVersion")).findFirst().orElseThrow().yaml();
    }

    @Test
    void theSameFailureIsTheSameInvariantOrTheSameExpectationOrStep() throws Exception {
        ChaosSchedule.Drawn d = schedule(1, 3, false);
        Scenario s = Scenario.parse("s.yaml", d.render());
        assertEquals("invariant every-reboot-authorised broken", ChaosShrinker.signature("invariant "
                + "every-reboot-authorised broken at simulated 5400s: node-1: ...; and step 3 (line 20, at 60s) x",
                s));
        assertEquals("invariant administrator-cordon-kept broken", ChaosShrinker.signature("invariant "
                + "administrator-cordon-kept broken at simulated 10s: x (while step 4 (line 9, at 70s) y waited for "
                + "its time)", s));
        Scenario.Step versions = s.steps.stream().filter(x -> x.yaml().contains("driverVersion")).findFirst()
                .orElseThrow();
        assertEquals("expect {labels, annotations, driverVersion, upgradeState, unschedulable} failed",
                ChaosShrinker.signature(failedAt(versions), s));
        Scenario.Step complete = s.steps.stream().filter(x -> x.yaml().contains("Complete")).findFirst()
                .orElseThrow();
        assertEquals("expect {status} failed", ChaosShrinker.signature(failedAt(complete), s));
        Scenario.Step first = s.steps.get(0);
        assertEquals(first.kind() + " step failed", ChaosShrinker.signature(failedAt(first), s));
        // the same expectation in a smaller candidate: another line, another version expected, the same signature
        Scenario smaller = Scenario.parse("t.yaml", d.render(List.of()));
        Scenario.Step there = smaller.steps.stream().filter(x -> x.yaml().contains("driverVersion")).findFirst()
                .orElseThrow();
        assertTrue(there.line() != versions.line());
        assertEquals(ChaosShrinker.signature(failedAt(versions), s), ChaosShrinker.signature(failedAt(there),
                smaller));
        assertNull(ChaosShrinker.signature("install: every node installed ... timed out", s));
        assertNull(ChaosShrinker.signature("the harness failed: java.io.IOException: x", s));
        assertNull(ChaosShrinker.signature("step 3 (line 99999, at 60s) x: y", s), "no step at that line");
        assertNull(ChaosShrinker.signature(null, s));
    }

    /** @return the failure {@link ScenarioRunner} gives a step, as the file numbers it */
    private static String failedAt(Scenario.Step st) {
        return "step 7 (line " + st.line() + ", at " + st.at().toSeconds() + "s) " + st.yaml() + ": node-1: "
                + "something else (checked at simulated 80000s)";
    }

    @Test
    void aShrinkThroughAFakeRunnerWritesTheMinimalFileWithItsHeader(@TempDir Path work) throws Exception {
        ChaosSchedule.Drawn d = schedule(1, 3, false);
        List<ChaosSchedule.Unit> faults = d.faults();
        assertTrue(faults.size() >= 12, faults.size() + " faults");
        ChaosSchedule.Unit a = faults.get(3);
        ChaosSchedule.Unit b = faults.get(faults.size() - 2);
        ChaosSchedule.Unit other = faults.get(faults.size() / 2);
        String broken = "invariant every-reboot-authorised broken at simulated 4000s: node-0: rebooted by "
                + "autoRecover=true";
        List<Path> ran = new ArrayList<>();
        ChaosShrinker.Runner fake = (file, scenario, dir) -> {
            assertTrue(Files.isRegularFile(file));
            assertFalse(Files.exists(dir), "a fresh folder for each run");
            Files.createDirectories(dir.resolve("node-0/home"));
            ran.add(file);
            String text = Files.readString(file);
            boolean hasA = has(text, a);
            boolean hasB = has(text, b);
            if (hasA && hasB) {
                return broken;
            }
            if (has(text, other)) {
                // another failure: not "the same way"
                Scenario.Step st = scenario.steps.get(0);
                return "step 1 (line " + st.line() + ", at " + st.at().toSeconds() + "s) " + st.yaml() + ": failed";
            }
            return null;
        };
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        ChaosShrinker.Outcome o = ChaosShrinker.shrink(d, broken + " (while step 12 (line 50, at 4100s) x waited for "
                + "its time)", "embedded", work, 40, fake, out);
        String printed = bytes.toString(StandardCharsets.UTF_8);
        assertNotNull(o, printed);
        assertEquals(List.of(a, b), o.kept(), printed);
        assertTrue(o.minimal(), printed);
        assertEquals(ran.size(), o.runs());
        assertEquals("invariant every-reboot-authorised broken", o.signature());
        assertEquals(work.resolve("chaos-seed-1-shrunk.yaml"), o.file());

        String text = Files.readString(o.file());
        List<String> header = text.lines().limit(4).toList();
        assertEquals("# shrunk by npu-lifecycle chaos (docs/simulator.md \"Chaos runs\"): reproduces invariant "
                + "every-reboot-authorised broken", header.get(0));
        assertEquals("# from seed 1: npu-lifecycle chaos --seed 1 --nodes 3 --duration 24h --api embedded "
                + "--time-scale 120", header.get(1));
        assertEquals("# kept 2 of " + faults.size() + " faults after " + o.runs() + " run(s) of a candidate; "
                + "dropping any one of them did not fail the same way", header.get(2));
        assertEquals("# run again with: npu-lifecycle scenario chaos-seed-1-shrunk.yaml --api embedded",
                header.get(3));
        Scenario shrunk = Scenario.parse(o.file().toString(), text);
        assertTrue(has(text, a) && has(text, b) && !has(text, other));
        assertTrue(shrunk.name.contains("shrunk to 2 of " + faults.size() + " faults"), shrunk.name);

        // every candidate's file stays; only the smallest failing one's cluster folder does
        for (Path f : ran) {
            assertTrue(Files.isRegularFile(f), f.toString());
            assertTrue(f.getParent().getFileName().toString().matches("shrink-1-[0-9]+"), f.toString());
        }
        long clusters = ran.stream().filter(f -> Files.exists(f.resolveSibling("cluster"))).count();
        assertEquals(1, clusters, "the cluster folders left");
        assertTrue(printed.contains("chaos: seed 1 shrunk to 2 of " + faults.size() + " faults in " + o.runs()
                + " run(s), invariant every-reboot-authorised broken: " + o.file()), printed);
        assertTrue(printed.contains("   kept unit " + a.index() + " " + a.kindName() + ": " + a.describe()), printed);
        assertTrue(printed.contains("failed otherwise: "), printed);
        assertTrue(printed.contains(": passed"), printed);
    }

    @Test
    void aShrinkCutShortByItsBudgetSaysSo(@TempDir Path work) throws Exception {
        ChaosSchedule.Drawn d = schedule(2, 3, false);
        ChaosSchedule.Unit a = d.faults().get(1);
        ChaosSchedule.Unit b = d.faults().get(d.faults().size() - 1);
        ChaosShrinker.Runner fake = (file, scenario, dir) -> {
            String text = Files.readString(file);
            return has(text, a) && has(text, b) ? "invariant one-reboot-per-approval broken at simulated 1s: x" : null;
        };
        ChaosShrinker.Outcome o = ChaosShrinker.shrink(d, "invariant one-reboot-per-approval broken at simulated 9s: "
                + "y", "embedded", work, 2, fake, new PrintStream(new ByteArrayOutputStream(), true,
                        StandardCharsets.UTF_8));
        assertEquals(2, o.runs());
        assertFalse(o.minimal());
        assertTrue(o.kept().contains(a) && o.kept().contains(b));
        String text = Files.readString(o.file());
        assertTrue(text.contains("run(s) of a candidate; the budget of runs ran out: the smallest candidate that "
                + "failed the same way\n"), text);
        Scenario.parse("shrunk.yaml", text);
    }

    @Test
    void aFailureThatNamesNoInvariantOrStepIsNotShrunk(@TempDir Path work) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ChaosShrinker.Outcome o = ChaosShrinker.shrink(schedule(1, 3, false), "install: node-0 never validated",
                "embedded", work, 30, (file, scenario, dir) -> {
                    throw new AssertionError("nothing is run");
                }, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertNull(o);
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("chaos: seed 1 not shrunk: its failure names "
                + "neither a broken invariant nor a failed step (install: node-0 never validated)"));
        assertFalse(Files.exists(work.resolve("chaos-seed-1-shrunk.yaml")));
    }

    /** @return whether a scenario file holds every step of the unit before the quiet period, at its second */
    static boolean has(String text, ChaosSchedule.Unit u) {
        return u.steps().stream().allMatch(x -> text.contains("  - at: " + x.at() + "s\n    " + x.text() + "\n"));
    }
}
