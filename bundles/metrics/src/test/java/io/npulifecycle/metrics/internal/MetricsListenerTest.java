package io.npulifecycle.metrics.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.GZIPInputStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.npulifecycle.api.metrics.Counts;
import io.npulifecycle.api.metrics.MetricSource;
import io.npulifecycle.simulator.common.LoopbackPorts;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/** The {@code /metrics} listener over HTTP: formats by {@code Accept}, gzip, what else it refuses. */
class MetricsListenerTest {

    private final HttpClient client = HttpClient.newHttpClient();
    private MetricsListener listener;
    private URI metrics;

    @BeforeEach
    void start() throws Exception {
        Counts wedges = new Counts("npu_lifecycle_wedges_total", "wedges");
        wedges.touch();
        Counts reboots = new Counts("npu_lifecycle_reboots_total", "reboots", "reason", "via");
        reboots.touch("recovery", "policy"); // a labelled counter created at 0 for a known label value
        List<MetricSource> sources = List.of(() -> List.of(wedges.family(), reboots.family()));
        PrometheusRegistry r = RuntimeRegistry.of("node", new MBeans(), () -> sources, true);
        listener = MetricsListener.start("127.0.0.1", 0, new MetricsServlet(r));
        metrics = URI.create("http://127.0.0.1:" + listener.port() + MetricsEndpoint.PATH);
    }

    @AfterEach
    void stop() {
        listener.close();
    }

