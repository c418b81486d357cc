package io.npulifecycle.testing.support;

import io.npulifecycle.simulator.cluster.NodeEdits;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.ClusterBackends;
import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.cluster.ServerBaseline;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;
import io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/**
 * The Kubernetes API server of a test, through {@link ClusterBackend} (the embedded mock by default, a real
 * kube-apiserver when the test can run on either), with what tests do on it: clients (closed with the fixture), reads
 * of a node's labels and annotations, writes that retry on a {@code 409 Conflict} as a person's {@code kubectl}
 * would, Events by reason, the NPUOperatorCtl's {@code spec.driver} and status, and requests counted per client.
 *
 * <p>Faults (outages, injected status codes, expired watches) exist on the mock only: {@link #embedded()}; a real
 * server's kube-apiserver restart and etcd compaction: {@link #real()}.
 *
 * <pre>
 * try (ClusterFixture cluster = ClusterFixture.startEmbedded()) {
 *     KubernetesClient controller = cluster.client("npu-controller");
 *     cluster.createDriver(Map.of("version", "25.5.0"));
 *     Waits.until("Complete", Duration.ofSeconds(30), () -&gt; cluster.condition("Complete").startsWith("True"));
 * }
 * </pre>
 */
public final class ClusterFixture implements AutoCloseable {

    /** User-Agent of {@link #admin()}. */
    public static final String ADMIN_USER_AGENT = "npu-test";
    /** The manifests of {@code charts/target/kubectl/} (the chart rendered by module charts) that {@link #start(String)} applies to a real server. */
    public static final String INSTALLED_MANIFESTS =
            "00-namespace.yaml, 10-rbac-node-agent.yaml, 11-rbac-control-plane.yaml, 20-admission-node-agent.yaml";
    /** How often a write that meets {@code 409 Conflict} is tried. */
    public static final int CONFLICT_ATTEMPTS = NodeEdits.CONFLICT_ATTEMPTS;

    /**
     * System property: {@code false} starts a new real server for every fixture instead of reusing the last one
     * ({@link RealServerPool}).
     */
    public static final String REUSE_PROPERTY = "npu.test.realServerReuse";

    private final ClusterBackend backend;
    /** For a real server from {@link #startReal}: its flags and baseline, to give it back; else null. */
    private final List<String> pooledFlags;
    private final ServerBaseline baseline;
    private final KubernetesClient admin;
    private final List<AutoCloseable> owned = new ArrayList<>();
    private final Map<String, AtomicLong> requests = new ConcurrentHashMap<>();

    private ClusterFixture(ClusterBackend backend) {
        this(backend, null, null);
    }

    private ClusterFixture(ClusterBackend backend, List<String> pooledFlags, ServerBaseline baseline) {
        this.backend = backend;
        this.pooledFlags = pooledFlags;
        this.baseline = baseline;
        if (backend instanceof EmbeddedCluster e) {
            e.requestLog().addRequestListener((method, path, userAgent) -> {
                String who = userAgent != null && userAgent.startsWith("npu-") ? userAgent : "other";
                requests.computeIfAbsent(who + " " + method, k -> new AtomicLong()).incrementAndGet();
            });
        }
        // the test's own client is patient (a loaded 2-core machine); clients under test are configured by the test
        this.admin = client(c -> {
            c.setUserAgent(ADMIN_USER_AGENT);
            c.setRequestTimeout(30_000);
            c.setRequestRetryBackoffLimit(3);
        });
    }

