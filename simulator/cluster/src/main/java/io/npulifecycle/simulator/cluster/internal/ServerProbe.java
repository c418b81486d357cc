package io.npulifecycle.simulator.cluster.internal;

import io.npulifecycle.simulator.common.ChildProcess;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.function.LongSupplier;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Anonymous HTTP(S) GETs on the loopback interface (health endpoints: etcd's {@code /health}, kube-apiserver's
 * {@code /readyz}, which the bootstrap RBAC policy opens to unauthenticated callers), trusting one CA, and the
 * wait for a child server to become ready.
 */
public final class ServerProbe {

    private static final Duration POLL = Duration.ofMillis(100);

    private final HttpClient http;
    private final LongSupplier nanoClock;

    /**
     * @param caCert the CA (PEM) that signed the server certificates, or null for plain HTTP only
     * @param nanoClock monotonic nanoseconds for the deadlines of {@link #awaitOk}
     * @throws IllegalStateException when the CA cannot be read
     */
    public ServerProbe(Path caCert, LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        // HTTP/1.1: the JDK's HTTP/2 client keeps failing with "GOAWAY received" on a connection that
        // kube-apiserver closed while it was starting
        HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2));
        if (caCert != null) {
            b.sslContext(trusting(caCert));
        }
        http = b.build();
    }

    /**
     * @param caCert a CA certificate (PEM)
     * @return a TLS context that trusts exactly that CA
     * @throws IllegalStateException when it cannot be read
     */
    public static SSLContext trusting(Path caCert) {
        try (InputStream in = Files.newInputStream(caCert)) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                ks.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the CA certificate " + caCert, e);
        }
    }

    /**
     * @param url e.g. {@code https://127.0.0.1:6443/readyz}
     * @return the response (status and body)
     * @throws IOException when nothing answers
     * @throws InterruptedException when interrupted
     */
    public HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Polls {@code url} every 100 ms until it answers 200.
     *
     * @param url the health endpoint
     * @param server the process serving it: its exit ends the wait at once
     * @param timeout how long to wait
     * @throws IllegalStateException when the process exits or the timeout passes; the message has the last answer
     *         and the end of the process's log
     */
    public void awaitOk(String url, ChildProcess server, Duration timeout) {
        long deadline = nanoClock.getAsLong() + timeout.toNanos();
        String last = "no answer";
        while (true) {
            if (!server.alive()) {
                throw new IllegalStateException(server + " exited with code " + server.exitValue() + " before " + url
                        + " answered 200; end of " + server.outputFile() + ":\n" + server.outputTail(40));
            }
            try {
                HttpResponse<String> r = get(url);
                if (r.statusCode() == 200) {
                    return;
                }
                last = "HTTP " + r.statusCode() + ": " + r.body();
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + url, e);
            }
            if (nanoClock.getAsLong() - deadline > 0) {
                throw new IllegalStateException(url + " did not answer 200 within " + timeout.toSeconds()
                        + " s (last: " + last + "); end of " + server.outputFile() + ":\n" + server.outputTail(40));
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + url, e);
            }
        }
    }
}
