package io.npulifecycle.itests.browser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.npulifecycle.itests.launcher.NodeHomes;
import io.npulifecycle.itests.launcher.RuntimeProcess;
import io.npulifecycle.security.tool.PasswordHash;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * Hawtio 4 ({@code io.hawt:hawtio-default} from Maven Central, on an embedded Jetty 12 on loopback) in Debian's
 * headless Chromium, driven by playwright-core from npm, against a node agent with the simulator, connected as the
 * README says: the origin Hawtio is served from added as one {@code <allow-origin>} line to the runtime's
 * {@code etc/jolokia-access.xml} (re-read without a restart). An operator sees the {@code io.npulifecycle} tree, reads
 * HealthWatch and the Chip folder, executes {@code Simulator.wedge} (the simulator's chip is then wedged); a viewer
 * sees Execute disabled (the agent's {@code canInvoke} hints in its {@code list} answer), and an exec sent through
 * Hawtio's proxy with the viewer's credentials is refused with the reason. Screenshots of each step are kept in
 * {@code target/hawtio-browser/screenshots/}. Hawtio runs in its own JVM ({@link HawtioServer}).
 *
 * <p>Needs {@code /usr/bin/chromium} (Debian's {@code chromium}), node and npm (playwright-core is installed by
 * {@code npm ci} from {@code src/test/browser/package-lock.json}, from npm's cache when it has it); {@code .ci/run}
 * installs them. Without them the test is skipped, except under {@code CI=true}, where it fails.
 */
class HawtioBrowserIT {

    static final String OPERATOR = "hawtio-operator";
    static final String OPERATOR_PASSWORD = "hawtio-operator-password-0123";
    static final String VIEWER = "hawtio-viewer";
    static final String VIEWER_PASSWORD = "hawtio-viewer-password-0123";
    static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    @Test
    void operatorReadsTheTreeAndExecutesAWedgeAndAViewerIsRefused() throws Exception {
        requireTools();
        Path work = Path.of(System.getProperty("itests.work.dir", "target/itest-work")).getParent()
                .resolve("hawtio-browser");
        deleteTree(work);
        Files.createDirectories(work);
        Path browser = installPlaywright(work);

        NodeHomes.SimulatedNode node = NodeHomes.withSimulator(work);
        Path home = node.home();
        Files.writeString(home.resolve("etc/jolokia-users.properties"), "# Hawtio test viewer\n" + VIEWER + "=viewer:"
                + PasswordHash.create(VIEWER_PASSWORD.toCharArray(), new SecureRandom()) + "\n");

        int agentPort = LoopbackPorts.shared().allocate();
        int hawtioPort = LoopbackPorts.shared().allocate();
        String origin = "http://localhost:" + hawtioPort;
        try (RuntimeProcess rt = RuntimeProcess.start(work.resolve("agent.log"), agentPort,
                Map.of("NPU_LIFECYCLE_JOLOKIA_USER", OPERATOR, "NPU_LIFECYCLE_JOLOKIA_PASSWORD", OPERATOR_PASSWORD,
                        "NPU_LIFECYCLE_HTTP_PORT", String.valueOf(agentPort)),
                "node", "--no-shell", "--home", home.toString())) {
            rt.await("8 healthy emulated chips", Duration.ofSeconds(90), () -> rt.get(
                    "/jolokia/read/io.npulifecycle:type=HealthWatch/ExpectedChips", OPERATOR, OPERATOR_PASSWORD).body
                    .contains("0:0,1:0,2:0,3:0,4:0,5:0,6:0,7:0"));

            // The one documented setting, made as a user makes it: one line in the shipped policy, no restart.
            Path policy = home.resolve("etc/jolokia-access.xml");
            String shipped = Files.readString(policy);
            assertTrue(shipped.contains("<strict-checking/>"), shipped);
            Files.writeString(policy, shipped.replaceFirst("(\\s*)<strict-checking/>",
                    "$1<allow-origin>" + origin + "</allow-origin>$1<strict-checking/>"));

            Process jetty = hawtio(hawtioPort, work.resolve("hawtio.log"));
            try {
                List<String> cmd = List.of("node", browser.resolve("hawtio-browser.mjs").toString(),
                        origin + "/hawtio", String.valueOf(agentPort), OPERATOR, OPERATOR_PASSWORD, VIEWER,
                        VIEWER_PASSWORD, work.resolve("screenshots").toString(), CHROMIUM.toString());
                Path out = work.resolve("browser.log");
                int exit = run(cmd, browser, out, Duration.ofSeconds(150));
                String log = Files.readString(out);
                assertEquals(0, exit, "the browser script failed (screenshots in " + work.resolve("screenshots")
                        + "):\n" + log + "\nagent log tail:\n" + tail(rt.output()));
                assertTrue(log.contains("STEP tree io.npulifecycle"), log);
                assertTrue(log.contains("STEP healthwatch"), log);
                assertTrue(log.contains("STEP operator wedge 4:0 wedged"), log);
                assertTrue(log.contains("STEP viewer execute disabled"), log);
                assertTrue(log.contains("STEP viewer refused"), log);
            } finally {
                stop(jetty);
            }
            String chips = rt.get("/jolokia/read/io.npulifecycle:type=Simulator/Chips", OPERATOR,
                    OPERATOR_PASSWORD).body;
            assertTrue(chips.contains("4:0 wedged"), "the operator's wedge through Hawtio reached the node: " + chips);
            assertTrue(!chips.contains("5:0 wedged"), "the viewer's wedge of 5:0 did not: " + chips);
            String audit = Files.readString(home.resolve("logs/audit.log"));
            assertTrue(audit.contains("user=" + OPERATOR) && audit.contains("operation=wedge")
                    && audit.contains("outcome=allowed"), audit);
            assertTrue(audit.contains("user=" + VIEWER) && audit.contains("outcome=denied"), audit);
        }
    }

    /**
     * Starts {@link HawtioServer} in its own JVM (this test's class path) and waits until it serves.
     *
     * @return the process; closing its standard input stops it
     */
    static Process hawtio(int port, Path log) throws Exception {
        Path war = Path.of(System.getProperty("itests.hawtio.war", "hawtio-default.war"));
        assertTrue(Files.isRegularFile(war), "the Hawtio war from Maven Central at " + war);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                HawtioServer.class.getName(), String.valueOf(port), war.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        io.npulifecycle.testing.support.Waits.until("Hawtio served on port " + port, Duration.ofSeconds(90), () -> {
            if (!p.isAlive()) {
                throw new AssertionError("Hawtio exited (" + p.exitValue() + "):\n" + readQuietly(log));
            }
            try {
                return Files.readString(log).contains(HawtioServer.STARTED);
            } catch (java.io.IOException notYet) {
                return false;
            }
        }, () -> readQuietly(log));
        return p;
    }

    static void stop(Process p) throws InterruptedException {
        try {
            p.getOutputStream().close();
        } catch (java.io.IOException e) {
            // already gone
        }
        if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    static String readQuietly(Path p) {
        try {
            return Files.exists(p) ? tail(Files.readString(p)) : "";
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    /**
     * The browser tools, or a skip (a failure under {@code CI=true}, where {@code .ci/run} installs them).
     */
    static void requireTools() throws Exception {
        List<String> missing = new ArrayList<>();
        if (!Files.isExecutable(CHROMIUM)) {
            missing.add(CHROMIUM + " (apt-get install chromium)");
        }
        for (String tool : List.of("node", "npm")) {
            if (run(List.of(tool, "--version"), null, null, Duration.ofSeconds(30)) != 0) {
                missing.add(tool);
            }
        }
        if (!missing.isEmpty() && "true".equals(System.getenv("CI"))) {
            throw new AssertionError("HawtioBrowserIT needs " + missing + "; .ci/run installs them");
        }
        Assumptions.assumeTrue(missing.isEmpty(), "HawtioBrowserIT needs " + missing);
    }

    /** Copies the browser script and its lock file to {@code work/browser} and runs {@code npm ci} there. */
    static Path installPlaywright(Path work) throws Exception {
        Path src = Path.of(System.getProperty("itests.browser.dir", "src/test/browser"));
        Path dir = Files.createDirectories(work.resolve("browser"));
        for (String f : List.of("package.json", "package-lock.json", "hawtio-browser.mjs")) {
            Files.copy(src.resolve(f), dir.resolve(f));
        }
        Path log = work.resolve("npm-ci.log");
        if (run(List.of("npm", "ci", "--no-audit", "--no-fund"), dir, log, Duration.ofSeconds(300)) != 0) {
            throw new AssertionError("npm ci of playwright-core failed:\n" + Files.readString(log));
        }
        return dir;
    }

    /**
     * Runs a command to its end, output (stdout and stderr) to {@code log} or discarded; killed at the deadline.
     *
     * @return its exit code, -1 when it could not start, -2 when killed at the deadline
     */
    static int run(List<String> cmd, Path dir, Path log, Duration deadline) throws InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        pb.redirectOutput(log != null ? ProcessBuilder.Redirect.to(log.toFile()) : ProcessBuilder.Redirect.DISCARD);
        Process p;
        try {
            p = pb.start();
        } catch (java.io.IOException e) {
            return -1;
        }
        if (!p.waitFor(deadline.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor();
            return -2;
        }
        return p.exitValue();
    }

    static String tail(String s) {
        return s.length() <= 6000 ? s : s.substring(s.length() - 6000);
    }

    static void deleteTree(Path p) throws Exception {
        if (!Files.exists(p)) {
            return;
        }
        try (var walk = Files.walk(p)) {
            for (Path x : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(x);
            }
        }
    }
}
