package io.npulifecycle.simulator.cluster.internal;

import java.nio.file.Path;
import java.util.List;

/**
 * The command lines of a throw-away etcd and kube-apiserver, every address on 127.0.0.1.
 */
public final class KubeCommandLines {

    /** {@code --service-cluster-ip-range}; its first address, 10.0.0.1, is in the serving certificate. */
    public static final String SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24";

    private KubeCommandLines() {
    }

    /**
     * A one-member etcd: plain HTTP on the loopback interface, no fsync (its data is thrown away), warnings only.
     *
     * @param bin the binaries
     * @param dataDir etcd's data folder
     * @param clientUrl e.g. {@code http://127.0.0.1:2379}
     * @param peerUrl e.g. {@code http://127.0.0.1:2380}
     * @return the command line
     */
    public static List<String> etcd(KubeBinaries bin, Path dataDir, String clientUrl, String peerUrl) {
        return List.of(bin.etcd().toString(), "--name=npu", "--data-dir=" + dataDir,
                "--listen-client-urls=" + clientUrl, "--advertise-client-urls=" + clientUrl,
                "--listen-peer-urls=" + peerUrl, "--initial-advertise-peer-urls=" + peerUrl,
                "--initial-cluster=npu=" + peerUrl, "--initial-cluster-state=new", "--unsafe-no-fsync",
                "--log-level=warn");
    }

    /**
     * kube-apiserver with client-certificate and service-account-token authentication, {@code Node,RBAC}
     * authorization, the default admission plugins plus NodeRestriction and (explicitly) ValidatingAdmissionPolicy,
     * privileged containers allowed (the driver pods are), no endpoint reconciler (a loopback address is not a valid
     * endpoint of the {@code kubernetes} Service).
     *
     * @param bin the binaries
     * @param pki the certificates and keys
     * @param certDir a folder kube-apiserver may write into
     * @param etcdUrl etcd's client URL
     * @param port the HTTPS port on 127.0.0.1
     * @param issuer {@code --service-account-issuer}, also the default audience of its tokens
     * @return the command line
     */
    public static List<String> kubeApiserver(KubeBinaries bin, KubePki pki, Path certDir, String etcdUrl, int port,
            String issuer) {
        return List.of(bin.kubeApiserver().toString(), "--etcd-servers=" + etcdUrl, "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1", "--secure-port=" + port, "--cert-dir=" + certDir,
                "--tls-cert-file=" + pki.serverCert(), "--tls-private-key-file=" + pki.serverKey(),
                "--client-ca-file=" + pki.caCert(), "--service-account-issuer=" + issuer,
                "--service-account-key-file=" + pki.serviceAccountPublicKey(),
                "--service-account-signing-key-file=" + pki.serviceAccountKey(),
                "--service-cluster-ip-range=" + SERVICE_CLUSTER_IP_RANGE, "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction,ValidatingAdmissionPolicy", "--allow-privileged=true",
                "--endpoint-reconciler-type=none", "--profiling=false");
    }

    /**
     * The Pod Security admission levels of an install-mode server: {@code enforce}, {@code audit} and {@code warn}
     * all {@code restricted} (version {@code latest}) for every namespace without its own
     * {@code pod-security.kubernetes.io/*} labels, no exemptions: a cluster hardened as the Pod Security Standards
     * recommend, on which a privileged pod is refused unless its namespace is labelled to allow it.
     */
    public static final String RESTRICTED_ADMISSION_CONFIGURATION = String.join("\n",
            "apiVersion: apiserver.config.k8s.io/v1",
            "kind: AdmissionConfiguration",
            "plugins:",
            "- name: PodSecurity",
            "  configuration:",
            "    apiVersion: pod-security.admission.config.k8s.io/v1",
            "    kind: PodSecurityConfiguration",
            "    defaults:",
            "      enforce: restricted",
            "      enforce-version: latest",
            "      audit: restricted",
            "      audit-version: latest",
            "      warn: restricted",
            "      warn-version: latest",
            "    exemptions:",
            "      usernames: []",
            "      runtimeClasses: []",
            "      namespaces: []",
            "");

