package io.npulifecycle.upgrade.testing;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;

/**
 * kubernetes-server-mock in CRUD mode with the NPUOperatorCtl (status subresource) registered, a counting
 * dispatcher (requests by User-Agent, method), clients, a scaled clock and a node agent emulator.
 */
public final class MockCluster implements AutoCloseable {

    public static final String NS = "npu-operator";
    public static final String CR = "npuoperatorctl-sample";
    public static final String REGISTRY = "registry.local";
    public static final ResourceDefinitionContext CTX = new ResourceDefinitionContext.Builder().withGroup("npu.openfuyao.com")
            .withVersion("v1").withKind("NPUOperatorCtl").withPlural("npuoperatorctls").withNamespaced(true).build();

    public final KubernetesMockServer server;
    public final KubernetesClient admin;
    public final ScaledTimeSource time;
    public final NodeAgentEmulator emulator;
    private final KubernetesMixedDispatcher crud;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    /** Requests by "userAgent METHOD" (watch GETs included), counted at the API server. */
    public final Map<String, AtomicLong> requests = new ConcurrentHashMap<>();

    /** @param scale simulated seconds per wall second */
    public MockCluster(double scale) {
        CustomResourceDefinitionContext crd = new CustomResourceDefinitionContext.Builder().withGroup("npu.openfuyao.com")
                .withVersion("v1").withKind("NPUOperatorCtl").withPlural("npuoperatorctls").withScope("Namespaced")
                .withName("npuoperatorctls.npu.openfuyao.com").withStatusSubresource(true).build();
        crud = new KubernetesMixedDispatcher(new HashMap<>(), List.of(crd));
        Dispatcher counting = new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest r) {
                String ua = r.getHeader("User-Agent");
                String who = ua != null && ua.startsWith("npu-") ? ua : "other";
                requests.computeIfAbsent(who + " " + r.getMethod(), k -> new AtomicLong()).incrementAndGet();
                return crud.dispatch(r);
            }

