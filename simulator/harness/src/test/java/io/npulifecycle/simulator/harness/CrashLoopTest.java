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
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * A runtime that keeps exiting on its own fails the running wait at once, naming the runtime and its last error
 * (issue #29: node-0 refused its runtime.properties forever while the install waited out its 150 s); exits the harness
 * causes, and runs that got going, do not count.
 */
class CrashLoopTest {

    @TempDir
    Path tmp;

    /**
     * A stand-in for {@code bin/npu-lifecycle ROLE --no-shell --home HOME} (the real launcher is built after the
     * harness): it refuses a {@code runtime.properties} whose {@code metrics.port} is its {@code http.port} as the
     * launcher does (the refusal on standard error, exit 2); with {@code etc/stub-hang} present it never gets to
     * the launcher's {@code started:} line; with {@code etc/stub-exit} present it prints that line, then exits 1;
     * otherwise it prints that line and runs until stopped.
     */
    private static final String STUB = String.join("\n",
            "#!/bin/bash",
            "home=$4",
            "props=\"$home/etc/runtime.properties\"",
            "http=$(sed -n 's/^http.port=//p' \"$props\")",
            "metrics=$(sed -n 's/^metrics.port=//p' \"$props\")",
            "echo \"$(date -u +%Y-%m-%dT%H:%M:%S.000Z) INFO  [Main] stub $1 runtime ${NODE_NAME:-}\"",
            "echo 'OpenJDK 64-Bit Server VM warning: Sharing is only supported for boot loader classes' >&2",
            "if [ -n \"$metrics\" ] && [ \"$metrics\" = \"$http\" ]; then",
            "  echo \"$props: metrics.port=$metrics is also the port of Jolokia (http.port or https.port): /metrics"
                    + " has its own listener\" >&2",
            "  exit 2",
            "fi",
            "if [ -e \"$home/etc/stub-hang\" ]; then",
            "  exec sleep 600",
            "fi",
            "echo \"npu-lifecycle $1 runtime stub started: Jolokia http://127.0.0.1:$http/jolokia home $home\"",
            "if [ -e \"$home/etc/stub-exit\" ]; then",
            "  echo \"$(date -u +%Y-%m-%dT%H:%M:%S.000Z) ERROR [Main] stub told to exit\"",
            "  exit 1",
            "fi",
            "exec sleep 600",
            "");

    private Path install() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("install/bin"));
        Path launcher = Files.writeString(bin.resolve("npu-lifecycle"), STUB);
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        return tmp.resolve("install");
    }

    /** @return a home whose runtime.properties gives {@code http} and {@code metrics} */
    private Path home(String name, int http, int metrics) throws Exception {
        Path etc = Files.createDirectories(tmp.resolve(name + "/home/etc"));
        Files.writeString(etc.resolve("runtime.properties"), "http.host=127.0.0.1\nhttp.port=" + http
                + "\nmetrics.port=" + metrics + "\n");
        return etc.getParent();
    }

    private static final Duration AWAIT = Duration.ofSeconds(60);

    // ---- the console log of one run ----

    @Test
    void theLastErrorIsTheLaunchersRefusalNotAWarning() {
        ConsoleLog.Run r = ConsoleLog.parse(String.join("\n",
                "2026-12-05T02:00:00.000Z INFO  [Main] starting",
                "OpenJDK 64-Bit Server VM warning: Sharing is only supported for boot loader classes",
                "/w/node-0/home/etc/runtime.properties: metrics.port=44005 is also the port of Jolokia (http.port or "
                        + "https.port): /metrics has its own listener",
                "OpenJDK 64-Bit Server VM warning: something after",
                ""));
        assertFalse(r.ready());
        assertEquals("/w/node-0/home/etc/runtime.properties: metrics.port=44005 is also the port of Jolokia "
                + "(http.port or https.port): /metrics has its own listener", r.lastError());
    }

    @Test
    void theLastErrorSkipsStackFramesWarningsAndInfo() {
        ConsoleLog.Run r = ConsoleLog.parse(String.join("\n",
                "npu-lifecycle node runtime 0.1.0 started: Jolokia http://127.0.0.1:1/jolokia home /h",
                "2026-12-05T02:00:00.000Z ERROR [Main] The framework did not come back after a restart; exiting",
                "java.lang.IllegalStateException: gone",
                "\tat a.b.C.d(C.java:1)",
                "\t... 3 more",
                "2026-12-05T02:00:01.000Z INFO  [Main] stopping",
                "2026-12-05T02:00:01.000Z WARN  [Main] slow"));
        assertTrue(r.ready());
        assertEquals("java.lang.IllegalStateException: gone", r.lastError(), "the exception's line follows the record");
        assertEquals("2026-12-05T02:00:00.000Z ERROR [Main] boom", ConsoleLog.parse(
                "2026-12-05T02:00:00.000Z ERROR [Main] boom\n\tat x.Y.z(Y.java:2)\n2026-12-05T02:00:00.000Z INFO  [M] ok")
                .lastError());
        assertEquals("2026-12-05T02:00:00.000Z INFO  [Main] only info", ConsoleLog.parse(
                "2026-12-05T02:00:00.000Z INFO  [Main] only info\n\n").lastError(), "no error: the last line");
        assertEquals("(no output)", ConsoleLog.parse("").lastError());
    }

    @Test
    void oneRunsPartOfTheFileIsRead() throws Exception {
        Path log = Files.writeString(tmp.resolve("console.log"), "first run: refused\nsecond run: refused too\n");
        assertEquals("first run: refused", ConsoleLog.read(log, 0, "first run: refused\n".length()).lastError());
        assertEquals("second run: refused too", ConsoleLog.read(log, "first run: refused\n".length(), -1)
                .lastError());
    }

    // ---- the count ----

    private static CrashLoop.Exit exit(long startSeconds, long exitSeconds, int code, boolean ready, String error) {
        return new CrashLoop.Exit(startSeconds * 1_000_000_000L, exitSeconds * 1_000_000_000L, code,
                new ConsoleLog.Run(ready, error));
    }

    @Test
    void threeExitsInARowWithoutReadyAreACrashLoopNamingTheRuntimeAndItsLastError() {
        CrashLoop c = new CrashLoop("node-0", CrashLoop.NODE_AGENT_EXITS, Path.of("/w/node-0/home/console.log"));
        c.exitedOnItsOwn(exit(100, 101, 2, false, "refused once"));
        c.exitedOnItsOwn(exit(102, 103, 2, false, "refused twice"));
        assertNull(c.failure(), "two exits are not yet a crash loop");
        c.exitedOnItsOwn(exit(104, 119, 2, false, "metrics.port=44005 is also the port of Jolokia"));
        CrashLoopException f = c.failure();
        assertNotNull(f);
        assertEquals("node-0's runtime keeps exiting (3 exits in 19 s, exit code 2): last error: metrics.port=44005 "
                + "is also the port of Jolokia (/w/node-0/home/console.log)", f.getMessage());
        assertEquals("node-0", f.runtime());
        assertEquals(3, f.exits());
    }

    @Test
    void aRunThatGotGoingOrAnExitTheHarnessCausedStartsTheCountAgain() {
        CrashLoop c = new CrashLoop("node-1", 3, Path.of("console.log"));
        c.exitedOnItsOwn(exit(0, 1, 1, false, "a"));
        c.exitedOnItsOwn(exit(1, 2, 1, false, "b"));
        c.exitedOnItsOwn(exit(2, 30, 1, true, "ran, then crashed"));
        c.exitedOnItsOwn(exit(30, 31, 1, false, "c"));
        c.exitedOnItsOwn(exit(31, 32, 1, false, "d"));
        assertNull(c.failure(), "the count started again after the run that got going: " + c.exitsInARow());
        c.endedByHarness(); // killAgent, a new driver pod
        c.exitedOnItsOwn(exit(40, 41, 1, false, "e"));
        c.exitedOnItsOwn(exit(41, 42, 1, false, "f"));
        assertNull(c.failure(), "the count started again after the kill: " + c.exitsInARow());
        c.exitedOnItsOwn(exit(42, 43, 1, false, "g"));
        assertEquals(3, c.failure().exits());
    }

    @Test
    void aControlPlaneThatNothingRestartsFailsAtItsFirstExitBeforeReady() {
        CrashLoop c = new CrashLoop("control-plane", CrashLoop.CONTROL_PLANE_EXITS, Path.of("cp/console.log"));
        c.exitedOnItsOwn(exit(0, 1, 3, false, "home is locked"));
        assertEquals("control-plane's runtime exited before it was ready (exit code 3) and nothing restarts it: "
                + "last error: home is locked (cp/console.log)", c.failure().getMessage());
    }

    // ---- a runtime process ----

    @Test
    void aRuntimeRefusingItsRuntimePropertiesIsACrashLoopAfterThreeStarts() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Path home = home("node-0", port, port); // the configuration: one port for Jolokia and metrics
        RuntimeProcess rp = new RuntimeProcess("node-0", install(), "node", home, Map.of(),
                CrashLoop.NODE_AGENT_EXITS);
        for (int i = 1; i <= 3; i++) {
            assertNull(rp.crashLoop(), "after " + (i - 1) + " exits");
            rp.start(Map.of()); // as the simulated DaemonSet restarts an agent that exited
            int exits = i;
            Awaitility.await().atMost(AWAIT).until(() -> !rp.alive() && rp.exitsInARow() == exits);
        }
        CrashLoopException f = rp.crashLoop();
        assertNotNull(f);
        assertTrue(f.getMessage().startsWith("node-0's runtime keeps exiting (3 exits in "), f.getMessage());
        assertEquals(2, f.exitCode());
        assertEquals(home.resolve("etc/runtime.properties") + ": metrics.port=" + port + " is also the port of "
                + "Jolokia (http.port or https.port): /metrics has its own listener", f.lastError());
        assertTrue(f.getMessage().endsWith(": last error: " + f.lastError() + " (" + home.resolve("console.log") + ")"),
                f.getMessage());
    }

    @Test
    void exitsTheHarnessCausesDoNotCountAndNeitherDoRunsThatGotGoing() throws Exception {
        int http = LoopbackPorts.shared().allocate();
        int metrics = LoopbackPorts.shared().allocate();
        Path home = home("node-1", http, metrics);
        RuntimeProcess rp = new RuntimeProcess("node-1", install(), "node", home, Map.of(),
                CrashLoop.NODE_AGENT_EXITS);
        Path console = home.resolve("console.log");
        Path hang = home.resolve("etc/stub-hang");
        Files.writeString(hang, "");
        for (int i = 1; i <= 4; i++) { // killAgent, four times, while the agent is still starting
            rp.start(Map.of());
            int starts = i;
            Awaitility.await().atMost(AWAIT).until(() -> Files.readString(console).split("INFO  \\[Main] stub", -1)
                    .length == starts + 1);
            rp.kill();
        }
        Files.delete(hang);
        refuseOnce(rp, home, http, metrics);
        assertEquals(1, rp.exitsInARow(), "the kills did not count");

        Files.writeString(home.resolve("etc/stub-exit"), "");
        for (int i = 1; i <= 3; i++) { // it starts, then exits on its own: a crash, not a crash loop
            rp.start(Map.of());
            Awaitility.await().atMost(AWAIT).until(() -> !rp.alive());
        }
        Files.delete(home.resolve("etc/stub-exit"));
        refuseOnce(rp, home, http, metrics);
        assertEquals(1, rp.exitsInARow(), "the runs that got going started the count again");
        assertNull(rp.crashLoop(), "4 kills, 3 exits after the start and 2 refusals are not a crash loop");
    }

    /** Starts the runtime with a refused runtime.properties, waits for the exit to be counted, then fixes the file. */
    private static void refuseOnce(RuntimeProcess rp, Path home, int http, int metrics) throws Exception {
        Path props = home.resolve("etc/runtime.properties");
        Files.writeString(props, "http.port=" + http + "\nmetrics.port=" + http + "\n");
        int before = rp.starts();
        rp.start(Map.of());
        Awaitility.await().atMost(AWAIT).until(() -> !rp.alive() && rp.exitsInARow() >= 1);
        assertEquals(before + 1, rp.starts());
        Files.writeString(props, "http.port=" + http + "\nmetrics.port=" + metrics + "\n");
    }

    // ---- a scenario ----

    @Test
    void aScenarioFailsItsInstallNamingTheNodeThatKeepsExitingAndItsError() throws Exception {
        Scenario s = Scenario.parse("crash.yaml", String.join("\n",
                "name: a node agent refused at every start",
                "cluster: {nodes: 2}",
                "steps:",
                "  - at: 0s",
                "    expect: {node: node-1, labels: {never: set}, within: 10m}",
                ""));
        SimSettings settings = new SimSettings(s.nodes, s.chips, 1, s.chipType, s.driverVersion, s.timeScale,
                System.currentTimeMillis(), "WARN");
        List<String> harnessLog = new CopyOnWriteArrayList<>();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (SimCluster sim = new SimCluster(settings, tmp.resolve("work"), install(), harnessLog::add)) {
            ScenarioRunner runner = new ScenarioRunner(s, sim, new PrintStream(out, true, StandardCharsets.UTF_8));
            sim.start(runner.extraVersions());
            // node-0 given one port for Jolokia and metrics, as two racing port picks did in the issue
            SimNode n0 = sim.nodes().get("node-0");
            Path props = n0.root().resolve("home/etc/runtime.properties");
            Files.writeString(props, "http.host=127.0.0.1\nhttp.port=" + n0.port() + "\nmetrics.port=" + n0.port()
                    + "\n");
            // what the control plane does at its start: the driver DaemonSet, whose pods start the node agents
            sim.client().apps().daemonSets().inNamespace(DaemonSetController.NAMESPACE).resource(driverDaemonSet(
                    s.driverVersion, s.chipType)).create();

            String failure = runner.executeStarted();

            assertNotNull(failure, "the scenario cannot pass");
            assertTrue(failure.startsWith("install: node-0's runtime keeps exiting (3 exits in "), failure);
            assertTrue(failure.contains(", exit code 2): last error: " + props + ": metrics.port=" + n0.port()
                    + " is also the port of Jolokia (http.port or https.port)"), failure);
            assertFalse(failure.contains("not within"), "from the crash-loop detection, not the install's timeout: "
                    + failure);
            assertNull(sim.nodes().get("node-1").runtime().crashLoop(), "node-1 runs");
            assertTrue(sim.nodes().get("node-1").runtime().alive());

            // the steps' waits fail the same way: an expect that would wait 10 minutes
            Action.Expect expect = (Action.Expect) s.steps.get(0).action();
            CrashLoopException e = assertThrows(CrashLoopException.class,
                    () -> new Expectations(sim, Map.of(), s).expect(expect, 200));
            assertEquals("node-0", e.runtime());
            assertThrows(CrashLoopException.class, () -> new Waiter(() -> { }, sim::checkRuntimes)
                    .until("something", Duration.ofMinutes(10), () -> false, () -> "nothing"));

            // and the simulated kubelet stops restarting it (CrashLoopBackOff)
            Awaitility.await().atMost(AWAIT).until(() -> harnessLog.stream().anyMatch(l -> l.startsWith(
                    "kubelet: node-0: CrashLoopBackOff, not restarted: node-0's runtime keeps exiting")));
            int starts = n0.runtime().starts();
            Awaitility.await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
                    .until(() -> n0.runtime().starts() == starts);
        }
    }

    private static DaemonSet driverDaemonSet(String version, String chip) {
        Map<String, String> labels = Map.of(DaemonSetController.APP_LABEL, DaemonSetController.APP);
        return new DaemonSetBuilder().withNewMetadata().withName("npu-driver").withNamespace(
                DaemonSetController.NAMESPACE).endMetadata()
                .withNewSpec().withNewSelector().withMatchLabels(labels).endSelector()
                .withNewTemplate().withNewMetadata().withLabels(labels).endMetadata()
                .withNewSpec().addNewContainer().withName("driver").withImage(EmbeddedCluster.driverImage(version, chip))
                .endContainer().endSpec().endTemplate().endSpec().build();
    }
}
