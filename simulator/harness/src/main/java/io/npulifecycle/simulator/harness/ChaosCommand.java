package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.simulator.cluster.ClusterBackend;

/**
 * {@code npu-lifecycle chaos}: a simulated cluster under a random fault schedule drawn from a seed
 * ({@link ChaosSchedule}), the contract's invariants checked throughout ({@link Invariants}). Each seed's schedule is
 * written as a scenario file into the work folder ({@code chaos-seed-<N>.yaml}) and run as {@code scenario} runs it,
 * so a failing seed is a file that {@code scenario} runs again, the same way. A failing seed is then shrunk
 * ({@link ChaosShrinker}, unless {@code --no-shrink}): its faults dropped while the rest fails the same way, the result
 * written as {@code chaos-seed-<N>-shrunk.yaml}.
 */
final class ChaosCommand {

    static final String USAGE = String.join("\n",
            "Usage: npu-lifecycle chaos --seed N | --seeds A..B [--nodes K] [--duration D] [--api embedded|real]",
            "                           [--policy FILE] [--time-scale X] [--work DIR] [--junit FILE] [--keep] [--print]",
            "                           [--shrink-runs N | --no-shrink] [--planted-bug NAME]",
            "Runs a simulated cluster under a random schedule of faults drawn from each seed (chips wedging and",
            "recovering, approvals good and bad, driver versions changed and back, policy switches, an administrator's",
            "cordons, workloads under PodDisruptionBudgets (real API server), node agents and the control plane's",
            "leader SIGKILLed, the API server unreachable), then a quiet period in which every node must be upgraded",
            "and back in service; the contract's invariants are checked throughout (docs/simulator.md \"Chaos runs\").",
            "The same seed and options give the same schedule. A seed that fails is shrunk: its faults are dropped,",
            "a few at a time, while the rest still fails the same way (the same invariant broken, or the same",
            "expectation or step failing), each candidate one whole run, and the smallest is written as",
            "chaos-seed-<N>-shrunk.yaml into the work folder (npu-lifecycle scenario runs it again). Exit code 0 when",
            "every seed held, 1 when one broke an invariant or an expectation, 2 for a bad argument.",
            "",
            "  --seed N        one schedule (a whole number)",
            "  --seeds A..B    the schedules of seeds A to B, one after the other (at most 1000)",
            "  --nodes K       nodes of the simulated cluster, 1 to 16 (default 3)",
            "  --duration D    simulated length, e.g. 12h, 1d, 3d (4h to 30d; default 1d); the last quarter, at least",
            "                  3 h, is the quiet period",
            "  --api KIND      embedded (default) or real (kube-apiserver; the budgets' faults run only there)",
            "  --policy FILE   the policy the cluster starts with: a YAML mapping of the scenario policy shorthand",
            "                  (docs/simulator.md); default: automatic upgrade and recovery, one node at a time",
            "  --time-scale X  simulated seconds per wall-clock second, 10 to 1000 (default 120)",
            "  --work DIR      as scenario's; the schedules are written into it",
            "  --junit FILE    a JUnit XML report, one test suite per seed",
            "  --keep          keep the temporary work folder of a passed run too",
            "  --print         print the schedules (scenario files) and run nothing",
            "  --shrink-runs N the most runs of a candidate per failing seed when shrinking, 0 to 1000 (default "
                    + ChaosShrinker.DEFAULT_RUNS + ");",
            "                  0 does not shrink; when they run out, the smallest candidate that failed is written",
            "  --no-shrink     as --shrink-runs 0: a failing seed is left as drawn",
            "  --planted-bug NAME  testing the chaos checker only: every runtime, of the seeds' runs and of the",
            "                  shrink's, breaks one invariant on purpose (docs/simulator.md \"Planted bugs\"), one of",
            "                  " + PlantedBug.names());

    private ChaosCommand() {
    }