    /**
     * Starts an {@link EmbeddedCluster} with the NPUOperatorCtl type served ({@link ClusterBackend#installCrd()}).
     *
     * @return the fixture; {@link #close()} stops the cluster
     */
    public static ClusterFixture startEmbedded() {
        EmbeddedCluster cluster = EmbeddedCluster.start();
        try {
            cluster.installCrd();
            installDriverTemplate(cluster.client());
            return new ClusterFixture(cluster);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Starts the backend of that kind with the product installed as far as the tests need: the NPUOperatorCtl type,
     * and on a real server also the namespace, both ServiceAccounts with their RBAC and the node agent's
     * ValidatingAdmissionPolicy ({@value #INSTALLED_MANIFESTS} of {@code charts/target/kubectl/} (the chart rendered by module charts), found beside the CRD
     * file). The workloads (30-, 40-) are not applied: the tests run the product in their own JVM.
     *
     * @param kind {@value ClusterBackend#EMBEDDED} or {@value ClusterBackend#REAL} ({@link ClusterBackends#start})
     * @return the fixture; {@link #close()} stops the server
     * @throws IllegalArgumentException for another kind
     * @throws IllegalStateException when a real server cannot start (no binaries: the message says what to build)
     */
    public static ClusterFixture start(String kind) {
        if (ClusterBackend.EMBEDDED.equals(ClusterBackends.checkKind(kind))) {
            return startEmbedded();
        }
        return startReal(List.of());
    }

    /**
     * Starts a real server as {@link #start(String)} does, with more kube-apiserver flags (e.g.
     * {@code --watch-cache=false}, so that a watch from a compacted resourceVersion is answered 410 Gone).
     *
     * <p>The server of an earlier fixture with the same flags is reused when it could be wiped back to exactly what
     * was installed ({@link RealServerPool}; off with {@value #REUSE_PROPERTY}{@code =false}): a test finds only
     * the installed manifests, whichever test ran before.
     *
     * @param apiServerFlags appended to the standard flags ({@link RealApiServer#start(KubeBinaries, Duration,
     *        java.util.function.LongSupplier, List)})
     * @return the fixture; {@link #close()} stops the server or wipes it for the next fixture
     * @throws IllegalStateException when the server cannot start
     */
    public static ClusterFixture startReal(List<String> apiServerFlags) {
        List<String> flags = List.copyOf(apiServerFlags);
        boolean reuse = !"false".equals(System.getProperty(REUSE_PROPERTY));
        RealServerPool.Idle idle = reuse ? RealServerPool.take(flags) : null;
        if (idle != null) {
            return new ClusterFixture(idle.server(), flags, idle.baseline());
        }
        RealApiServer api = RealApiServer.start(KubeBinaries.locate(), RealApiServer.DEFAULT_START_TIMEOUT,
                System::nanoTime, flags);
        try {
            Path crd = api.installCrd();
            for (String m : INSTALLED_MANIFESTS.split(", ")) {
                api.apply(crd.resolveSibling(m));
            }
            installDriverTemplate(api.client());
            return reuse ? new ClusterFixture(api, flags, ServerBaseline.of(api.client()))
                    : new ClusterFixture(api);
        } catch (RuntimeException e) {
            api.close();
            throw e;
        }
    }

    /**
     * Creates the ConfigMap of the driver DaemonSet template in {@code npu-operator}, as the chart does
     * ({@link DriverDaemonSetTemplate}; the control plane reads it at run time).
     *
     * @param client an administrator's client
     */
    static void installDriverTemplate(KubernetesClient client) {
        DriverDaemonSetTemplate.install(client, EmbeddedCluster.NPU_NAMESPACE, DriverDaemonSetTemplate.locate());
    }

    /**
     * A client that authenticates as a ServiceAccount of {@code npu-operator} the way the product's pods do: on a
     * real server with a token bound to a pod of that ServiceAccount on {@code nodeName} (created when absent, named
     * {@code <serviceAccount>-<nodeName>}), so RBAC and the node agent's admission policy apply to it; on the mock,
     * which authorizes nothing, an admin client.
     *
     * @param serviceAccount e.g. {@code npu-lifecycle-node-agent} (exists: {@link #start(String)} applied it)
     * @param nodeName the node of the pod, e.g. the node agent's node (the token's node-name claim); null for a pod
     *        on no node (the control plane: no claim), named {@code <serviceAccount>-0}
     * @param customizer changes the configuration (master URL of a proxy, namespace, timeouts, User-Agent)
     * @return a new client, closed with the fixture
     */
    public KubernetesClient serviceAccountClient(String serviceAccount, String nodeName, Consumer<Config> customizer) {
        if (!(backend instanceof RealApiServer real)) {
            return client(customizer);
        }
        return own(real.newTokenClient(serviceAccountToken(serviceAccount, nodeName), customizer));
    }

    /**
     * A token bound to a pod of that ServiceAccount on {@code nodeName} (as {@link #serviceAccountClient}).
     *
     * @param serviceAccount a ServiceAccount of {@code npu-operator}
     * @param nodeName the pod's node, or null for none
     * @return the token, valid for 2 hours
     * @throws IllegalStateException when the backend is the mock (which issues no tokens)
     */
    public String serviceAccountToken(String serviceAccount, String nodeName) {
        RealApiServer real = real();
        String pod = serviceAccount + "-" + (nodeName == null ? "0" : nodeName);
        if (admin.pods().inNamespace(EmbeddedCluster.NPU_NAMESPACE).withName(pod).get() == null) {
            admin.pods().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(new PodBuilder().withNewMetadata()
                    .withName(pod).endMetadata().withNewSpec().withServiceAccountName(serviceAccount)
                    .withNodeName(nodeName).addNewContainer().withName("agent")
                    .withImage("registry.local/npu-lifecycle/agent:test").endContainer().endSpec().build()).create();
        }
        return real.podBoundToken(EmbeddedCluster.NPU_NAMESPACE, serviceAccount, pod, Duration.ofHours(2));
    }

    /**
     * @return the backend as a real server, for its restart and compaction
     * @throws IllegalStateException when the backend is the mock
     */
    public RealApiServer real() {
        if (backend instanceof RealApiServer r) {
            return r;
        }
        throw new IllegalStateException("this test needs a real API server; the backend is " + backend.kind());
    }

    /**
     * @param backend a started backend with the NPUOperatorCtl type served; closed with the fixture
     * @return the fixture
     */
    public static ClusterFixture on(ClusterBackend backend) {
        return new ClusterFixture(backend);
    }

    /** @return the backend */
    public ClusterBackend backend() {
        return backend;
    }

    /**
     * @return the backend as the embedded mock, for its faults
     * @throws IllegalStateException when the backend is not the mock (the test needs {@code embedded})
     */
    public EmbeddedCluster embedded() {
        if (backend instanceof EmbeddedCluster e) {
            return e;
        }
        throw new IllegalStateException("this test needs the embedded cluster's fault hooks; the backend is "
                + backend.kind());
    }

    /** @return the API server's URL ({@link ClusterBackend#masterUrl()}) */
    public String masterUrl() {
        return backend.masterUrl();
    }

    /** @return the API server's loopback port (e.g. for a {@code TcpProxy} in front of it) */
    public int port() {
        return URI.create(backend.masterUrl()).getPort();
    }

    /**
     * @return the test's own client: User-Agent {@value #ADMIN_USER_AGENT}, 30 s request timeout, 3 retries,
     *         namespace {@code npu-operator}
     */
    public KubernetesClient admin() {
        return admin;
    }

    /**
     * @param userAgent e.g. {@code npu-controller}; requests of agents starting with {@code npu-} are counted apart
     *        ({@link #requestsOf(String)})
     * @return a new client with the backend's defaults (namespace {@code npu-operator}) and 3 retries, closed with the
     *         fixture
     */
    public KubernetesClient client(String userAgent) {
        return client(c -> {
            c.setUserAgent(userAgent);
            c.setRequestRetryBackoffLimit(3);
        });
    }

    /**
     * @param customizer changes the backend's default client configuration (master URL of a proxy, namespace,
     *        timeouts, retries, User-Agent)
     * @return a new client, closed with the fixture
     */
    public KubernetesClient client(Consumer<Config> customizer) {
        return own(backend.newClient(customizer));
    }

    /**
     * Closes {@code c} with the fixture: in reverse order of registration, before the backend.
     *
     * @param c what to close
     * @param <T> its type
     * @return {@code c}
     */
    public synchronized <T extends AutoCloseable> T own(T c) {
        owned.add(c);
        return c;
    }

    // ---- nodes ----

    /**
     * @param name node name
     * @return the node, or null when absent
     */
    public Node node(String name) {
        return admin.nodes().withName(name).get();
    }

    /**
     * @param node node name
     * @param key label key
     * @return the label's value, or null when the node or the label is absent
     */
    public String label(String node, String key) {
        Node n = node(node);
        Map<String, String> l = n == null ? null : n.getMetadata().getLabels();
        return l == null ? null : l.get(key);
    }

    /**
     * @param node node name
     * @param key annotation key
     * @return the annotation's value, or null when the node or the annotation is absent
     */
    public String annotation(String node, String key) {
        Node n = node(node);
        Map<String, String> a = n == null ? null : n.getMetadata().getAnnotations();
        return a == null ? null : a.get(key);
    }

    /**
     * Sets or removes an annotation of a node, reading the node again on a {@code 409 Conflict} (up to
     * {@value #CONFLICT_ATTEMPTS} attempts), as {@code kubectl annotate} does.
     *
     * @param node node name
     * @param key annotation key
     * @param value the value, or null to remove the annotation
     * @throws KubernetesClientException when the API server refuses the write otherwise
     */
    public void annotate(String node, String key, String value) {
        NodeEdits.annotate(admin, node, key, value);
    }

    /**
     * @param namespace where the Events are
     * @param reason e.g. {@code RebootRequired}
     * @return the Events of that reason (core/v1)
     */
    public List<Event> events(String namespace, String reason) {
        return admin.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).collect(Collectors.toList());
    }

    // ---- the NPUOperatorCtl ----

    /** @return the NPUOperatorCtl {@code npuoperatorctl-sample} in {@code npu-operator}, or null when absent */
    public GenericKubernetesResource npuOperatorCtl() {
        return backend.npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).get();
    }

    private GenericKubernetesResource withDriver(Map<String, Object> driver) {
        GenericKubernetesResource r = new GenericKubernetesResource();
        r.setApiVersion(EmbeddedCluster.NPU_OPERATOR_CTL.groupVersion());
        r.setKind(EmbeddedCluster.NPU_OPERATOR_CTL.kind());
        r.setMetadata(new ObjectMetaBuilder().withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME)
                .withNamespace(EmbeddedCluster.NPU_NAMESPACE).build());
        r.setAdditionalProperty("spec", Map.of("driver", driver));
        return r;
    }

    /**
     * Creates the NPUOperatorCtl with {@code spec: {driver: <driver>}}.
     *
     * @param driver the {@code spec.driver} map
     * @throws KubernetesClientException when it exists already (409) or is refused
     */
    public void createDriver(Map<String, Object> driver) {
        backend.npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(withDriver(driver)).create();
    }

    /**
     * Creates the NPUOperatorCtl with {@code spec: {driver: <driver>}}, or replaces the existing one (its status
     * kept by the status subresource).
     *
     * @param driver the {@code spec.driver} map
     */
    public void putDriver(Map<String, Object> driver) {
        retryOnConflict(() -> backend.npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .resource(withDriver(driver)).createOr(r -> r.update()));
    }

    /**
     * Replaces {@code spec.driver} of the existing NPUOperatorCtl as a person's {@code kubectl edit} would: on a 409
     * (the controller wrote the status in between) it reads the object again and retries, up to
     * {@value #CONFLICT_ATTEMPTS} attempts.
     *
     * @param driver the new {@code spec.driver} map
     */
    public void setDriver(Map<String, Object> driver) {
        retryOnConflict(() -> backend.npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).edit(r -> {
                    r.setAdditionalProperty("spec", Map.of("driver", driver));
                    return r;
                }));
    }

    /** @return the NPUOperatorCtl's status map, or an empty map when there is none */
    @SuppressWarnings("unchecked")
    public Map<String, Object> status() {
        GenericKubernetesResource r = npuOperatorCtl();
        Object s = r == null ? null : r.getAdditionalProperties().get("status");
        return s instanceof Map ? (Map<String, Object>) s : Map.of();
    }

    /**
     * @param type a status condition type, e.g. {@code Complete}
     * @return {@code "<status> <reason>: <message>"} of that condition, or {@code ""} when it is absent
     */
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

    // ---- request counts ----

    /**
     * Requests the mock received from clients whose User-Agent is {@code userAgent} (watch requests included),
     * counted from the fixture's start.
     *
     * @param userAgent e.g. {@code npu-controller}
     * @return {@code [reads (GET), writes (every other method)]}
     * @throws IllegalStateException when the backend is not the mock
     */
    public long[] requestsOf(String userAgent) {
        embedded();
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

    /**
     * @return requests counted by {@code "<userAgent> <METHOD>"} (agents not starting with {@code npu-} as
     *         {@code other}), a live view; empty unless the backend is the mock
     */
    public Map<String, AtomicLong> requests() {
        return requests;
    }

    private static void retryOnConflict(Runnable write) {
        NodeEdits.retryOnConflict(write);
    }

    /**
     * Closes what the fixture owns (reverse order), then the backend, or, for a reusable real server, wipes it and
     * keeps it for the next fixture ({@link RealServerPool}); never throws.
     */
    @Override
    public void close() {
        List<AutoCloseable> toClose;
        synchronized (this) {
            toClose = new ArrayList<>(owned);
            owned.clear();
        }
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception e) {
                // closing the rest anyway: a client that fails to close is not what a test checks
            }
        }
        if (pooledFlags != null && backend instanceof RealApiServer real) {
            RealServerPool.giveBack(real, pooledFlags, baseline);
            return;
        }
        try {
            backend.close();
        } catch (RuntimeException e) {
            // the mock's event loop can be slow to stop after a proxy cut its connections; not what a test checks
        }
    }
}
