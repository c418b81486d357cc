package io.npulifecycle.rebooter.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

/** kubernetes-server-mock in CRUD mode with our Node and NPUOperatorCtl; the agent's client goes through a proxy. */
final class TestCluster implements AutoCloseable {
    static final String NODE = "npu-node-1";
    static final ResourceDefinitionContext CRD = new ResourceDefinitionContext.Builder().withGroup("npu.openfuyao.com")
            .withVersion("v1").withPlural("npuoperatorctls").withKind("NPUOperatorCtl").withNamespaced(true).build();

    final KubernetesMockServer server;
    final KubernetesClient admin;
    final ToggleProxy proxy;
    final KubernetesClient agent;

    TestCluster() throws IOException {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesMixedDispatcher(new HashMap<>()), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        // the test's own reads are patient (a loaded 2-core CI machine); the agent's client fails fast, as the
        // outage tests need
        admin = client(server.getPort(), 30_000, 3);
        proxy = new ToggleProxy(server.getPort());
        agent = client(proxy.port(), 10_000, 0);
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
                .addToLabels("openfuyao.com/npu.present", "true").endMetadata().build()).create();
    }

    /** @return a new client for one node-agent runtime, through the proxy (each runtime has its own, as in production) */
    KubernetesClient newAgent() {
        KubernetesClient c = client(proxy.port(), 10_000, 0);
        extraAgents.add(c);
        return c;
    }

    private final java.util.List<KubernetesClient> extraAgents = new java.util.ArrayList<>();

    private static KubernetesClient client(int port, int requestTimeoutMs, int retries) {
        Config c = new ConfigBuilder().withMasterUrl("http://127.0.0.1:" + port).withNamespace("default")
                .withRequestTimeout(requestTimeoutMs).withConnectionTimeout(Math.min(requestTimeoutMs, 5000))
                .withRequestRetryBackoffLimit(retries).build();
        return new KubernetesClientBuilder().withConfig(c).withHttpClientFactory(new JdkHttpClientFactory()).build();
    }

    void policy(Boolean autoUpgrade, Object autoRecover, Object maxReboots, Object window) {
        Map<String, Object> rp = new HashMap<>();
        if (autoRecover != null) {
            rp.put("autoRecover", autoRecover);
        }
        if (maxReboots != null) {
            rp.put("maxReboots", maxReboots);
        }
        if (window != null) {
            rp.put("window", window);
        }
        Map<String, Object> driver = new HashMap<>();
        driver.put("version", "25.5.0");
        driver.put("upgradePolicy", Map.of("autoUpgrade", autoUpgrade != null && autoUpgrade));
        driver.put("recoveryPolicy", rp);
        GenericKubernetesResource cr = new GenericKubernetesResource();
        cr.setApiVersion("npu.openfuyao.com/v1");
        cr.setKind("NPUOperatorCtl");
        cr.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("npuoperatorctl-sample")
                .withNamespace("npu-operator").build());
        cr.setAdditionalProperty("spec", Map.of("driver", driver));
        admin.genericKubernetesResources(CRD).inNamespace("npu-operator").resource(cr).createOr(r -> r.update());
    }

    Node node() {
        return admin.nodes().withName(NODE).get();
    }

    String annotation(String key) {
        Map<String, String> a = node().getMetadata().getAnnotations();
        return a == null ? null : a.get(key);
    }

    String label(String key) {
        Map<String, String> l = node().getMetadata().getLabels();
        return l == null ? null : l.get(key);
    }

    void annotate(String key, String value) {
        for (int i = 0; ; i++) {
            try {
                annotateOnce(key, value);
                return;
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409 || i > 10) {
                    throw e;
                }
            }
        }
    }

    private void annotateOnce(String key, String value) {
        admin.nodes().withName(NODE).edit(n -> {
            if (n.getMetadata().getAnnotations() == null) {
                n.getMetadata().setAnnotations(new HashMap<>());
            }
            if (value == null) {
                n.getMetadata().getAnnotations().remove(key);
            } else {
                n.getMetadata().getAnnotations().put(key, value);
            }
            return n;
        });
    }

    List<io.fabric8.kubernetes.api.model.Event> events(String reason) {
        return admin.v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).collect(Collectors.toList());
    }

    static void await(String what, BooleanSupplier condition) {
        await(what, condition, null);
    }

    static void await(String what, BooleanSupplier condition, Runnable eachRound) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            LockSupport.parkNanos(20_000_000L);
            if (eachRound != null) {
                eachRound.run();
            }
        }
    }

    @Override
    public void close() throws IOException {
        agent.close();
        extraAgents.forEach(KubernetesClient::close);
        admin.close();
        proxy.close();
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            // the mock's Vert.x loop can be slow to close after the proxy cut connections; not what is tested
        }
    }
}