    /**
     * @param admissionConfiguration a file holding {@link #RESTRICTED_ADMISSION_CONFIGURATION}
     * @return the kube-apiserver flags that make Pod Security {@code restricted} the cluster default
     */
    public static List<String> restrictedPodSecurityFlags(Path admissionConfiguration) {
        return List.of("--admission-control-config-file=" + admissionConfiguration);
    }

    /**
     * The controllers {@link #kubeControllerManager} runs. {@code disruption} computes the status of
     * PodDisruptionBudgets ({@code disruptionsAllowed}, {@code observedGeneration}), without which the Eviction API
     * refuses every pod a budget selects. Not run: those whose part the simulator plays itself or that would fight
     * it: {@code replicaset}, {@code statefulset}, {@code daemonset} (they would create pods that no scheduler
     * places; the harness creates a workload's pods and the controller object whose {@code spec.replicas} a budget's
     * {@code maxUnavailable} is computed from), {@code nodelifecycle} (it would taint and evict every node whose
     * kubelet sends no heartbeat: the harness writes node status itself), {@code podgc} (it deletes pods the
     * kubelet emulation ends itself), {@code garbagecollector} (its graph watches every resource, seconds of CPU on
     * a shared machine, and nothing simulated deletes an owner while its pods matter), {@code serviceaccount}
     * ({@code RealApiServer.ensureNamespace} creates the {@code default} ServiceAccount).
     */
    public static final List<String> CONTROLLERS = List.of("disruption");

    /**
     * The node-lifecycle controller's flags for a server whose kubelets are emulated: it checks every second, and a
     * node without a heartbeat for {@code grace} becomes {@code Ready=Unknown} (the startup grace the same).
     *
     * @param grace {@code --node-monitor-grace-period}, wall clock
     * @return the flags
     */
    public static List<String> nodeLifecycleFlags(java.time.Duration grace) {
        return List.of("--node-monitor-period=1s", "--node-monitor-grace-period=" + grace.toSeconds() + "s",
                "--node-startup-grace-period=" + grace.toSeconds() + "s");
    }

    /**
     * kube-controller-manager with {@link #CONTROLLERS} only, no leader election, each controller under its own
     * ServiceAccount (the bootstrap RBAC policy's {@code system:controller:*} roles), serving its health endpoints
     * on 127.0.0.1 with kube-apiserver's serving certificate (which names 127.0.0.1) so that the CA's probe trusts
     * them.
     *
     * @param bin the binaries
     * @param pki the certificates and keys
     * @param kubeconfig its kubeconfig ({@link Kubeconfigs#forControllerManager})
     * @param port the HTTPS port of its health endpoints on 127.0.0.1
     * @return the command line
     */
    public static List<String> kubeControllerManager(KubeBinaries bin, KubePki pki, Path kubeconfig, int port) {
        return kubeControllerManager(bin, pki, kubeconfig, port, CONTROLLERS);
    }

    /**
     * The controllers of an install-mode server ({@code RealApiServer.builder().installMode(true)}): those an
     * installation needs, beside {@code disruption}: {@code deployment} and {@code replicaset} (a Deployment gets its
     * ReplicaSet, the ReplicaSet its pods), {@code daemonset} (a pod per node it selects), {@code job} (helm's hook
     * Jobs), {@code garbagecollector} ({@code helm uninstall} deletes owners: their ReplicaSets, pods and
     * ControllerRevisions go with them) and {@code serviceaccount} (the {@code default} ServiceAccount of every new
     * namespace, e.g. one made by {@code helm install --create-namespace}). Still not run: {@code nodelifecycle} and
     * {@code podgc} (see {@link #CONTROLLERS}), {@code serviceaccount-token} (legacy token Secrets: the pods of an
     * install get bound tokens through TokenRequest, and no kubelet mounts them anyway).
     */
    public static final List<String> INSTALL_CONTROLLERS = List.of("disruption", "deployment", "replicaset",
            "daemonset", "job", "garbagecollector", "serviceaccount");

