package io.npulifecycle.simulator.cluster.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The certificates and keys of one throw-away API server, written by the {@code pki} binary
 * (simulator/apiserver/cmd/pki, Go crypto/x509) into a folder: a CA (ECDSA P-256), the serving certificate of
 * kube-apiserver (127.0.0.1, 10.0.0.1, localhost, kubernetes.default.svc...), the admin client certificate
 * (CN=admin, O=system:masters, RSA 2048, PKCS#1), the kube-controller-manager client certificate
 * (CN=system:kube-controller-manager, RSA 2048, PKCS#1) and the service-account signing key pair (RSA 2048). Valid
 * 30 days.
 * Also the JDK TLS contexts of a front proxy that stands in for kube-apiserver ({@link #servingSslContext()},
 * {@link #trustingSslContext()}).
 */
public final class KubePki {

    private static final Duration GENERATION_TIMEOUT = Duration.ofSeconds(60);
    /** DER of the AlgorithmIdentifier {id-ecPublicKey, prime256v1}: the curve the pki binary uses for EC keys. */
    private static final byte[] EC_P256_ALGORITHM = {0x30, 0x13, 0x06, 0x07, 0x2A, (byte) 0x86, 0x48, (byte) 0xCE,
        0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, (byte) 0x86, 0x48, (byte) 0xCE, 0x3D, 0x03, 0x01, 0x07};
    private static final char[] IN_MEMORY_PASSWORD = "in-memory".toCharArray();

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
        return generate(pki, folder, null);
    }

    /**
     * Runs {@code pki <folder> [<node name>]}: with a node name, also the kubelet client certificate of that node
     * ({@link #kubeletCert()}).
     *
     * @param pki the pki binary
     * @param folder where the files go (created)
     * @param nodeName the real node's name, or null
     * @return the files
     * @throws IllegalStateException when pki fails (its output in the message) or takes longer than 60 s
     * @throws UncheckedIOException when it cannot be started
     */
    public static KubePki generate(Path pki, Path folder, String nodeName) {
        try {
            Files.createDirectories(folder);
            Path log = folder.resolve("pki.log");
            List<String> command = nodeName == null ? List.of(pki.toString(), folder.toString())
                    : List.of(pki.toString(), folder.toString(), nodeName);
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
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

    /** @return the kube-scheduler client certificate (PEM, CN=system:kube-scheduler) */
    public Path schedulerCert() {
        return folder.resolve("scheduler.crt");
    }

    /** @return the kube-scheduler client key (PEM, RSA PKCS#1) */
    public Path schedulerKey() {
        return folder.resolve("scheduler.key");
    }

    /** @return the kube-proxy client certificate (PEM, CN=system:kube-proxy) */
    public Path proxyCert() {
        return folder.resolve("proxy.crt");
    }

    /** @return the kube-proxy client key (PEM, RSA PKCS#1) */
    public Path proxyKey() {
        return folder.resolve("proxy.key");
    }

    /**
     * @return the kubelet client certificate of the node named at {@link #generate(Path, Path, String)} (PEM,
     *         CN=system:node:&lt;name&gt;, O=system:nodes); absent without a node name
     */
    public Path kubeletCert() {
        return folder.resolve("kubelet.crt");
    }

    /** @return the kubelet client key (PEM, RSA PKCS#1) */
    public Path kubeletKey() {
        return folder.resolve("kubelet.key");
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

    /**
     * A TLS server context that presents kube-apiserver's own serving certificate ({@link #serverCert()}: 127.0.0.1,
     * signed by {@link #caCert()}) with its chain, for a front proxy that every client of the server trusts as it
     * trusts the server. No ALPN is configured, so a client that offers HTTP/2 falls back to HTTP/1.1.
     *
     * @return a new context (TLS 1.2 and 1.3, the JDK's defaults)
     * @throws IllegalStateException when the certificate or the key (PEM {@code EC PRIVATE KEY}, P-256) cannot be read
     */
    public SSLContext servingSslContext() {
        try {
            CertificateFactory x509 = CertificateFactory.getInstance("X.509");
            Certificate server;
            Certificate ca;
            try (var in = Files.newInputStream(serverCert()); var caIn = Files.newInputStream(caCert())) {
                server = x509.generateCertificate(in);
                ca = x509.generateCertificate(caIn);
            }
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("serving", ecPrivateKey(serverKey()), IN_MEMORY_PASSWORD, new Certificate[] {server, ca});
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, IN_MEMORY_PASSWORD);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), null, null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot build a TLS server context from " + serverCert() + " and "
                    + serverKey() + ": " + e, e);
        }
    }

    /**
     * @return a new TLS client context that trusts {@link #caCert()} only and presents no client certificate (the
     *         front proxy's side towards kube-apiserver: requests keep their own bearer tokens)
     * @throws IllegalStateException when the CA certificate cannot be read
     */
    public SSLContext trustingSslContext() {
        try (var in = Files.newInputStream(caCert())) {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot build a TLS client context trusting " + caCert() + ": " + e, e);
        }
    }

    /**
     * Reads a PEM {@code EC PRIVATE KEY} (SEC 1, as Go's {@code x509.MarshalECPrivateKey} writes it) of curve P-256,
     * which the JDK reads only wrapped in PKCS#8: {@code SEQUENCE {INTEGER 0, AlgorithmIdentifier, OCTET STRING}}.
     */
    static PrivateKey ecPrivateKey(Path pem) throws IOException, GeneralSecurityException {
        String text = Files.readString(pem, StandardCharsets.US_ASCII);
        int begin = text.indexOf("-----BEGIN EC PRIVATE KEY-----");
        int end = text.indexOf("-----END EC PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new GeneralSecurityException(pem + " holds no PEM block EC PRIVATE KEY");
        }
        byte[] sec1 = Base64.getMimeDecoder().decode(text.substring(begin + 30, end));
        byte[] version = {0x02, 0x01, 0x00};
        byte[] octets = der(0x04, sec1);
        byte[] body = new byte[version.length + EC_P256_ALGORITHM.length + octets.length];
        System.arraycopy(version, 0, body, 0, version.length);
        System.arraycopy(EC_P256_ALGORITHM, 0, body, version.length, EC_P256_ALGORITHM.length);
        System.arraycopy(octets, 0, body, version.length + EC_P256_ALGORITHM.length, octets.length);
        return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der(0x30, body)));
    }

    /** @return one DER element: {@code tag}, its definite length (short or long form), {@code content} */
    private static byte[] der(int tag, byte[] content) {
        int n = content.length;
        byte[] length = n < 0x80 ? new byte[] {(byte) n}
                : n < 0x100 ? new byte[] {(byte) 0x81, (byte) n}
                : new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n};
        byte[] out = new byte[1 + length.length + n];
        out[0] = (byte) tag;
        System.arraycopy(length, 0, out, 1, length.length);
        System.arraycopy(content, 0, out, 1 + length.length, n);
        return out;
    }
}
