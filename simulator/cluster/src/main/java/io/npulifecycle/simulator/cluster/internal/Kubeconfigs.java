package io.npulifecycle.simulator.cluster.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Self-contained kubeconfig files (certificates embedded as {@code *-data}) that kubectl and fabric8 read.
 */
public final class Kubeconfigs {

    private Kubeconfigs() {
    }

    /**
     * Writes a kubeconfig authenticating with a client certificate.
     *
     * @param file where to write it; folders are created; mode 0600
     * @param server e.g. {@code https://127.0.0.1:41231}
     * @param pki the CA and the client certificate and key
     * @param namespace the context's namespace
     * @return {@code file}
     * @throws UncheckedIOException when it cannot be written
     */
    public static Path withClientCertificate(Path file, String server, KubePki pki, String namespace) {
        return write(file, server, pki, namespace, "    client-certificate-data: " + KubePki.base64(pki.adminCert())
                + "\n    client-key-data: " + KubePki.base64(pki.adminKey()) + "\n");
    }

    /**
     * Writes the kubeconfig of kube-controller-manager (its own client certificate,
     * CN=system:kube-controller-manager).
     *
     * @param file where to write it; folders are created; mode 0600
     * @param server e.g. {@code https://127.0.0.1:41231}
     * @param pki the CA and the controller manager's certificate and key
     * @return {@code file}
     * @throws UncheckedIOException when it cannot be written
     */
    public static Path forControllerManager(Path file, String server, KubePki pki) {
        return write(file, server, pki, "kube-system", "    client-certificate-data: "
                + KubePki.base64(pki.controllerManagerCert()) + "\n    client-key-data: "
                + KubePki.base64(pki.controllerManagerKey()) + "\n");
    }

    /**
     * A kubeconfig of a client certificate of {@code pki} (kube-scheduler's, the kubelet's, kube-proxy's).
     *
     * @param file where to write it
     * @param server kube-apiserver's URL
     * @param pki the certificates
     * @param cert the client certificate, one of {@code pki}'s
     * @param key its key
     * @return {@code file}
     * @throws UncheckedIOException when it cannot be written
     */
    public static Path forComponent(Path file, String server, KubePki pki, Path cert, Path key) {
        return write(file, server, pki, "default", "    client-certificate-data: " + KubePki.base64(cert)
                + "\n    client-key-data: " + KubePki.base64(key) + "\n");
    }

    /**
     * Writes a kubeconfig authenticating with a bearer token.
     *
     * @param file where to write it; folders are created; mode 0600
     * @param server e.g. {@code https://127.0.0.1:41231}
     * @param pki the CA
     * @param namespace the context's namespace
     * @param token the token
     * @return {@code file}
     * @throws UncheckedIOException when it cannot be written
     */
    public static Path withToken(Path file, String server, KubePki pki, String namespace, String token) {
        return write(file, server, pki, namespace, "    token: " + token + "\n");
    }

    private static Path write(Path file, String server, KubePki pki, String namespace, String user) {
        String yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: real\n  cluster:\n    server: " + server
                + "\n    certificate-authority-data: " + KubePki.base64(pki.caCert()) + "\n"
                + "users:\n- name: real\n  user:\n" + user
                + "contexts:\n- name: real\n  context:\n    cluster: real\n    user: real\n    namespace: "
                + namespace + "\ncurrent-context: real\n";
        try {
            Path abs = file.toAbsolutePath();
            Files.createDirectories(abs.getParent());
            Files.deleteIfExists(abs);
            Files.createFile(abs, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(abs, yaml, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write kubeconfig " + file, e);
        }
    }
}
