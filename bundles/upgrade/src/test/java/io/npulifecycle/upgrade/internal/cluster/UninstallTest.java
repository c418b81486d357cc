package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * Uninstall leaves the cluster as it was, on the embedded mock and on a real kube-apiserver (the chart's
 * rendered RBAC in force, the cleanup on the control plane's ServiceAccount as the chart's pre-delete hook runs
 * it): after a rollout and a wedge, {@code npu-lifecycle uninstall} (while the control plane still runs) and the
 * NPUOperatorCtl's finalizer leave no DaemonSet, label, annotation, taint, condition or cordon of ours, keep an
 * administrator's cordon and approval, and wait for a node in its reboot; bad input gets a clear error.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {ClusterBackend.EMBEDDED, ClusterBackend.REAL})
class UninstallTest {

    static final String OLD = "24.1.0";
    static final String NEW = "25.5.0";
    static final Duration WAIT = Duration.ofSeconds(40);
    static final String NS = NodeAgentEmulator.NS;

    @Parameter
    String kind;
    ClusterFixture c;
    ScaledTestClock time;
    NodeAgentEmulator emulator;
    UpgradeController controller;

    @AfterEach
    void close() {
        if (c != null) {
            c.close();
        }
    }

    /** Three nodes upgraded OLD → NEW by the controller (autoUpgrade), then n2 wedged, tainted and cordoned by us. */
    void rolloutAndWedge() {
        c = ClusterFixture.start(kind);
        time = c.own(new ScaledTestClock(200));
        emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(3, OLD);
        emulator.start();
        ControllerConfig d = ControllerConfig.defaults();
        ControllerConfig cfg = new ControllerConfig(d.namespace(), d.resourceName(), false, "http", "", d.reconcileDelay(),
                d.resync(), d.statusInterval(), false, d.leaseName(), d.leaseDuration(), d.renewDeadline(),
                d.retryPeriod(), "t");
        controller = c.own(new UpgradeController(controlPlane(), time, cfg, null));
        controller.start();
        controller.setLeader(true);
        c.createDriver(driver(NEW, true, 1, "100%", null));
        Waits.until("rollout to " + NEW + " complete", WAIT, () -> emulator.allDone(NEW)
                && c.condition("Complete").startsWith("True"));
        Waits.until("the finalizer on the NPUOperatorCtl", WAIT, () -> finalizers().contains(NodeKeys.FINALIZER_CLEANUP));
        // n2 wedges: what its node agent writes (label, annotations, the NodeCondition)
        patch("n2", "{\"metadata\":{\"labels\":{\"" + NodeKeys.REBOOT_REQUIRED + "\":\"true\",\"" + NodeKeys.NPU_HEALTH
                + "\":\"wedged\"},\"annotations\":{\"" + NodeKeys.REBOOT_REASON + "\":\"recovery\",\""
                + NodeKeys.REBOOT_CHIPS + "\":\"4:0\"}}}");
        c.admin().nodes().withName("n2").subresource("status").patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":\"NpuHealthy\",\"status\":"
                        + "\"False\",\"reason\":\"ChipWedged\",\"message\":\"NPU chips 4:0 wedged\"}}]");
        Waits.until("n2 tainted and cordoned by the control plane", WAIT, () -> tainted("n2") && unschedulable("n2")
                && NodeKeys.CORDONED_BY_VALUE.equals(c.annotation("n2", NodeKeys.CORDONED_BY)));
        // an administrator's cordon and pending approval on n3
        patch("n3", "{\"spec\":{\"unschedulable\":true},\"metadata\":{\"annotations\":{\""
                + NodeKeys.APPROVE_REBOOT + "\":\"true\"}}}");
    }

    KubernetesClient controlPlane() {
        return c.serviceAccountClient(RolloutCases.CONTROL_PLANE_SA, null, k -> {
            k.setUserAgent("npu-controller");
            k.setRequestRetryBackoffLimit(3);
        });
    }

    void patch(String node, String json) {
        c.admin().nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), json);
    }

    boolean tainted(String node) {
        return c.node(node).getSpec().getTaints() != null && c.node(node).getSpec().getTaints().stream()
                .anyMatch(t -> NodeKeys.NPU_UNHEALTHY_TAINT.equals(t.getKey()));
    }

    boolean unschedulable(String node) {
        return Boolean.TRUE.equals(c.node(node).getSpec().getUnschedulable());
    }

    List<String> finalizers() {
        GenericKubernetesResource cr = c.npuOperatorCtl();
        return cr == null || cr.getMetadata().getFinalizers() == null ? List.of() : cr.getMetadata().getFinalizers();
    }

    /** @return every trace of ours left in the cluster, one line each; empty = clean */
    List<String> leftovers() {
        List<String> left = new ArrayList<>();
        c.admin().apps().daemonSets().inNamespace(NS).withLabel(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP).list()
                .getItems().forEach(ds -> left.add("DaemonSet " + ds.getMetadata().getName()));
        c.admin().pods().inNamespace(NS).withLabel(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP).list().getItems()
                .stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .forEach(p -> left.add("pod " + p.getMetadata().getName()));
        for (Node n : c.admin().nodes().list().getItems()) {
            String name = n.getMetadata().getName();
            Map<String, String> l = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
            Map<String, String> a = n.getMetadata().getAnnotations() == null ? Map.of() : n.getMetadata().getAnnotations();
            l.keySet().stream().filter(k -> k.startsWith(NodeKeys.PREFIX) && !k.equals(NodeKeys.CHIP))
                    .forEach(k -> left.add(name + " label " + k));
            a.keySet().stream().filter(k -> k.startsWith(NodeKeys.PREFIX) && !k.equals(NodeKeys.APPROVE_REBOOT))
                    .forEach(k -> left.add(name + " annotation " + k));
            if (n.getSpec().getTaints() != null) {
                n.getSpec().getTaints().stream().filter(t -> t.getKey().startsWith(NodeKeys.PREFIX))
                        .forEach(t -> left.add(name + " taint " + t.getKey()));
            }
            if (n.getStatus() != null && n.getStatus().getConditions() != null) {
                n.getStatus().getConditions().stream().filter(x -> NodeKeys.CONDITION_NPU_HEALTHY.equals(x.getType()))
                        .forEach(x -> left.add(name + " condition " + x.getType()));
            }
        }
        return left;
    }

    record Run(int code, String out, String err) {
    }

    Run uninstall(KubernetesClient client, Duration timeout, UninstallCommand.Sleeper sleeper) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        AtomicInteger ticks = new AtomicInteger();
        int code = UninstallCommand.uninstall(client, NS, timeout, time::now,
                () -> ticks.get() * UninstallCommand.POLL.toNanos(), d -> {
                    ticks.incrementAndGet();
                    sleeper.sleep(d);
                }, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void uninstallAfterARolloutAndAWedgeLeavesNothingOfOursAndKeepsTheAdministratorsCordon() throws Exception {
        rolloutAndWedge();
        // n1 is in its reboot (called from its current boot): the uninstall waits for it, naming it
        String boot = c.annotation("n1", NodeKeys.BOOT_ID);
        patch("n1", "{\"metadata\":{\"annotations\":{\"" + NodeKeys.REBOOTING_FROM_BOOT_ID + "\":\"" + boot + "\"}}}");
        AtomicInteger sleeps = new AtomicInteger();
        Run r = uninstall(controlPlane(), Duration.ofSeconds(300), d -> {
            if (sleeps.incrementAndGet() == 3) {
                // n1 comes back: a new boot id (what its node agent reports at start)
                patch("n1", "{\"metadata\":{\"annotations\":{\"" + NodeKeys.BOOT_ID + "\":\"back-" + boot + "\"}}}");
            }
        });
        assertEquals(UninstallCommand.OK, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("waiting for node n1 is in its reboot"), r.out());
        assertTrue(r.out().contains("kept node n3: cordon (not made by npu-lifecycle"), r.out());
        assertTrue(r.out().contains("kept node n3: annotation " + NodeKeys.APPROVE_REBOOT), r.out());
        assertTrue(r.out().contains("removed node n2: cordon"), r.out());
        assertTrue(r.out().contains("removed node n2: taint " + NodeKeys.NPU_UNHEALTHY_TAINT), r.out());
        assertTrue(r.out().contains("removed node n2: condition NpuHealthy"), r.out());
        assertTrue(r.out().contains("removed DaemonSet " + NS + "/"), r.out());
        assertTrue(r.out().contains("done: nothing npu-lifecycle added is left"), r.out());
        Waits.until("the emulated pods gone", WAIT, () -> leftovers().isEmpty(), () -> leftovers().toString());
        assertFalse(unschedulable("n2"), "our cordon released");
        assertTrue(unschedulable("n3"), "the administrator's cordon stays");
        assertEquals("true", c.annotation("n3", NodeKeys.APPROVE_REBOOT), "the administrator's approval stays");
        assertEquals("910b", c.label("n1", NodeKeys.CHIP), "the installer's label stays");
        assertNotNull(c.npuOperatorCtl(), "the NPUOperatorCtl is kept");
        assertFalse(finalizers().contains(NodeKeys.FINALIZER_CLEANUP), "its finalizer removed");
        // the control plane still runs (helm deletes it after the hook): it writes nothing back
        long reconciles = controller.writeCounts().get("reconciles");
        Waits.until("a few more reconciles", WAIT, () -> controller.writeCounts().get("reconciles") > reconciles + 2);
        assertEquals(List.of(), leftovers());
        assertFalse(finalizers().contains(NodeKeys.FINALIZER_CLEANUP));
    }

    @Test
    void aNodeThatStaysInItsRebootTimesOutNamingItAndKeepsTheDaemonSets() {
        rolloutAndWedge();
        String boot = c.annotation("n1", NodeKeys.BOOT_ID);
        patch("n1", "{\"metadata\":{\"annotations\":{\"" + NodeKeys.REBOOTING_FROM_BOOT_ID + "\":\"" + boot + "\"}}}");
        Run r = uninstall(controlPlane(), Duration.ofSeconds(10), d -> { });
        assertEquals(UninstallCommand.INCOMPLETE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("timed out after 10 s"), r.err());
        assertTrue(r.err().contains("node n1 is in its reboot"), r.err());
        assertTrue(r.out().contains("kept DaemonSet " + NS + "/"), r.out());
        assertFalse(c.admin().apps().daemonSets().inNamespace(NS).list().getItems().isEmpty(),
                "no DaemonSet deleted while a node is in its reboot");
        assertTrue(tainted("n2"), "nothing touched before the reboot is over");
    }

    @Test
    void deletingTheNpuOperatorCtlCleansUpThenItsFinalizerGoes() {
        rolloutAndWedge();
        c.admin().genericKubernetesResources(UpgradeController.CTX).inNamespace(NS)
                .withName(c.npuOperatorCtl().getMetadata().getName()).delete();
        Waits.until("the NPUOperatorCtl gone (the finalizer removed after the cleanup)", WAIT,
                () -> c.npuOperatorCtl() == null, () -> leftovers() + " finalizers " + finalizers());
        Waits.until("the emulated pods gone", WAIT, () -> leftovers().isEmpty(), () -> leftovers().toString());
        assertTrue(unschedulable("n3"), "the administrator's cordon stays");
        assertFalse(unschedulable("n2"), "our cordon released");
        assertEquals("true", c.annotation("n3", NodeKeys.APPROVE_REBOOT));
    }

    @Test
    void withoutThePermissionsNothingIsRemovedAndTheMissingOnesAreNamed() {
        assumeTrue(ClusterBackend.REAL.equals(kind), "the embedded server has no RBAC");
        rolloutAndWedge();
        List<String> before = leftovers();
        KubernetesClient agent = c.serviceAccountClient("npu-lifecycle-node-agent", null, k -> k.setUserAgent("x"));
        Run r = uninstall(agent, Duration.ofSeconds(10), d -> { });
        assertEquals(UninstallCommand.REFUSED, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("nothing was removed"), r.err());
        assertTrue(r.err().contains("delete apps/daemonsets in namespace " + NS), r.err());
        assertTrue(r.err().contains("patch nodes (cluster-wide)"), r.err());
        assertEquals(before, leftovers(), "nothing half removed");
    }

    @Test
    void badInputIsRefusedWithAClearMessage() {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "no server needed");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(UninstallCommand.USAGE, UninstallCommand.run(new String[] {"--timeout", "soon"}, o, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--timeout 'soon' is not a number"), err.toString());
        assertEquals(UninstallCommand.USAGE, UninstallCommand.run(new String[] {"--namespace", "Bad_NS"}, o, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("'Bad_NS' is not a namespace name"));
        assertEquals(UninstallCommand.USAGE, UninstallCommand.run(new String[] {"--kubeconfig", "/nonexistent/kc"}, o, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("/nonexistent/kc: no such readable file"));
        assertEquals(UninstallCommand.USAGE, UninstallCommand.run(new String[] {"--force"}, o, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown argument '--force'"));
        assertEquals(UninstallCommand.USAGE, UninstallCommand.run(new String[] {"--namespace"}, o, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--namespace needs a value"));
    }

    @Test
    void aKubeconfigThatIsNotOneOrNamesNoReachableServerIsRefusedNamingIt(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path dir) throws Exception {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "no server needed");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        java.nio.file.Path garbage = java.nio.file.Files.writeString(dir.resolve("garbage"), "clusters: [ {{ not yaml\n");
        assertEquals(UninstallCommand.USAGE, UninstallCommand.run(new String[] {"--kubeconfig", garbage.toString()}, o, e));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("--kubeconfig " + garbage + " is not a kubeconfig"), text);
        assertEquals(1, text.strip().lines().count(), "one line, not a parser's stack of messages: " + text);
        // a well-formed kubeconfig whose server nothing listens on: refused after the bounded retries
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        java.nio.file.Path unreachable = java.nio.file.Files.writeString(dir.resolve("unreachable"), String.join("\n",
                "apiVersion: v1", "kind: Config", "current-context: c",
                "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:" + port + "', insecure-skip-tls-verify: true}}]",
                "contexts: [{name: c, context: {cluster: k, user: u}}]", "users: [{name: u, user: {token: t}}]", ""));
        err.reset();
        assertEquals(UninstallCommand.REFUSED, UninstallCommand.run(new String[] {"--kubeconfig", unreachable.toString(),
                "--timeout", "5"}, o, e));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("127.0.0.1:" + port), err.toString());
    }

    /**
     * Without {@code --kubeconfig} and without any credentials to find (not a pod, no {@code $KUBECONFIG}, no
     * {@code ~/.kube/config}) the command says so and what to give, instead of a connection error to the in-cluster
     * address; and a kubeconfig that is not one is named without quoting its text (a token in it stays unprinted).
     */
    @Test
    void withoutAnyCredentialsTheCommandSaysSoAndAKubeconfigsTextIsNeverQuoted(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path dir) throws Exception {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "no server needed");
        java.nio.file.Path home = java.nio.file.Files.createDirectories(dir.resolve("home"));
        java.nio.file.Path token = dir.resolve("token");
        String none = UninstallCommand.noCredentials(Map.of(), home, token);
        assertTrue(none != null && none.startsWith("no credentials: not in a pod") && none.endsWith(
                "give --kubeconfig FILE"), none);
        assertTrue(UninstallCommand.noCredentials(Map.of("KUBECONFIG", dir.resolve("nope").toString()), home, token)
                .contains("names no readable file"));
        java.nio.file.Files.createDirectories(home.resolve(".kube"));
        java.nio.file.Files.writeString(home.resolve(".kube/config"), "x");
        assertNull(UninstallCommand.noCredentials(Map.of(), home, token), "~/.kube/config is there");
        java.nio.file.Files.writeString(token, "t");
        assertNull(UninstallCommand.noCredentials(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
                dir.resolve("empty-home"), token), "a pod with its ServiceAccount token");

        String secret = "eyJhbGciOiJSUzI1NiIsImtpZCI6InNlY3JldCJ9.payload.signature";
        String problem = UninstallCommand.kubeconfigProblem(java.nio.file.Files.writeString(dir.resolve("bare-token"),
                secret + "\n"));
        assertTrue(problem.startsWith("is not a kubeconfig"), problem);
        assertFalse(problem.contains("eyJ"), "the file's text is not quoted: " + problem);
    }

    @Test
    void aKubeconfigWithoutAUsableCurrentContextIsNamedNotReplacedByTheInClusterDefaults(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "no server needed");
        java.util.function.Function<String, String> problem = text -> {
            try {
                return UninstallCommand.kubeconfigProblem(java.nio.file.Files.writeString(dir.resolve("kc"), text));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        assertTrue(problem.apply("").startsWith("is empty"), problem.apply(""));
        assertEquals("names no current-context", problem.apply("{}"));
        String clusters = "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
                + "users: [{name: u, user: {token: t}}]\n";
        assertEquals("has no context 'nope' (its current-context)", problem.apply("current-context: nope\n"
                + "contexts: [{name: c, context: {cluster: k, user: u}}]\n" + clusters));
        assertEquals("has no server for cluster 'other' (of context 'c')", problem.apply("current-context: c\n"
                + "contexts: [{name: c, context: {cluster: other, user: u}}]\n" + clusters));
        assertNull(problem.apply("current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
                + clusters));
        java.nio.file.Path bad = java.nio.file.Files.writeString(dir.resolve("nope"), "current-context: nope\n" + clusters);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(UninstallCommand.USAGE, UninstallCommand.run(new String[] {"--kubeconfig", bad.toString()},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("has no context 'nope'"), err.toString());
    }

    @Test
    void whyARequestGotNoAnswerIsNamedFromItsCause() {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "no server needed");
        assertTrue(ClusterCleanup.noAnswer(new io.fabric8.kubernetes.client.KubernetesClientException("x",
                new javax.net.ssl.SSLHandshakeException("PKIX path building failed"))).startsWith("TLS handshake failed"));
        assertTrue(ClusterCleanup.noAnswer(new io.fabric8.kubernetes.client.KubernetesClientException("x",
                new java.io.IOException("/127.0.0.1:1: GOAWAY received"))).contains("closed the connection"));
        assertTrue(ClusterCleanup.noAnswer(new io.fabric8.kubernetes.client.KubernetesClientException("x",
                new java.net.ConnectException("Connection refused"))).startsWith("connection refused"));
        assertTrue(ClusterCleanup.noAnswer(new io.fabric8.kubernetes.client.KubernetesClientException("x",
                new java.io.IOException("timeout"))).startsWith("no answer from the API server"));
    }

    @Test
    void aNamespaceThatDoesNotExistIsToldApartFromOneThatDoes() {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "the same on both servers");
        c = ClusterFixture.start(kind);
        c.admin().namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata()
                .withName("present").endMetadata().build()).create();
        assertTrue(UninstallCommand.namespaceMissing(c.admin(), "npu-operatr"));
        assertFalse(UninstallCommand.namespaceMissing(c.admin(), "present"));
    }

    @Test
    void aNamespaceWithoutAnNpuOperatorCtlIsNamedInAWarning() {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "the same on both servers");
        c = ClusterFixture.start(kind);
        time = c.own(new ScaledTestClock(200));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = UninstallCommand.uninstall(c.admin(), "npu-operatr", Duration.ofSeconds(10), time::now, () -> 0L,
                d -> { }, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(UninstallCommand.OK, code, out + " " + err);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("no NPUOperatorCtl in namespace npu-operatr"),
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void malformedAnnotationsOfOursAreRemovedAndAForeignCordonRecordKeepsTheCordon() {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "the same on both servers");
        c = ClusterFixture.start(kind);
        time = c.own(new ScaledTestClock(200));
        emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(2, OLD);
        // malformed values of our keys: a progress that does not parse, a blank rebooting-from-boot-id (no reboot),
        // a cordon record someone else wrote (not our value: the cordon is not ours to release)
        patch("n1", "{\"spec\":{\"unschedulable\":true},\"metadata\":{\"annotations\":{\""
                + NodeKeys.DRIVER_UPGRADE_PROGRESS + "\":\"%%%\",\"" + NodeKeys.REBOOTING_FROM_BOOT_ID + "\":\" \",\""
                + NodeKeys.CORDONED_BY + "\":\"someone-else\"},\"labels\":{\"" + NodeKeys.DRIVER_UPGRADE_STATE
                + "\":\"no-such-state\"}}}");
        Run r = uninstall(c.admin(), Duration.ofSeconds(10), d -> { });
        assertEquals(UninstallCommand.OK, r.code(), r.out() + r.err());
        assertEquals(List.of(), leftovers());
        assertTrue(unschedulable("n1"), "a cordon without our record value stays");
        assertNull(c.annotation("n1", NodeKeys.CORDONED_BY));
    }

    @Test
    void aMalformedUninstallingMarkIsRemovedAndTheControllerCarriesOn() {
        assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "the same on both servers");
        rolloutAndWedge();
        c.admin().genericKubernetesResources(UpgradeController.CTX).inNamespace(NS)
                .withName(c.npuOperatorCtl().getMetadata().getName()).patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"metadata\":{\"annotations\":{\"" + ClusterCleanup.UNINSTALLING + "\":\"yesterday\"}}}");
        Waits.until("the malformed mark removed by the leader", WAIT, () -> c.npuOperatorCtl().getMetadata()
                .getAnnotations() == null || !c.npuOperatorCtl().getMetadata().getAnnotations()
                        .containsKey(ClusterCleanup.UNINSTALLING));
        assertTrue(finalizers().contains(NodeKeys.FINALIZER_CLEANUP));
    }
}
