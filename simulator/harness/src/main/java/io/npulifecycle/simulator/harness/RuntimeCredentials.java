package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.RealApiServer;

/**
 * The Kubernetes identities of the simulated cluster's runtimes on a real API server, as a cluster would give them:
 * the manifests of {@code conf/kubernetes/} (namespace, ServiceAccounts, RBAC, the node agent's
 * ValidatingAdmissionPolicy) applied first; each node agent a token of ServiceAccount {@value #NODE_AGENT} bound to
 * its node's driver pod (so it carries the pod's node name, which the admission policy checks); the control plane a
 * token of ServiceAccount {@value #CONTROL_PLANE}. Never the admin certificate. Each runtime gets a kubeconfig file
 * (PID {@code io.npulifecycle.kube}, key {@code kubeconfig}); the server URL in it is overridden by the runtime's
 * {@code NPU_LIFECYCLE_KUBE_MASTER} (the harness's forwarder). On the embedded mock (no authentication) there are no
 * credentials: every method does nothing and {@link #enabled()} is false.
 */
final class RuntimeCredentials {

    /** ServiceAccount of the node agents (charts/npu-lifecycle/templates/10-rbac-node-agent.yaml). */
    static final String NODE_AGENT = "npu-lifecycle-node-agent";
    /** ServiceAccount of the control plane (charts/npu-lifecycle/templates/11-rbac-control-plane.yaml). */
    static final String CONTROL_PLANE = "npu-lifecycle-control-plane";
    /** The manifests applied before anything runs, from the installation's {@code conf/kubernetes/}. */
    static final List<String> MANIFESTS = List.of("00-namespace.yaml", "10-rbac-node-agent.yaml",
            "11-rbac-control-plane.yaml", "20-admission-node-agent.yaml");
    /** Lifetime of every token: longer than any run of the harness (the server accepts 10 min to 48 h). */
    static final Duration TTL = Duration.ofHours(24);

    private final RealApiServer real;

    /** @param backend the API server; credentials only for a {@link RealApiServer} */
    RuntimeCredentials(ClusterBackend backend) {
        this.real = backend instanceof RealApiServer r ? r : null;
    }

    /** @return whether the runtimes authenticate (a real API server) */
    boolean enabled() {
        return real != null;
    }

    /**
     * Applies {@link #MANIFESTS} from {@code manifests}, in that order.
     *
     * @param manifests the folder of the manifests ({@code conf/kubernetes} of the installation)
     * @param log told each file applied
     * @throws IllegalStateException when a manifest is missing
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server refuses an object
     */
    void applyManifests(Path manifests, Consumer<String> log) {
        if (real == null) {
            return;
        }
        for (String name : MANIFESTS) {
            Path f = manifests.resolve(name);
            if (!Files.isRegularFile(f)) {
                throw new IllegalStateException("the manifest " + f + " is missing: a real API server needs the "
                        + "ServiceAccounts, RBAC and admission policy of conf/kubernetes/");
            }
            int n = real.apply(f).size();
            log.accept("cluster: applied " + f.getFileName() + " (" + n + " objects)");
        }
    }

    /**
     * Writes the control plane's kubeconfig: a token of {@value #CONTROL_PLANE}.
     *
     * @param file where to write it (mode 0600)
     * @return {@code file}, or null on the embedded mock
     */
    Path writeControlPlane(Path file) {
        if (real == null) {
            return null;
        }
        String token = real.client().serviceAccounts().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .withName(CONTROL_PLANE).tokenRequest(new TokenRequestBuilder().withNewSpec()
                        .withExpirationSeconds(TTL.toSeconds()).endSpec().build())
                .getStatus().getToken();
        return real.writeTokenKubeconfig(file, token);
    }

    /**
     * Writes a node agent's kubeconfig for a new driver pod: a token of the pod's ServiceAccount (the DaemonSet's
     * {@value #NODE_AGENT}) bound to that pod, so it ends with the pod.
     *
     * @param file where to write it (mode 0600; replaced atomically)
     * @param pod the node's driver pod, as stored
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server refuses the TokenRequest
     */
    void writeNodeAgent(Path file, Pod pod) {
        if (real == null) {
            return;
        }
        String sa = pod.getSpec().getServiceAccountName() == null ? "default" : pod.getSpec().getServiceAccountName();
        String token = real.podBoundToken(pod.getMetadata().getNamespace(), sa, pod.getMetadata().getName(), TTL);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        real.writeTokenKubeconfig(tmp, token);
        try {
            Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /**
     * @param kubeconfig the runtime's kubeconfig, or null
     * @return the content of {@code etc/io.npulifecycle.kube.cfg} that points the runtime at it, or null for none
     */
    static String kubeConfiguration(Path kubeconfig) {
        return kubeconfig == null ? null : "kubeconfig=" + kubeconfig + "\n";
    }
}
