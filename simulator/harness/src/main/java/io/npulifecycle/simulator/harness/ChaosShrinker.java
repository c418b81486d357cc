package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.npulifecycle.api.faults.PlantedBug;

/**
 * Shrinks the schedule of a failing chaos seed to a small one that fails the same way, and writes it as a scenario
 * file ({@code chaos-seed-<N>-shrunk.yaml}) that {@code npu-lifecycle scenario} runs again.
 *
 * <ul>
 * <li><b>Units.</b> The shrink keeps or drops whole faults ({@link ChaosSchedule.Unit}: a wedge with its recover, a
 * cordon with its uncordon, a pod with its budget and the budget's deletion, any other fault alone), never single
 * steps, so every candidate is a coherent schedule. The quiet period is not a unit: every candidate has the one its
 * units need ({@link ChaosSchedule.Drawn#render(List)}: the uncordons and budget deletions of what is still standing,
 * the last version a kept unit set).</li>
 * <li><b>The same failure</b> ({@link #signature}): the same invariant broken, when the failure is a broken invariant;
 * otherwise the same kind of step failing at its line, and for an expectation the same checks (its fields other than
 * {@code node}, {@code within} and {@code holdFor}). A failure that is neither (the cluster's install failed, the
 * harness failed) is not shrunk: no candidate could be told to fail "the same way".</li>
 * <li><b>The search</b> ({@link #ddmin}): Zeller's delta debugging over the units (try each of n chunks, then each
 * complement, else split finer), each candidate tried at most once.</li>
 * <li><b>The budget</b>: each candidate is one whole {@code scenario} run (minutes of wall clock), at most
 * {@code budget} of them; when it runs out, the smallest candidate that failed the same way is the result. The file is
 * written again after each smaller one, so a run stopped by a signal leaves the best found so far.</li>
 * </ul>
 *
 * <p>Runs are on wall-clock time, so a candidate's verdict is one run's: "minimal" means that dropping any one kept
 * unit did not fail the same way in one run.
 */
final class ChaosShrinker {

    /** Candidate runs a shrink makes at most unless {@code --shrink-runs} says otherwise. */
    static final int DEFAULT_RUNS = 30;

    /** The failure of a broken invariant: {@code invariant <name> broken at simulated ...} ({@link Invariants}). */
    private static final Pattern INVARIANT = Pattern.compile("invariant (\\S+) broken");
    /** The failure of a step: {@code step <n> (line <L>, at <T>) <yaml>: ...} ({@link ScenarioRunner}). */
    private static final Pattern STEP = Pattern.compile("step [0-9]+ \\(line ([0-9]{1,9}), at ");

    private ChaosShrinker() {
    }

    /** Runs one candidate schedule, as {@code scenario} runs a file. */
    @FunctionalInterface
    interface Runner {
        /**
         * @param file the candidate's scenario file, written
         * @param scenario that file, parsed
         * @param dir a folder for the run's cluster (runtime homes and logs), not created yet; the shrink deletes it
         *        when the candidate is not the smallest failing one
         * @return the run's failure ({@link ScenarioResult#failure()}), or null when it passed
         * @throws IOException when the run could not be made (no verdict: the shrink stops)
         */
        String run(Path file, Scenario scenario, Path dir) throws IOException;
    }

    /**
     * What {@link #ddmin} found.
     *
     * @param kept the smallest failing candidate found, a sublist of the items in their order
     * @param runs how many times the test was run (each candidate once)
     * @param minimal whether the search ended by itself (dropping any one kept item passed); false when the budget
     *        ran out first
     */
    record Result<T>(List<T> kept, int runs, boolean minimal) {
    }

    /**
     * A shrink's outcome.
     *
     * @param file the shrunk scenario file written
     * @param signature the failure it reproduces ({@link #signature})
     * @param kept the units kept, in the order drawn
     * @param of how many units the schedule had (its faults with steps)
     * @param runs the candidate runs made
     * @param minimal whether the search ended by itself rather than by the budget
     */
    record Outcome(Path file, String signature, List<ChaosSchedule.Unit> kept, int of, int runs, boolean minimal) {
    }

