package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;

/**
 * {@link ClusterCommand}: bad arguments name the option (exit 2); on the embedded API, in this JVM, the nodes, the
 * CRD, the manifests and the sample are there, the kubeconfig works and is removed at the stop. The real API server
 * runs under the same command in the distribution's process test (ClusterCommandIT).
 */
class ClusterCommandTest {

    static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    record Result(int exit, String out, String err) {
    }

    static Result run(Path install, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = ClusterCommand.run(args, install, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void badArgumentsExitWith2NamingTheOption() throws Exception {
        Path foreign = Files.writeString(tmp.resolve("config"), "apiVersion: v1\nkind: Config\n");
        List<List<String>> cases = List.of(
                List.of("--api", "mock", "--api 'mock': expected real or embedded"),
                List.of("--api", "--api needs real or embedded"),
                List.of("--nodes", "x", "--nodes 'x' is not a whole number"),
                List.of("--nodes", "-1", "--nodes -1 is outside 0..1000"),
                List.of("--nodes", "--nodes needs a number"),
                List.of("--kubeconfig", "--kubeconfig needs a file"),
                List.of("--port", "1", "unknown option '--port' for cluster"),
                List.of("--api", "embedded", "--kubeconfig", foreign.toString(),
                        "--kubeconfig " + foreign + " exists and was not written by this command"));
        for (List<String> c : cases) {
            String[] args = c.subList(0, c.size() - 1).toArray(String[]::new);
            Result r = run(tmp, args);
            assertEquals(2, r.exit(), c + ": " + r);
            assertTrue(r.err().startsWith("npu-lifecycle cluster: " + c.get(c.size() - 1)), c + ": " + r.err());
            assertEquals("", r.out(), "nothing started: " + r);
        }
        assertEquals("apiVersion: v1\nkind: Config\n", Files.readString(foreign), "a foreign kubeconfig is kept");
    }

    @Test
    void embeddedServesTheNodesTheManifestsAndTheSampleUntilStopped() throws Exception {
        Path kubeconfig = tmp.resolve("kc/kubeconfig");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CountDownLatch stop = new CountDownLatch(1);
        ClusterCommand.Options o = ClusterCommand.Options.parse(new String[] {"--api", "embedded", "--nodes", "2",
                "--kubeconfig", kubeconfig.toString()});
        Path manifests = repositoryRoot().resolve("charts/target/kubectl");
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> ClusterCommand.run(o,
                new ClusterCommand.Layout(manifests, tmp.resolve("no-build.sh")),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                stop));
        try {
            awaitText(out, err, exit, "ready; runs until stopped");
            String text = out.toString(StandardCharsets.UTF_8);
            System.out.print(text);
            assertTrue(text.contains("master URL: http://127.0.0.1:"), text);
            assertTrue(text.contains("kubeconfig: " + kubeconfig.toAbsolutePath()), text);
            assertTrue(text.contains("applied " + manifests.resolve("10-rbac-node-agent.yaml")), text);
            assertTrue(text.contains("CRD " + manifests.resolve("crd-npuoperatorctl.yaml")), text);
            assertTrue(Files.readString(kubeconfig).startsWith(ClusterCommand.MARKER + "\n"), "marked as ours");

            Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
            try (KubernetesClient k = new KubernetesClientBuilder().withConfig(config)
                    .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
                assertEquals(List.of("node-0", "node-1"), k.nodes().withLabel("openfuyao.com/npu.present").list()
                        .getItems().stream().map(Node::getMetadata).map(m -> m.getName()).sorted().toList());
                assertEquals(1, io.npulifecycle.simulator.cluster.ImageWhiteLists.resources(k).inAnyNamespace().list()
                        .getItems().size(), "the platform's ImageWhiteList is served");
                assertEquals(1, k.genericKubernetesResources("npu.openfuyao.com/v1", "NPUOperatorCtl")
                        .inNamespace("npu-operator").list().getItems().size(), "the sample");
                assertEquals(2, k.serviceAccounts().inNamespace("npu-operator").list().getItems().stream()
                        .filter(a -> a.getMetadata().getName().startsWith("npu-lifecycle-")).count(),
                        "the manifests' ServiceAccounts");
            }

            // a second command with the same --kubeconfig is refused while this one runs, and leaves it alone
            ByteArrayOutputStream second = new ByteArrayOutputStream();
            int refused = ClusterCommand.run(o, new ClusterCommand.Layout(manifests, tmp.resolve("no-build.sh")),
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(second, true, StandardCharsets.UTF_8), new CountDownLatch(0));
            String refusal = second.toString(StandardCharsets.UTF_8);
            assertEquals(2, refused, refusal);
            assertTrue(refusal.contains("npu-lifecycle cluster: --kubeconfig " + kubeconfig + " belongs to another "
                    + "'npu-lifecycle cluster' that is still running"), refusal);
            assertTrue(Files.readString(kubeconfig).startsWith(ClusterCommand.MARKER + "\n"), "still the first's");
            assertTrue(Files.exists(tmp.resolve("kc/kubeconfig.lock")), "the first one's lock is kept");
        } finally {
            stop.countDown();
        }
        assertEquals(0, exit.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), err.toString(StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle cluster: stopped: the embedded API server ended, kubeconfig "
                + kubeconfig + " removed"), text);
        assertFalse(Files.exists(kubeconfig), "kubeconfig removed");
        assertFalse(Files.exists(tmp.resolve("kc/kubeconfig.lock")), "its lock removed");
        assertEquals("", err.toString(StandardCharsets.UTF_8));

        // a kubeconfig this command wrote (e.g. left by a SIGKILL) may be overwritten
        Files.writeString(kubeconfig, ClusterCommand.MARKER + "\nleft over\n");
        ByteArrayOutputStream again = new ByteArrayOutputStream();
        int rc = ClusterCommand.run(ClusterCommand.Options.parse(new String[] {"--api", "embedded", "--kubeconfig",
                kubeconfig.toString()}), new ClusterCommand.Layout(manifests, tmp.resolve("no-build.sh")),
                new PrintStream(again, true, StandardCharsets.UTF_8), System.err, new CountDownLatch(0));
        assertEquals(0, rc, again.toString(StandardCharsets.UTF_8));
        assertTrue(again.toString(StandardCharsets.UTF_8).contains("kubeconfig " + kubeconfig + " removed"),
                again.toString(StandardCharsets.UTF_8));
    }

