package io.npulifecycle.itests.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's main job and the CI scenario suite, run exactly as a user runs them: {@code bin/npu-lifecycle demo}
 * and {@code bin/npu-lifecycle scenario itests/scenarios/*.yaml} on simulated clusters of real runtimes, on a real
 * kube-apiserver ({@code --api real}: RBAC, the node agent's admission policy, every runtime on its own
 * ServiceAccount) unless system property {@value #API_PROPERTY} says {@code embedded}. Every scenario runs on the
 * chosen server, the API faults included: on the real one the runtimes' front proxy answers 503 for
 * {@code apiOutage} and etcd is compacted for {@code apiGone}.
 *
 * <p>The three long runs (the scenario suite, the demo, the README's demo) start when the class starts
 * ({@link #startTheLongRuns}), the suite beside the two demos one after the other, each a command on simulated clusters of its own (its own work folder, API server and
 * ports) that mostly waits on a scaled clock; each test then waits for its own run and reports its own verdict, so
 * JUnit and failsafe see the tests one after the other, as they report them correctly.
 */
class SimulatedClusterIT {

    /** System property: the API server of the demo and the suite, {@code real} (default) or {@code embedded}. */
    static final String API_PROPERTY = "itests.api";

    /**
     * Scenario files that need a real API server whatever {@value #API_PROPERTY} says: the Eviction API and the
     * disruption controller's PodDisruptionBudget status exist only there, and so do the NPUOperatorCtl's finalizer
     * (the mock deletes the CR at once) and the node-lifecycle controller.
     */
    static final Set<String> REAL_ONLY = Set.of("14-upgrade-drain.yaml", "15-upgrade-gates.yaml",
            "17-recovery-drain.yaml", "18-recovery-drain-timeout.yaml", "20-drain-force.yaml",
            "22-uncordon-during-drain.yaml", "24-cr-deleted-mid-rollout.yaml", "26-node-not-ready-during-drain.yaml");

    /**
     * System property: how many scenario files the suite runs at a time ({@code scenario --parallel N}), each on its
     * own API server; default 1.
     */
    static final String PARALLEL_PROPERTY = "itests.scenarios.parallel";

    /** @return {@value #PARALLEL_PROPERTY}, 1 to 8 */
    static int parallel() {
        String v = System.getProperty(PARALLEL_PROPERTY, "1");
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 1 && n <= 8) {
                return n;
            }
        } catch (NumberFormatException e) {
            // named below
        }
        throw new IllegalArgumentException("system property " + PARALLEL_PROPERTY + "='" + v
                + "': expected a whole number from 1 to 8");
    }

    /** @return {@code real} or {@code embedded}, from {@value #API_PROPERTY} */
    static String api() {
        String api = System.getProperty(API_PROPERTY, "real");
        if (!api.equals("real") && !api.equals("embedded")) {
            throw new IllegalArgumentException("system property " + API_PROPERTY + "='" + api
                    + "': expected real or embedded");
        }
        return api;
    }

    @TempDir
    Path tmp;

    /** The work folders and outputs of the runs {@link #startTheLongRuns} starts. */
    @TempDir
    static Path longRuns;

    /** How long a test waits for its run, in seconds: past the longest run's own timeout (the suite's 1500 s). */
    static final long RUN_WAIT_SECONDS = 1800;

    private static java.util.concurrent.ExecutorService runner;
    private static final Map<String, java.util.concurrent.Future<?>> RUNS = new java.util.concurrent.ConcurrentHashMap<>();

    /** Starts the suite, and beside it the demo and then (on a real server) the README's demo. */
    @BeforeAll
    static void startTheLongRuns() {
        // two at a time: the suite (itself two files at a time) and the demos one after the other beside it, about as
        // long as the suite; a third cluster at once starved the runs of the other test JVM (a 30 s deadline of
        // PrometheusIT's scenario was missed)
        runner = java.util.concurrent.Executors.newFixedThreadPool(2, task -> {
            Thread t = new Thread(task, "simulated-cluster-it-run");
            t.setDaemon(true);
            return t;
        });
        RUNS.put("suite", runner.submit(() -> {
            runTheScenarioSuite(longRuns);
            return null;
        }));
        RUNS.put("demo", runner.submit(() -> {
            // the upgrade drain step needs PodDisruptionBudgets and the Eviction API: a real API server
            runDemo(longRuns, api(), "demo-" + api(), text -> assertTrue(text.contains(api().equals("real")
                    ? "PASS 9 upgrade drain" : "SKIP: runs only with --api real"), text), "demo", "--api", api());
            return null;
        }));
        if (api().equals("real")) {
            RUNS.put("readme-demo", runner.submit(() -> {
                runDemo(longRuns, "embedded", "readme-demo-embedded", text -> {
                    assertTrue(text.contains("embedded API server"), text);
                    assertTrue(text.contains("PASS 6 autoRecover=false: approve the recovery"), text);
                }, "demo");
                return null;
            }));
        }
    }

    @AfterAll
    static void stopTheLongRuns() {
        runner.shutdownNow();
        RUNS.clear();
    }

    /**
     * Waits for a run {@link #startTheLongRuns} started and rethrows its failure (the assertion or exception the run
     * threw, with its kept work folder named).
     */
    private static void awaitRun(String run) throws Exception {
        java.util.concurrent.Future<?> f = RUNS.get(run);
        assertTrue(f != null, "run " + run + " was not started");
        try {
            f.get(RUN_WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }

    static Path scenarios() {
        return Path.of(System.getProperty("npu.scenarios.dir", "scenarios")).toAbsolutePath();
    }

    @Test
    void theDemoWalksTheRunbookToPass() throws Exception {
        awaitRun("demo");
    }

    /**
     * The README's main command as written, {@code bin/npu-lifecycle demo}: the embedded API server, whatever
     * {@value #API_PROPERTY} says (the embedded server applies merge patches, conflicts and watches differently from a
     * real one, so it is a run of its own).
     */
    @Test
    void theReadmeMainCommandPassesOnTheEmbeddedServer() throws Exception {
        Assumptions.assumeTrue(api().equals("real"), "with " + API_PROPERTY + "=embedded the demo test runs it");
        awaitRun("readme-demo");
    }

    /** What a test asserts on the output of a demo or {@code scenario} command that exited 0. */
    @FunctionalInterface
    interface OutputCheck {
        void check(String output) throws Exception;
    }

    /**
     * Runs {@code bin/npu-lifecycle ARGS... --work <dir>/work-<run>} to its exit and asserts the demo passed and
     * {@code check}; when it did not, its work folder is kept ({@link FailedRuns#failed}) as
     * {@code SimulatedClusterIT-<run>} and the failure names it.
     */
    private static void runDemo(Path dir, String api, String run, OutputCheck check, String... args) {
        Path work = dir.resolve("work-" + run);
        Path out = dir.resolve(run + ".txt");
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--work", work.toString()));
        try {
            long start = System.nanoTime();
            int rc = RuntimeProcess.runToExit(out, Map.of(), 600, all.toArray(new String[0]));
            System.out.printf("demo on the %s API server: exit %d in %.1f s%n", api, rc,
                    (System.nanoTime() - start) / 1e9);
            String text = Files.readString(out);
            System.out.println(text);
            assertEquals(0, rc, text);
            assertTrue(text.contains("PASS 3 upgrade to 25.5.0"), text);
            assertTrue(text.contains("PASS 5 self-healing, autoRecover=true"), text);
            assertTrue(text.contains("PASS 7 false-positive suppression"), text);
            assertTrue(text.lines().anyMatch(l -> l.startsWith("PASS in ")), text);
            check.check(text);
        } catch (Exception | AssertionError e) {
            throw FailedRuns.failed(e, FailedRuns.root(), "SimulatedClusterIT-" + run, work, out, FailedRuns.LOGS);
        }
    }

    @Test
    void theScenarioSuitePasses() throws Exception {
        awaitRun("suite");
    }

    private static void runTheScenarioSuite(Path dir) throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.list(scenarios())) {
            files = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
        assertTrue(files.size() > 8, "scenario files in " + scenarios());
        if (api().equals("embedded")) {
            runSuite(dir, "embedded", files.stream().filter(p -> !REAL_ONLY.contains(p.getFileName().toString()))
                    .toList());
        } else {
            runSuite(dir, api(), files);
        }
    }

    private static void runSuite(Path dir, String api, List<Path> files) throws Exception {
        runScenarios(dir, FailedRuns.root(), "SimulatedClusterIT-" + api, api, files, parallel(), 1500, output -> {
            assertFalse(output.contains("   FAIL "), output);
            assertEquals(files.size(), output.lines().filter(l -> l.startsWith("   PASS ")).count(), output);
        });
    }

    /**
     * Runs {@code bin/npu-lifecycle scenario FILES... --api API --parallel N --work <tmp>/work-<test>} and asserts it
     * exited 0 and
     * {@code check}. When it did not: the work folder of each file that did not pass is kept
     * ({@link FailedRuns#keepFailedScenarios}, {@code <test>-<file>}), or the whole work folder when no file can be
     * told apart (the command failed before its first scenario), and the failure names them.
     *
     * @param root where failed runs are kept ({@link FailedRuns#root()})
     * @param test the kept folders' prefix
     * @return the command's output
     */
    private static String runScenarios(Path dir, Path root, String test, String api, List<Path> files, int parallel,
            long timeoutSeconds, OutputCheck check) throws Exception {
        List<String> args = new ArrayList<>(List.of("scenario"));
        files.forEach(p -> args.add(p.toString()));
        Path work = dir.resolve("work-" + test);
        args.addAll(List.of("--api", api, "--parallel", String.valueOf(parallel), "--work", work.toString()));
        Path out = dir.resolve(test + ".txt");
        long start = System.nanoTime();
        try {
            int rc = RuntimeProcess.runToExit(out, Map.of(), timeoutSeconds, args.toArray(new String[0]));
            String text = Files.readString(out);
            System.out.println(text);
            System.out.printf("%d scenario files on the %s API server: exit %d in %.1f s%n", files.size(), api, rc,
                    (System.nanoTime() - start) / 1e9);
            assertEquals(0, rc, text);
            check.check(text);
            return text;
        } catch (Exception | AssertionError e) {
            // the command may not have exited in time: what it printed so far tells which scenario was cut short
            String text = Files.exists(out) ? Files.readString(out) : "";
            Map<String, Path> kept = FailedRuns.keepFailedScenarios(root, test, files, work, text, out);
            if (kept.isEmpty()) {
                throw FailedRuns.failed(e, root, test, work, out, FailedRuns.SUITE_LOGS);
            }
            String where = FailedRuns.describe(kept);
            System.out.print(where);
            throw new AssertionError(where + e.getMessage(), e);
        }
    }

    /**
     * A scenario that fails (on purpose) keeps its work folder, with the node agent's and the control plane's logs,
     * and the failure says where; the folder of the scenario that passed in the same run is not kept. The two run at
     * once ({@code --parallel 2}), and their outputs read as a sequential run's.
     */
    @Test
    void aFailedScenarioKeepsItsWorkFolderAndTheFailureNamesIt() throws Exception {
        Path passes = Files.writeString(tmp.resolve("passes.yaml"), String.join("\n",
                "name: passes",
                "cluster: {nodes: 1, chips: 1}",
                "steps:",
                "  - at: 0s",
                "    expect: {node: node-0, reboots: 0}",
                ""));
        Path fails = Files.writeString(tmp.resolve("fails-on-purpose.yaml"), String.join("\n",
                "name: fails on purpose",
                "cluster: {nodes: 1, chips: 1}",
                "steps:",
                "  - at: 0s",
                "    expect: {node: node-0, reboots: 7}",
                ""));
        Path root = tmp.resolve("failed-runs");
        AssertionError e = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                () -> runScenarios(tmp, root, "purpose", "embedded", List.of(fails, passes), 2, 600, output -> { }));
        Path kept = root.resolve("purpose-fails-on-purpose");
        assertTrue(e.getMessage().startsWith("fails-on-purpose.yaml: work folder of the failed run kept in " + kept
                + " (runtime logs: " + kept + "/*/home/console.log)"), e.getMessage());
        assertTrue(Files.size(kept.resolve("node-0/home/console.log")) > 0, "node agent log in " + kept);
        assertTrue(Files.exists(kept.resolve("control-plane/home/console.log")), "control plane log in " + kept);
        String output = Files.readString(kept.resolve("output.txt"));
        assertTrue(output.contains("   FAIL fails on purpose"), output);
        // --parallel 2 ran both at once; their outputs are printed whole, in the order of the files
        int first = output.indexOf("== scenario fails on purpose");
        int second = output.indexOf("== scenario passes");
        assertTrue(first >= 0 && second > output.indexOf("   FAIL fails on purpose") && second > first, output);
        assertTrue(output.contains("   PASS passes"), output);
        try (Stream<Path> s = Files.list(root)) {
            assertEquals(List.of(kept), s.toList(), "only the failed scenario is kept");
        }
    }

    @Test
    void aMalformedScenarioIsRejectedWithItsLineAndNothingRuns() throws Exception {
        Path bad = Files.writeString(tmp.resolve("bad.yaml"), String.join("\n",
                "name: typo",
                "cluster: {nodes: 1}",
                "steps:",
                "  - at: 0s",
                "    wedgee: {node: node-0, npu: 0, chip: 0}",
                ""));
        Path out = tmp.resolve("out.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 120, "scenario", bad.toString(), "--work",
                tmp.resolve("work").toString());
        String text = Files.readString(out);
        assertEquals(2, rc, text);
        assertTrue(text.contains("bad.yaml:line 5") && text.contains("wedgee"), text);
        assertTrue(text.contains("nothing was run"), text);
        assertFalse(Files.exists(tmp.resolve("work/scenario-0")), "no cluster was started");
    }
}
