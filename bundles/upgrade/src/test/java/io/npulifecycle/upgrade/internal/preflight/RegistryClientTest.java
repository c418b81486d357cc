package io.npulifecycle.upgrade.internal.preflight;

import io.npulifecycle.upgrade.internal.plan.ImageStatus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

/** Registry preflight against a tiny OCI distribution server on loopback: anonymous, basic, bearer token flow. */
class RegistryClientTest {

    HttpServer srv;
    final Set<String> tags = ConcurrentHashMap.newKeySet();
    volatile String mode = "anonymous";
    static final String BASIC = Base64.getEncoder().encodeToString("u:p".getBytes(StandardCharsets.UTF_8));

    String start() throws Exception {
        srv = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        srv.createContext("/token", ex -> {
            boolean ok = ("Basic " + BASIC).equals(ex.getRequestHeaders().getFirst("Authorization"))
                    && ex.getRequestURI().getQuery().contains("scope=repository");
            byte[] b = "{\"token\":\"tok123\"}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(ok ? 200 : 401, ok ? b.length : -1);
            if (ok) {
                ex.getResponseBody().write(b);
            }
            ex.close();
        });
        srv.createContext("/v2/", ex -> {
            String auth = ex.getRequestHeaders().getFirst("Authorization");
            assertTrue(ex.getRequestHeaders().getFirst("Accept").contains("application/vnd.oci.image.index.v1+json"));
            assertEquals("HEAD", ex.getRequestMethod());
            boolean authorised = switch (mode) {
                case "basic" -> ("Basic " + BASIC).equals(auth);
                case "bearer" -> "Bearer tok123".equals(auth);
                default -> true;
            };
            if (!authorised) {
                ex.getResponseHeaders().add("WWW-Authenticate", mode.equals("basic") ? "Basic realm=\"r\""
                        : "Bearer realm=\"http://" + host() + "/token\",service=\"reg\",scope=\"repository:mlops/ascend-driver:pull\"");
                ex.sendResponseHeaders(401, -1);
            } else {
                String path = ex.getRequestURI().getPath(); // /v2/mlops/ascend-driver/manifests/<tag>
                String tag = path.substring(path.lastIndexOf('/') + 1);
                ex.sendResponseHeaders(path.startsWith("/v2/mlops/ascend-driver/manifests/") && tags.contains(tag) ? 200 : 404, -1);
            }
            ex.close();
        });
        srv.start();
        return host();
    }

    String host() {
        return "127.0.0.1:" + srv.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        if (srv != null) {
            srv.stop(0);
        }
    }

    RegistryClient client(Map<String, String> auth) {
        return new RegistryClient(HttpClient.newHttpClient(), "http", auth, Duration.ofSeconds(5));
    }

    @Test
    void anonymousPresentAndMissing() throws Exception {
        String h = start();
        tags.add("25.5.0-910b-k-oe2403sp3");
        assertTrue(client(Map.of()).check(h + "/mlops/ascend-driver:25.5.0-910b-k-oe2403sp3").present());
        ImageStatus s = client(Map.of()).check(h + "/mlops/ascend-driver:25.5.0-310p-k-oe2403sp3");
        assertTrue(s.missing() && !s.present());
    }

    @Test
    void basicAndBearerWithPullSecretCredentials() throws Exception {
        String h = start();
        tags.add("t1");
        Map<String, String> auth = RegistryClient.parseDockerConfig("{\"auths\":{\"" + h + "\":{\"username\":\"u\",\"password\":\"p\"}}}");
        mode = "basic";
        assertTrue(client(auth).check(h + "/mlops/ascend-driver:t1").present());
        mode = "bearer";
        assertTrue(client(auth).check(h + "/mlops/ascend-driver:t1").present());
        ImageStatus noCreds = client(Map.of()).check(h + "/mlops/ascend-driver:t1");
        assertFalse(noCreds.present() || noCreds.missing(), "an auth failure is an error, not 'missing'");
    }

    @Test
    void unreachableAndMalformedInputs() {
        ImageStatus s = client(Map.of()).check("127.0.0.1:1/mlops/ascend-driver:t");
        assertTrue(!s.present() && !s.missing() && s.detail().contains("unreachable"), s.detail());
        assertTrue(client(Map.of()).check("no-tag").detail().contains("not an image reference"));
        try {
            RegistryClient.parseDockerConfig("{\"x\":1}");
            throw new AssertionError();
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("auths"));
        }
    }
}
