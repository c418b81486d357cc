package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.api.faults.PlantedBug;

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
        if ("Is a directory".equals(e.getMessage())) {
            return "is a directory (expected a scenario file, YAML)";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
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
    static int list(List<Path> files, boolean kubelet, PrintStream out, PrintStream err) {
        List<Scenario> scenarios = parseAll(files, err);
        if (scenarios == null || kubelet && refused(scenarios, err)) {
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

    /** @return whether a scenario cannot run on the real node ({@link RealNodeCluster#refusals}, each printed) */
    private static boolean refused(List<Scenario> scenarios, PrintStream err) {
        List<String> refused = new ArrayList<>();
        scenarios.forEach(s -> refused.addAll(RealNodeCluster.refusals(s)));
        refused.forEach(err::println);
        return !refused.isEmpty();
    }

    static String number(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    /** Why {@code --planted-bug} is refused with {@code --kubelet}. */
    static final String KUBELET_REFUSES_PLANTED_BUG = "--planted-bug cannot be used with --kubelet: the real node's "
            + "pods run the product's images, which never plant a bug";

    /**
     * @param bug a planted bug
     * @return what a run with it prints first: {@code planted bug: NAME (breaks invariant INVARIANT on purpose, ...)}
     */
    static String plantedBugLine(PlantedBug bug) {
        return "planted bug: " + bug.bugName() + " (breaks invariant " + bug.invariant() + " on purpose: every runtime "
                + "runs with -D" + PlantedBug.PROPERTY + "=" + bug.bugName() + ", testing the chaos checker only)";
    }

    /**
     * @param option the option's name, for the message ({@code --planted-bug})
     * @param value its value
     * @return the bug of that name
     * @throws IllegalArgumentException naming the value and every valid name
     */
    static PlantedBug plantedBug(String option, String value) {
        try {
            return PlantedBug.of(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " '" + value + "': no such bug; expected one of "
                    + PlantedBug.names());
        }
    }

    /** The most files {@code --parallel} runs at a time: each brings an API server and two to four JVMs. */
    static final int MAX_PARALLEL = 8;

    /**
     * Runs the files, up to {@code parallel} at a time, each on its own simulated cluster (its own API server, runtimes,
     * ports and {@code scenario-<i>} folder), so that nothing of one file is seen by another. With {@code parallel}
     * 1 each file's output is printed as it runs; above 1 each file's output is kept and printed whole when the file
     * ends, in the order of the files (a file that ended early waits for the ones before it), so that the output reads
     * as a sequential run's.
     *
     * @param api {@value io.npulifecycle.simulator.cluster.ClusterBackend#EMBEDDED} or
     *        {@value io.npulifecycle.simulator.cluster.ClusterBackend#REAL}: the API server of every scenario
     * @param kubelet run on this machine as a real node ({@link RealNodeCluster}; {@code api} real, {@code parallel}
     *        1): a scenario it cannot run ({@link RealNodeCluster#refusals}) is refused before anything runs (2)
     * @param junit where to write the JUnit XML report, or null
     * @param parallel how many files at a time, 1 to {@value #MAX_PARALLEL}
     * @param interruption told what runs, for the message on SIGTERM
     * @return 0 when every scenario passed, 1 when one failed (or the report could not be written), 2 when a file is
     *         malformed (nothing was run)
     * @throws IllegalArgumentException when {@code parallel} is outside 1 to {@value #MAX_PARALLEL}
     */
    static int run(List<Path> files, Path work, Path install, String api, boolean kubelet, Path junit, int parallel,
            Interruption interruption, PrintStream out, PrintStream err) {
        return run(files, work, install, api, kubelet, junit, parallel, interruption, out, err, verdicts -> { });
    }

    /**
     * {@link #run(List, Path, Path, String, boolean, Path, int, Interruption, PrintStream, PrintStream)}, telling
     * {@code verdicts} each file's verdict once every file ran.
     *
     * @param verdicts given the verdicts in the order of the files, before the exit code is returned; not called when
     *        nothing was run (2)
     */
    static int run(List<Path> files, Path work, Path install, String api, boolean kubelet, Path junit, int parallel,
            Interruption interruption, PrintStream out, PrintStream err,
            java.util.function.Consumer<List<ScenarioResult>> verdicts) {
        return run(files, work, install, api, kubelet, junit, parallel, null, interruption, out, err, verdicts);
    }

    /**
     * {@link #run(List, Path, Path, String, boolean, Path, int, Interruption, PrintStream, PrintStream,
     * java.util.function.Consumer)} with a bug planted in every runtime ({@code --planted-bug}): the run says so
     * first ({@link #plantedBugLine}).
     *
     * @param plantedBug the bug, or null for the product as it is
     * @throws IllegalArgumentException also when a bug is planted on a real node ({@code kubelet}): its pods run
     *         the product's images, which never plant one
     */
    static int run(List<Path> files, Path work, Path install, String api, boolean kubelet, Path junit, int parallel,
            PlantedBug plantedBug, Interruption interruption, PrintStream out, PrintStream err,
            java.util.function.Consumer<List<ScenarioResult>> verdicts) {
        if (kubelet && plantedBug != null) {
            throw new IllegalArgumentException(KUBELET_REFUSES_PLANTED_BUG);
        }
        if (parallel < 1 || parallel > MAX_PARALLEL) {
            throw new IllegalArgumentException("parallel " + parallel + " is outside 1.." + MAX_PARALLEL);
        }
        if (kubelet && (parallel != 1 || !io.npulifecycle.simulator.cluster.ClusterBackend.REAL.equals(api))) {
            throw new IllegalArgumentException("--kubelet needs --api real and --parallel 1 (one real node per machine)");
        }
        List<Scenario> scenarios = parseAll(files, err);
        if (scenarios == null) {
            err.println("npu-lifecycle scenario: nothing was run");
            return 2;
        }
        if (kubelet && refused(scenarios, err)) {
            err.println("npu-lifecycle scenario --kubelet: nothing was run");
            return 2;
        }
        if (io.npulifecycle.simulator.cluster.ClusterBackend.EMBEDDED.equals(api)) {
            List<String> why = new ArrayList<>();
            scenarios.forEach(s -> why.addAll(embeddedRefusals(s)));
            if (!why.isEmpty()) {
                why.forEach(err::println);
                err.println("npu-lifecycle scenario --api embedded: nothing was run (run them with --api real)");
                return 2;
            }
        }
        if (plantedBug != null) {
            scenarios.forEach(s -> s.plantedBug = plantedBug);
            out.println(plantedBugLine(plantedBug));
        }
        int n = scenarios.size();
        ScenarioResult[] results = new ScenarioResult[n];
        // --parallel: each file's output until it is printed, in file order (null: printed, or not started)
        java.io.ByteArrayOutputStream[] held = new java.io.ByteArrayOutputStream[n];
        if (parallel > 1) {
            // stopped by a signal: print what the files printed so far, finished or not, so nothing is lost
            interruption.onInterrupt(() -> printHeld(held, out));
        }
        // what each running file does now, by index: read by the SIGTERM message
        java.util.Map<Integer, java.util.function.Supplier<String>> running =
                new java.util.concurrent.ConcurrentSkipListMap<>();
        interruption.doing(() -> running.isEmpty() ? "between scenarios" : String.join("; ",
                running.values().stream().map(java.util.function.Supplier::get).toList()));
        if (junit != null) {
            interruption.onInterrupt(() -> {
                List<ScenarioResult> sofar = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    Scenario s = scenarios.get(i);
                    ScenarioResult r = results[i];
                    sofar.add(r != null ? r : new ScenarioResult(s.name, s.file, 0, running.containsKey(i)
                            ? "interrupted by a signal (SIGTERM or Ctrl-C)" : "not run: interrupted by a signal",
                            List.of(), ""));
                }
                writeReport(junit, sofar, err);
            });
        }
        // on a real API server the files of a run hand their server on (restored to its state after set-up) instead
        // of each starting its own; a real node (--kubelet) has a server of its own per file
        ServerHandover handover = io.npulifecycle.simulator.cluster.ClusterBackend.REAL.equals(api) && !kubelet
                ? new ServerHandover(parallel) : null;
        try {
            if (parallel == 1) {
                runSerially(results, interruption, i -> runTracked(scenarios, i, work, install, api, kubelet,
                        handover, out, running));
            } else {
                runParallel(scenarios, parallel, results, held, work, install, api, handover, out, running,
                        interruption);
            }
        } finally {
            if (handover != null) {
                handover.close();
            }
        }
        if (interruption.signalled()) {
            // the hook reports what ran (its message, the JUnit report): files not run are not failures
            return 1;
        }
        if (handover != null && n > 1) {
            out.println("API servers: " + handover.summary());
        }
        List<ScenarioResult> all = List.of(results);
        long failed = all.stream().filter(r -> !r.passed()).count();
        out.println((failed == 0 ? "PASS" : "FAIL") + ": " + (n - failed) + " of " + n + " scenarios passed");
        out.println((n - failed) + " passed, " + failed + " failed");
        boolean written = junit == null || writeReport(junit, all, err);
        if (junit != null && written) {
            out.println("JUnit report: " + junit.toAbsolutePath());
        }
        verdicts.accept(all);
        return failed == 0 && written ? 0 : 1;
    }

    /**
     * What the embedded mock cannot do, each refused with its file and line before anything runs: a node going
     * NotReady (no node-lifecycle controller), the NPUOperatorCtl's deletion (the mock deletes at once, without the
     * control plane's finalizer) and its creation again, the API server's audit log and its restart.
     *
     * @param s a scenario
     * @return one line per step refused, empty when the mock can run it
     */
    static List<String> embeddedRefusals(Scenario s) {
        List<String> why = new ArrayList<>();
        List<Scenario.Step> all = new ArrayList<>(s.steps);
        s.cases.forEach(c -> all.addAll(c.steps()));
        all.sort(java.util.Comparator.comparingInt(Scenario.Step::line));
        for (Scenario.Step st : all) {
            Action a = st.action();
            String reason = a instanceof Action.NodeNotReady || a instanceof Action.NodeReady
                    ? "a node goes NotReady through kube-controller-manager's node-lifecycle controller"
                    : a instanceof Action.DeleteCr ? "the mock deletes the NPUOperatorCtl at once, without the control "
                            + "plane's finalizer and its cleanup"
                    : a instanceof Action.CreateCr ? "it follows a deleteCr, which the mock refuses (it deletes the "
                            + "NPUOperatorCtl at once, without the control plane's finalizer and its cleanup)"
                    : a instanceof Action.RestartApiServer ? "the embedded mock has no kube-apiserver process to "
                            + "restart"
                    : a instanceof Action.Expect e && e.apiRequests() != null
                            || st.when() != null && st.when().apiRequests() != null
                            ? "expect.apiRequests reads kube-apiserver's audit log" : null;
            if (reason != null) {
                why.add(s.file + ":line " + st.line() + ": " + st.kind() + " needs --api real: " + reason);
            }
        }
        return why;
    }

    /**
     * Runs the files one after the other until a signal stops the command: a file is not started once
     * {@link Interruption#signalled()}, and its result stays null (the hook reports it "not run").
     *
     * @param results filled by index, as far as the run got
     * @param interruption the command's
     * @param one runs file {@code i}
     */
    static void runSerially(ScenarioResult[] results, Interruption interruption,
            java.util.function.IntFunction<ScenarioResult> one) {
        for (int i = 0; i < results.length && !interruption.signalled(); i++) {
            results[i] = one.apply(i);
        }
    }

    /** Runs scenario {@code i} in {@code work/scenario-<i>}, telling {@code running} what it does meanwhile. */
    private static ScenarioResult runTracked(List<Scenario> scenarios, int i, Path work, Path install, String api,
            boolean kubelet, ServerHandover handover, PrintStream out,
            java.util.Map<Integer, java.util.function.Supplier<String>> running) {
        Scenario s = scenarios.get(i);
        String position = (i + 1) + " of " + scenarios.size();
        try {
            return runOne(s, work.resolve("scenario-" + i), install, api, kubelet, handover, out, step -> running.put(i,
                    () -> "running scenario '" + s.name + "' (" + s.file + ", " + position + "), " + step.get()));
        } finally {
            running.remove(i);
        }
    }

    /**
     * Runs the files on {@code parallel} threads, each file's output into a buffer, and prints the buffers in the
     * order of the files as they become complete.
     */
    private static void runParallel(List<Scenario> scenarios, int parallel, ScenarioResult[] results,
            java.io.ByteArrayOutputStream[] held, Path work, Path install, String api, ServerHandover handover,
            PrintStream out, java.util.Map<Integer, java.util.function.Supplier<String>> running,
            Interruption interruption) {
        int n = scenarios.size();
        java.util.concurrent.atomic.AtomicInteger threads = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(
                Math.min(parallel, n), task -> {
                    Thread t = new Thread(task, "scenario-runner-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        List<java.util.concurrent.Future<String>> outputs = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                int index = i;
                outputs.add(pool.submit(() -> {
                    if (interruption.signalled()) {
                        return ""; // not started: the hook reports it "not run"
                    }
                    java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
                    synchronized (held) {
                        held[index] = buffer;
                    }
                    try (PrintStream own = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
                        out.println("-- started " + scenarios.get(index).file + " (" + (index + 1) + " of " + n
                                + ")");
                        results[index] = runTracked(scenarios, index, work, install, api, false, handover, own,
                                running);
                    }
                    return buffer.toString(StandardCharsets.UTF_8);
                }));
            }
            for (int i = 0; i < n; i++) {
                String text;
                try {
                    text = outputs.get(i).get();
                } catch (java.util.concurrent.ExecutionException e) {
                    // runOne turns every failure of a scenario into its verdict: this is a defect of the harness
                    Scenario s = scenarios.get(i);
                    String why = "the harness failed: " + e.getCause();
                    results[i] = new ScenarioResult(s.name, s.file, 0, why, List.of(), "");
                    text = "== scenario " + s.name + " (" + s.file + ")\n   FAIL " + s.name + " (0.0 s): " + why
                            + "\n";
                }
                synchronized (held) {
                    held[i] = null;
                    out.print(text);
                    out.flush();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running scenarios", e);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Prints, in file order, the output each started file has not had printed yet (what it printed so far, when it
     * still runs, marked so), for a run stopped by a signal.
     */
    static void printHeld(java.io.ByteArrayOutputStream[] held, PrintStream out) {
        synchronized (held) {
            for (int i = 0; i < held.length; i++) {
                java.io.ByteArrayOutputStream b = held[i];
                if (b != null) {
                    out.print(b.toString(StandardCharsets.UTF_8));
                    out.println("   (output of file " + (i + 1) + " until the signal)");
                    held[i] = null;
                }
            }
            out.flush();
        }
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
     * @param kubelet on this machine as a real node ({@link RealNodeCluster}) instead of the harness's runtimes
     * @param progress told the supplier of the step in progress, for the message on SIGTERM
     * @return its verdict
     */
    static ScenarioResult runOne(Scenario s, Path dir, Path install, String api, boolean kubelet, PrintStream out,
            java.util.function.Consumer<java.util.function.Supplier<String>> progress) {
        return runOne(s, dir, install, api, kubelet, null, out, progress);
    }

    /**
     * As {@link #runOne(Scenario, Path, Path, String, boolean, PrintStream, java.util.function.Consumer)}, on a real
     * API server handed over from an earlier file when {@code handover} holds one ({@link ServerHandover}).
     *
     * @param handover the run's servers, or null for a server of its own
     */
    static ScenarioResult runOne(Scenario s, Path dir, Path install, String api, boolean kubelet,
            ServerHandover handover, PrintStream out,
            java.util.function.Consumer<java.util.function.Supplier<String>> progress) {
        out.println("== scenario " + s.name + " (" + s.file + "): " + s.nodes + " node(s), clock x"
                + number(s.timeScale) + ", " + api + " API server" + (kubelet ? ", a real node (kubelet)" : "")
                + (s.plantedBug != null ? ", planted bug " + s.plantedBug.bugName() : ""));
        long wall = System.nanoTime();
        progress.accept(() -> "starting its cluster");
        ScenarioRunner r = null;
        String failure;
        List<ScenarioResult.CaseResult> cases = new ArrayList<>();
        long closing = 0;
        ScenarioCluster cluster = null;
        try (ScenarioCluster sim = kubelet ? new RealNodeCluster(s, dir, install, out)
                : simulated(s, dir, install, api, handover)) {
            cluster = sim;
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
            closing = System.nanoTime();
        } catch (Exception e) {
            failure = "the harness failed: " + e;
        }
        String stopFailure = cluster == null ? null : cluster.failure();
        if (stopFailure != null) {
            failure = failure == null ? stopFailure : failure + "; " + stopFailure;
        }
        long stopped = System.nanoTime();
        double secs = (stopped - wall) / 1e9;
        String timeline = r == null ? "" : r.timeline();
        if (failure == null) {
            out.printf("   PASS %s (%d steps, %d cases, %.1f s)%n", s.name, s.steps.size(), s.cases.size(), secs);
        } else {
            out.printf("   FAIL %s (%.1f s): %s%n", s.name, secs, failure);
            out.println("   runtime logs: " + (kubelet ? dir + "/node/logs/ (kubelet, containerd, kube-proxy) and "
                    + dir + "/node/kubelet/pods-logs/ (the pods)" : dir + "/*/home/console.log"));
        }
        String phases = r == null ? "" : r.phases();
        if (closing != 0) {
            phases += String.format(java.util.Locale.ROOT, ", stop %.1f s", (stopped - closing) / 1e9);
        }
        if (!phases.isEmpty()) {
            out.println("   wall time: " + phases);
        }
        out.print(timeline);
        return new ScenarioResult(s.name, s.file, secs, failure, cases, timeline);
    }

    /**
     * The log of the harness's own parts of a simulated cluster (its kubelet and DaemonSet emulation, the API
     * faults), one line each with the wall-clock instant, appended to {@code file} beside the runtimes' homes: what a
     * failed run's folder shows of who started, stopped or replaced a node agent.
     *
     * @return a consumer that never throws (a line that cannot be written is dropped)
     */
    static java.util.function.Consumer<String> harnessLog(Path file) {
        return line -> {
            try {
                java.nio.file.Files.createDirectories(file.getParent());
                java.nio.file.Files.writeString(file, java.time.Instant.now() + " " + line + "\n",
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
            } catch (java.io.IOException e) {
                // the log is a help for a failed run, never a reason to fail one
            }
        };
    }

    /** Wall-clock seconds a cluster's start and install take at most, for {@link #startOffset}. */
    static final long START_AND_INSTALL_WALL_SECONDS = 300;

    /**
     * The clocks' offset at the start of a scenario with {@code cluster.startTime}: the runtimes start that far behind
     * it (an hour of simulated time more than the cluster's start and install can take) that the one jump to it at
     * time 0 ({@link ScenarioCluster#setSimulatedTime}) goes forward, as time passing does, never back.
     *
     * @param s the scenario
     * @param anchor the clocks' anchor, epoch milliseconds
     * @return the offset, milliseconds; 0 without {@code cluster.startTime}
     */
    static long startOffset(Scenario s, long anchor) {
        if (s.startTime == null) {
            return 0;
        }
        long headroom = (long) (START_AND_INSTALL_WALL_SECONDS * 1000 * s.timeScale) + 3_600_000L;
        return s.startTime.toEpochMilli() - headroom - anchor;
    }

    /** @return the harness's own simulated cluster for a scenario, set up for the faults it injects */
    private static SimCluster simulated(Scenario s, Path dir, Path install, String api, ServerHandover handover) {
        int perNpu = s.chipType.equals("310p") ? 2 : 1;
        long anchor = System.currentTimeMillis();
        SimSettings settings = new SimSettings(s.nodes, s.chips / perNpu, perNpu, s.chipType, s.driverVersion,
                s.timeScale, anchor, System.getProperty("npu.sim.logLevel", "WARN"), startOffset(s, anchor));
        SimCluster sim = new SimCluster(settings, dir, install, api, harnessLog(dir.resolve("harness.log")));
        sim.controlPlaneReplicas(s.controlPlanes);
        sim.hostDrivers("host".equals(s.driverManagement));
        sim.markersOnTmpfs(s.uses(Action.MarkersReadOnly.class) || s.uses(Action.MarkersFull.class));
        sim.watchesFromEtcd(s.uses(Action.ApiGone.class));
        sim.auditLog(s.expects(e -> e.apiRequests() != null));
        sim.nodeLifecycle(s.uses(Action.NodeNotReady.class) || s.uses(Action.NodeReady.class));
        sim.answers503(s.uses(Action.ApiOutage.class));
        sim.handOver(handover);
        sim.plantedBug(s.plantedBug);
        return sim;
    }
}
