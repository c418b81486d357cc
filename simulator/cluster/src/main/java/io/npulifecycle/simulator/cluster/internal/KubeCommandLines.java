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
}