    /** A build script that cannot build (as build.sh without Go): exit 1 with its message, nothing left. */
    @Test
    void realWithoutBinariesSaysWhatToInstall() throws Exception {
        Path script = Files.writeString(tmp.resolve("build.sh"), "printf 'npu.kube.bin.error=%s\\n' "
                + "'Go >= 1.26 is needed to build kube-apiserver and etcd from source' > \"$1\"\n");
        Path kubeconfig = tmp.resolve("kubeconfig");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = ClusterCommand.run(ClusterCommand.Options.parse(new String[] {"--kubeconfig", kubeconfig.toString()}),
                new ClusterCommand.Layout(tmp.resolve("none"), script), new PrintStream(out, true,
                        StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                new CountDownLatch(1));
        String e = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, rc, e);
        assertTrue(e.startsWith("npu-lifecycle cluster: --api real: no kube-apiserver to run: Go >= 1.26 is needed"),
                e);
        assertTrue(e.contains("(--api embedded needs no binaries)"), e);
        assertFalse(Files.exists(kubeconfig));
        assertFalse(out.toString(StandardCharsets.UTF_8).contains("stopped"), "nothing was started");
    }

    static void awaitText(ByteArrayOutputStream out, CompletableFuture<Integer> exit, String text) throws Exception {
        awaitText(out, new ByteArrayOutputStream(), exit, text);
    }

    static void awaitText(ByteArrayOutputStream out, ByteArrayOutputStream err, CompletableFuture<Integer> exit,
            String text) throws Exception {
        try {
            org.awaitility.Awaitility.await("'" + text + "' in the output").atMost(TIMEOUT)
                    .pollInterval(Duration.ofMillis(50))
                    .failFast("the command ended before '" + text + "'", exit::isDone)
                    .until(() -> out.toString(StandardCharsets.UTF_8).contains(text));
        } catch (org.awaitility.core.ConditionTimeoutException | org.awaitility.core.TerminalFailureException e) {
            fail(e.getMessage() + (exit.isDone() ? " (exit " + exit.get() + ")" : "") + ": " + out
                    + (err.size() == 0 ? "" : "\nstandard error: " + err.toString(StandardCharsets.UTF_8)), e);
        }
    }

    static Path repositoryRoot() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml"))) {
                return d;
            }
        }
        throw new IllegalStateException("charts/npu-lifecycle not found above " + Path.of("").toAbsolutePath());
    }

    @Test
    void kubeletNeedsTheRealApiServer() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ClusterCommand.Options.parse(new String[] {"--api", "embedded", "--kubelet"}));
        assertTrue(e.getMessage().contains("--kubelet needs --api real"), e.getMessage());
        assertTrue(ClusterCommand.Options.parse(new String[] {"--kubelet"}).kubelet(), "real is the default API");
    }
}
