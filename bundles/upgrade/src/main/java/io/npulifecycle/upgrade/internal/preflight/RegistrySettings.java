package io.npulifecycle.upgrade.internal.preflight;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.regex.Pattern;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * How the registry preflight reaches the registries over TLS, and where (PID {@code io.npulifecycle.upgrade} keys
 * {@code registryCaBundle}, {@code registryMirror}, {@code registryInsecure}; chart values
 * {@code preflight.registryCABundle},
 * {@code preflight.mirror}, {@code preflight.insecure}).
 *
 * @param caBundle a PEM file of CA certificates trusted beside the JVM's own (a registry whose certificate a private CA
 *        signs, as containerd's {@code certs.d/<host>/ca.crt}); read at each check, so a rotated file applies
 *        without a restart; {@code ""} = the JVM's CAs only
 * @param mirror {@code host[:port][/path]} checked instead of each image's own registry: where the nodes really pull
 *        from when the container runtime mirrors the images' registry (an air-gapped cluster); image
 *        {@code registry.example/ascend/driver:tag} is checked as {@code <mirror>/ascend/driver:tag}, with the pull
 *        secret's credentials for the mirror's host; {@code ""} = each image's own registry
 * @param insecure as Docker's {@code insecure-registries}: HTTPS without verifying the registry's certificate
 *        (neither its CA nor its name), and plain HTTP when the registry does not speak TLS; for a test registry
 *        only; logged as a warning at each check
 */
public record RegistrySettings(String caBundle, String mirror, boolean insecure) {

    /** The JVM's CAs, each image's own registry, certificates verified. */
    public static final RegistrySettings DEFAULT = new RegistrySettings("", "", false);

    /** {@code host[:port][/path]}: a DNS name or IPv4 address, an optional port, an optional repository prefix. */
    static final Pattern MIRROR = Pattern.compile(
            "^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:[0-9]{1,5})?(/[a-z0-9]+([._/-][a-z0-9]+)*)?$");

    /** Nulls read as {@code ""}. */
    public RegistrySettings {
        caBundle = caBundle == null ? "" : caBundle.strip();
        mirror = mirror == null ? "" : mirror.strip();
    }

    /**
     * @return why these settings cannot be used ({@code "key: reason"}), or null when they can: {@code caBundle} must
     *         be an absolute path, {@code mirror} {@code host[:port][/path]}
     */
    public String problem() {
        if (!caBundle.isEmpty() && !Path.of(caBundle).isAbsolute()) {
            return "registryCaBundle: '" + caBundle + "' is not an absolute path";
        }
        if (!mirror.isEmpty() && !MIRROR.matcher(mirror).matches()) {
            return "registryMirror: '" + mirror + "' (expected host[:port][/path], e.g. mirror.local:5000/ascend)";
        }
        return null;
    }

    /** @return the mirror's {@code host[:port]}, or null without a mirror */
    String mirrorHost() {
        if (mirror.isEmpty()) {
            return null;
        }
        int slash = mirror.indexOf('/');
        return slash < 0 ? mirror : mirror.substring(0, slash);
    }

    /** @return the mirror's repository prefix without slashes ({@code ""} for none), or null without a mirror */
    String mirrorPrefix() {
        if (mirror.isEmpty()) {
            return null;
        }
        int slash = mirror.indexOf('/');
        return slash < 0 ? "" : mirror.substring(slash + 1);
    }

    /**
     * @return the TLS context of the checks: trust-all with {@code insecure}, the JVM's CAs plus those of
     *         {@code caBundle} when set, else null (the HTTP client's default)
     * @throws IllegalArgumentException naming {@code registryCaBundle} and the file when it cannot be read or holds no
     *         PEM certificate
     */
    SSLContext sslContext() {
        try {
            if (insecure) {
                SSLContext c = SSLContext.getInstance("TLS");
                c.init(null, new TrustManager[] {new TrustAll()}, null);
                return c;
            }
            if (caBundle.isEmpty()) {
                return null;
            }
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            TrustManagerFactory jvm = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            jvm.init((KeyStore) null);
            int n = 0;
            for (TrustManager tm : jvm.getTrustManagers()) {
                if (tm instanceof X509TrustManager x) {
                    for (X509Certificate ca : x.getAcceptedIssuers()) {
                        store.setCertificateEntry("jvm-" + n++, ca);
                    }
                }
            }
            Collection<? extends Certificate> mine;
            try (InputStream in = Files.newInputStream(Path.of(caBundle))) {
                mine = CertificateFactory.getInstance("X.509").generateCertificates(in);
            } catch (IOException e) {
                throw new IllegalArgumentException("registryCaBundle " + caBundle + " cannot be read: " + e, e);
            } catch (CertificateException e) {
                throw new IllegalArgumentException("registryCaBundle " + caBundle + " is not a PEM certificate bundle: "
                        + e.getMessage(), e);
            }
            if (mine.isEmpty()) {
                throw new IllegalArgumentException("registryCaBundle " + caBundle + " holds no PEM certificate");
            }
            int i = 0;
            for (Certificate c : mine) {
                store.setCertificateEntry("registry-ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext c = SSLContext.getInstance("TLS");
            c.init(null, tmf.getTrustManagers(), null);
            return c;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build the TLS context of the registry preflight: " + e, e);
        }
    }

    /** Accepts every certificate and every name (an extended trust manager: JSSE then checks no host name either). */
    private static final class TrustAll extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }
    }
}