    /**
     * As {@link #kubeControllerManager(KubeBinaries, KubePki, Path, int)} with the given controllers.
     *
     * @param bin the binaries
     * @param pki the certificates and keys
     * @param kubeconfig its kubeconfig ({@link Kubeconfigs#forControllerManager})
     * @param port the HTTPS port of its health endpoints on 127.0.0.1
     * @param controllers e.g. {@link #CONTROLLERS} or {@link #INSTALL_CONTROLLERS}
     * @return the command line
     */
    public static List<String> kubeControllerManager(KubeBinaries bin, KubePki pki, Path kubeconfig, int port,
            List<String> controllers) {
        return List.of(bin.kubeControllerManager().toString(), "--kubeconfig=" + kubeconfig,
                "--controllers=" + String.join(",", controllers), "--leader-elect=false",
                "--use-service-account-credentials=true", "--bind-address=127.0.0.1", "--secure-port=" + port,
                "--tls-cert-file=" + pki.serverCert(), "--tls-private-key-file=" + pki.serverKey(),
                "--profiling=false");
    }

    /**
     * The address of a real node (the bridge {@code cmd/kubenode} creates, in the serving certificate): with a real
     * node attached, kube-apiserver binds to it and advertises it, so that the {@code kubernetes} Service's endpoint
     * is an address the pods reach.
     */
    public static final String REAL_NODE_ADDRESS = "10.244.0.1";

    /**
     * The controllers of a server with a real node: {@link #INSTALL_CONTROLLERS},
     * {@code root-ca-cert-publisher}, which writes the ConfigMap {@code kube-root-ca.crt} into every namespace (the
     * kubelet mounts it into every pod's projected service-account volume; without it no pod starts), and
     * {@code nodelifecycle}, which lifts the {@code node.kubernetes.io/not-ready} taint a registering node carries
     * once its kubelet reports Ready (and taints a node whose kubelet falls silent).
     */
    public static final List<String> REAL_NODE_CONTROLLERS = java.util.stream.Stream.concat(
            INSTALL_CONTROLLERS.stream(), java.util.stream.Stream.of("root-ca-cert-publisher", "nodelifecycle"))
            .toList();

    /**
     * kube-apiserver's flags for a real node (after the standard ones; a later flag wins): bound to and advertising
     * {@link #REAL_NODE_ADDRESS}, the {@code lease} endpoint reconciler (the {@code kubernetes} Service gets that
     * endpoint), and the admin client certificate towards kubelets (logs, exec, port-forward).
     *
     * @param pki the certificates
     * @return the flags
     */
    public static List<String> realNodeApiServerFlags(KubePki pki) {
        return List.of("--bind-address=" + REAL_NODE_ADDRESS, "--advertise-address=" + REAL_NODE_ADDRESS,
                "--endpoint-reconciler-type=lease", "--kubelet-client-certificate=" + pki.adminCert(),
                "--kubelet-client-key=" + pki.adminKey(), "--kubelet-preferred-address-types=InternalIP");
    }

    /**
     * kube-controller-manager's extra flag for {@code root-ca-cert-publisher}: the CA it publishes.
     *
     * @param pki the certificates
     * @return the flags
     */
    public static List<String> realNodeControllerManagerFlags(KubePki pki) {
        return List.of("--root-ca-file=" + pki.caCert());
    }

    /**
     * kube-scheduler without leader election, serving its health endpoints on 127.0.0.1 with kube-apiserver's
     * serving certificate.
     *
     * @param bin the binaries
     * @param pki the certificates and keys
     * @param kubeconfig its kubeconfig (client certificate CN=system:kube-scheduler)
     * @param port the HTTPS port of its health endpoints on 127.0.0.1
     * @return the command line
     */
    public static List<String> kubeScheduler(KubeBinaries bin, KubePki pki, Path kubeconfig, int port) {
        return List.of(bin.kubeScheduler().toString(), "--kubeconfig=" + kubeconfig,
                "--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
                "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=" + port,
                "--tls-cert-file=" + pki.serverCert(), "--tls-private-key-file=" + pki.serverKey());
    }
}
