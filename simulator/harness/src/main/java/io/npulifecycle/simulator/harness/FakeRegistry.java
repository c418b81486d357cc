package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * The cluster registry of the simulated cluster: an OCI distribution endpoint on loopback answering
 * {@code HEAD /v2/<name>/manifests/<tag>} with 200 for the tags it holds and 404 otherwise (what the control plane's
 * preflight asks, DESIGN.md runbook step 1).
 */
public final class FakeRegistry implements AutoCloseable {

    private static final Pattern MANIFEST = Pattern.compile("^/v2/(.+)/manifests/([^/]+)$");

    private final HttpServer server;
    private final Set<String> images = ConcurrentHashMap.newKeySet();

    /**
     * Starts the registry on a free loopback port.
     *
     * @throws IOException if it cannot listen
     */
    public FakeRegistry() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.createContext("/v2/", this::handle);
        server.start();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            if ("/v2/".equals(path)) {
                reply(ex, 200, "{}");
                return;
            }
            Matcher m = MANIFEST.matcher(path);
            if (m.matches() && images.contains(m.group(1) + ":" + m.group(2))) {
                ex.getResponseHeaders().add("Content-Type", "application/vnd.oci.image.manifest.v1+json");
                ex.getResponseHeaders().add("Docker-Content-Digest", "sha256:" + Integer.toHexString(path.hashCode()));
                reply(ex, 200, "{\"schemaVersion\":2}");
            } else {
                reply(ex, 404, "{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"manifest unknown\"}]}");
            }
        }
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        boolean head = "HEAD".equals(ex.getRequestMethod());
        ex.sendResponseHeaders(status, head ? -1 : b.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(b);
            }
        }
    }

    /** Adds an image, e.g. {@code mlops/ascend-driver:25.5.0-910b-6.6.0-...-oe2403sp3}. */
    public void add(String repositoryAndTag) {
        images.add(repositoryAndTag);
    }

    /** Removes an image. */
    public void remove(String repositoryAndTag) {
        images.remove(repositoryAndTag);
    }

    /** @return {@code 127.0.0.1:PORT}, the value of {@code spec.driver.registry} */
    public String address() {
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
