package io.npulifecycle.simulator.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

/**
 * {@link TcpProxy} with {@link TcpProxy.Tls}: it terminates TLS with a certificate the client trusts, relays HTTP to a
 * TLS server (a JDK {@code HttpsServer} with a keytool-made certificate for 127.0.0.1), answers 503 with a
 * Kubernetes Status body while unavailable, and forwards again after {@link TcpProxy#restore()}.
 */
class TlsTcpProxyTest {

    private static final char[] PASSWORD = "changeit".toCharArray();

    @TempDir
    Path tmp;

    private SSLContext serving;
    private SSLContext trusting;
    private HttpsServer server;
    private final List<String> requestsSeen = new CopyOnWriteArrayList<>();
    private final List<String> log = new CopyOnWriteArrayList<>();

    @BeforeEach
    void tlsServer() throws Exception {
        Path keystore = tmp.resolve("server.p12");
        Path keytool = Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("keytool");
        Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-keystore", keystore.toString(),
                "-storetype", "PKCS12", "-storepass", new String(PASSWORD), "-alias", "server", "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=127.0.0.1", "-ext", "san=ip:127.0.0.1", "-validity", "2")
                .redirectErrorStream(true).redirectOutput(tmp.resolve("keytool.log").toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, () -> read(tmp.resolve("keytool.log")));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, PASSWORD);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD);
        serving = SSLContext.getInstance("TLS");
        serving.init(kmf.getKeyManagers(), null, null);
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("server", ks.getCertificate("server"));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        trusting = SSLContext.getInstance("TLS");
        trusting.init(null, tmf.getTrustManagers(), null);

        server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        server.setHttpsConfigurator(new HttpsConfigurator(serving));
        server.createContext("/", exchange -> {
            requestsSeen.add(exchange.getRequestMethod() + " " + exchange.getRequestURI() + " "
                    + exchange.getRequestHeaders().getFirst("Authorization"));
            byte[] body = exchange.getRequestBody().readAllBytes();
            byte[] answer = ("served " + body.length).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, answer.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private HttpResponse<String> post(String url, String body) throws Exception {
        // a new client per request: no connection of an earlier request is reused
        HttpClient client = HttpClient.newBuilder().sslContext(trusting).connectTimeout(Duration.ofSeconds(5)).build();
        return client.send(HttpRequest.newBuilder(URI.create(url + "/api/v1/nodes")).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer t0ken").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void relaysHttpOverTlsAndAnswers503WhileUnavailable() throws Exception {
        try (TcpProxy proxy = new TcpProxy(server.getAddress().getPort(),
                new TcpProxy.Tls(serving.getServerSocketFactory(), trusting.getSocketFactory()), log::add)) {
            assertTrue(proxy.url().startsWith("https://127.0.0.1:"), proxy.url());

            HttpResponse<String> ok = post(proxy.url(), "abc");
            assertEquals(200, ok.statusCode());
            assertEquals("served 3", ok.body());
            assertEquals(HttpClient.Version.HTTP_1_1, ok.version(), "no ALPN: the client falls back to HTTP/1.1");
            assertEquals(List.of("POST /api/v1/nodes Bearer t0ken"), requestsSeen, "the token reaches the server");

            proxy.serviceUnavailable(Duration.ofMillis(1500));
            assertTrue(proxy.isUnavailable());
            HttpResponse<String> down = post(proxy.url(), "a body the proxy reads and drops");
            assertEquals(503, down.statusCode());
            assertEquals("2", down.headers().firstValue("Retry-After").orElse(null));
            assertEquals("application/json", down.headers().firstValue("Content-Type").orElse(null));
            assertTrue(down.body().contains("\"kind\":\"Status\"") && down.body().contains("\"code\":503")
                    && down.body().contains("\"reason\":\"ServiceUnavailable\"")
                    && down.body().contains("POST /api/v1/nodes HTTP/1.1"), down.body());
            assertEquals(1, requestsSeen.size(), "no request reached the server while unavailable");
            assertEquals(1, proxy.answered503());

            proxy.restore();
            assertFalse(proxy.isUnavailable());
            assertEquals(200, post(proxy.url(), "").statusCode());
            assertEquals(2, requestsSeen.size());
            assertTrue(log.stream().anyMatch(l -> l.contains("answers every request 503")), log.toString());
            assertTrue(log.stream().anyMatch(l -> l.contains("available again")), log.toString());
        }
    }

    @Test
    void unavailableAndDropCloseOpenConnections() throws Exception {
        try (TcpProxy proxy = new TcpProxy(server.getAddress().getPort(),
                new TcpProxy.Tls(serving.getServerSocketFactory(), trusting.getSocketFactory()), log::add)) {
            SSLSocket idle = (SSLSocket) trusting.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(),
                    proxy.port());
            idle.startHandshake();
            idle.setSoTimeout(10_000);
            // the proxy joins the connection once the handshake is done: wait until it holds it
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> proxy.dropConnections() == 1);
            assertEquals(-1, idle.getInputStream().read(), "a dropped connection ends (orderly close)");
            idle.close();

            SSLSocket open = (SSLSocket) trusting.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(),
                    proxy.port());
            open.startHandshake();
            open.setSoTimeout(10_000);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> proxyHolds(open));
            proxy.serviceUnavailable(Duration.ofSeconds(1));
            assertThrowsOrEnds(open);
        }
    }

    /** Whether a request on {@code s} is answered (through the proxy, by the server). */
    private static boolean proxyHolds(SSLSocket s) throws IOException {
        s.getOutputStream().write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        byte[] buf = new byte[512];
        int n = s.getInputStream().read(buf);
        return n > 0 && new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200");
    }

    /** Reads to the end of {@code s}: the rest of the last answer, then the end (an orderly close or a reset). */
    private static void assertThrowsOrEnds(SSLSocket s) {
        byte[] buf = new byte[512];
        try {
            int n;
            do {
                n = s.getInputStream().read(buf);
            } while (n > 0);
        } catch (java.net.SocketTimeoutException e) {
            fail("the connection stayed open after serviceUnavailable()");
        } catch (IOException e) {
            // reset: ended too
        }
    }
}
