package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/npu-lifecycle cluster} run as a user runs it, from the assembled installation ({@code target/npu-lifecycle}):
 * a real API server that kubectl reaches through the printed kubeconfig, stopped by SIGTERM with nothing left behind
 * (no etcd or kube-apiserver process, no data folder, no kubeconfig); the embedded one stopped by SIGINT; bad arguments
 * refused with exit code 2. The real server's binaries come from the installation's {@code kube/apiserver/build.sh}
 * (the source tree's build already put them in its cache folder; without Go this test fails saying what to install).
 */
class ClusterCommandIT {

    /** A first build of kube-apiserver takes many minutes; a cached one starts in seconds. */
    static final Duration READY_TIMEOUT = Duration.ofMinutes(20);
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(90);
    static final Pattern DATA = Pattern.compile("data folder (\\S+)");

    @TempDir
    Path tmp;

    static Path install() {
        Path dir = Path.of(System.getProperty("npu.distribution.dir", "target/npu-lifecycle")).toAbsolutePath();
        assertTrue(Files.isExecutable(dir.resolve("bin/npu-lifecycle")), dir + " is not an assembled installation");
        return dir;
    }

    static Path kubectl() {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(d.isEmpty() ? "." : d, "kubectl");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new IllegalStateException("kubectl is not on PATH: install kubectl (.ci/run checks for it)");
    }

    record Started(Process process, Path out, Path err) {
        String text() {
            return read(out) + "\n--- stderr:\n" + read(err);
        }
    }

    Started start(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(install().resolve("bin/npu-lifecycle").toString()));
        cmd.addAll(Arrays.asList(args));
        Path out = Files.createTempFile(tmp, "cluster", ".out");
        Path err = Files.createTempFile(tmp, "cluster", ".err");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        return new Started(p, out, err);
    }

    static void awaitReady(Started s) {
        try {
            org.awaitility.Awaitility.await("bin/npu-lifecycle cluster ready").atMost(READY_TIMEOUT)
                    .pollInterval(java.time.Duration.ofMillis(200))
                    .failFast("bin/npu-lifecycle cluster exited before it was ready", () -> !s.process().isAlive())
                    .until(() -> read(s.out()).contains("npu-lifecycle cluster: ready"));
        } catch (org.awaitility.core.ConditionTimeoutException | org.awaitility.core.TerminalFailureException e) {
            fail(e.getMessage() + (s.process().isAlive() ? "" : " (exit " + s.process().exitValue() + ")") + ":\n"
                    + s.text(), e);
        }
    }

    String kubectl(Path kubeconfig, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(kubectl().toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", tmp.resolve("kube-cache").toString(), "--request-timeout", "30s"));
        cmd.addAll(Arrays.asList(args));
        Path out = Files.createTempFile(tmp, "kubectl", ".out");
        Path err = Files.createTempFile(tmp, "kubectl", ".err");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        assertTrue(p.waitFor(90, TimeUnit.SECONDS), "kubectl " + String.join(" ", args) + " did not finish");
        assertEquals(0, p.exitValue(), () -> "kubectl " + String.join(" ", args) + ": " + read(out) + read(err));
        return read(out);
    }

    @Test
    void aRealApiServerServesKubectlAndStopsCleanlyOnSigterm() throws Exception {
        Path kubeconfig = tmp.resolve("kc/config");
        Started s = start("cluster", "--api", "real", "--nodes", "3", "--kubeconfig", kubeconfig.toString());
        List<ProcessHandle> servers = List.of();
        try {
            awaitReady(s);
            String text = read(s.out());
            System.out.println(text);
            assertTrue(text.contains("kubeconfig: " + kubeconfig.toAbsolutePath()), text);
            Matcher url = Pattern.compile("master URL: (https://127\\.0\\.0\\.1:\\d+)").matcher(text);
            assertTrue(url.find(), text);
            Matcher data = DATA.matcher(text);
            assertTrue(data.find(), text);
            Path dataFolder = Path.of(data.group(1));
            assertTrue(Files.isDirectory(dataFolder), dataFolder.toString());

            String nodes = kubectl(kubeconfig, "get", "nodes");
            List<String> names = nodes.lines().skip(1).map(l -> l.split("\\s+")[0]).toList();
            assertEquals(List.of("node-0", "node-1", "node-2"), names, nodes);
            assertTrue(nodes.lines().skip(1).allMatch(l -> l.contains(" Ready ")), nodes);
            assertEquals("npuoperatorctl.npu.openfuyao.com/npuoperatorctl-sample",
                    kubectl(kubeconfig, "-n", "npu-operator", "get", "npuctl", "-o", "name").strip());
            assertEquals("yes", kubectl(kubeconfig, "auth", "can-i", "update", "nodes",
                    "--as=system:serviceaccount:npu-operator:npu-lifecycle-node-agent").strip(),
                    "the chart's manifests applied: the node agent's RBAC");
            assertTrue(kubectl(kubeconfig, "get", "validatingadmissionpolicy", "-o", "name")
                    .contains("npu-lifecycle-node-agent-own-node"), "the admission policy applied");

            servers = s.process().descendants().filter(h -> command(h).map(c -> c.endsWith("/kube-apiserver")
                    || c.endsWith("/etcd")).orElse(false)).toList();
            assertEquals(2, servers.size(), "kube-apiserver and etcd run under the command: "
                    + s.process().descendants().map(h -> h.pid() + " " + command(h).orElse("?")).toList());

            s.process().destroy(); // SIGTERM
            assertTrue(s.process().waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS), "stopped on SIGTERM:\n"
                    + s.text());
            String after = read(s.out());
            assertTrue(after.contains("npu-lifecycle cluster: stopping"), after);
            assertTrue(after.contains("npu-lifecycle cluster: stopped: the real API server ended with its etcd, its "
                    + "data folder is removed, kubeconfig " + kubeconfig + " removed"), after);
            for (ProcessHandle h : servers) {
                assertFalse(h.isAlive(), h.pid() + " " + command(h).orElse("") + " still runs");
            }
            assertFalse(Files.exists(dataFolder), dataFolder + " removed");
            assertFalse(Files.exists(kubeconfig), kubeconfig + " removed");
        } finally {
            s.process().destroyForcibly();
            servers.forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void theEmbeddedApiServerStopsCleanlyOnSigint() throws Exception {
        Path kubeconfig = tmp.resolve("embedded-kubeconfig");
        Started s = start("cluster", "--api", "embedded", "--nodes", "1", "--kubeconfig", kubeconfig.toString());
        try {
            awaitReady(s);
            Assumptions.assumeFalse(ignoresSigint(s.process().pid()), "this test runs with SIGINT ignored (a "
                    + "background job of a shell without job control), which the command's JVM inherits: Ctrl-C "
                    + "cannot be tried here");
            assertTrue(read(s.out()).contains("master URL: http://127.0.0.1:"), s.text());
            assertEquals("node-0", kubectl(kubeconfig, "get", "nodes", "-o", "jsonpath={.items[*].metadata.name}"));
            Process kill = new ProcessBuilder("kill", "-INT", Long.toString(s.process().pid())).inheritIO().start();
            assertEquals(0, kill.waitFor());
            assertTrue(s.process().waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS), "stopped on SIGINT:\n"
                    + s.text());
            assertTrue(read(s.out()).contains("npu-lifecycle cluster: stopped: the embedded API server ended, "
                    + "kubeconfig " + kubeconfig + " removed"), s.text());
            assertFalse(Files.exists(kubeconfig));
        } finally {
            s.process().destroyForcibly();
        }
    }

    @Test
    void badArgumentsExitWith2NamingTheOption() throws Exception {
        for (String[] c : new String[][] {{"--api", "kind", "--api 'kind': expected real or embedded"},
                {"--nodes", "many", "--nodes 'many' is not a whole number"},
                {"--kubeconfig", "--kubeconfig needs a file"}}) {
            Started s = start(Stream.concat(Stream.of("cluster"), Arrays.stream(c, 0, c.length - 1))
                    .toArray(String[]::new));
            assertTrue(s.process().waitFor(60, TimeUnit.SECONDS), s.text());
            assertEquals(2, s.process().exitValue(), s.text());
            assertTrue(read(s.err()).contains("npu-lifecycle cluster: " + c[c.length - 1]), s.text());
            assertTrue(read(s.err()).contains("usage: npu-lifecycle cluster [--api real|embedded]"), s.text());
        }
    }

    /** @return whether the process has SIGINT ignored ({@code SigIgn} of /proc/PID/status, bit 2) */
    static boolean ignoresSigint(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring(7).strip(), 16) & 0x2) != 0;
            }
        }
        return false;
    }

    static Optional<String> command(ProcessHandle h) {
        return h.info().command();
    }

    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }
}
