package io.npulifecycle.kubeclient.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

class ClientFactoryTest {

    @TempDir
    Path dir;

    HttpServer server;
    final AtomicInteger status = new AtomicInteger(200);

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/version", ex -> answer(ex, "{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":\"v1.32.0\"}"));
        server.createContext("/api/v1/nodes/node-0", ex -> answer(ex, "{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                + "\"metadata\":{\"name\":\"node-0\",\"labels\":{\"openfuyao.com/npu.present\":\"true\"}}}"));
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    void answer(HttpExchange ex, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        int code = status.get();
        ex.sendResponseHeaders(code, code == 200 ? b.length : -1);
        try (OutputStream out = ex.getResponseBody()) {
            if (code == 200) {
                out.write(b);
            }
        }
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    ClientSettings settings(String masterUrl, String kubeconfig) throws ClientSettings.Invalid {
        return ClientSettings.resolve(masterUrl, kubeconfig, "npu-operator", 3, 2, 500, k -> null, k -> null, dir);
    }

    @Test
    void masterUrlSettingsBecomeTheFabric8Configuration() throws Exception {
        Config c = ClientFactory.config(settings(url(), ""));
        assertEquals(url() + "/", c.getMasterUrl());
        assertEquals("npu-operator", c.getNamespace());
        assertEquals(3000, c.getRequestTimeout());
        assertEquals(2000, c.getConnectionTimeout());
        assertEquals(500, c.getWatchReconnectInterval());
    }

    @Test
    void aKubeconfigFileGivesTheServerAndTheKeyNamespaceWins() throws Exception {
        Path kc = Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\nkind: Config\n"
                + "clusters:\n- name: c\n  cluster:\n    server: " + url() + "\n    insecure-skip-tls-verify: true\n"
                + "users:\n- name: u\n  user:\n    token: dummy\n"
                + "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: other\n"
                + "current-context: x\n");
        Config c = ClientFactory.config(settings("", kc.toString()));
        assertEquals(url() + "/", c.getMasterUrl());
        assertEquals("npu-operator", c.getNamespace());
        assertEquals("dummy", c.getOauthToken() != null ? c.getOauthToken() : c.getAutoOAuthToken());
    }

    @Test
    void aMalformedKubeconfigNamesTheKeyAndTheFile() throws Exception {
        Path kc = Files.writeString(dir.resolve("kubeconfig"), "clusters: [ {{{ not yaml");
        ClientSettings.Invalid e = assertThrows(ClientSettings.Invalid.class,
                () -> ClientFactory.config(settings("", kc.toString())));
        assertTrue(e.getMessage().contains("PID io.npulifecycle.kube key kubeconfig='" + kc + "' is not a usable kubeconfig"),
                e.getMessage());
    }

    @Test
    void theClientTalksToTheServerAndTheStatusFollowsEveryRequest() throws Exception {
        Config c = ClientFactory.config(settings(url(), ""));
        // fabric8 calls Interceptor.afterConnectionFailure only for a failure it retries: one retry, 10 ms
        c.setRequestRetryBackoffLimit(1);
        c.setRequestRetryBackoffInterval(10);
        ClientStatus st = new ClientStatus(() -> Instant.parse("2026-01-01T00:00:00Z"));
        try (KubernetesClient client = ClientFactory.build(c, st)) {
            assertEquals("v1.32.0", client.getKubernetesVersion().getGitVersion());
            Node n = client.nodes().withName("node-0").get();
            assertEquals("true", n.getMetadata().getLabels().get("openfuyao.com/npu.present"));
            assertTrue(st.isConnected());
            assertEquals(2, st.getRequestCount());
            assertEquals(0, st.getFailureCount());

            status.set(503);
            assertThrows(KubernetesClientException.class, () -> client.getKubernetesVersion());
            assertFalse(st.isConnected());
            assertTrue(st.getLastError().startsWith("2026-01-01T00:00:00Z GET " + url() + "/version: HTTP 503"),
                    st.getLastError());
            assertTrue(st.getFailureCount() >= 1);

            server.stop(0);
            assertThrows(KubernetesClientException.class, () -> client.getKubernetesVersion());
            assertFalse(st.isConnected());
            assertTrue(st.getLastError().contains("connection failed"), st.getLastError());
        }
    }

    /**
     * The trap: fabric8's KubernetesClientBuilder loads KubernetesClientImpl through the thread context class loader
     * first. In OSGi that loader is the launcher's (or the test harness's) class path; when it holds another copy of
     * fabric8, the client would be built from the wrong copy. ClientFactory sets the bundle's loader.
     */
    @Test
    void theClientIsBuiltFromOurClassesWhateverTheContextClassLoaderHolds() throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (e.contains("fabric8") || e.contains("jackson") || e.contains("snakeyaml") || e.contains("slf4j")) {
                urls.add(Paths.get(e).toUri().toURL());
            }
        }
        Config c = ClientFactory.config(settings(url(), ""));
        Thread t = Thread.currentThread();
        ClassLoader previous = t.getContextClassLoader();
        try (URLClassLoader otherCopy = new URLClassLoader(urls.toArray(new URL[0]), null)) {
            Class<?> foreign = otherCopy.loadClass("io.fabric8.kubernetes.client.impl.KubernetesClientImpl");
            assertNotSame(foreign, Class.forName("io.fabric8.kubernetes.client.impl.KubernetesClientImpl"));
            t.setContextClassLoader(otherCopy);
            try (KubernetesClient client = ClientFactory.build(c, null)) {
                assertSame(KubernetesClient.class.getClassLoader(), client.getClass().getClassLoader());
                assertEquals("v1.32.0", client.getKubernetesVersion().getGitVersion());
            }
            assertSame(otherCopy, t.getContextClassLoader(), "the caller's context class loader is restored");
        } finally {
            t.setContextClassLoader(previous);
        }
    }

    /**
     * The trap seen in KubeClientIT: fabric8's static kind registry is filled lazily, through the context class loader
     * of whichever thread first deserializes an untyped resource (an informer's watch event). With another fabric8
     * copy on that loader: ServiceConfigurationError, and a half-filled registry for good. ClientFactory fills it
     * while building, under the bundle's loader.
     */
    @Test
    void theKindRegistryIsFilledWhileBuildingNotOnTheFirstWatchEventsThread() throws Exception {
        java.lang.reflect.Field registry = io.fabric8.kubernetes.internal.KubernetesDeserializer.class
                .getDeclaredField("DEFAULT_MAPPING");
        registry.setAccessible(true);
        registry.set(null, null); // as in a fresh bundle class loader
        Config c = ClientFactory.config(settings(url(), ""));
        try (URLClassLoader otherCopy = new URLClassLoader(fabric8Jars(), null);
                KubernetesClient client = ClientFactory.build(c, null)) {
            Object[] result = new Object[1];
            Thread t = new Thread(() -> {
                try {
                    result[0] = client.getKubernetesSerialization().unmarshal(
                            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}");
                } catch (Throwable e) {
                    result[0] = e;
                }
            }, "like-a-fabric8-watch-thread");
            t.setContextClassLoader(otherCopy);
            t.start();
            t.join(10_000);
            assertTrue(result[0] instanceof Node, String.valueOf(result[0]));
        }
    }

    static URL[] fabric8Jars() throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (e.contains("fabric8") || e.contains("jackson") || e.contains("snakeyaml") || e.contains("slf4j")) {
                urls.add(Paths.get(e).toUri().toURL());
            }
        }
        return urls.toArray(new URL[0]);
    }

    @Test
    void versionOnceDoesNotRetry() throws Exception {
        Config c = ClientFactory.config(settings(url(), ""));
        c.setRequestRetryBackoffInterval(1000); // with retries, a refused connection would take seconds
        try (KubernetesClient client = ClientFactory.build(c, null)) {
            assertEquals("v1.32.0", ClientFactory.versionOnce(client).getGitVersion());
            server.stop(0);
            long t0 = System.nanoTime();
            assertThrows(KubernetesClientException.class, () -> ClientFactory.versionOnce(client));
            assertTrue(System.nanoTime() - t0 < 900_000_000L, "no retry");
            assertEquals(10, client.getConfiguration().getRequestRetryBackoffLimit(), "the client keeps its retries");
        }
    }

    @Test
    void describeJoinsTheCauses() {
        Exception e = new KubernetesClientException("An error has occurred.", new java.net.ConnectException("Connection refused"));
        assertEquals("An error has occurred.: Connection refused", ClientStatus.describe(e));
    }

}
