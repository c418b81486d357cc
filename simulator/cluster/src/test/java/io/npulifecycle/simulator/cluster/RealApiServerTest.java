package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;
import io.npulifecycle.simulator.cluster.internal.RunRecords;
import io.npulifecycle.simulator.cluster.internal.ServerProbe;

/**
 * {@link RealApiServer} against the real kubectl and the product's manifests (the chart charts/npu-lifecycle, rendered): the install of
 * the README on a clean server, the CRD's printer columns and schema, RBAC and the node agent's
 * ValidatingAdmissionPolicy with a pod-bound token, and that nothing is left behind, also after a SIGKILL.
 * Without the binaries (no Go) or kubectl these tests fail, saying what to install.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealApiServerTest {

    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String NS = EmbeddedCluster.NPU_NAMESPACE;
    static final String AGENT_SA = "npu-lifecycle-node-agent";

    @RegisterExtension
    static final Counter COUNTER = new Counter();

    @TempDir
    static Path dir;
    static RealApiServer api;
    static Path kubeconfig;
    static Path manifests;
    static Path kubectl;

    @BeforeAll
    static void start() {
        kubectl = findKubectl();
        manifests = findManifests();
        api = RealApiServer.start();
        System.out.println("RealApiServer: " + api.masterUrl() + " ready in " + api.startDuration().toMillis()
                + " ms");
        kubeconfig = api.writeKubeconfig(dir.resolve("kubeconfig"));
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
        }
        System.out.println("RealApiServerTest: " + COUNTER.summary());
    }

    @Test
    @Order(1)
    void servesReadyzAndKubectlGetsNodes() throws Exception {
        HttpResponse<String> r = new ServerProbe(api.caCertificate(), System::nanoTime).get(api.masterUrl()
                + "/readyz");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("ok", r.body().strip());
        assertEquals(RealApiServer.REAL, api.kind());
        assertTrue(api.masterUrl().startsWith("https://127.0.0.1:"), api.masterUrl());

        Node created = api.addNode(EmbeddedCluster.npuNode("node-a"));
        assertEquals(EmbeddedCluster.DEFAULT_KERNEL, created.getStatus().getNodeInfo().getKernelVersion(),
                "the status written after the create");
        api.addNode(EmbeddedCluster.npuNode("node-b"));
        Run nodes = ok("get", "nodes", "-L", EmbeddedCluster.CHIP_LABEL);
        assertTrue(nodes.out.lines().anyMatch(l -> l.startsWith("node-a ") && l.contains("Ready")
                && l.contains("910b")), nodes.toString());
        assertTrue(nodes.out.contains("node-b"), nodes.toString());
        Run who = ok("auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}");
        assertTrue(who.out.startsWith("admin ") && who.out.contains("system:masters"), who.toString());
    }

    /**
     * README "Without helm": the combined manifest the chart renders (charts/target/npu-lifecycle.yaml: the namespace,
     * the CRD, RBAC, the policy, the workloads) with {@code kubectl apply --server-side}, the Jolokia Secret, then an
     * NPUOperatorCtl of the user's (the chart's default instance, which installing never creates by itself).
     */
    @Test
    @Order(2)
    void readmeInstallAppliesEveryManifestOnACleanServer() throws Exception {
        Path combined = manifests.getParent().resolve("npu-lifecycle.yaml");
        Run all = ok("apply", "--server-side", "-f", combined.toString());
        ok("wait", "--for", "condition=established", "--timeout=60s", "crd/npuoperatorctls.npu.openfuyao.com");
        ok("-n", NS, "create", "secret", "generic", "npu-lifecycle-jolokia", "--from-literal=user=operator",
                "--from-literal=password=not-a-real-one");
        for (String expected : List.of("namespace/npu-operator", "serviceaccount/" + AGENT_SA,
                "clusterrole.rbac.authorization.k8s.io/" + AGENT_SA,
                "validatingadmissionpolicy.admissionregistration.k8s.io/npu-lifecycle-node-agent-own-node",
                "validatingadmissionpolicybinding.admissionregistration.k8s.io/npu-lifecycle-node-agent-own-node",
                "deployment.apps/npu-lifecycle-control-plane", "configmap/npu-lifecycle-node-config",
                "configmap/npu-lifecycle-driver-daemonset", "configmap/npu-lifecycle-control-plane-config")) {
            assertTrue(all.out.contains(expected), expected + " in\n" + all);
        }
        assertFalse(all.out.contains("npuoperatorctl.npu.openfuyao.com/"), "installing starts no rollout: " + all);
        Run cr = ok("apply", "-f", manifests.getParent().resolve("samples/80-npuoperatorctl.yaml").toString());
        assertTrue(cr.out.contains("npuoperatorctl.npu.openfuyao.com/npuoperatorctl-sample"), cr.toString());
        assertFalse(all.err.contains("Warning"), "no warnings: " + all);
        Run policies = ok("get", "validatingadmissionpolicy", "npu-lifecycle-node-agent-own-node", "-o",
                "jsonpath={.status.typeChecking}");
        assertFalse(policies.out.contains("warning"), "the policy's CEL type-checks: " + policies);
    }

    @Test
    @Order(3)
    void kubectlGetShowsThePrinterColumns() throws Exception {
        Run r = ok("-n", NS, "get", "npuoperatorctl");
        List<String> lines = r.out.lines().toList();
        assertEquals(List.of("NAME", "TARGET", "AUTOUPGRADE", "AUTORECOVER", "PROGRESS", "AGE"),
                Arrays.asList(lines.get(0).trim().split("\\s+")), r.toString());
        List<String> row = Arrays.asList(lines.get(1).trim().split("\\s+"));
        assertEquals(List.of("npuoperatorctl-sample", "25.5.0", "false", "false"), row.subList(0, 4), r.toString());
        Run plural = ok("-n", NS, "get", "npuoperatorctls.npu.openfuyao.com", "-o", "name");
        assertEquals("npuoperatorctl.npu.openfuyao.com/npuoperatorctl-sample", plural.out.strip());
    }

    @Test
    @Order(4)
    void malformedNpuOperatorCtlsAreRefusedNamingTheField() throws Exception {
        Map<String, String> cases = Map.of(
                "autoUpgrade: \"yes\"", "spec.driver.upgradePolicy.autoUpgrade",
                "colour: red", "unknown field \"spec.driver.upgradePolicy.colour\"",
                "maxUnavailable: \"150%\"", "spec.driver.upgradePolicy.maxUnavailable",
                "maxUnavailable: -1", "spec.driver.upgradePolicy.maxUnavailable",
                "deadlines: {podRestartSeconds: -5}", "spec.driver.upgradePolicy.deadlines.podRestartSeconds",
                "maxParallelUpgrades: 1.5", "spec.driver.upgradePolicy.maxParallelUpgrades");
        int i = 0;
        for (Map.Entry<String, String> c : cases.entrySet()) {
            String name = "bad-" + i++;
            Path file = dir.resolve(name + ".yaml");
            Files.writeString(file, "apiVersion: npu.openfuyao.com/v1\nkind: NPUOperatorCtl\nmetadata:\n  name: "
                    + name + "\n  namespace: " + NS + "\nspec:\n  driver:\n    version: 25.5.0\n"
                    + "    upgradePolicy:\n      " + c.getKey() + "\n");
            Run r = kubectl("apply", "-f", file.toString());
            assertNotEquals(0, r.exit, c.getKey() + " accepted: " + r);
            assertTrue(r.err.contains(c.getValue()), c.getKey() + ": the error names " + c.getValue() + ": " + r);
            assertNull(api.npuOperatorCtls().withName(name).get(), name + " not stored");
            System.out.println("refused " + c.getKey() + ": " + r.err.strip());
        }
        Run version = kubectl("-n", NS, "patch", "npuoperatorctl", "npuoperatorctl-sample", "--type=merge", "-p",
                "{\"spec\":{\"driver\":{\"version\":\"latest\"}}}");
        assertNotEquals(0, version.exit, version.toString());
        assertTrue(version.err.contains("spec.driver.version"), version.toString());
    }

    /** The node agent's token: bound to its pod, the node-name claim, RBAC and the admission policy in force. */
    @Test
    @Order(5)
    void podBoundTokenCarriesTheNodeNameAndTheAdmissionPolicyHoldsTheAgentToItsNode() {
        KubernetesClient admin = api.client();
        Pod pod = admin.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("agent-node-a")
                .withNamespace(NS).endMetadata().withNewSpec().withServiceAccountName(AGENT_SA).withNodeName("node-a")
                .addNewContainer().withName("agent").withImage("registry.local/npu-lifecycle/node-agent:0.1.0")
                .endContainer().endSpec().build()).create();
        assertNotNull(pod.getMetadata().getUid());
        String token = api.podBoundToken(NS, AGENT_SA, "agent-node-a", Duration.ofHours(1));

        TokenReview review = admin.authentication().v1().tokenReviews().create(new TokenReviewBuilder()
                .withNewSpec().withToken(token).endSpec().build());
        assertTrue(review.getStatus().getAuthenticated(), String.valueOf(review.getStatus()));
        assertEquals("system:serviceaccount:" + NS + ":" + AGENT_SA, review.getStatus().getUser().getUsername());
        assertEquals(List.of("node-a"), review.getStatus().getUser().getExtra()
                .get("authentication.kubernetes.io/node-name"));
        assertEquals(List.of("agent-node-a"), review.getStatus().getUser().getExtra()
                .get("authentication.kubernetes.io/pod-name"));

        try (KubernetesClient agent = api.newTokenClient(token, c -> c.setRequestRetryBackoffLimit(0))) {
            KubernetesClientException rbac = assertThrows(KubernetesClientException.class,
                    () -> agent.pods().inNamespace(NS).list());
            assertEquals(403, rbac.getCode(), "RBAC: the node agent may not list pods");

            AtomicInteger n = new AtomicInteger();
            Supplier<KubernetesClientException> otherNode = () -> {
                try {
                    Node b = agent.nodes().withName("node-b").get();
                    agent.nodes().resource(new NodeBuilder(b).editMetadata()
                            .addToLabels("npu.openfuyao.com/probe", "n" + n.incrementAndGet()).endMetadata().build())
                            .update();
                    return null;
                } catch (KubernetesClientException e) {
                    return e;
                }
            };
            await("the admission policy to deny a write to another node", () -> otherNode.get() != null,
                    () -> "node-b labels: " + admin.nodes().withName("node-b").get().getMetadata().getLabels());
            KubernetesClientException denied = otherNode.get();
            assertEquals(403, denied.getCode());
            assertTrue(denied.getMessage().contains("the node agent may change only the Node it runs on"),
                    denied.getMessage());

            Node a = agent.nodes().withName("node-a").get();
            Node updated = agent.nodes().resource(new NodeBuilder(a).editMetadata()
                    .addToLabels("npu.openfuyao.com/reboot-required", "true").endMetadata().build()).update();
            assertEquals("true", updated.getMetadata().getLabels().get("npu.openfuyao.com/reboot-required"));

            KubernetesClientException chip = assertThrows(KubernetesClientException.class, () -> agent.nodes()
                    .resource(new NodeBuilder(updated).editMetadata().addToLabels(EmbeddedCluster.CHIP_LABEL, "310p")
                            .endMetadata().build()).update());
            assertTrue(chip.getMessage().contains("may change only its npu.openfuyao.com/* labels"),
                    chip.getMessage());
            KubernetesClientException spec = assertThrows(KubernetesClientException.class, () -> agent.nodes()
                    .resource(new NodeBuilder(updated).editSpec().withUnschedulable(true).endSpec().build())
                    .update());
            assertTrue(spec.getMessage().contains("may not change a Node's spec"), spec.getMessage());
        }
    }

    /**
     * The rest of what the node agent's admission policy allows and refuses on its own Node (the pod of
     * {@link #podBoundTokenCarriesTheNodeNameAndTheAdmissionPolicyHoldsTheAgentToItsNode}): it consumes (removes) and
     * restores ({@code true}) the approval a person set, never another value; no label outside
     * {@code npu.openfuyao.com/}; no status write; and a token of the same ServiceAccount that is not bound to a pod
     * (no node-name claim) may write nothing.
     */
    @Test
    @Order(6)
    void theNodeAgentConsumesAndRestoresItsApprovalAndNothingElse() {
        KubernetesClient admin = api.client();
        NodeEdits.annotate(admin, "node-a", "npu.openfuyao.com/approve-reboot", "true");
        String token = api.podBoundToken(NS, AGENT_SA, "agent-node-a", Duration.ofHours(1));
        try (KubernetesClient agent = api.newTokenClient(token, c -> c.setRequestRetryBackoffLimit(0))) {
            putAnnotation(agent, "node-a", "npu.openfuyao.com/approve-reboot", null);
            assertNull(admin.nodes().withName("node-a").get().getMetadata().getAnnotations()
                    .get("npu.openfuyao.com/approve-reboot"), "consumed");
            putAnnotation(agent, "node-a", "npu.openfuyao.com/approve-reboot", "true");
            assertEquals("true", admin.nodes().withName("node-a").get().getMetadata().getAnnotations()
                    .get("npu.openfuyao.com/approve-reboot"), "restored");

            KubernetesClientException other = assertThrows(KubernetesClientException.class,
                    () -> putAnnotation(agent, "node-a", "npu.openfuyao.com/approve-reboot", "yes"));
            assertEquals(403, other.getCode(), other.getMessage());

            Node a = agent.nodes().withName("node-a").get();
            KubernetesClientException label = assertThrows(KubernetesClientException.class, () -> agent.nodes()
                    .resource(new NodeBuilder(a).editMetadata().addToLabels("team", "ml").endMetadata().build())
                    .update());
            assertEquals(403, label.getCode());
            assertTrue(label.getMessage().contains("may change only its npu.openfuyao.com/* labels"),
                    label.getMessage());

            KubernetesClientException status = assertThrows(KubernetesClientException.class, () -> agent.nodes()
                    .resource(new NodeBuilder(a).editStatus().addToCapacity("huawei.com/Ascend910",
                            new io.fabric8.kubernetes.api.model.Quantity("9")).endStatus().build())
                    .updateStatus());
            assertEquals(403, status.getCode(), "no status write: " + status.getMessage());
        }

        String unbound = admin.serviceAccounts().inNamespace(NS).withName(AGENT_SA)
                .tokenRequest(new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder().withNewSpec()
                        .withExpirationSeconds(3600L).endSpec().build())
                .getStatus().getToken();
        try (KubernetesClient noClaim = api.newTokenClient(unbound, c -> c.setRequestRetryBackoffLimit(0))) {
            KubernetesClientException refused = assertThrows(KubernetesClientException.class,
                    () -> putAnnotation(noClaim, "node-a", "npu.openfuyao.com/reboot-reason", "recovery"));
            assertEquals(403, refused.getCode());
            assertTrue(refused.getMessage().contains("carries no node-name claim"), refused.getMessage());
        }
    }

    /** Read, change one annotation, write with PUT (update): the node agent's RBAC has update, not patch. */
    static void putAnnotation(KubernetesClient client, String node, String key, String value) {
        Node n = client.nodes().withName(node).get();
        NodeBuilder b = new NodeBuilder(n);
        Map<String, String> ann = new java.util.HashMap<>(n.getMetadata().getAnnotations() == null ? Map.of()
                : n.getMetadata().getAnnotations());
        if (value == null) {
            ann.remove(key);
        } else {
            ann.put(key, value);
        }
        client.nodes().resource(b.editMetadata().withAnnotations(ann).endMetadata().build()).update();
    }

    /** The ClusterBackend methods the embedded mock also has, and the CRD's defaults that only a real server applies. */
    @Test
    @Order(6)
    void backendMethodsWorkOnTheRealServer() throws Exception {
        api.npuOperatorCtls().withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).delete();
        await("the sample to be deleted", () -> api.npuOperatorCtls().withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME)
                .get() == null, () -> "still there");
        assertEquals(manifests.resolve("crd-npuoperatorctl.yaml").toRealPath(), api.installCrd().toRealPath());
        GenericKubernetesResource cr = api.createNpuOperatorCtl("25.0.0", true, false);
        @SuppressWarnings("unchecked")
        Map<String, Object> driver = (Map<String, Object>) ((Map<String, Object>) cr.getAdditionalProperties()
                .get("spec")).get("driver");
        assertEquals("registry.local", driver.get("registry"), "CRD default: " + driver);
        @SuppressWarnings("unchecked")
        Map<String, Object> upgrade = (Map<String, Object>) driver.get("upgradePolicy");
        assertEquals(true, upgrade.get("autoUpgrade"));
        assertEquals("25%", upgrade.get("maxUnavailable"), "CRD default: " + upgrade);
        assertEquals(1, api.npuOperatorCtls().list().getItems().size());

        Pod driverPod = api.addDriverPod("node-a", EmbeddedCluster.driverImage("25.0.0", "910b"));
        assertEquals("Running", driverPod.getStatus().getPhase());
        assertEquals("node-a", driverPod.getSpec().getNodeName());
        assertEquals("scratch", api.ensureNamespace("scratch").getMetadata().getName());
        assertNotNull(api.client().serviceAccounts().inNamespace("scratch").withName("default").get());
        assertEquals(2, api.apply(manifests.resolve("00-namespace.yaml")).size()
                + api.apply(manifests.resolve("40-node-agent-config.yaml")).size());
        try (KubernetesClient own = api.newClient()) {
            assertEquals(NS, own.getNamespace());
            assertEquals(1, own.pods().withLabel("app", EmbeddedCluster.DRIVER_POD_LABEL_VALUE).list().getItems()
                    .size());
        }
    }

    /** After a SIGKILL of the JVM that ran it, the next start stops etcd and kube-apiserver and removes the data. */
    @Test
    @Order(7)
    void serversStopWithAKilledJvmAndTheNextStartRemovesTheirData() throws Exception {
        Child child = startChild();
        child.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        // each server watches its parent (simulator/apiserver internal/parentwatch) and stops once it is gone
        await("etcd, kube-apiserver and kube-controller-manager to stop after their JVM was SIGKILLed",
                () -> child.pids.stream().noneMatch(RealApiServerTest::running), child.pids::toString);
        assertTrue(Files.isDirectory(child.data), "the data folder waits for the next start");

        RunRecords.standard().reapLeftovers(); // the first thing RealApiServer.start() does
        assertFalse(Files.exists(child.data), child.data + " removed");
    }

    /** A JVM that exits without closing its server (SIGTERM here) stops it in its shutdown hook. */
    @Test
    @Order(8)
    void theShutdownHookStopsTheServersWhenTheJvmExits() throws Exception {
        Child child = startChild();
        child.process.destroy();
        assertTrue(child.process.waitFor(60, TimeUnit.SECONDS), "the child JVM exits on SIGTERM");
        assertTrue(child.pids.stream().noneMatch(RealApiServerTest::running), () -> child.pids + " still running; "
                + "exit code " + child.process.exitValue() + ", stderr: " + read(child.err));
        assertFalse(Files.exists(child.data), child.data + " removed");
    }

    record Child(Process process, List<Long> pids, Path data, Path err) {
    }

    /** Starts {@link RealApiServerChild} and waits for its READY line. */
    static Child startChild() throws IOException {
        KubeBinaries bin = KubeBinaries.fromSystemProperties();
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        Path err = Files.createTempFile(dir, "child", ".err");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                "-D" + KubeBinaries.BIN_PROPERTY + "=" + bin.folder(), RealApiServerChild.class.getName())
                .redirectError(err.toFile()).start();
        // stdout stays open: the child reads nothing from it after READY, and its stdin stays open until it dies
        String ready = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))
                .readLine();
        assertNotNull(ready, () -> "the child JVM printed nothing: " + read(err));
        String[] f = ready.split(" ");
        assertEquals("READY", f[0], ready);
        return new Child(child, List.of(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])),
                Paths.get(f[4]), err);
    }

    @Test
    @Order(9)
    void closeStopsBothProcessesAndRemovesTheDataFolder() {
        List<Long> pids = api.pids();
        Path data = api.dataFolder();
        assertTrue(Files.isDirectory(data));
        api.close();
        assertTrue(pids.stream().noneMatch(RealApiServerTest::running), pids + " still running");
        assertFalse(Files.exists(data), data + " removed");
        api.close(); // idempotent
    }

    // -----------------------------------------------------------------------------------------------------------

    /** A process runs (exists and is not a zombie that nobody reaped yet). */
    static boolean running(long pid) {
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        if (h.isEmpty() || !h.get().isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Paths.get("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException e) {
            return false;
        }
    }

    static void await(String what, BooleanSupplier condition, Supplier<String> diagnostics) {
        try {
            org.awaitility.Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(100))
                    .until(condition::getAsBoolean);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            fail("timed out waiting for " + what + ": " + diagnostics.get(), e);
        }
    }

    static Path findKubectl() {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Paths.get(d.isEmpty() ? "." : d, "kubectl");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        Path usr = Paths.get("/usr/bin/kubectl");
        if (Files.isExecutable(usr)) {
            return usr;
        }
        throw new IllegalStateException("kubectl is neither on PATH nor at /usr/bin/kubectl: install kubectl "
                + "(.ci/run checks for it)");
    }

    static Path findManifests() {
        for (Path d = Paths.get("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve(EmbeddedCluster.CRD_FILE))) {
                return d.resolve(EmbeddedCluster.CRD_FILE).getParent();
            }
        }
        throw new IllegalStateException(EmbeddedCluster.CRD_FILE + " (build module charts) not found above " + Paths.get("").toAbsolutePath());
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return e.toString();
        }
    }

    record Run(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    /** Runs kubectl with the admin kubeconfig and a private discovery cache. */
    static Run kubectl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", dir.resolve("kube-cache").toString(), "--request-timeout", "30s"));
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("HOME", dir.toString());
        pb.environment().remove("KUBECONFIG");
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process p = pb.start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kubectl " + String.join(" ", args) + " did not finish in 90 s");
        }
        return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    static Run ok(String... args) throws IOException, InterruptedException {
        Run r = kubectl(args);
        assertEquals(0, r.exit, () -> "kubectl " + String.join(" ", args) + ": " + r);
        return r;
    }

    /** Counts the tests of this class by outcome, printed by {@link #stop()}. */
    static final class Counter implements TestWatcher {
        final AtomicInteger passed = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger aborted = new AtomicInteger();

        @Override
        public void testSuccessful(ExtensionContext context) {
            passed.incrementAndGet();
        }

        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            failed.incrementAndGet();
        }

        @Override
        public void testAborted(ExtensionContext context, Throwable cause) {
            aborted.incrementAndGet();
        }

        String summary() {
            int ran = passed.get() + failed.get() + aborted.get();
            return ran + " real-server tests ran: " + passed + " passed, " + failed + " failed, " + aborted
                    + " aborted";
        }
    }
}
