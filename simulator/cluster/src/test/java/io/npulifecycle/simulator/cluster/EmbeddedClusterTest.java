package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

class EmbeddedClusterTest {

    static final Duration TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;
    EmbeddedCluster cluster;

    @BeforeEach
    void start() {
        cluster = EmbeddedCluster.start();
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    /**
     * Waits up to {@link #TIMEOUT} for {@code condition} (Awaitility, polled in this thread every 20 ms); the failure
     * names {@code what} and adds {@code diagnostics}. This module cannot use io.npulifecycle.testing.support, which
     * depends on it.
     */
    static void await(String what, BooleanSupplier condition, Supplier<String> diagnostics) {
        try {
            Awaitility.await(what).pollInSameThread().dontCatchUncaughtExceptions().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(20)).atMost(TIMEOUT).until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            fail("timed out waiting for " + what + ": " + diagnostics.get());
        }
    }

    @Test
    void anH2cUpgradeRequestIsAnsweredOverHttp11() throws Exception {
        URI master = URI.create(cluster.masterUrl());
        try (java.net.Socket socket = new java.net.Socket(master.getHost(), master.getPort())) {
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            // what the JDK HTTP client sends on a new plain-HTTP connection when it may use HTTP/2
            String request = "GET /api/v1/nodes HTTP/1.1\r\nHost: " + master.getAuthority()
                    + "\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c"
                    + "\r\nHTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\n\r\n";
            socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            String status = new String(socket.getInputStream().readNBytes(12),
                    java.nio.charset.StandardCharsets.US_ASCII);
            assertEquals("HTTP/1.1 200", status, "no 101 Switching Protocols: the mock speaks HTTP/1.1 only");
        }
    }

    /** Collects the names an informer saw added or updated. */
    static final class Seen implements ResourceEventHandler<HasMetadata> {
        final Set<String> names = ConcurrentHashMap.newKeySet();

        @Override
        public void onAdd(HasMetadata obj) {
            names.add(obj.getMetadata().getName());
        }

        @Override
        public void onUpdate(HasMetadata oldObj, HasMetadata newObj) {
            names.add(newObj.getMetadata().getName());
        }

