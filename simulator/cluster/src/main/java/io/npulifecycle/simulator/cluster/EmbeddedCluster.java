package io.npulifecycle.simulator.cluster;

import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import io.npulifecycle.api.node.NodeKeys;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import tools.jackson.databind.node.ObjectNode;

/**
 * An in-process Kubernetes API server for tests, the demo and the scenarios: fabric8's
 * {@code kubernetes-server-mock} 8.0.0 in CRUD mode on a loopback port (objects are stored, listed with label
 * selectors, watched over WebSocket, optimistic concurrency answers 409 on a stale resourceVersion), plus
 * {@link KubectlDispatcher}, which makes the real {@code kubectl} work against it (discovery, field selectors,
 * strategic merge patch; DESIGN.md "Known traps"), and, mock only, fault hooks for reliability tests
 * ({@link #faults()}) and a request log ({@link #requestLog()}).
 *
 * <pre>
 * try (EmbeddedCluster cluster = EmbeddedCluster.start()) {
 *     cluster.installCrd();
 *     cluster.addNpuNode(EmbeddedCluster.npuNode("node-0"));
 *     cluster.createNpuOperatorCtl("25.0.0", false, false);
 *     cluster.writeKubeconfig(dir.resolve("kubeconfig"));       // for kubectl
 *     cluster.client().nodes().list();                          // fabric8, JDK HTTP client
 * }
 * </pre>
 *
 * <p>Not a real API server: no admission, no defaulting beyond the mock's, no garbage collection, no pod
 * scheduling; {@code kubectl get -w} does not work (the mock streams watches only over WebSocket); a watch with a
 * field selector gets no DELETED event when an object stops matching. Thread-safe.
 */
public final class EmbeddedCluster implements ClusterBackend {

    /** Namespace of the operator's objects (DESIGN.md). */
    public static final String NPU_NAMESPACE = NpuOperatorCtlType.DEFAULT_NAMESPACE;
    /** Name of the default NPUOperatorCtl (DESIGN.md). */
    public static final String NPU_OPERATOR_CTL_NAME = NpuOperatorCtlType.DEFAULT_NAME;
    /** The custom resource type (DESIGN.md): {@code npuoperatorctls.npu.openfuyao.com/v1}, short name {@code npuctl}. */
    public static final ApiResource NPU_OPERATOR_CTL = new ApiResource(NpuOperatorCtlType.GROUP,
            NpuOperatorCtlType.VERSION, NpuOperatorCtlType.KIND, NpuOperatorCtlType.PLURAL, NpuOperatorCtlType.SINGULAR,
            NpuOperatorCtlType.NAMESPACED, NpuOperatorCtlType.SHORT_NAMES, List.of("status"));
    /** Label of NPU nodes (DESIGN.md). */
    public static final String NPU_PRESENT_LABEL = NodeKeys.NPU_PRESENT;
    /** Chip family label (docs/architecture.md, node contract). */
    public static final String CHIP_LABEL = NodeKeys.CHIP;
    /** Label of the driver pods (DESIGN.md). */
    public static final String DRIVER_POD_LABEL_VALUE = NodeKeys.DRIVER_APP;
    /** Kernel of the simulated NPU nodes: openEuler 24.03 LTS SP3 on aarch64. */
    public static final String DEFAULT_KERNEL = "6.6.0-145.0.4.135.oe2403sp3.aarch64";
    /** OS image of the simulated NPU nodes. */
    public static final String DEFAULT_OS_IMAGE = "openEuler 24.03 (LTS-SP3)";
    /** Kubernetes version the cluster reports on {@code /version}. */
    public static final String KUBERNETES_VERSION = "v1.32.0";
    /** Where {@link #installCrd()} looks for the CRD, relative to the repository root: the chart rendered for kubectl
     * by module charts (its sources: charts/npu-lifecycle/crds/). */
    public static final String CRD_FILE = "charts/target/kubectl/crd-npuoperatorctl.yaml";
    /** System property naming the CRD file explicitly. */
    public static final String CRD_FILE_PROPERTY = "npu.crd.file";