    /** The budget ran out: the search stops where it is. */
    private static final class BudgetSpent extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BudgetSpent() {
            super("the budget of runs is spent", null, false, false);
        }
    }

    /**
     * What a failure is, for "fails the same way": {@code invariant <name> broken} when it starts with a broken
     * invariant; {@code expect {<checks>} failed} when a step's expectation failed (its checks: the fields it gives
     * other than {@code node}, {@code within} and {@code holdFor}, in {@link Action.Expect}'s order, so the same
     * expectation of another candidate, at another line or with another expected version, is the same);
     * {@code <kind> step failed} when another step failed (the step found by the line the failure names).
     *
     * @param failure a scenario's failure ({@link ScenarioResult#failure()}), or null
     * @param scenario the scenario that failed: its steps by line
     * @return the failure's signature, or null when the failure is null or names neither an invariant nor a step of
     *         {@code scenario}
     */
    static String signature(String failure, Scenario scenario) {
        if (failure == null) {
            return null;
        }
        Matcher m = INVARIANT.matcher(failure);
        if (m.lookingAt()) {
            return "invariant " + m.group(1) + " broken";
        }
        m = STEP.matcher(failure);
        if (!m.lookingAt()) {
            return null;
        }
        int line = Integer.parseInt(m.group(1));
        for (Scenario.Step st : scenario.steps) {
            if (st.line() == line) {
                return st.action() instanceof Action.Expect e ? "expect {" + String.join(", ", checks(e)) + "} failed"
                        : st.kind() + " step failed";
            }
        }
        return null;
    }

    /** @return the fields an expectation checks, in the record's order */
    private static List<String> checks(Action.Expect e) {
        List<String> fields = new ArrayList<>();
        for (java.lang.reflect.RecordComponent c : Action.Expect.class.getRecordComponents()) {
            if (List.of("node", "within", "holdFor").contains(c.getName())) {
                continue;
            }
            try {
                if (c.getAccessor().invoke(e) != null) {
                    fields.add(c.getName());
                }
            } catch (ReflectiveOperationException x) {
                throw new IllegalStateException("cannot read " + c.getName() + " of an expectation", x);
            }
        }
        return fields;
    }

    /**
     * Zeller's delta debugging ({@code ddmin}): the smallest sublist of {@code all} found for which {@code fails}
     * holds, {@code all} itself known to fail (not tested again). The list is split into n chunks (n = 2 first):
     * a failing chunk becomes the list (n = 2); else a failing complement (all chunks but one) becomes the list
     * (n - 1, at least 2); else n doubles, up to the list's size, where the search ends: no single item can be dropped.
     * Each candidate is tested at most once (a candidate seen before is answered from memory, free of budget).
     *
     * @param all the items, distinct, in order; known to fail
     * @param fails the test: whether a candidate (a sublist, in order) fails the same way
     * @param budget the most tests to run, at least 0
     * @return the smallest failing candidate found, the tests run, and whether the search ended by itself
     * @throws IllegalArgumentException when {@code budget} is negative
     */
    static <T> Result<T> ddmin(List<T> all, Predicate<List<T>> fails, int budget) {
        if (budget < 0) {
            throw new IllegalArgumentException("budget " + budget + " is negative");
        }
        Map<List<T>, Boolean> tried = new HashMap<>();
        List<T> c = List.copyOf(all);
        tried.put(c, true);
        int[] runs = {0};
        Predicate<List<T>> test = candidate -> {
            Boolean known = tried.get(candidate);
            if (known != null) {
                return known;
            }
            if (runs[0] >= budget) {
                throw new BudgetSpent();
            }
            runs[0]++;
            boolean failed = fails.test(candidate);
            tried.put(candidate, failed);
            return failed;
        };
        int n = 2;
        try {
            while (c.size() >= 2) {
                List<T> next = null;
                int nextN = 0;
                for (int i = 0; i < n && next == null; i++) {
                    List<T> chunk = c.subList(start(c, n, i), start(c, n, i + 1));
                    if (test.test(List.copyOf(chunk))) {
                        next = List.copyOf(chunk);
                        nextN = 2;
                    }
                }
                // with two chunks each complement is the other chunk, tried already
                for (int i = 0; i < n && next == null && n > 2; i++) {
                    List<T> rest = new ArrayList<>(c.subList(0, start(c, n, i)));
                    rest.addAll(c.subList(start(c, n, i + 1), c.size()));
                    if (test.test(List.copyOf(rest))) {
                        next = List.copyOf(rest);
                        nextN = n - 1;
                    }
                }
                if (next != null) {
                    c = next;
                    n = nextN;
                } else if (n < c.size()) {
                    n = Math.min(c.size(), 2 * n);
                } else {
                    break;
                }
            }
        } catch (BudgetSpent e) {
            return new Result<>(c, runs[0], false);
        }
        return new Result<>(c, runs[0], true);
    }

    /** @return where chunk {@code i} of {@code n} near-equal chunks of {@code c} starts ({@code i == n}: the end) */
    private static int start(List<?> c, int n, int i) {
        return (int) ((long) c.size() * i / n);
    }

    /**
     * Shrinks a failing seed's schedule and writes {@code chaos-seed-<N>-shrunk.yaml} into {@code work}. Each candidate
     * is written as {@code shrink-<N>-<k>/chaos-seed-<N>-candidate-<k>.yaml} and run by {@code runner} in
     * {@code shrink-<N>-<k>/cluster}; the cluster folder of every candidate but the smallest failing one is deleted
     * (runtime homes, hundreds of MiB each), the candidate files stay. Prints a line per candidate, then the file and
     * the units kept.
     *
     * @param schedule the seed's schedule
     * @param failure the failure of its run ({@link ScenarioResult#failure()})
     * @param api the API server it ran on, for the file's "run again with" line
     * @param work the work folder
     * @param budget the most candidate runs, at least 0 (0: the file is the whole schedule with its header)
     * @param runner runs a candidate
     * @return the outcome, or null when the failure names neither an invariant nor a step (nothing written; the
     *         reason printed)
     * @throws IOException when a file cannot be written or the runner could not run a candidate
     * @throws IllegalArgumentException when {@code budget} is negative
     */
    static Outcome shrink(ChaosSchedule.Drawn schedule, String failure, String api, Path work, int budget,
            Runner runner, PrintStream out) throws IOException {
        return shrink(schedule, failure, api, null, work, budget, runner, out);
    }

    /**
     * {@link #shrink(ChaosSchedule.Drawn, String, String, Path, int, Runner, PrintStream)} of a run with a planted
     * bug: the runner plants it in every candidate, and the file's header says to run it again with
     * {@code --planted-bug NAME}.
     *
     * @param plantedBug the bug planted in the runtimes of the seed's run and of every candidate, or null
     */
    static Outcome shrink(ChaosSchedule.Drawn schedule, String failure, String api, PlantedBug plantedBug, Path work,
            int budget, Runner runner, PrintStream out) throws IOException {
        if (budget < 0) {
            throw new IllegalArgumentException("budget " + budget + " is negative");
        }
        long seed = schedule.settings().seed();
        String want = signature(failure, parse("chaos-seed-" + seed + ".yaml", schedule.render()));
        if (want == null) {
            out.println("chaos: seed " + seed + " not shrunk: its failure names neither a broken invariant nor a "
                    + "failed step (" + abbreviate(failure) + ")");
            return null;
        }
        List<ChaosSchedule.Unit> faults = schedule.faults();
        Path shrunk = work.resolve("chaos-seed-" + seed + "-shrunk.yaml");
        out.println("chaos: shrinking seed " + seed + " (" + want + "): " + faults.size() + " faults, at most "
                + budget + " run(s) of a candidate");
        int[] k = {0};
        Path[] best = {null};
        Predicate<List<ChaosSchedule.Unit>> same = candidate -> {
            int run = ++k[0];
            Path dir = work.resolve("shrink-" + seed + "-" + run);
            try {
                Files.createDirectories(dir);
                String text = schedule.render(candidate);
                Path file = Files.writeString(dir.resolve("chaos-seed-" + seed + "-candidate-" + run + ".yaml"), text);
                Scenario s = parse(file.toString(), text);
                Path cluster = dir.resolve("cluster");
                String f = runner.run(file, s, cluster);
                String got = signature(f, s);
                boolean fails = want.equals(got);
                out.println("   shrink seed " + seed + ": run " + run + " of at most " + budget + ", "
                        + candidate.size() + " of " + faults.size() + " faults: " + (f == null ? "passed"
                                : fails ? "failed the same way" : "failed otherwise: " + (got != null ? got
                                        : abbreviate(f))));
                if (fails) {
                    if (best[0] != null && Files.exists(best[0])) {
                        WorkFolder.deleteTree(best[0]);
                    }
                    best[0] = cluster;
                    write(shrunk, schedule, candidate, want, api, plantedBug, run, null);
                } else if (Files.exists(cluster)) {
                    WorkFolder.deleteTree(cluster);
                }
                return fails;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
        Result<ChaosSchedule.Unit> r;
        try {
            r = ddmin(faults, same, budget);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        write(shrunk, schedule, r.kept(), want, api, plantedBug, r.runs(), r.minimal());
        out.println("chaos: seed " + seed + " shrunk to " + r.kept().size() + " of " + faults.size() + " faults in "
                + r.runs() + " run(s)" + (r.minimal() ? "" : " (the budget ran out first)") + ", " + want + ": "
                + shrunk + (best[0] != null && r.kept().size() < faults.size() ? " (its run: " + best[0] + ")" : ""));
        for (ChaosSchedule.Unit u : r.kept()) {
            out.println("   kept unit " + u.index() + " " + u.kindName() + ": " + u.describe());
        }
        return new Outcome(shrunk, want, r.kept(), faults.size(), r.runs(), r.minimal());
    }

    /**
     * Writes the shrunk file: a header saying what it reproduces, where it comes from and how it was found, then the
     * kept units' schedule.
     *
     * @param minimal whether the search ended by itself, false when the budget ran out, null while it goes on
     */
    private static void write(Path file, ChaosSchedule.Drawn schedule, List<ChaosSchedule.Unit> kept, String want,
            String api, PlantedBug plantedBug, int runs, Boolean minimal) throws IOException {
        String text = header(file, schedule, kept, want, api, plantedBug, runs, minimal) + schedule.render(kept);
        parse(file.toString(), text);
        Files.writeString(file, text);
    }

    /**
     * The shrunk file's header: what it reproduces, where it comes from and how it was found, how to run it again.
     *
     * @param file the shrunk file (its name is given in the "run again with" line)
     * @param kept the units kept
     * @param want the failure's signature
     * @param api the API server
     * @param plantedBug the planted bug of the run, or null
     * @param runs the candidate runs made
     * @param minimal whether the search ended by itself, false when the budget ran out, null while it goes on
     * @return the comment lines, each ending with a line feed
     */
    static String header(Path file, ChaosSchedule.Drawn schedule, List<ChaosSchedule.Unit> kept, String want,
            String api, PlantedBug plantedBug, int runs, Boolean minimal) {
        ChaosSchedule.Settings s = schedule.settings();
        String bug = plantedBug == null ? "" : " --planted-bug " + plantedBug.bugName();
        return "# shrunk by npu-lifecycle chaos (docs/simulator.md \"Chaos runs\"): reproduces " + want + "\n"
                + "# from seed " + s.seed() + ": npu-lifecycle chaos --seed " + s.seed() + " --nodes " + s.nodes()
                + " --duration " + s.duration().toHours() + "h --api " + api + " --time-scale "
                + ScenarioCommand.number(s.timeScale()) + bug + (s.policy() == null ? "" : " --policy FILE (its "
                        + "policy: below)") + "\n"
                + "# kept " + kept.size() + " of " + schedule.faults().size() + " faults after " + runs
                + " run(s) of a candidate; " + (minimal == null ? "the shrink had not ended when this was written"
                        : minimal ? "dropping any one of them did not fail the same way"
                                : "the budget of runs ran out: the smallest candidate that failed the same way")
                + "\n"
                + "# run again with: npu-lifecycle scenario " + file.getFileName() + " --api " + api + bug + "\n";
    }

    /** @return the scenario; a schedule that does not parse is a defect of {@link ChaosSchedule} */
    private static Scenario parse(String file, String text) {
        try {
            return Scenario.parse(file, text);
        } catch (YamlTree.Invalid e) {
            throw new IllegalStateException("a chaos schedule is not a valid scenario: " + e.where(), e);
        }
    }

    /** @return the first 200 characters of a failure, for one line of output */
    private static String abbreviate(String failure) {
        if (failure == null) {
            return "it passed";
        }
        return failure.length() <= 200 ? failure : failure.substring(0, 200) + "...";
    }
}
