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

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's main job and the CI scenario suite, run exactly as a user runs them: {@code bin/npu-lifecycle demo}
 * and {@code bin/npu-lifecycle scenario itests/scenarios/*.yaml} on simulated clusters of real runtimes, on a real
 * kube-apiserver ({@code --api real}: RBAC, the node agent's admission policy, every runtime on its own
 * ServiceAccount) unless system property {@value #API_PROPERTY} says {@code embedded}. Every scenario runs on the
 * chosen server, the API faults included: on the real one the runtimes' front proxy answers 503 for
 * {@code apiOutage} and etcd is compacted for {@code apiGone}.
 */
class SimulatedClusterIT {

    /** System property: the API server of the demo and the suite, {@code real} (default) or {@code embedded}. */
    static final String API_PROPERTY = "itests.api";

    /**
     * Scenario files that need a real API server whatever {@value #API_PROPERTY} says: the Eviction API and the
     * disruption controller's PodDisruptionBudget status exist only there.
     */
    static final Set<String> REAL_ONLY = Set.of("14-upgrade-drain.yaml", "15-upgrade-gates.yaml",
            "17-recovery-drain.yaml", "18-recovery-drain-timeout.yaml");

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

    static Path scenarios() {
        return Path.of(System.getProperty("npu.scenarios.dir", "scenarios")).toAbsolutePath();
    }

    @Test
    void theDemoWalksTheRunbookToPass() throws Exception {
        String text = runDemo(api(), "demo", "--api", api(), "--work", tmp.resolve("work").toString());
        // the upgrade drain step needs PodDisruptionBudgets and the Eviction API: a real API server
        assertTrue(text.contains(api().equals("real") ? "PASS 9 upgrade drain" : "SKIP: runs only with --api real"),
                text);
    }

    /**
     * The README's main command as written, {@code bin/npu-lifecycle demo}: the embedded API server, whatever
     * {@value #API_PROPERTY} says (the embedded server applies merge patches, conflicts and watches differently from a
     * real one, so it is a run of its own).
     */
    @Test
    void theReadmeMainCommandPassesOnTheEmbeddedServer() throws Exception {
        Assumptions.assumeTrue(api().equals("real"), "with " + API_PROPERTY + "=embedded the demo test runs it");
        String text = runDemo("embedded", "demo", "--work", tmp.resolve("work-readme").toString());
        assertTrue(text.contains("embedded API server"), text);
        assertTrue(text.contains("PASS 6 autoRecover=false: approve the recovery"), text);
    }

    /** Runs {@code bin/npu-lifecycle args...} to its exit and asserts the demo passed; @return its output */
    private String runDemo(String api, String... args) throws Exception {
        Path out = tmp.resolve("demo-" + api + ".txt");
        long start = System.nanoTime();
        int rc = RuntimeProcess.runToExit(out, Map.of(), 600, args);
        System.out.printf("demo on the %s API server: exit %d in %.1f s%n", api, rc, (System.nanoTime() - start) / 1e9);
        String text = Files.readString(out);
        System.out.println(text);
        assertEquals(0, rc, text);
        assertTrue(text.contains("PASS 3 upgrade to 25.5.0"), text);
        assertTrue(text.contains("PASS 5 self-healing, autoRecover=true"), text);
        assertTrue(text.contains("PASS 7 false-positive suppression"), text);
        assertTrue(text.lines().anyMatch(l -> l.startsWith("PASS in ")), text);
        return text;
    }

    @Test
    void theScenarioSuitePasses() throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.list(scenarios())) {
            files = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
        assertTrue(files.size() > 8, "scenario files in " + scenarios());
        if (api().equals("embedded")) {
            runSuite("embedded", files.stream().filter(p -> !REAL_ONLY.contains(p.getFileName().toString())).toList());
        } else {
            runSuite(api(), files);
        }
    }

    private void runSuite(String api, List<Path> files) throws Exception {
        List<String> args = new ArrayList<>(List.of("scenario"));
        files.forEach(p -> args.add(p.toString()));
        args.addAll(List.of("--api", api, "--work", tmp.resolve("work-" + api).toString()));
        Path out = tmp.resolve("scenarios-" + api + ".txt");
        long start = System.nanoTime();
        int rc = RuntimeProcess.runToExit(out, Map.of(), 1500, args.toArray(new String[0]));
        String text = Files.readString(out);
        System.out.println(text);
        System.out.printf("%d scenario files on the %s API server: exit %d in %.1f s%n", files.size(), api, rc,
                (System.nanoTime() - start) / 1e9);
        assertEquals(0, rc, text);
        assertFalse(text.contains("   FAIL "), text);
        assertEquals(files.size(), text.lines().filter(l -> l.startsWith("   PASS ")).count(), text);
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
