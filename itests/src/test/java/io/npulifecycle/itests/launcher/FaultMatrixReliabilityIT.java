package io.npulifecycle.itests.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The fault cases of the reliability matrix (issue #7, part 3): the node agent SIGKILLed at each step of the recovery
 * and upgrade flows, the control plane killed at each state of a rollout (and both replicas killed, one restarted), the
 * API server unreachable / answering 503 / answering 410 Gone on watches during a recovery and a rollout, the wall clock
 * jumping by an hour, the marker folder full or read-only.
 *
 * <p>Every case is a case of a scenario file in {@code itests/scenarios/reliability/} (several independent cases share
 * one simulated cluster, each on its own node, run concurrently), run as a user runs it: {@code bin/npu-lifecycle
 * scenario FILE}. Each case ends with its invariants: the exact number of reboots of its node, {@code violations: 0}
 * (no driver unloaded in a running kernel), the flow completed, and nothing more happening for a while. The simulator
 * counts every reboot, so a double or an unapproved reboot fails the count.
 *
 * <p>One dynamic test per case, named {@code <category> | <case> | <expected outcome>} (category: {@code agent
 * killed}, {@code control plane killed}, {@code API outage}, {@code clock}, {@code marker folder}); the report
 * generator turns these names and results into docs/reliability.md. Files with {@code build: default} run in every
 * build; {@code build: long} ones carry the JUnit tag {@code long} (excluded by default, run with
 * {@code -Dnpu.test.excludedGroups=} or the reliability profile). The marker-folder cases mount a tmpfs, so they need
 * root (CAP_SYS_ADMIN), as the CI container has.
 *
 * <p>The API server of each file ({@link #api(String)}): the real kube-apiserver where the file's fault is an API
 * fault that can be made for real ({@link #ON_REAL}), the embedded mock otherwise ({@link #ON_MOCK} says why), or
 * every file on the mock when system property {@value SimulatedClusterIT#API_PROPERTY} is {@code embedded}.
 */
class FaultMatrixReliabilityIT {

    /**
     * Files run on a real API server: the fault is made for real in front of the runtimes (the harness's front proxy
     * cut off, or answering 503 Service Unavailable) or in etcd (compacted, so resumed watches get 410 Gone); and the
     * recovery and upgrade drains' kill points, whose Eviction API and PodDisruptionBudgets exist only there.
     */
    static final Set<String> ON_REAL = Set.of("api-unreachable.yaml", "api-503.yaml", "api-410.yaml",
            "recovery-drain-killed.yaml", "upgrade-drain-killed.yaml");

    /** Why the other files run on the embedded mock, by file; a file in neither set runs on the mock too. */
    static final Map<String, String> ON_MOCK = Map.of(
            "agent-killed-recovery.yaml", "not an API fault (the API server is covered on real by SimulatedClusterIT)",
            "agent-killed-upgrade.yaml", "not an API fault",
            "ci-representative.yaml", "not an API fault",
            "clock.yaml", "not an API fault",
            "control-plane-killed.yaml", "not an API fault",
            "control-plane-replicas.yaml", "not an API fault",
            "marker-folder.yaml", "not an API fault");

    /**
     * @param file a file of {@code itests/scenarios/reliability/}
     * @return {@code real} for a file of {@link #ON_REAL} (unless the build asks for {@code embedded} everywhere),
     *         {@code embedded} otherwise
     */
    static String api(String file) {
        return ON_REAL.contains(file) && SimulatedClusterIT.api().equals("real") ? "real" : "embedded";
    }

    /** One case as {@code bin/npu-lifecycle scenario --list} prints it. */
    record Case(String file, String id, String build, String category, String name, String outcome) {
        String displayName() {
            return category + " | " + name + " | " + outcome;
        }
    }

    /** Output of each file's run, computed by the first case of the file that runs. */
    private static final Map<String, String> RUNS = new ConcurrentHashMap<>();

    static Path folder() {
        return SimulatedClusterIT.scenarios().resolve("reliability");
    }

    static Path work() throws Exception {
        return Files.createDirectories(Path.of(System.getProperty("itests.work.dir", "target/itest-work"))
                .toAbsolutePath().resolve("reliability"));
    }

    static List<Case> cases() throws Exception {
        List<String> args = new ArrayList<>(List.of("scenario", "--list"));
        try (Stream<Path> s = Files.list(folder())) {
            s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(p -> args.add(p.toString()));
        }
        Path out = work().resolve("list.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 120, args.toArray(new String[0]));
        String text = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, rc, "scenario --list failed (a malformed reliability file?):\n" + text);
        List<Case> cases = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.startsWith("CASE ")) {
                continue;
            }
            String[] f = line.substring(5).split(" \\| ", 5);
            String[] fileAndId = f[0].split("#", 2);
            cases.add(new Case(fileAndId[0], fileAndId[1], f[1], f[2], f[3], f[4].trim()));
        }
        assertTrue(cases.size() >= 3, "cases listed:\n" + text);
        return cases;
    }

    private static Stream<DynamicTest> tests(String build) throws Exception {
        Map<String, List<Case>> byFile = new LinkedHashMap<>();
        for (Case c : cases()) {
            if (c.build().equals(build)) {
                byFile.computeIfAbsent(c.file(), k -> new ArrayList<>()).add(c);
            }
        }
        return byFile.values().stream().flatMap(List::stream)
                .map(c -> DynamicTest.dynamicTest(c.displayName(), () -> check(c)));
    }

    private static void check(Case c) throws Exception {
        String output = RUNS.computeIfAbsent(c.file(), FaultMatrixReliabilityIT::run);
        String pass = "   CASE PASS " + c.id() + " (";
        String failLine = null;
        for (String line : output.split("\n")) {
            if (line.startsWith(pass)) {
                System.out.println(c.file() + "#" + c.id() + ": " + line.trim());
                return;
            }
            if (line.startsWith("   CASE FAIL " + c.id() + " (")) {
                failLine = line.trim();
            }
        }
        // the work folders of this IT live under target/itest-work (not a JUnit temporary folder): kept as they are
        Path kept = work().resolve(c.file().replace(".yaml", "")).resolve("work");
        fail(c.file() + "#" + c.id() + ": " + (failLine != null ? failLine : "no verdict for the case")
                + "\nwork folder of the run kept in " + kept + " (runtime logs: " + kept + "/" + FailedRuns.SUITE_LOGS
                + ")\n--- output of bin/npu-lifecycle scenario " + c.file() + " ---\n" + output);
    }

    private static String run(String file) {
        try {
            Path dir = work().resolve(file.replace(".yaml", ""));
            Files.createDirectories(dir);
            // a fresh cluster every run: the emulated hosts (simulator state, staged driver, markers) of a previous
            // run would otherwise be reused, e.g. nodes still on 25.5.0 never validate the 25.2.0 install
            Path previous = dir.resolve("work");
            if (Files.exists(previous)) {
                try (Stream<Path> all = Files.walk(previous)) {
                    for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                }
            }
            Path out = dir.resolve("output.txt");
            long start = System.nanoTime();
            int rc = RuntimeProcess.runToExit(out, Map.of(), 2400, "scenario", folder().resolve(file).toString(),
                    "--api", api(file), "--work", dir.resolve("work").toString());
            String text = Files.readString(out, StandardCharsets.UTF_8);
            System.out.printf("%s (%s API server%s): exit %d in %.1f s%n", file, api(file),
                    ON_MOCK.containsKey(file) ? ": " + ON_MOCK.get(file) : "", rc, (System.nanoTime() - start) / 1e9);
            return text;
        } catch (Exception e) {
            return "the scenario could not be run: " + e;
        }
    }

    /** The representative cases: every build (well under 3 minutes). */
    @TestFactory
    Stream<DynamicTest> faultCases() throws Exception {
        return tests("default");
    }

    /**
     * Every other case: {@code -Dnpu.test.excludedGroups=} (or the reliability profile). About 15 minutes on the 2-core
     * machine: its 10 files one after the other, 33 s (marker-folder.yaml) to 160 s (agent-killed-upgrade.yaml) each,
     * most 60 to 80 s, measured file by file with the launcher beside other work (load 11 to 28), 2026-12-05.
     */
    @Tag("long")
    @TestFactory
    Stream<DynamicTest> longFaultCases() throws Exception {
        return tests("long");
    }
}
