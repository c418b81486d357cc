package io.npulifecycle.simulator.cluster;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;

/**
 * A Kubernetes API server the tests, the simulator harness and the demo run against, picked by name
 * ({@link #kind()}): {@code embedded}, the in-process fabric8 mock ({@link EmbeddedCluster}: CRUD only, no schema
 * validation, RBAC, admission, Eviction API or etcd), or {@code real}, a kube-apiserver with its own etcd built from
 * source. A test that can run on either is written once against this interface.
 *
 * <p>Every address is on the loopback interface; no client ever uses in-cluster configuration. Closing the backend
 * stops its server and closes the clients it handed out through {@link #client()}.
 */
public interface ClusterBackend extends AutoCloseable {

    /** {@link #kind()} of the in-process mock. */
    String EMBEDDED = "embedded";
    /** {@link #kind()} of a real kube-apiserver and etcd. */
    String REAL = "real";

    /** @return {@value #EMBEDDED} or {@value #REAL} */
    String kind();

    /** @return the API server's URL on the loopback interface, e.g. {@code https://127.0.0.1:35451}, no trailing slash */
    String masterUrl();

    /** @return the shared admin client (namespace {@code npu-operator}), closed with the backend */
    KubernetesClient client();

    /**
     * @param customizer changes the admin client configuration (timeouts, retries) before the client is built
     * @return a new admin client; the caller closes it
     */
    KubernetesClient newClient(Consumer<Config> customizer);

    /** @return a new admin client with the defaults of {@link #client()}; the caller closes it */
    default KubernetesClient newClient() {
        return newClient(c -> { });
    }

    /**
     * Writes an admin kubeconfig that the real {@code kubectl} and fabric8 accept (namespace {@code npu-operator}).
     *
     * @param file where to write it; folders are created; mode 0600
     * @return {@code file}
     * @throws java.io.UncheckedIOException when it cannot be written
     */
    Path writeKubeconfig(Path file);

    /**
     * Installs the NPUOperatorCtl CRD from {@code charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml} (found from the working
     * folder or a parent, or the system property {@code npu.crd.file}) and waits until it is served.
     *
     * @return the CRD file applied, or null when the backend registered the type without a file (embedded only)
     */
    Path installCrd();

    /**
     * Installs the NPUOperatorCtl CRD from a given file (e.g. an installation's {@code conf/kubernetes/}) and waits
     * until it is served.
     *
     * @param file a CustomResourceDefinition YAML; null only for the embedded backend, which then registers the type
     *        without a CRD object
     * @throws java.io.UncheckedIOException when the file cannot be read
     * @throws IllegalArgumentException when {@code file} is null on a backend that needs a CRD object
     */
    void installCrd(Path file);

    /**
     * Creates or updates every object of a YAML file (one or more documents), creating namespaces first.
     *
     * @param yaml the file
     * @return the stored objects
     * @throws java.io.UncheckedIOException when the file cannot be read
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server refuses an object
     */
    List<HasMetadata> apply(Path yaml);

    /**
     * @param name namespace name
     * @return the namespace, created when absent
     */
    Namespace ensureNamespace(String name);

    /**
     * Creates a Node object (no kubelet runs: its status is what the caller wrote).
     *
     * @param node the node, e.g. {@link EmbeddedCluster#npuNode(String)}
     * @return the stored node
     */
    Node addNode(Node node);

    /**
     * Creates the running driver pod of a node (see {@link EmbeddedCluster#addDriverPod}).
     *
     * @param nodeName the node
     * @param image the driver image
     * @return the stored pod
     */
    Pod addDriverPod(String nodeName, String image);

    /**
     * Creates the sample NPUOperatorCtl ({@code npuoperatorctl-sample} in {@code npu-operator}).
     *
     * @param driverVersion e.g. {@code 25.0.0}
     * @param autoUpgrade {@code spec.driver.upgradePolicy.autoUpgrade}
     * @param autoRecover {@code spec.driver.recoveryPolicy.autoRecover}
     * @return the stored object
     */
    GenericKubernetesResource createNpuOperatorCtl(String driverVersion, boolean autoUpgrade, boolean autoRecover);

    /** @return the NPUOperatorCtl resources of {@code npu-operator}, through {@link #client()} */
    MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> npuOperatorCtls();

    /** Stops the server (and, for a real one, its etcd) and removes what it wrote; idempotent. */
    @Override
    void close();
}