            @Override
            public void shutdown() {
                crud.shutdown();
            }
        };
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), counting, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        time = new ScaledTimeSource(scale);
        admin = client("npu-test");
        emulator = new NodeAgentEmulator(client("npu-emulator"), time, NS, CR, REGISTRY);
    }

    /**
     * @param userAgent {@code npu-...} to count its requests apart
     * @return a new client on the mock (closed with the cluster)
     */
    public KubernetesClient client(String userAgent) {
        Config c = new ConfigBuilder(Config.empty()).withMasterUrl(masterUrl())
                .withTrustCerts(true).withNamespace(NS).withUserAgent(userAgent).withRequestRetryBackoffLimit(3).build();
        KubernetesClient k = new KubernetesClientBuilder().withConfig(c).withHttpClientFactory(new JdkHttpClientFactory()).build();
        closeables.add(k);
        return k;
    }

    /** @return the API server's URL, e.g. {@code http://localhost:40123} */
    public String masterUrl() {
        return "http://" + server.getHostName() + ":" + server.getPort();
    }

    /** Registers something to close with the cluster (closed in reverse order, before the clients). */
    public <T extends AutoCloseable> T own(T c) {
        closeables.add(c);
        return c;
    }

    /** Adds {@code count} 910B nodes on openEuler 24.03 SP3 named n1..nN with driver {@code loaded}. */
    public void addNodes(int count, String loaded) {
        for (int i = 1; i <= count; i++) {
            emulator.addNode("n" + i, "910b", "6.6.0-145.0.4.135.oe2403sp3.aarch64", "openEuler 24.03 (LTS-SP3)", loaded,
                    "6.6.0-145.0.4.135", "oe2403sp3");
        }
    }

    /**
     * Creates the NPUOperatorCtl.
     *
     * @param driver the {@code spec.driver} map
     */
    public void createCr(Map<String, Object> driver) {
        GenericKubernetesResource r = new GenericKubernetesResource();
        r.setApiVersion("npu.openfuyao.com/v1");
        r.setKind("NPUOperatorCtl");
        r.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(CR).withNamespace(NS).build());
        r.setAdditionalProperty("spec", Map.of("driver", driver));
        admin.genericKubernetesResources(CTX).inNamespace(NS).resource(r).create();
    }

    /**
     * Replaces {@code spec.driver} of the CR, as a person's {@code kubectl edit} would: on a 409 (the controller wrote
     * the status in between) it reads the object again and retries, up to 10 times.
     */
    public void setDriver(Map<String, Object> driver) {
        for (int attempt = 1;; attempt++) {
            try {
                admin.genericKubernetesResources(CTX).inNamespace(NS).withName(CR).edit(r -> {
                    r.setAdditionalProperty("spec", Map.of("driver", driver));
                    return r;
                });
                return;
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= 10) {
                    throw e;
                }
            }
        }
    }

    /** Builds a {@code spec.driver} map. */
    public static Map<String, Object> driver(String version, boolean auto, Object maxParallel, Object maxUnavailable,
            Map<String, Object> deadlines) {
        Map<String, Object> up = new LinkedHashMap<>();
        up.put("autoUpgrade", auto);
        if (maxParallel != null) {
            up.put("maxParallelUpgrades", maxParallel);
        }
        if (maxUnavailable != null) {
            up.put("maxUnavailable", maxUnavailable);
        }
        if (deadlines != null) {
            up.put("deadlines", deadlines);
        }
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("version", version);
        d.put("registry", REGISTRY);
        d.put("upgradePolicy", up);
        return d;
    }

    /** @return the CR's status map, or an empty map */
    @SuppressWarnings("unchecked")
    public Map<String, Object> status() {
        GenericKubernetesResource r = admin.genericKubernetesResources(CTX).inNamespace(NS).withName(CR).get();
        Object s = r == null ? null : r.getAdditionalProperties().get("status");
        return s instanceof Map ? (Map<String, Object>) s : Map.of();
    }

    /** @return the status of condition {@code type} ("" if absent) + " " + reason + ": " + message */
    @SuppressWarnings("unchecked")
    public String condition(String type) {
        Object cs = status().get("conditions");
        if (cs instanceof List<?> l) {
            for (Object o : l) {
                Map<String, Object> c = (Map<String, Object>) o;
                if (type.equals(c.get("type"))) {
                    return c.get("status") + " " + c.get("reason") + ": " + c.get("message");
                }
            }
        }
        return "";
    }

    /** @return node by name */
    public Node node(String name) {
        return admin.nodes().withName(name).get();
    }

    /** @return the value of a label of a node, or null */
    public String label(String node, String key) {
        Node n = node(node);
        return n.getMetadata().getLabels() == null ? null : n.getMetadata().getLabels().get(key);
    }

    /** @return whether every NPU node has no upgrade state and runs and validated {@code version} */
    public boolean allDone(String version) {
        for (Node n : admin.nodes().withLabel("openfuyao.com/npu.present").list().getItems()) {
            Map<String, String> l = n.getMetadata().getLabels();
            Map<String, String> a = n.getMetadata().getAnnotations();
            if (l.get("npu.openfuyao.com/driver-upgrade-state") != null || !version.equals(l.get("npu.openfuyao.com/driver-version"))
                    || !(version + "@" + a.get("npu.openfuyao.com/boot-id")).equals(a.get("npu.openfuyao.com/driver-validated"))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Waits for a condition, polling (a test helper, not production code).
     *
     * @throws AssertionError naming {@code what} at the deadline
     */
    public static void await(String what, Duration timeout, BooleanSupplier cond) {
        long end = System.nanoTime() + timeout.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** @return requests counted for a user agent: [reads, writes] */
    public long[] requestsOf(String userAgent) {
        long reads = 0;
        long writes = 0;
        for (Map.Entry<String, AtomicLong> e : requests.entrySet()) {
            if (e.getKey().startsWith(userAgent + " ")) {
                if (e.getKey().endsWith(" GET")) {
                    reads += e.getValue().get();
                } else {
                    writes += e.getValue().get();
                }
            }
        }
        return new long[] {reads, writes};
    }

    @Override
    public void close() {
        emulator.close();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        time.close();
        server.destroy();
    }
}
