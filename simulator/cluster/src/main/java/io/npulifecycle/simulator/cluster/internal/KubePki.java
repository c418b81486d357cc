package io.npulifecycle.simulator.cluster.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The certificates and keys of one throw-away API server, written by the {@code pki} binary
 * (simulator/apiserver/cmd/pki, Go crypto/x509) into a folder: a CA (ECDSA P-256), the serving certificate of
 * kube-apiserver (127.0.0.1, 10.0.0.1, localhost, kubernetes.default.svc...), the admin client certificate
 * (CN=admin, O=system:masters, RSA 2048, PKCS#1), the kube-controller-manager client certificate
 * (CN=system:kube-controller-manager, RSA 2048, PKCS#1) and the service-account signing key pair (RSA 2048). Valid
 * 30 days.
 */
public final class KubePki {

    private static final Duration GENERATION_TIMEOUT = Duration.ofSeconds(60);

    private final Path folder;

    private KubePki(Path folder) {
        this.folder = folder;
    }

    /**
     * Runs {@code pki <folder>}.
     *
     * @param pki the pki binary
     * @param folder where the files go (created)
     * @return the files
     * @throws IllegalStateException when pki fails (its output in the message) or takes longer than 60 s
     * @throws UncheckedIOException when it cannot be started
     */
    public static KubePki generate(Path pki, Path folder) {
        try {
            Files.createDirectories(folder);
            Path log = folder.resolve("pki.log");
            Process p = new ProcessBuilder(List.of(pki.toString(), folder.toString())).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            if (!p.waitFor(GENERATION_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(pki + " did not finish in " + GENERATION_TIMEOUT.toSeconds() + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(pki + " " + folder + " failed with exit code " + p.exitValue() + ": "
                        + Files.readString(log, StandardCharsets.UTF_8).strip());
            }
            return new KubePki(folder);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + pki, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while generating certificates", e);
        }
    }

    /** @return the CA certificate (PEM) that signed the serving and client certificates */
    public Path caCert() {
        return folder.resolve("ca.crt");
    }

    /** @return kube-apiserver's serving certificate (PEM) */
    public Path serverCert() {
        return folder.resolve("server.crt");
    }

    /** @return kube-apiserver's serving key (PEM) */
    public Path serverKey() {
        return folder.resolve("server.key");
    }

    /** @return the admin client certificate (PEM, CN=admin, O=system:masters) */
    public Path adminCert() {
        return folder.resolve("admin.crt");
    }

    /** @return the admin client key (PEM, RSA PKCS#1) */
    public Path adminKey() {
        return folder.resolve("admin.key");
    }

    /** @return the kube-controller-manager client certificate (PEM, CN=system:kube-controller-manager) */
    public Path controllerManagerCert() {
        return folder.resolve("controller-manager.crt");
    }

    /** @return the kube-controller-manager client key (PEM, RSA PKCS#1) */
    public Path controllerManagerKey() {
        return folder.resolve("controller-manager.key");
    }

    /** @return the private key that signs service-account tokens (PEM, RSA PKCS#1) */
    public Path serviceAccountKey() {
        return folder.resolve("sa.key");
    }

    /** @return the public key that verifies service-account tokens (PEM, PKIX) */
    public Path serviceAccountPublicKey() {
        return folder.resolve("sa.pub");
    }

    /**
     * @param file one of this PKI's files
     * @return its content base64-encoded, as kubeconfig {@code *-data} fields and fabric8 {@code set*Data} take it
     * @throws UncheckedIOException when it cannot be read
     */
    public static String base64(Path file) {
        try {
            return Base64.getEncoder().encodeToString(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
