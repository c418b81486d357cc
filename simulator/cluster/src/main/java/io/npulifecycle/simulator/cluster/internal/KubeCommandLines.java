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
        return List.of(bin.kubeControllerManager().toString(), "--kubeconfig=" + kubeconfig,
                "--controllers=" + String.join(",", CONTROLLERS), "--leader-elect=false",
                "--use-service-account-credentials=true", "--bind-address=127.0.0.1", "--secure-port=" + port,
                "--tls-cert-file=" + pki.serverCert(), "--tls-private-key-file=" + pki.serverKey(),
                "--profiling=false");
    }
}