    private HttpResponse<String> get(URI u, String accept) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(u);
        if (accept != null) {
            b.header("Accept", accept);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String type(HttpResponse<?> r) {
        return r.headers().firstValue("Content-Type").orElse("");
    }

    @Test
    void textByDefaultAndOpenMetricsWhenAsked() throws Exception {
        HttpResponse<String> plain = get(metrics, null);
        assertEquals(200, plain.statusCode());
        assertTrue(type(plain).startsWith("text/plain; version=0.0.4"), type(plain));
        assertTrue(plain.body().contains("npu_lifecycle_wedges_total 0.0"), plain.body());
        // a labelled series at 0 is published before its first event (Prometheus' instrumentation guidance)
        assertTrue(plain.body().contains("npu_lifecycle_reboots_total{reason=\"recovery\",via=\"policy\"} 0.0"),
                plain.body());
        assertTrue(plain.body().contains("jvm_memory_used_bytes"), "JVM metrics: " + plain.body());
        HttpResponse<String> om = get(metrics, "application/openmetrics-text; version=1.0.0; charset=utf-8");
        assertTrue(type(om).startsWith("application/openmetrics-text"), type(om));
        assertTrue(om.body().endsWith("# EOF\n"));
    }

    @Test
    void prometheusAskingForProtobufFirstGetsOpenMetrics() throws Exception {
        // Prometheus 2.x/3.x with native histograms: PrometheusProto first, then the text formats
        String accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;"
                + "q=0.6,application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;"
                + "version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        HttpResponse<String> r = get(metrics, accept);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(type(r).startsWith("application/openmetrics-text"), type(r));
        HttpResponse<String> only = get(metrics, MetricsServlet.PROTOBUF
                + ";proto=io.prometheus.client.MetricFamily;encoding=delimited");
        assertEquals(200, only.statusCode(), only.body());
        assertTrue(type(only).startsWith("text/plain; version=0.0.4"), type(only));
    }

    @Test
    void protobufRangesAreTakenOutOfAccept() {
        assertNull(MetricsServlet.withoutProtobuf(null));
        assertNull(MetricsServlet.withoutProtobuf("application/vnd.google.protobuf;proto=x;encoding=delimited"));
        assertEquals("text/plain;version=0.0.4", MetricsServlet.withoutProtobuf(
                "Application/Vnd.Google.Protobuf;q=0.6, text/plain;version=0.0.4"));
        assertEquals("text/plain", MetricsServlet.withoutProtobuf("text/plain"));
    }

    @Test
    void gzipWhenAccepted() throws Exception {
        HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(metrics).header("Accept-Encoding", "gzip")
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals("gzip", r.headers().firstValue("Content-Encoding").orElse(""));
        try (InputStream in = new GZIPInputStream(r.body())) {
            assertTrue(new String(in.readAllBytes(), StandardCharsets.UTF_8).contains("npu_lifecycle_wedges_total"));
        }
    }

    private HttpResponse<String> send(URI u, String method) throws Exception {
        return client.send(HttpRequest.newBuilder(u).method(method, HttpRequest.BodyPublishers.noBody())
                .header("X-Secret", "s3cret").build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void nothingButGetOfMetrics() throws Exception {
        URI other = URI.create("http://127.0.0.1:" + listener.port() + "/jolokia/");
        HttpResponse<String> get = get(other, null);
        assertEquals(404, get.statusCode());
        assertFalse(get.body().contains("Jolokia"), get.body());
        for (String method : List.of("POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "FOO")) {
            HttpResponse<String> r = send(metrics, method);
            assertEquals(405, r.statusCode(), method + " " + MetricsEndpoint.PATH);
            assertEquals("GET, HEAD", r.headers().firstValue("Allow").orElse(""), method);
            assertFalse(r.body().contains("s3cret"), method + ": " + r.body());
            for (String path : List.of("/", "/anything", "/jolokia", "/metrics/x")) {
                HttpResponse<String> o = send(URI.create("http://127.0.0.1:" + listener.port() + path), method);
                assertEquals(404, o.statusCode(), method + " " + path);
                assertFalse(o.body().contains("s3cret"), method + " " + path + ": " + o.body());
            }
        }
        HttpResponse<Void> head = client.send(HttpRequest.newBuilder(metrics).method("HEAD",
                HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
        assertEquals(200, head.statusCode());
        assertFalse(get(metrics, null).headers().firstValue("Server").isPresent(), "no server version");
    }

    @Test
    void aDebugViewOtherThanTextOrOpenMetricsIsA400() throws Exception {
        assertEquals(200, get(URI.create(metrics + "?debug=text"), null).statusCode());
        assertEquals(200, get(URI.create(metrics + "?debug=openmetrics"), null).statusCode());
        for (String bad : List.of("", "foo", "prometheus-protobuf", "%3Cscript%3E")) {
            HttpResponse<String> r = get(URI.create(metrics + "?debug=" + bad), null);
            assertEquals(400, r.statusCode(), "debug=" + bad);
            assertFalse(r.body().contains("<script>"), r.body());
        }
    }

    @Test
    void aMalformedRequestLineIsA400AndTheListenerGoesOn() throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), listener.port())) {
            OutputStream out = s.getOutputStream();
            out.write("GARBAGE\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String status = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertTrue(status.startsWith("HTTP/1.1 400"), status);
        }
        assertEquals(200, get(metrics, null).statusCode());
    }

    @Test
    void aPortInUseFailsTheStartAndLeavesNoThread() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Exception e = assertThrows(IOException.class,
                    () -> MetricsListener.start("127.0.0.1", taken.getLocalPort(), new MetricsServlet(
                            new PrometheusRegistry())));
            assertTrue(String.valueOf(e.getMessage()).contains(String.valueOf(taken.getLocalPort())), e.toString());
        }
        long left = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("npu-lifecycle-metrics")).count();
        // the running listener of this test holds its own threads: at most MAX_THREADS of them
        assertTrue(left <= MetricsListener.MAX_THREADS, left + " metrics threads");
    }

    @Test
    void closingFreesThePort() throws Exception {
        listener.close();
        // a reserved port outside the ephemeral range: between close and the bind below, no outgoing connection of
        // this machine can be given it as its local port
        int port = LoopbackPorts.shared().allocate();
        listener = MetricsListener.start("127.0.0.1", port, new MetricsServlet(new PrometheusRegistry()));
        assertEquals(port, listener.port());
        listener.close();
        try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            assertEquals(port, again.getLocalPort());
        }
        listener = MetricsListener.start("127.0.0.1", 0, new MetricsServlet(new PrometheusRegistry()));
    }
}