    /**
     * @param args the arguments after {@code chaos}
     * @param install the installation (its {@code conf/}, the runtimes)
     * @return the exit code
     */
    static int run(String[] args, Path install, PrintStream out, PrintStream err) {
        long from = 0;
        long to = 0;
        String seedsGiven = null;
        int nodes = 3;
        Duration duration = Duration.ofDays(1);
        String api = ClusterBackend.EMBEDDED;
        String policy = null;
        double timeScale = 120;
        Path work = null;
        Path junit = null;
        boolean keep = false;
        boolean print = false;
        int shrinkRuns = ChaosShrinker.DEFAULT_RUNS;
        boolean shrinkRunsGiven = false;
        boolean noShrink = false;
        PlantedBug plantedBug = null;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--help", "-h" -> {
                        out.println(USAGE);
                        return 0;
                    }
                    case "--seed" -> {
                        seedsGiven = once(seedsGiven, a);
                        from = seed(value(args, ++i, a), a);
                        to = from;
                    }
                    case "--seeds" -> {
                        seedsGiven = once(seedsGiven, a);
                        String v = value(args, ++i, a);
                        int dots = v.indexOf("..");
                        if (dots < 0) {
                            throw new IllegalArgumentException("--seeds '" + v + "': expected A..B, e.g. 1..50");
                        }
                        from = seed(v.substring(0, dots), a);
                        to = seed(v.substring(dots + 2), a);
                        if (to < from || to - from >= 1000 || to - from < 0) { // < 0: the span overflowed a long
                            throw new IllegalArgumentException("--seeds " + v + ": expected A <= B and at most 1000 "
                                    + "seeds");
                        }
                    }
                    case "--nodes" -> nodes = (int) whole(value(args, ++i, a), a, 1, 16);
                    case "--duration" -> {
                        String v = value(args, ++i, a);
                        duration = duration(v);
                        if (duration.compareTo(Duration.ofHours(4)) < 0 || duration.compareTo(Duration.ofDays(30)) > 0) {
                            throw new IllegalArgumentException("--duration " + v.trim() + " is outside 4h..30d");
                        }
                    }
                    case "--api" -> {
                        api = value(args, ++i, a);
                        if (!io.npulifecycle.simulator.cluster.ClusterBackends.KINDS.contains(api)) {
                            throw new IllegalArgumentException("--api '" + api + "': expected embedded or real");
                        }
                    }
                    case "--policy" -> policy = policy(Path.of(value(args, ++i, a)));
                    case "--time-scale" -> timeScale = whole(value(args, ++i, a), a, 10, 1000);
                    case "--work" -> work = Path.of(value(args, ++i, a));
                    case "--junit" -> junit = Path.of(value(args, ++i, a));
                    case "--keep" -> keep = true;
                    case "--print" -> print = true;
                    case "--shrink-runs" -> {
                        shrinkRuns = shrinkRuns(value(args, ++i, a));
                        shrinkRunsGiven = true;
                    }
                    case "--no-shrink" -> noShrink = true;
                    case "--planted-bug" -> plantedBug = ScenarioCommand.plantedBug(a, value(args, ++i, a));
                    default -> throw new IllegalArgumentException("unknown option '" + a + "' (--help lists them)");
                }
            }
            if (seedsGiven == null) {
                throw new IllegalArgumentException("give --seed N or --seeds A..B");
            }
            if (noShrink && shrinkRunsGiven && shrinkRuns > 0) {
                throw new IllegalArgumentException("--no-shrink and --shrink-runs " + shrinkRuns + " contradict each "
                        + "other: give one");
            }
            if (noShrink) {
                shrinkRuns = 0;
            }
        } catch (IllegalArgumentException e) {
            err.println("npu-lifecycle chaos: " + e.getMessage());
            return 2;
        }
        List<ChaosSchedule.Drawn> schedules = new ArrayList<>();
        for (long k = 0; k <= to - from; k++) { // counted from 0: seed++ past Long.MAX_VALUE would wrap
            long seed = from + k;
            try {
                schedules.add(ChaosSchedule.schedule(new ChaosSchedule.Settings(seed, nodes, duration, timeScale,
                        ClusterBackend.REAL.equals(api), policy)));
            } catch (IllegalArgumentException e) {
                err.println("npu-lifecycle chaos: " + e.getMessage());
                return 2;
            }
        }
        if (print) {
            schedules.forEach(d -> out.print(d.render()));
            return 0;
        }
        boolean temporary = work == null;
        List<Path> files = new ArrayList<>();
        try {
            if (junit != null) {
                HarnessMain.checkWritable(junit);
            }
            work = WorkFolder.prepare(work, "chaos");
            for (int i = 0; i < schedules.size(); i++) {
                files.add(Files.writeString(work.resolve("chaos-seed-" + (from + i) + ".yaml"),
                        schedules.get(i).render()));
            }
        } catch (IllegalArgumentException | IOException e) {
            err.println("npu-lifecycle chaos: " + e.getMessage());
            return 2;
        }
        out.println("chaos: " + files.size() + " schedule(s) of " + nodes + " node(s), " + duration.toHours()
                + " simulated hours each, on the " + api + " API server; written to " + work
                + " (each runs again with: npu-lifecycle scenario <file> --api " + api
                + (plantedBug == null ? "" : " --planted-bug " + plantedBug.bugName()) + ")");
        Interruption interruption = new Interruption("chaos", err).install();
        WorkFolder.keptOnInterrupt(interruption, work, out);
        int rc;
        try {
            List<ScenarioResult> verdicts = new ArrayList<>();
            rc = ScenarioCommand.run(files, work, install, api, false, junit, 1, plantedBug, interruption, out, err,
                    verdicts::addAll);
            if (shrinkRuns > 0 && !interruption.signalled()) {
                shrinkFailed(schedules, verdicts, api, plantedBug, work, shrinkRuns,
                        runner(install, api, plantedBug, interruption), out, err);
            }
        } finally {
            interruption.finished();
        }
        WorkFolder.finish(work, temporary, keep, rc, out);
        return rc;
    }

    /**
     * Shrinks each failing seed's schedule, one seed after the other ({@link ChaosShrinker#shrink}); a shrink that
     * cannot go on (a file not written, a run not made) is reported and the next seed shrunk.
     *
     * @param schedules the seeds' schedules, in the order of {@code verdicts}
     * @param verdicts each schedule's run
     * @param budget the most candidate runs per seed, at least 1
     */
    static void shrinkFailed(List<ChaosSchedule.Drawn> schedules, List<ScenarioResult> verdicts, String api,
            Path work, int budget, ChaosShrinker.Runner runner, PrintStream out, PrintStream err) {
        shrinkFailed(schedules, verdicts, api, null, work, budget, runner, out, err);
    }

    /**
     * {@link #shrinkFailed(List, List, String, Path, int, ChaosShrinker.Runner, PrintStream, PrintStream)} of a run
     * with a planted bug, named in each shrunk file's header.
     *
     * @param plantedBug the bug planted in every runtime (the runner plants it in each candidate), or null
     */
    static void shrinkFailed(List<ChaosSchedule.Drawn> schedules, List<ScenarioResult> verdicts, String api,
            PlantedBug plantedBug, Path work, int budget, ChaosShrinker.Runner runner, PrintStream out,
            PrintStream err) {
        for (int i = 0; i < verdicts.size() && i < schedules.size(); i++) {
            ScenarioResult v = verdicts.get(i);
            if (v.passed()) {
                continue;
            }
            long seed = schedules.get(i).settings().seed();
            try {
                ChaosShrinker.shrink(schedules.get(i), v.failure(), api, plantedBug, work, budget, runner, out);
            } catch (IOException | RuntimeException e) {
                err.println("npu-lifecycle chaos: seed " + seed + ": the shrink stopped: " + e);
            }
        }
    }

    /**
     * @return a runner of candidates on fresh simulated clusters, as {@code scenario} runs a file; each candidate's
     *         output goes to {@code output.log} beside its file
     */
    private static ChaosShrinker.Runner runner(Path install, String api, PlantedBug plantedBug,
            Interruption interruption) {
        return (file, scenario, dir) -> {
            if (interruption.signalled()) {
                throw new IllegalStateException("stopped by a signal: no more candidates are run");
            }
            scenario.plantedBug = plantedBug;
            Path log = file.resolveSibling("output.log");
            try (PrintStream o = new PrintStream(Files.newOutputStream(log), true,
                    java.nio.charset.StandardCharsets.UTF_8)) {
                return ScenarioCommand.runOne(scenario, dir, install, api, false, o, step -> interruption.doing(
                        () -> "shrinking: running " + file + ", " + step.get())).failure();
            }
        };
    }

    /**
     * @param v the value of {@code --shrink-runs}
     * @return it as a whole number from 0 to 1000
     * @throws IllegalArgumentException naming the option, the value and what is expected
     */
    static int shrinkRuns(String v) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0 || n > 1000) {
            throw new IllegalArgumentException("--shrink-runs '" + v + "': expected a whole number of runs from 0 (no "
                    + "shrinking) to 1000");
        }
        return (int) n;
    }

    /**
     * @param before the seed option given before, or null
     * @param option this one ({@code --seed} or {@code --seeds})
     * @return {@code option}
     * @throws IllegalArgumentException when a seed option was given before: one run has one set of seeds
     */
    private static String once(String before, String option) {
        if (before != null) {
            throw new IllegalArgumentException(option + " after " + before + ": give one of --seed N or --seeds A..B, "
                    + "once");
        }
        return option;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length || args[i].isBlank()) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static long seed(String v, String option) {
        String t = v.trim();
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " '" + v + "' is not a whole number" + (t.matches("-?[0-9]+")
                    ? " from " + Long.MIN_VALUE + " to " + Long.MAX_VALUE : ""));
        }
    }

    private static long whole(String v, String option, long min, long max) {
        long n = seed(v, option);
        if (n < min || n > max) {
            throw new IllegalArgumentException(option + " " + n + " is outside " + min + ".." + max);
        }
        return n;
    }

    /**
     * @param text {@code 12h}, {@code 1d}, {@code 90m}
     * @return the duration
     * @throws IllegalArgumentException naming the value and the form expected
     */
    static Duration duration(String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([0-9]{1,4})(m|h|d)").matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("--duration '" + text + "': expected a whole number of minutes, hours "
                    + "or days, e.g. 12h, 1d, 3d");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }

    /**
     * @param file a YAML mapping of the policy shorthand, block or flow style
     * @return it as one line of flow YAML (JSON), checked as a scenario's {@code policy:} is
     * @throws IllegalArgumentException naming the file and what is wrong: every error found, each with its line of the
     *         file ({@code --policy FILE:line N: ...}), a duplicate key among them
     */
    static String policy(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("--policy " + file + ": cannot be read: "
                    + ScenarioCommand.readError(e));
        }
        if (text.isBlank()) {
            throw new IllegalArgumentException("--policy " + file + ": the file is empty: expected a mapping of the "
                    + "policy shorthand (docs/simulator.md), e.g. {autoUpgrade: true, maxParallelUpgrades: 2}");
        }
        try {
            YamlTree.parse(text); // syntax and duplicate keys, at the file's own lines
        } catch (YamlTree.Invalid e) {
            throw invalid(file, e, 0);
        }
        String flow;
        try {
            Object tree = new tools.jackson.dataformat.yaml.YAMLMapper().readValue(text, Object.class);
            if (!(tree instanceof java.util.Map)) {
                throw new IllegalArgumentException("--policy " + file + ": expected a mapping of the policy "
                        + "shorthand (docs/simulator.md), e.g. {autoUpgrade: true, maxParallelUpgrades: 2}");
            }
            flow = new tools.jackson.databind.json.JsonMapper().writeValueAsString(tree);
        } catch (tools.jackson.core.JacksonException e) {
            throw new IllegalArgumentException("--policy " + file + ": not YAML: " + e.getOriginalMessage());
        }
        // the file's lines under "policy:", indented: line N of the file is line N + 1 of this scenario
        StringBuilder scenario = new StringBuilder("policy:\n");
        text.lines().forEach(l -> scenario.append("  ").append(l).append('\n'));
        scenario.append("steps:\n  - at: 0s\n    expect: {violations: 0}\n");
        try {
            Scenario.parse(file.toString(), scenario.toString());
        } catch (YamlTree.Invalid e) {
            throw invalid(file, e, 1);
        }
        return flow;
    }

    /** @return every error of {@code e}, one per line, each at its line of {@code file} ({@code shift} lines less) */
    private static IllegalArgumentException invalid(Path file, YamlTree.Invalid e, int shift) {
        StringBuilder b = new StringBuilder();
        for (YamlTree.Invalid x : e.all()) {
            if (b.length() > 0) {
                b.append('\n');
            }
            int line = Math.max(1, x.line() - shift);
            b.append("--policy ").append(file).append(":line ").append(line).append(": ").append(x.detail());
        }
        return new IllegalArgumentException(b.toString());
    }
}
