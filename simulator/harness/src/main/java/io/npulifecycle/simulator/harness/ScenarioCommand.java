package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code npu-lifecycle scenario FILE... [--list] [--junit FILE]}: validates every file first (each error of each file,
 * with its line), then runs each scenario on a fresh simulated cluster ({@link ScenarioRunner}) and prints, per
 * scenario, its progress, the verdict of each case, the verdict, and its {@link Timeline}; with {@code --junit}, the
 * same results as a JUnit XML report ({@link JUnitReport}); with {@code --list}, what each file would run.
 */
final class ScenarioCommand {

    private ScenarioCommand() {
    }

    /** @return why a scenario file could not be read, in words (the JDK's messages name neither cause) */
    static String readError(IOException e) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof java.nio.charset.CharacterCodingException) {
            return "not UTF-8 text (a scenario file is YAML in UTF-8)";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied";
        }
        return e.toString();
    }

    /**
     * @return the scenarios, or null when a file cannot be read or is malformed (each error printed to {@code err}
     *         as {@code <file>:line N: <what is wrong and what was expected>})
     */
    static List<Scenario> parseAll(List<Path> files, PrintStream err) {
        List<Scenario> scenarios = new ArrayList<>();
        boolean bad = false;
        for (Path f : files) {
            try {
                scenarios.add(Scenario.parse(f.toString(), Files.readString(f, StandardCharsets.UTF_8)));
            } catch (IOException e) {
                err.println(f + ": cannot be read: " + readError(e));
                bad = true;
            } catch (YamlTree.Invalid e) {
                List<YamlTree.Invalid> all = e.all();
                for (YamlTree.Invalid x : all) {
                    err.println(x.where());
                }
                if (all.size() > 1) {
                    err.println(f + ": " + all.size() + " errors");
                }
                bad = true;
            }
        }
        return bad ? null : scenarios;
    }

    /**
     * {@code --list}: validates the files and prints, without running anything, one line per scenario, per
     * reliability case and per step:
     *
     * <pre>
     * SCENARIO &lt;file&gt; | &lt;build&gt; | &lt;name&gt; | &lt;nodes&gt; node(s) x &lt;chips&gt; &lt;chipType&gt;, driver &lt;version&gt;, clock x&lt;scale&gt;
     * STEP &lt;file&gt;#&lt;n&gt; | line &lt;L&gt; | at &lt;T&gt; | &lt;the step's YAML&gt;
     * CASE &lt;file&gt;#&lt;id&gt; | &lt;build&gt; | &lt;category&gt; | &lt;name&gt; | &lt;outcome&gt;
     * STEP &lt;file&gt;#&lt;id&gt;/&lt;n&gt; | line &lt;L&gt; | at &lt;T&gt; | &lt;the step's YAML&gt;
     * </pre>
     *
     * @return 0, or 2 when a file is malformed
     */
    static int list(List<Path> files, PrintStream out, PrintStream err) {
        List<Scenario> scenarios = parseAll(files, err);
        if (scenarios == null) {
            return 2;
        }
        for (int i = 0; i < scenarios.size(); i++) {
            Scenario s = scenarios.get(i);
            String f = files.get(i).getFileName().toString();
            out.println("SCENARIO " + f + " | " + s.build + " | " + s.name + " | " + s.nodes + " node(s) x " + s.chips
                    + " " + s.chipType + ", driver " + s.driverVersion + ", clock x" + number(s.timeScale));
            steps(out, f + "#", s.steps);
            for (Scenario.Case c : s.cases) {
                out.println("CASE " + f + "#" + c.id() + " | " + s.build + " | " + c.category() + " | " + c.name()
                        + " | " + c.outcome());
                steps(out, f + "#" + c.id() + "/", c.steps());
            }
        }
        return 0;
    }

    private static void steps(PrintStream out, String prefix, List<Scenario.Step> steps) {
        int n = 0;
        for (Scenario.Step st : steps) {
            out.println("STEP " + prefix + ++n + " | line " + st.line() + " | at " + ScenarioRunner.seconds(st.at())
                    + " | " + st.yaml());
        }
    }

    static String number(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    /**
     * Runs the files.
     *
     * @param api {@value io.npulifecycle.simulator.cluster.ClusterBackend#EMBEDDED} or
     *        {@value io.npulifecycle.simulator.cluster.ClusterBackend#REAL}: the API server of every scenario
     * @param junit where to write the JUnit XML report, or null
     * @param interruption told what runs, for the message on SIGTERM
     * @return 0 when every scenario passed, 1 when one failed (or the report could not be written), 2 when a file is
     *         malformed (nothing was run)
     */
    static int run(List<Path> files, Path work, Path install, String api, Path junit, Interruption interruption,
            PrintStream out, PrintStream err) {
        List<Scenario> scenarios = parseAll(files, err);
        if (scenarios == null) {
            err.println("npu-lifecycle scenario: nothing was run");
            return 2;
        }
        List<ScenarioResult> results = new java.util.concurrent.CopyOnWriteArrayList<>();
        if (junit != null) {
            interruption.onInterrupt(() -> {
                List<ScenarioResult> sofar = new ArrayList<>(results);
                for (int i = sofar.size(); i < scenarios.size(); i++) {
                    Scenario s = scenarios.get(i);
                    sofar.add(new ScenarioResult(s.name, s.file, 0, i == results.size() ? "interrupted by a signal "
                            + "(SIGTERM or Ctrl-C)" : "not run: interrupted by a signal", List.of(), ""));
                }
                writeReport(junit, sofar, err);
            });
        }
        int i = 0;
        for (Scenario s : scenarios) {
            Path dir = work.resolve("scenario-" + i++);
            String position = i + " of " + scenarios.size();
            ScenarioResult r = runOne(s, dir, install, api, out,
                    step -> interruption.doing(() -> "running scenario '" + s.name + "' (" + s.file + ", " + position
                            + "), " + step.get()));
            results.add(r);
        }
        long failed = results.stream().filter(r -> !r.passed()).count();
        out.println((failed == 0 ? "PASS" : "FAIL") + ": " + (scenarios.size() - failed) + " of " + scenarios.size()
                + " scenarios passed");
        out.println((scenarios.size() - failed) + " passed, " + failed + " failed");
        boolean written = junit == null || writeReport(junit, results, err);
        if (junit != null && written) {
            out.println("JUnit report: " + junit.toAbsolutePath());
        }
        return failed == 0 && written ? 0 : 1;
    }

    private static boolean writeReport(Path junit, List<ScenarioResult> results, PrintStream err) {
        try {
            JUnitReport.write(junit, results);
            return true;
        } catch (IOException e) {
            err.println("npu-lifecycle scenario: --junit " + junit + ": " + e.getMessage());
            return false;
        }
    }

    /**
     * Runs one scenario on a fresh simulated cluster and prints its verdict and timeline.
     *
     * @param progress told the supplier of the step in progress, for the message on SIGTERM
     * @return its verdict
     */
    static ScenarioResult runOne(Scenario s, Path dir, Path install, String api, PrintStream out,
            java.util.function.Consumer<java.util.function.Supplier<String>> progress) {
        int perNpu = s.chipType.equals("310p") ? 2 : 1;
        SimSettings settings = new SimSettings(s.nodes, s.chips / perNpu, perNpu, s.chipType, s.driverVersion,
                s.timeScale, System.currentTimeMillis(), System.getProperty("npu.sim.logLevel", "WARN"));
        out.println("== scenario " + s.name + " (" + s.file + "): " + s.nodes + " node(s), clock x"
                + number(s.timeScale) + ", " + api + " API server");
        long wall = System.nanoTime();
        progress.accept(() -> "starting its cluster");
        ScenarioRunner r = null;
        String failure;
        List<ScenarioResult.CaseResult> cases = new ArrayList<>();
        try (SimCluster sim = new SimCluster(settings, dir, install, api, line -> { })) {
            sim.controlPlaneReplicas(s.controlPlanes);
            sim.markersOnTmpfs(s.uses(Action.MarkersReadOnly.class) || s.uses(Action.MarkersFull.class));
            sim.watchesFromEtcd(s.uses(Action.ApiGone.class));
            sim.answers503(s.uses(Action.ApiOutage.class));
            r = new ScenarioRunner(s, sim, out);
            ScenarioRunner runner = r;
            progress.accept(runner::doing);
            failure = r.execute();
            String faults = sim.apiFaultSummary();
            if (faults != null) {
                out.println("   api: " + faults);
            }
            double secs = (System.nanoTime() - wall) / 1e9;
            int failedCases = 0;
            for (Scenario.Case c : s.cases) {
                String f = failure != null ? "the scenario failed: " + failure : r.caseFailure(c.id());
                boolean ok = f == null;
                failedCases += ok ? 0 : 1;
                double cs = r.caseSeconds(c.id(), secs);
                cases.add(new ScenarioResult.CaseResult(c.id(), c.category(), c.name(), c.outcome(), cs, f));
                out.printf("   CASE %s %s (%.1f s) | %s | %s | %s%s%n", ok ? "PASS" : "FAIL", c.id(), cs,
                        c.category(), c.name(), c.outcome(), ok ? "" : " :: " + f);
            }
            if (failure == null && failedCases > 0) {
                failure = failedCases + " of " + s.cases.size() + " case(s) failed";
            }
        } catch (Exception e) {
            failure = "the harness failed: " + e;
        }
        double secs = (System.nanoTime() - wall) / 1e9;
        String timeline = r == null ? "" : r.timeline();
        if (failure == null) {
            out.printf("   PASS %s (%d steps, %d cases, %.1f s)%n", s.name, s.steps.size(), s.cases.size(), secs);
        } else {
            out.printf("   FAIL %s (%.1f s): %s%n", s.name, secs, failure);
            out.println("   runtime logs: " + dir + "/*/home/console.log");
        }
        out.print(timeline);
        return new ScenarioResult(s.name, s.file, secs, failure, cases, timeline);
    }
}