        @Override
        public void onDelete(HasMetadata obj, boolean deletedFinalStateUnknown) {
            names.remove(obj.getMetadata().getName());
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static ResourceEventHandler<Node> nodes(Seen s) {
        return (ResourceEventHandler) s;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static ResourceEventHandler<Pod> pods(Seen s) {
        return (ResourceEventHandler) s;
    }

    @Test
    void npuNodesCarryTheirLabelsAndNodeInfo() {
        Node n = cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        Node stored = cluster.client().nodes().withName("node-0").get();
        assertEquals("true", stored.getMetadata().getLabels().get("openfuyao.com/npu.present"));
        assertEquals("910b", stored.getMetadata().getLabels().get("npu.openfuyao.com/chip"));
        assertEquals("6.6.0-145.0.4.135.oe2403sp3.aarch64", stored.getStatus().getNodeInfo().getKernelVersion());
        assertEquals("openEuler 24.03 (LTS-SP3)", stored.getStatus().getNodeInfo().getOsImage());
        assertEquals("arm64", stored.getStatus().getNodeInfo().getArchitecture());
        assertNotNull(stored.getStatus().getNodeInfo().getBootID());
        assertNotNull(n.getMetadata().getResourceVersion());
    }

    @Test
    void theSampleCustomResourceIsServedWithoutACrdFile() {
        cluster.installCrd(null);
        GenericKubernetesResource cr = cluster.createNpuOperatorCtl("25.0.0", true, false);
        assertEquals("npuoperatorctl-sample", cr.getMetadata().getName());
        GenericKubernetesResource read = cluster.npuOperatorCtls().inNamespace("npu-operator")
                .withName("npuoperatorctl-sample").get();
        assertEquals("25.0.0", read.get("spec", "driver", "version"));
        assertEquals(Boolean.TRUE, read.get("spec", "driver", "upgradePolicy", "autoUpgrade"));
        assertTrue(cluster.apiResources().stream().anyMatch(r -> "npuoperatorctls".equals(r.plural())));
    }

    @Test
    void aCrdFileIsAppliedAndItsTypeAppearsInDiscovery() throws Exception {
        Path crd = Files.writeString(dir.resolve("crd.yaml"), "apiVersion: apiextensions.k8s.io/v1\n"
                + "kind: CustomResourceDefinition\n"
                + "metadata:\n  name: npuoperatorctls.npu.openfuyao.com\n"
                + "spec:\n  group: npu.openfuyao.com\n  scope: Namespaced\n"
                + "  names:\n    kind: NPUOperatorCtl\n    plural: npuoperatorctls\n    singular: npuoperatorctl\n"
                + "    shortNames: [npuctlx]\n"
                + "  versions:\n  - name: v1\n    served: true\n    storage: true\n    subresources:\n      status: {}\n"
                + "    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n");
        cluster.installCrd(crd);
        String body = get("/apis/npu.openfuyao.com/v1");
        assertTrue(body.contains("\"name\":\"npuoperatorctls\"") && body.contains("\"npuctlx\""), body);
        assertTrue(get("/apis").contains("\"name\":\"npu.openfuyao.com\""));
        cluster.createNpuOperatorCtl("25.0.0", false, true);
        assertEquals(Boolean.TRUE, cluster.npuOperatorCtls().inNamespace("npu-operator").withName("npuoperatorctl-sample")
                .get().get("spec", "driver", "recoveryPolicy", "autoRecover"));
    }

    @Test
    void applyCreatesThenUpdatesTheObjectsOfAYamlFile() throws Exception {
        cluster.installCrd(null);
        Path yaml = Files.writeString(dir.resolve("objects.yaml"), "apiVersion: v1\nkind: ConfigMap\n"
                + "metadata:\n  name: c\n  namespace: npu-operator\ndata:\n  a: \"1\"\n---\n"
                + "apiVersion: npu.openfuyao.com/v1\nkind: NPUOperatorCtl\n"
                + "metadata:\n  name: npuoperatorctl-sample\n  namespace: npu-operator\n"
                + "spec:\n  driver:\n    version: \"25.5.0\"\n");
        assertEquals(2, cluster.apply(yaml).size());
        assertEquals("1", cluster.client().configMaps().inNamespace("npu-operator").withName("c").get().getData().get("a"));
        assertEquals("25.5.0", cluster.npuOperatorCtls().inNamespace("npu-operator").withName("npuoperatorctl-sample")
                .get().get("spec", "driver", "version"));
        Files.writeString(yaml, Files.readString(yaml).replace("\"1\"", "\"2\""));
        cluster.apply(yaml);
        assertEquals("2", cluster.client().configMaps().inNamespace("npu-operator").withName("c").get().getData().get("a"));
    }

    @Test
    void discoveryAndOpenApiAnswerAsKubectlExpects() throws Exception {
        assertTrue(get("/api").contains("\"versions\":[\"v1\"]"));
        String core = get("/api/v1");
        assertTrue(core.contains("\"name\":\"nodes\"") && core.contains("\"name\":\"pods/eviction\""), core);
        assertTrue(get("/apis/coordination.k8s.io/v1").contains("\"kind\":\"Lease\""));
        assertTrue(get("/apis/apps/v1").contains("\"shortNames\":[\"ds\"]"));
        assertTrue(get("/version").contains("\"gitVersion\":\"v1.32.0\""));
        assertEquals(404, status("/openapi/v2"));
        assertEquals(404, status("/openapi/v3"));
        assertEquals(404, status("/apis/nothing.example.com/v1"));
    }

    @Test
    void listsComeInKeyOrderAndFieldSelectorsWorkOnAnyField() {
        cluster.addNpuNodes("node-", 3);
        for (int i = 2; i >= 0; i--) {
            cluster.addDriverPod("node-" + i, EmbeddedCluster.driverImage("25.0.0", "910b"));
        }
        assertEquals(java.util.List.of("npu-driver-node-0", "npu-driver-node-1", "npu-driver-node-2"),
                cluster.client().pods().inNamespace("npu-operator").list().getItems().stream()
                        .map(p -> p.getMetadata().getName()).toList());
        assertEquals(java.util.List.of("npu-driver-node-1"), cluster.client().pods().inNamespace("npu-operator")
                .withField("spec.nodeName", "node-1").list().getItems().stream().map(p -> p.getMetadata().getName())
                .toList());
        assertEquals(2, cluster.client().pods().inNamespace("npu-operator").withoutField("spec.nodeName", "node-1")
                .list().getItems().size());
    }

    @Test
    void aWatchWithAFieldSelectorDeliversOnlyMatchingObjects() {
        cluster.addNpuNodes("node-", 3);
        cluster.addDriverPod("node-0", "img:1");
        Seen seen = new Seen();
        try (SharedIndexInformer<Pod> inf = cluster.client().pods().inNamespace("npu-operator")
                .withField("spec.nodeName", "node-1").inform(pods(seen), 0)) {
            assertTrue(seen.names.isEmpty(), seen.names.toString());
            cluster.addDriverPod("node-2", "img:1");
            cluster.addDriverPod("node-1", "img:1");
            await("the node-1 pod", () -> seen.names.contains("npu-driver-node-1"), seen.names::toString);
            assertEquals(Set.of("npu-driver-node-1"), seen.names);
            assertEquals(1, inf.getStore().list().size());
        }
    }

    @Test
    void strategicMergePatchIsAppliedLikeAMergePatch() {
        cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
                "{\"metadata\":{\"labels\":{\"npu.openfuyao.com/reboot-required\":\"true\"},"
                        + "\"$setElementOrder/finalizers\":[]}}");
        Node n = cluster.client().nodes().withName("node-0").get();
        assertEquals("true", n.getMetadata().getLabels().get("npu.openfuyao.com/reboot-required"));
        assertEquals("true", n.getMetadata().getLabels().get("openfuyao.com/npu.present"));
    }

    /**
     * NodeEdits.annotate is kubectl annotate --overwrite: set, overwrite and remove one annotation, leaving the others,
     * without a resource version (a concurrent write of the Node in between does not make it fail).
     */
    @Test
    void nodeEditsAnnotateSetsOverwritesAndRemovesOneAnnotationAsKubectlAnnotateDoes() {
        cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        NodeEdits.annotate(cluster.client(), "node-0", "example.com/other", "kept");
        NodeEdits.annotate(cluster.client(), "node-0", "npu.openfuyao.com/approve-reboot", "false");
        NodeEdits.annotate(cluster.client(), "node-0", "npu.openfuyao.com/approve-reboot", "true");
        assertEquals("true", cluster.client().nodes().withName("node-0").get().getMetadata().getAnnotations()
                .get("npu.openfuyao.com/approve-reboot"));
        NodeEdits.annotate(cluster.client(), "node-0", "npu.openfuyao.com/approve-reboot", null);
        Node n = cluster.client().nodes().withName("node-0").get();
        assertFalse(n.getMetadata().getAnnotations().containsKey("npu.openfuyao.com/approve-reboot"),
                "annotations " + n.getMetadata().getAnnotations());
        assertEquals("kept", n.getMetadata().getAnnotations().get("example.com/other"));
        assertEquals("true", n.getMetadata().getLabels().get("openfuyao.com/npu.present"));
        KubernetesClientException missing = org.junit.jupiter.api.Assertions.assertThrows(
                KubernetesClientException.class, () -> NodeEdits.annotate(cluster.client(), "node-9", "a", "b"));
        assertEquals(404, missing.getCode());
    }

    @Test
    void aNullInAMergePatchRemovesTheMemberAsRfc7386Says() {
        cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"unschedulable\":true}}");
        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"a\":null}},\"spec\":{\"unschedulable\":null}}");
        Node n = cluster.client().nodes().withName("node-0").get();
        assertFalse(n.getMetadata().getAnnotations().containsKey("a"), "annotations " + n.getMetadata().getAnnotations());
        assertEquals("2", n.getMetadata().getAnnotations().get("b"));
        assertEquals(null, n.getSpec().getUnschedulable());
        assertEquals("true", n.getMetadata().getLabels().get("openfuyao.com/npu.present"));
        // kubectl annotate KEY- sends a strategic merge patch with a null: removed too
        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
                "{\"metadata\":{\"annotations\":{\"b\":null}}}");
        assertFalse(cluster.client().nodes().withName("node-0").get().getMetadata().getAnnotations().containsKey("b"));
    }

    @Test
    void aMergePatchWithAStaleResourceVersionIsAConflictAndChangesNothing() {
        Node n = cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        String stale = n.getMetadata().getResourceVersion();
        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"a\":\"1\"}}}");
        KubernetesClientException e = assertThrows(KubernetesClientException.class, () -> cluster.client().nodes()
                .withName("node-0").patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"metadata\":{\"resourceVersion\":\"" + stale + "\",\"labels\":{\"a\":\"2\"}}}"));
        assertEquals(409, e.getCode());
        Node now = cluster.client().nodes().withName("node-0").get();
        assertEquals("1", now.getMetadata().getLabels().get("a"));
        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{"
                + "\"resourceVersion\":\"" + now.getMetadata().getResourceVersion() + "\",\"labels\":{\"a\":\"3\"}}}");
        assertEquals("3", cluster.client().nodes().withName("node-0").get().getMetadata().getLabels().get("a"));
    }

    @Test
    void aStaleResourceVersionIsAConflict() {
        Node n = cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        cluster.client().nodes().resource(new NodeBuilder(n).editMetadata().addToLabels("a", "1").endMetadata().build())
                .update();
        KubernetesClientException e = assertThrows(KubernetesClientException.class, () -> cluster.client().nodes()
                .resource(new NodeBuilder(n).editMetadata().addToLabels("a", "2").endMetadata().build()).update());
        assertEquals(409, e.getCode());
    }

    /**
     * A JSON patch that does not apply is answered {@code 422 Invalid}, as kube-apiserver answers it
     * ({@code patch.go}: a JSON patch whose application fails is a {@code StatusUnprocessableEntity}), not left
     * without an answer. fabric8's {@code edit} sends the difference between its read and the edited object as a
     * JSON patch; when another writer removed a label between the read and the write, the patch's
     * {@code replace} of that label does not apply: the mock's PatchHandler throws a JsonPatchException that nobody
     * caught, Vert.x logged "Unhandled exception" and the client waited out its request timeout and retries (issue
     * #29: NodeReliabilityTest's hand-set reboot-required label, 4 x 30 s).
     */
    @Test
    void aJsonPatchThatNoLongerAppliesIsAnswered422AndChangesNothing() {
        cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"x\":\"true\"}}}");
        try (KubernetesClient client = cluster.newClient(c -> {
            c.setRequestTimeout(5_000);
            c.setRequestRetryBackoffLimit(0);
        })) {
            long t0 = System.nanoTime();
            KubernetesClientException e = assertThrows(KubernetesClientException.class,
                    () -> client.nodes().withName("node-0").edit(n -> {
                        // another writer (the node agent) removes the label after this edit's read
                        cluster.client().nodes().withName("node-0").patch(PatchContext.of(PatchType.JSON_MERGE),
                                "{\"metadata\":{\"labels\":{\"x\":null}}}");
                        n.getMetadata().getLabels().put("x", "maybe");
                        return n;
                    }));
            assertEquals(422, e.getCode(), () -> "not answered as kube-apiserver answers: " + e + " caused by "
                    + e.getCause() + " after " + Duration.ofNanos(System.nanoTime() - t0).toMillis() + " ms");
            assertTrue(e.getMessage().contains("Missing field \"x\" at /metadata/labels"), e.getMessage());
            // refused: nothing changed
            assertFalse(client.nodes().withName("node-0").get().getMetadata().getLabels().containsKey("x"));
        }
    }

    @Test
    void anOutageAnswers503AndDropsWatchesAndInformersRecoverAfterIt() {
        cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        Seen seen = new Seen();
        try (KubernetesClient client = cluster.newClient(c -> c.setRequestRetryBackoffLimit(0));
                SharedIndexInformer<Node> inf = client.nodes().inform(nodes(seen), 0)) {
            await("node-0 seen and the watch open",
                    () -> seen.names.contains("node-0") && cluster.faults().openWatches() == 1,
                    () -> seen.names + " " + cluster.faults().openWatchPaths());
            cluster.faults().startOutage(EmbeddedFaults.OutageMode.SERVICE_UNAVAILABLE);
            assertTrue(cluster.faults().inOutage());
            assertEquals(0, cluster.faults().openWatches(), "the outage drops the watches");
            KubernetesClientException e = assertThrows(KubernetesClientException.class,
                    () -> client.nodes().withName("node-0").get());
            assertEquals(503, e.getCode(), () -> "not the outage's answer: " + e + " caused by " + e.getCause()
                    + "; requests " + cluster.requestLog().requests());
            cluster.faults().endOutage();
            cluster.addNode(EmbeddedCluster.npuNode("node-1"));
            await("the informer sees node-1 after the outage", () -> seen.names.contains("node-1"),
                    () -> seen.names + " watches " + cluster.faults().openWatchPaths());
            assertTrue(inf.isRunning());
        }
    }

    @Test
    void aTimedOutageEndsByItselfOnTheClustersClock() {
        AtomicLong nanos = new AtomicLong();
        cluster.faults().setClock(nanos::get);
        cluster.faults().outageFor(Duration.ofSeconds(30), EmbeddedFaults.OutageMode.SERVICE_UNAVAILABLE);
        assertTrue(cluster.faults().inOutage());
        nanos.addAndGet(Duration.ofSeconds(29).toNanos());
        assertTrue(cluster.faults().inOutage());
        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        assertFalse(cluster.faults().inOutage());
        assertEquals(0, cluster.client().nodes().list().getItems().size());
    }

    @Test
    void noAnswerMakesClientsRunIntoTheirTimeout() {
        try (KubernetesClient client = cluster.newClient(c -> {
            c.setRequestTimeout(500);
            c.setRequestRetryBackoffLimit(0);
        })) {
            cluster.faults().startOutage(EmbeddedFaults.OutageMode.NO_ANSWER);
            long t0 = System.nanoTime();
            assertThrows(KubernetesClientException.class, () -> client.nodes().list());
            assertTrue(System.nanoTime() - t0 >= Duration.ofMillis(400).toNanos(), "waited for the timeout");
            cluster.faults().endOutage();
            assertEquals(0, client.nodes().list().getItems().size());
        }
    }

    @Test
    void expiredWatchesMakeInformersListAgain() {
        cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        Seen seen = new Seen();
        try (SharedIndexInformer<Node> inf = cluster.client().nodes().inform(nodes(seen), 0)) {
            await("the watch open", () -> cluster.faults().openWatches() == 1,
                    () -> cluster.faults().openWatchPaths().toString());
            long listsBefore = lists();
            cluster.faults().failNextWatches(1);
            assertEquals(1, cluster.faults().expireWatches());
            // the ERROR 410 event ends the watch: list again; the next watch gets HTTP 410: list again; then watch
            await("two new lists and an open watch",
                    () -> lists() >= listsBefore + 2 && cluster.faults().openWatches() == 1,
                    () -> cluster.requestLog().requests().toString());
            cluster.addNode(EmbeddedCluster.npuNode("node-1"));
            await("node-1 seen", () -> seen.names.contains("node-1"), seen.names::toString);
            assertTrue(cluster.requestLog().requests().stream().anyMatch(r -> r.contains("watch=true")));
        }
    }

    long lists() {
        return cluster.requestLog().requests().stream()
                .filter(r -> (r.equals("GET /api/v1/nodes") || r.startsWith("GET /api/v1/nodes?"))
                        && !r.contains("watch=true"))
                .count();
    }

    @Test
    void injectedFaultsAnswerTheirStatusUntilCleared() {
        cluster.addNode(EmbeddedCluster.npuNode("node-0"));
        cluster.faults().injectFault((method, path) -> "PATCH".equals(method)
                && path.startsWith("/api/v1/nodes/node-0") ? 409 : 0);
        try (KubernetesClient client = cluster.newClient(c -> c.setRequestRetryBackoffLimit(0))) {
            KubernetesClientException e = assertThrows(KubernetesClientException.class, () -> client.nodes()
                    .withName("node-0").edit(n -> new NodeBuilder(n).editMetadata().addToLabels("x", "y").endMetadata()
                            .build()));
            assertEquals(409, e.getCode());
            assertNotNull(client.nodes().withName("node-0").get(), "other requests are served");
            cluster.faults().clearFaults();
            client.nodes().withName("node-0").edit(n -> new NodeBuilder(n).editMetadata().addToLabels("x", "y")
                    .endMetadata().build());
            assertEquals("y", client.nodes().withName("node-0").get().getMetadata().getLabels().get("x"));
        }
    }

    @Test
    void theKubeconfigWorksForFabric8Too() throws Exception {
        Path kc = cluster.writeKubeconfig(dir.resolve("sub/kubeconfig"));
        io.fabric8.kubernetes.client.Config c = io.fabric8.kubernetes.client.Config.fromKubeconfig(kc.toFile());
        assertEquals(cluster.masterUrl() + "/", c.getMasterUrl());
        assertEquals("npu-operator", c.getNamespace());
    }

    String get(String path) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(cluster.masterUrl()
                + path)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), path + ": " + r.body());
        return r.body();
    }

    int status(String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(cluster.masterUrl() + path)).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode();
    }
}
