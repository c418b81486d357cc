package io.npulifecycle.itests.launcher;

import static io.npulifecycle.itests.launcher.RuntimeProcess.PASSWORD;
import static io.npulifecycle.itests.launcher.RuntimeProcess.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import io.npulifecycle.simulator.common.LoopbackPorts;


/**
 * {@code /metrics} of a node agent started by {@code bin/npu-lifecycle node} with a fake npu-smi: the chips' series in
 * both formats; a wedge moves {@code npu_lifecycle_chip_health} and {@code npu_lifecycle_wedges_total}; a hot update of
 * the metrics bundle (FileInstall, {@code deploy/}) keeps the counter's value on the same port; a bad or taken
 * {@code metrics.port} stops the launch with exit 2 naming the key.
 */
class MetricsProcessIT {

    static final String BOOT_ID = "cccccccc-1111-2222-3333-444444444444";

    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    String scrape(int port, String accept) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(5));
            if (accept != null) {
                b.header("Accept", accept);
            }
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    static double value(String text, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " ([0-9.eE+-]+)$").matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    @Test
    void aWedgeMovesChipHealthAndWedgesTotalAndAHotUpdateKeepsTheCounter() throws Exception {
        NodeHomes.FakeNpuSmiNode node = NodeHomes.withFakeNpuSmi(tmp, BOOT_ID);
        Path home = node.home();
        int port = LoopbackPorts.shared().allocate();
        int metrics = LoopbackPorts.shared().allocate();
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port,
                RuntimeProcess.operatorEnv(port, metrics),
                "node", "--no-shell", "--home", home.toString())) {
            String healthy = "npu_lifecycle_chip_health{chip=\"0\",npu=\"0\",state=\"healthy\"}";
            String wedged = "npu_lifecycle_chip_health{chip=\"0\",npu=\"0\",state=\"wedged\"}";
            rt.await("chip 0:0 healthy in /metrics", Duration.ofSeconds(90),
                    () -> value(scrape(metrics, null), healthy) == 1.0);
            String t = scrape(metrics, null);
            assertEquals(0.0, value(t, wedged), t);
            assertEquals(1.0, value(t, "npu_lifecycle_chip_health{chip=\"0\",npu=\"1\",state=\"healthy\"}"), t);
            assertEquals(0.0, value(t, "npu_lifecycle_wedges_total"), t);
            assertTrue(value(t, "npu_lifecycle_probe_duration_seconds_count") >= 1, t);
            assertEquals(0.0, value(t, "npu_lifecycle_probe_degraded"), t);
            assertTrue(t.contains("jvm_memory_used_bytes{area=\"heap\"}"), t);
            String om = scrape(metrics, "application/openmetrics-text; version=1.0.0; charset=utf-8");
            assertTrue(om.endsWith("# EOF\n") && om.contains("# TYPE npu_lifecycle_wedges counter"), om);

            node.npuSmi().mode("dcmi-8005");
            rt.await("the wedge in /metrics", Duration.ofSeconds(60), () -> {
                String s = scrape(metrics, null);
                return value(s, wedged) == 1.0 && value(s, "npu_lifecycle_wedges_total") == 1.0;
            });
            // the chip's series move when the strike is counted; the reboot-required marker is written right after,
            // and the rebooter's gauge follows it when the rebooter evaluates it: polled until one scrape shows all
            rt.awaitAsserted("the wedge's reboot request in /metrics", Duration.ofSeconds(60), () -> {
                String w = scrape(metrics, null);
                assertEquals(0.0, value(w, healthy), w);
                assertTrue(value(w, "npu_lifecycle_chip_consecutive_failures{chip=\"0\",npu=\"0\"}") >= 3, w);
                assertEquals(1.0, value(w, "npu_lifecycle_reboot_required{reason=\"recovery\"}"), w);
            });

            // hot update of the metrics bundle: FileInstall updates a jar of deploy/ whose file changed
            Path jar = home.resolve("deploy/io.npulifecycle.metrics.jar");
            Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(5)));
            rt.await("the metrics bundle updated", Duration.ofSeconds(30),
                    () -> rt.output().contains("Updating bundle io.npulifecycle.metrics"));
            // FileInstall restarts the bundle twice (its update, then the package refresh that drops the old
            // revision): /metrics may be down for a moment between answers; every answer must keep the counter
            List<Double> seen = new ArrayList<>();
            rt.await("/metrics back on the same port", Duration.ofSeconds(30), () -> {
                double v = value(scrape(metrics, null), "npu_lifecycle_wedges_total");
                if (!Double.isNaN(v)) {
                    seen.add(v);
                }
                return seen.size() >= 5;
            });
            assertEquals(List.of(1.0, 1.0, 1.0, 1.0, 1.0), seen, "the counter kept its value across the hot update");

            node.npuSmi().mode("ok");
            rt.await("the suppression in /metrics", Duration.ofSeconds(60), () -> {
                String s = scrape(metrics, null);
                return value(s, "npu_lifecycle_suppressed_total") == 1.0 && value(s, healthy) == 1.0;
            });
            assertTrue(rt.alive(), "the runtime stays up");
        }
    }

    /**
     * A control plane on the embedded API server with three NPU nodes and an NPUOperatorCtl: it leads, every node is
     * counted in exactly one state, the target is the rollout's, reconciles are timed and the client's requests are
     * counted by verb and code.
     */
    @Test
    void aControlPlaneReportsLeaderNodesTargetReconcilesAndRequests() throws Exception {
        try (io.npulifecycle.testing.support.ClusterFixture c = io.npulifecycle.testing.support.ClusterFixture
                .startEmbedded()) {
            for (String n : new String[] {"npu-a", "npu-b", "npu-c"}) {
                c.backend().addNode(io.npulifecycle.simulator.cluster.EmbeddedCluster.npuNode(n));
            }
            c.createDriver(Map.of("version", "25.5.0"));
            Path home = tmp.resolve("cp-home");
            Files.createDirectories(home.resolve("etc"));
            Files.writeString(home.resolve("etc/io.npulifecycle.upgrade.cfg"), "registryCheck=false\nleaderElection=false\n");
            int port = LoopbackPorts.shared().allocate();
            int metrics = LoopbackPorts.shared().allocate();
            try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("cp-out.txt"), port,
                    Map.of("NPU_LIFECYCLE_JOLOKIA_USER", USER, "NPU_LIFECYCLE_JOLOKIA_PASSWORD", PASSWORD,
                            "NPU_LIFECYCLE_HTTP_PORT", String.valueOf(port), "NPU_LIFECYCLE_METRICS_PORT",
                            String.valueOf(metrics), "NPU_LIFECYCLE_KUBE_MASTER", c.masterUrl()),
                    "control-plane", "--no-shell", "--home", home.toString())) {
                rt.await("the leader's view in /metrics", Duration.ofSeconds(90), () -> {
                    String s = scrape(metrics, null);
                    return value(s, "npu_lifecycle_leader") == 1.0
                            && value(s, "npu_lifecycle_rollout_info{target=\"25.5.0\"}") == 1.0;
                });
                // the leader's view is published in the middle of a reconcile, which is timed when it ends, and the
                // client's requests are counted by another bundle (kubeclient) as their answers come: the assertions
                // are polled on fresh scrapes until one scrape passes them all, unchanged
                rt.awaitAsserted("the control plane's series in /metrics", Duration.ofSeconds(60), () -> {
                    String t = scrape(metrics, null);
                    double sum = 0;
                    for (String state : new String[] {"upgrade-required", "cordon-required", "drain-required",
                            "pod-restart-required", "reboot-required", "reboot-deferred", "rebooting",
                            "validation-required", "upgrade-failed", "done"}) {
                        double v = value(t, "npu_lifecycle_nodes{state=\"" + state + "\"}");
                        assertTrue(v >= 0, state + " has a series: " + t);
                        sum += v;
                    }
                    assertEquals(3.0, sum, "every node in exactly one state: " + t);
                    assertTrue(value(t, "npu_lifecycle_reconcile_duration_seconds_count") >= 1, t);
                    assertTrue(value(t, "npu_lifecycle_kubernetes_requests_total{code=\"200\",verb=\"GET\"}") >= 1,
                            t);
                    assertEquals(1.0, value(t, "npu_lifecycle_kubernetes_connected"), t);
                    assertEquals(0.0, value(t, "npu_lifecycle_rollout_paused"), t);
                    assertTrue(t.contains("npu_lifecycle_upgrades_total{result=\"failed\"} 0.0"), t);
                    assertTrue(!t.contains("npu_lifecycle_chip_health"), "no node-agent series in the control plane");
                });
            }
        }
    }

    @Test
    void anInvalidOrTakenMetricsPortExits2NamingTheKey() throws Exception {
        Path home = tmp.resolve("home");
        Files.createDirectories(home.resolve("etc"));
        Files.writeString(home.resolve("etc/runtime.properties"), "metrics.port=ninety\n");
        Path out = tmp.resolve("out.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of("NPU_LIFECYCLE_HTTP_PORT",
                String.valueOf(LoopbackPorts.shared().allocate())), 60, "node", "--no-shell", "--home", home.toString());
        String text = Files.readString(out);
        assertEquals(2, rc, text);
        assertTrue(text.contains("metrics.port='ninety'"), text);

        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Files.writeString(home.resolve("etc/runtime.properties"), "metrics.port=" + taken.getLocalPort() + "\n");
            Path out2 = tmp.resolve("out2.txt");
            rc = RuntimeProcess.runToExit(out2, Map.of("NPU_LIFECYCLE_HTTP_PORT",
                    String.valueOf(LoopbackPorts.shared().allocate())), 60, "node", "--no-shell", "--home", home.toString());
            text = Files.readString(out2);
            assertEquals(2, rc, text);
            assertTrue(text.contains("metrics.port") && text.contains(String.valueOf(taken.getLocalPort())), text);
        }
    }
}