    private static final List<ApiResource> BUILT_IN = List.of(
            ApiResource.core("Node", "nodes", false, "no"),
            new ApiResource("", "v1", "Pod", "pods", "pod", true, List.of("po"), List.of("status", "eviction")),
            ApiResource.core("Event", "events", true, "ev"),
            ApiResource.core("Namespace", "namespaces", false, "ns"),
            ApiResource.core("Secret", "secrets", true),
            ApiResource.core("ConfigMap", "configmaps", true, "cm"),
            ApiResource.core("Service", "services", true, "svc"),
            ApiResource.core("ServiceAccount", "serviceaccounts", true, "sa"),
            ApiResource.of("apps", "DaemonSet", "daemonsets", true, "ds"),
            ApiResource.of("apps", "Deployment", "deployments", true, "deploy"),
            ApiResource.of("apps", "ReplicaSet", "replicasets", true, "rs"),
            ApiResource.of("apps", "StatefulSet", "statefulsets", true, "sts"),
            new ApiResource("coordination.k8s.io", "v1", "Lease", "leases", "lease", true, List.of(), List.of()),
            new ApiResource("events.k8s.io", "v1", "Event", "events", "event", true, List.of("ev"), List.of()),
            new ApiResource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
                    "customresourcedefinition", false, List.of("crd", "crds"), List.of("status")));

    private final KubernetesMockServer server;
    private final KubectlDispatcher dispatcher;
    private final List<ApiResource> registered = new CopyOnWriteArrayList<>(BUILT_IN);
    private final EmbeddedFaults faults = new EmbeddedFaults();
    private final RequestLog requestLog = new RequestLog();
    private final BackendClients.Shared shared = new BackendClients.Shared(this::newClient);
    private volatile boolean closed;

    /** System property: {@code true} keeps the mock's log line per request (java.util.logging, INFO). */
    public static final String LOG_REQUESTS_PROPERTY = "npu.cluster.log.requests";

    /** Held so that java.util.logging does not forget the level (loggers are weakly referenced). */
    private static final java.util.logging.Logger MOCK_LOG = java.util.logging.Logger.getLogger(
            "io.fabric8.mockwebserver.MockWebServer");

    private EmbeddedCluster(int port) {
        if (!Boolean.getBoolean(LOG_REQUESTS_PROPERTY)) {
            MOCK_LOG.setLevel(java.util.logging.Level.WARNING); // one INFO line per request otherwise
        }
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        dispatcher = new KubectlDispatcher(responses, this);
        MockWebServer web = new MockWebServer();
        // HTTP/1.1 only, as a kube-apiserver without TLS would speak. The JDK HTTP client (the product's and the
        // tests' fabric8 transport) asks plain-HTTP servers for an h2c upgrade, which the mock's Vert.x accepts by
        // default; its upgrade path intermittently breaks a connection's framing (fabric8 kubernetes-client PR
        // #7662, which added this switch for the same flake in its own tests): here a Node PATCH of
        // NodeReliabilityTest went unanswered for its 10 s request timeout three times in a row.
        web.setHttp2ClearTextEnabled(false);
        server = new KubernetesMockServer(new Context(), web, responses, dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), port);
    }

    /**
     * Starts a cluster on a free loopback port.
     *
     * @return the running cluster; {@link #close()} stops it
     */
    public static EmbeddedCluster start() {
        return new EmbeddedCluster(0);
    }

    /**
     * Starts a cluster on a given loopback port.
     *
     * @param port the port, 0 for any free one
     * @return the running cluster
     */
    public static EmbeddedCluster start(int port) {
        return new EmbeddedCluster(port);
    }

    @Override
    public String kind() {
        return EMBEDDED;
    }

    /** @return e.g. {@code http://127.0.0.1:35451} (no trailing slash) */
    @Override
    public String masterUrl() {
        return "http://" + hostPort();
    }

    /** @return the loopback port */
    public int port() {
        return server.getPort();
    }

    String hostPort() {
        return InetAddress.getLoopbackAddress().getHostAddress() + ":" + server.getPort();
    }

    /**
     * The cluster's own client (fabric8, JDK HTTP client, namespace {@value #NPU_NAMESPACE}), shared, closed with
     * the cluster.
     *
     * @return the client
     */
    @Override
    public KubernetesClient client() {
        return shared.get();
    }

    /**
     * A new client of this cluster; the caller closes it.
     *
     * @return a fabric8 client with the JDK HTTP client, namespace {@value #NPU_NAMESPACE}, 10 s request timeout,
     *         watches reconnecting after 200 ms, 2 retries 50 ms apart
     */
    @Override
    public KubernetesClient newClient() {
        return newClient(c -> { });
    }

    /**
     * A new client of this cluster with a changed configuration; the caller closes it.
     *
     * @param customizer changes the configuration of {@link #newClient()} (e.g. {@code setRequestRetryBackoffLimit(0)})
     * @return the client
     */
    @Override
    public KubernetesClient newClient(java.util.function.Consumer<Config> customizer) {
        return BackendClients.build(masterUrl(), customizer);
    }

    /**
     * Writes a kubeconfig that {@code kubectl} (and fabric8) accept: this cluster's URL, TLS verification off, a
     * dummy bearer token, namespace {@value #NPU_NAMESPACE}.
     *
     * @param file where to write it (folders are created)
     * @return {@code file}
     * @throws UncheckedIOException when the file cannot be written
     */
    @Override
    public Path writeKubeconfig(Path file) {
        String yaml = "apiVersion: v1\n"
                + "kind: Config\n"
                + "clusters:\n"
                + "- name: embedded\n"
                + "  cluster:\n"
                + "    server: " + masterUrl() + "\n"
                + "    insecure-skip-tls-verify: true\n"
                + "users:\n"
                + "- name: embedded\n"
                + "  user:\n"
                + "    token: embedded-cluster-dummy-token\n"
                + "contexts:\n"
                + "- name: embedded\n"
                + "  context:\n"
                + "    cluster: embedded\n"
                + "    user: embedded\n"
                + "    namespace: " + NPU_NAMESPACE + "\n"
                + "current-context: embedded\n";
        try {
            if (file.toAbsolutePath().getParent() != null) {
                Files.createDirectories(file.toAbsolutePath().getParent());
            }
            Files.writeString(file, yaml, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write kubeconfig " + file, e);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // resource types
    // ---------------------------------------------------------------------------------------------------------

    /**
     * Installs the NPUOperatorCtl CRD: the file of system property {@value #CRD_FILE_PROPERTY}, else
     * {@value #CRD_FILE} found from the working folder or one of its parents. Without a file the resource type is
     * registered directly ({@link #NPU_OPERATOR_CTL}: served, in discovery, namespaced), which is enough for the
     * mock and for kubectl.
     *
     * @return the CRD file applied, or null when none was found
     */
    @Override
    public Path installCrd() {
        Path file = findCrdFile();
        installCrd(file);
        return file;
    }

    /**
     * Installs the NPUOperatorCtl CRD from a file, or registers {@link #NPU_OPERATOR_CTL} when {@code file} is null.
     *
     * @param file a CustomResourceDefinition YAML, or null
     * @throws UncheckedIOException when the file cannot be read
     */
    @Override
    public void installCrd(Path file) {
        if (file == null) {
            registerResource(NPU_OPERATOR_CTL);
            return;
        }
        try (java.io.InputStream in = Files.newInputStream(file)) {
            CustomResourceDefinition crd = client().apiextensions().v1().customResourceDefinitions().load(in).item();
            client().apiextensions().v1().customResourceDefinitions().resource(crd).createOr(r -> r.update());
            for (io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion v : crd.getSpec()
                    .getVersions()) {
                dispatcher.expectCustomResource(new CustomResourceDefinitionContext.Builder()
                        .withGroup(crd.getSpec().getGroup()).withVersion(v.getName())
                        .withKind(crd.getSpec().getNames().getKind()).withPlural(crd.getSpec().getNames().getPlural())
                        .withScope(crd.getSpec().getScope())
                        .withStatusSubresource(v.getSubresources() != null && v.getSubresources().getStatus() != null)
                        .build());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read CRD " + file, e);
        }
    }

    /**
     * Serves a resource type (discovery, and the mock's CRUD for a custom resource) without a CRD object.
     *
     * @param resource the type
     */
    public void registerResource(ApiResource resource) {
        registered.removeIf(r -> r.groupVersion().equals(resource.groupVersion()) && r.plural().equals(resource.plural()));
        registered.add(resource);
        if (BUILT_IN.stream().noneMatch(r -> r.groupVersion().equals(resource.groupVersion()))) {
            dispatcher.expectCustomResource(new CustomResourceDefinitionContext.Builder().withGroup(resource.group())
                    .withVersion(resource.version()).withKind(resource.kind()).withPlural(resource.plural())
                    .withScope(resource.namespaced() ? "Namespaced" : "Cluster")
                    .withStatusSubresource(resource.subresources().contains("status")).build());
        }
    }

    /** @return the built-in and registered resource types (CRDs stored in the cluster come on top) */
    List<ApiResource> registeredResources() {
        return registered;
    }

    /** @return every resource type in discovery, CRDs stored in the cluster included */
    public List<ApiResource> apiResources() {
        return Collections.unmodifiableList(dispatcher.apiResources());
    }

    static Path findCrdFile() {
        String explicit = System.getProperty(CRD_FILE_PROPERTY);
        if (explicit != null && !explicit.isBlank()) {
            Path p = Paths.get(explicit);
            return Files.isRegularFile(p) ? p : null;
        }
        for (Path dir = Paths.get("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path p = dir.resolve(CRD_FILE);
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }

    // ---------------------------------------------------------------------------------------------------------
    // objects
    // ---------------------------------------------------------------------------------------------------------

    /**
     * A realistic NPU node: labels {@value #NPU_PRESENT_LABEL}=true, {@value #CHIP_LABEL}=910b, hostname, OS and
     * architecture; {@code status.nodeInfo} with kernel {@value #DEFAULT_KERNEL}, OS image {@value #DEFAULT_OS_IMAGE},
     * arm64, a boot id; condition Ready=True; an InternalIP. Change it with the fabric8 builder
     * ({@code new NodeBuilder(npuNode("n")).editMetadata()...}) before {@link #addNode(Node)}.
     *
     * @param name node name
     * @return the node (not yet created)
     */
    public static Node npuNode(String name) {
        return npuNode(name, "910b", DEFAULT_KERNEL, DEFAULT_OS_IMAGE);
    }

    /**
     * @param name node name
     * @param chip chip family label value ({@code 910b}, {@code 310p})
     * @param kernelVersion {@code status.nodeInfo.kernelVersion}
     * @param osImage {@code status.nodeInfo.osImage}
     * @return an NPU node as in {@link #npuNode(String)} (not yet created)
     */
    public static Node npuNode(String name, String chip, String kernelVersion, String osImage) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("kubernetes.io/hostname", name);
        labels.put("kubernetes.io/os", "linux");
        labels.put("kubernetes.io/arch", "arm64");
        labels.put(NPU_PRESENT_LABEL, "true");
        labels.put(CHIP_LABEL, chip);
        int n = Math.abs(name.hashCode() % 250) + 2;
        String id = String.format("%08x-0000-4000-8000-%012x", name.hashCode(), (long) Math.abs(name.hashCode()));
        return new NodeBuilder()
                .withNewMetadata().withName(name).withLabels(labels).endMetadata()
                .withNewSpec().withPodCIDR("10.244." + n + ".0/24").endSpec()
                .withNewStatus()
                .addNewAddress().withType("InternalIP").withAddress("192.168.10." + n).endAddress()
                .addNewAddress().withType("Hostname").withAddress(name).endAddress()
                .addNewCondition().withType("Ready").withStatus("True").withReason("KubeletReady")
                .withMessage("kubelet is posting ready status").endCondition()
                .withNewNodeInfo()
                .withArchitecture("arm64").withOperatingSystem("linux")
                .withKernelVersion(kernelVersion).withOsImage(osImage)
                .withContainerRuntimeVersion("containerd://1.7.22").withKubeletVersion(KUBERNETES_VERSION)
                .withKubeProxyVersion(KUBERNETES_VERSION)
                .withBootID(id).withMachineID(id.replace("-", "")).withSystemUUID(id)
                .endNodeInfo()
                .endStatus()
                .build();
    }

    /**
     * Creates a node (with its status). The shared client retries a request whose answer did not arrive (the mock's
     * event loop can stall for seconds after watches close), so a create the server already stored may come back as
     * {@code 409 AlreadyExists}: that node, created by this very call, is used.
     *
     * @param node e.g. {@link #npuNode(String)}
     * @return the stored node
     */
    @Override
    public Node addNode(Node node) {
        Node created;
        try {
            created = client().nodes().resource(node).create();
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            Node existing = e.getCode() == 409 ? client().nodes().withName(node.getMetadata().getName()).get() : null;
            if (existing == null) {
                throw e;
            }
            created = existing;
        }
        if (node.getStatus() != null && (created.getStatus() == null || created.getStatus().getNodeInfo() == null)) {
            created.setStatus(node.getStatus());
            created = client().nodes().resource(created).updateStatus();
        }
        return created;
    }

    /**
     * Creates {@code count} NPU nodes {@code <prefix>0 ... <prefix>(count-1)}.
     *
     * @param prefix e.g. {@code node-}
     * @param count how many
     * @return the stored nodes
     */
    public List<Node> addNpuNodes(String prefix, int count) {
        List<Node> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(addNode(npuNode(prefix + i)));
        }
        return out;
    }

    /**
     * Creates the namespace when absent.
     *
     * @param name namespace name
     * @return the namespace
     */
    @Override
    public Namespace ensureNamespace(String name) {
        Namespace ns = client().namespaces().withName(name).get();
        return ns != null ? ns
                : client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata()
                        .build()).create();
    }

    /**
     * The NPUOperatorCtl {@value #NPU_OPERATOR_CTL_NAME} in {@value #NPU_NAMESPACE} (DESIGN.md): {@code
     * spec.driver.version}, {@code spec.driver.upgradePolicy.autoUpgrade}, {@code
     * spec.driver.recoveryPolicy.autoRecover}. Registers the type first ({@link #installCrd()}) when it is not
     * served yet, and creates the namespace.
     *
     * @param driverVersion e.g. {@code 25.0.0}
     * @param autoUpgrade upgrade without approvals
     * @param autoRecover recovery reboots without approvals
     * @return the stored object
     */
    @Override
    public GenericKubernetesResource createNpuOperatorCtl(String driverVersion, boolean autoUpgrade, boolean autoRecover) {
        if (apiResources().stream().noneMatch(r -> r.groupVersion().equals(NPU_OPERATOR_CTL.groupVersion())
                && r.plural().equals(NPU_OPERATOR_CTL.plural()))) {
            installCrd();
        }
        ensureNamespace(NPU_NAMESPACE);
        Map<String, Object> driver = new LinkedHashMap<>();
        driver.put("version", driverVersion);
        driver.put("upgradePolicy", new LinkedHashMap<>(Map.of("autoUpgrade", autoUpgrade)));
        driver.put("recoveryPolicy", new LinkedHashMap<>(Map.of("autoRecover", autoRecover)));
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("driver", driver);
        GenericKubernetesResource cr = new GenericKubernetesResourceBuilder()
                .withApiVersion(NPU_OPERATOR_CTL.groupVersion()).withKind(NPU_OPERATOR_CTL.kind())
                .withNewMetadata().withName(NPU_OPERATOR_CTL_NAME).withNamespace(NPU_NAMESPACE).endMetadata()
                .withAdditionalProperties(Map.of("spec", spec))
                .build();
        return npuOperatorCtls().resource(cr).create();
    }

    /**
     * Creates (or updates) every object of a YAML file, e.g. {@code charts/target/samples/80-npuoperatorctl.yaml}.
     * Custom resources need their type served first ({@link #installCrd()}). The mock applies no CRD defaults and
     * no schema validation.
     *
     * @param yaml one or more documents
     * @return the stored objects
     * @throws UncheckedIOException when the file cannot be read
     */
    @Override
    public List<io.fabric8.kubernetes.api.model.HasMetadata> apply(Path yaml) {
        try (java.io.InputStream in = Files.newInputStream(yaml)) {
            List<io.fabric8.kubernetes.api.model.HasMetadata> out = new ArrayList<>();
            for (io.fabric8.kubernetes.api.model.HasMetadata o : client().load(in).items()) {
                if (o.getMetadata().getNamespace() != null) {
                    ensureNamespace(o.getMetadata().getNamespace());
                }
                out.add(client().resource(o).createOr(r -> r.update()));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + yaml, e);
        }
    }

    /**
     * @return the NPUOperatorCtl resources of {@value #NPU_NAMESPACE}, through {@link #client()}
     */
    @Override
    public io.fabric8.kubernetes.client.dsl.MixedOperation<GenericKubernetesResource,
            io.fabric8.kubernetes.api.model.GenericKubernetesResourceList,
            io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>> npuOperatorCtls() {
        ResourceDefinitionContextHolder h = ResourceDefinitionContextHolder.INSTANCE;
        return client().genericKubernetesResources(h.context);
    }

    /** The NPUOperatorCtl type as fabric8 needs it for generic access (no discovery round trip). */
    private enum ResourceDefinitionContextHolder {
        INSTANCE;

        final io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext context =
                new io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext.Builder()
                        .withGroup(NPU_OPERATOR_CTL.group()).withVersion(NPU_OPERATOR_CTL.version())
                        .withKind(NPU_OPERATOR_CTL.kind()).withPlural(NPU_OPERATOR_CTL.plural()).withNamespaced(true)
                        .build();
    }

    /**
     * A running driver pod on a node: {@code npu-driver-<node>} in {@value #NPU_NAMESPACE}, label
     * {@code app=npu-driver-daemonset}, {@code spec.nodeName}, container {@code driver} with {@code image}.
     *
     * @param nodeName the node
     * @param image e.g. {@code registry.local/mlops/ascend-driver:25.0.0-910b-6.6.0-145.0.4.135-oe2403sp3}
     * @return the stored pod
     */
    @Override
    public Pod addDriverPod(String nodeName, String image) {
        ensureNamespace(NPU_NAMESPACE);
        Pod pod = new PodBuilder()
                .withNewMetadata().withName("npu-driver-" + nodeName).withNamespace(NPU_NAMESPACE)
                .addToLabels("app", DRIVER_POD_LABEL_VALUE).endMetadata()
                .withNewSpec().withNodeName(nodeName).withHostPID(true)
                .addNewContainer().withName("driver").withImage(image).withNewSecurityContext().withPrivileged(true)
                .endSecurityContext().endContainer()
                .endSpec()
                .withNewStatus().withPhase("Running").endStatus()
                .build();
        return client().pods().inNamespace(NPU_NAMESPACE).resource(pod).create();
    }

    /**
     * @param version driver version, e.g. {@code 25.5.0}
     * @param chip e.g. {@code 910b}
     * @return the driver image name of DESIGN.md for the default kernel and OS:
     *         {@code registry.local/mlops/ascend-driver:25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3}
     */
    public static String driverImage(String version, String chip) {
        return "registry.local/mlops/ascend-driver:" + version + "-" + chip + "-6.6.0-145.0.4.135-oe2403sp3";
    }

    // ---------------------------------------------------------------------------------------------------------
    // mock-only hooks
    // ---------------------------------------------------------------------------------------------------------

    /** @return the fault hooks of this cluster: outages, injected faults, watch expiry */
    public EmbeddedFaults faults() {
        return faults;
    }

    /** @return the log of the requests this cluster received */
    public RequestLog requestLog() {
        return requestLog;
    }

    ObjectNode versionJson() {
        return KubectlDispatcher.JSON.createObjectNode().put("major", "1").put("minor", "32")
                .put("gitVersion", KUBERNETES_VERSION).put("gitCommit", "embedded").put("gitTreeState", "clean")
                .put("buildDate", "2024-12-11T00:00:00Z").put("goVersion", "go1.23.4").put("compiler", "gc")
                .put("platform", "linux/arm64");
    }

    /** Stops the server and closes {@link #client()}. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        shared.close();
        faults.endOutage();
        server.destroy();
    }
}
