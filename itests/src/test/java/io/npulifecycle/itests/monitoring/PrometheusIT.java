package io.npulifecycle.itests.monitoring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.itests.launcher.FailedRuns;
import io.npulifecycle.itests.launcher.RuntimeProcess;
import io.npulifecycle.testing.support.Waits;
import tools.jackson.databind.JsonNode;

/**
 * The shipped monitoring files against the real tools: a real Prometheus (scrape and rule evaluation every second,
 * the plain rules file of config/monitoring loaded) scrapes every runtime of a simulated cluster while
 * {@code bin/npu-lifecycle scenario} runs {@value #SCENARIO} (probe errors, a wedge healed by an approved recovery
 * reboot, a manual upgrade to 25.5.0); a real Alertmanager routes to a webhook receiver of this test. Then, over
 * Prometheus's HTTP API: the series and values of the run, every query of the Grafana dashboard returns data, and the
 * webhook received {@code NpuChipWedged} for the wedged chip. The harness writes the scrape targets of its runtimes
 * as file_sd files in {@code <work>/scenario-0/prometheus/}. A failed run's work folder is kept ({@link FailedRuns}).
 */
class PrometheusIT {

    static final String SCENARIO = "monitoring/wedge-recovery-upgrade.yaml";

    @TempDir
    Path tmp;

    static Path monitoringDir() {
        return Path.of(System.getProperty("npu.monitoring.dir", "../config/monitoring")).toAbsolutePath().normalize();
    }

    static Path scenarioFile() {
        return Path.of(System.getProperty("npu.scenarios.dir", "scenarios")).toAbsolutePath().resolve(SCENARIO);
    }

    static String prometheusConfig(Path targets, Path rules, String alertmanager) {
        return String.join("\n",
                "global:",
                "  scrape_interval: 1s",
                "  scrape_timeout: 1s",
                "  evaluation_interval: 1s",
                "rule_files:",
                "  - '" + rules + "'",
                "alerting:",
                "  alertmanagers:",
                "    - static_configs:",
                "        - targets: ['" + alertmanager + "']",
                "scrape_configs:",
                "  - job_name: npu-lifecycle-node-agent",
                "    file_sd_configs:",
                "      - files: ['" + targets.resolve("node-agent.json") + "']",
                "        refresh_interval: 1s",
                "  - job_name: npu-lifecycle-control-plane",
                "    file_sd_configs:",
                "      - files: ['" + targets.resolve("control-plane.json") + "']",
                "        refresh_interval: 1s",
                "");
    }

    @Test
    void aRealPrometheusScrapesTheScenarioAndAlertmanagerDeliversTheWedge() throws Exception {
        Path prometheusBin = MonitoringBinaries.require("prometheus", "prometheus");
        Path alertmanagerBin = MonitoringBinaries.require("prometheus-alertmanager", "prometheus-alertmanager");
        Path work = tmp.resolve("work");
        Path out = tmp.resolve("scenario.txt");
        String api = System.getProperty("itests.api", "real");
        long started = System.nanoTime();
        try {
            checkTheRun(prometheusBin, alertmanagerBin, work, out, api, started);
        } catch (Exception | AssertionError e) {
            throw FailedRuns.failed(e, FailedRuns.root(), "PrometheusIT-" + api, work, out, FailedRuns.SUITE_LOGS);
        }
    }

    /** The scenario under Prometheus and Alertmanager, and the checks of what they saw. */
    private void checkTheRun(Path prometheusBin, Path alertmanagerBin, Path work, Path out, String api, long started)
            throws Exception {
        try (AlertmanagerServer am = AlertmanagerServer.start(alertmanagerBin, tmp.resolve("alertmanager"));
                PrometheusServer prom = PrometheusServer.start(prometheusBin, tmp.resolve("prometheus"),
                        prometheusConfig(work.resolve("scenario-0/prometheus"),
                                monitoringDir().resolve("npu-lifecycle.rules.yaml"), am.address()))) {
            Instant from = Instant.now();
            Instant to;
            try (RuntimeProcess scenario = RuntimeProcess.start(out, 0, Map.of(), "scenario",
                    scenarioFile().toString(), "--api", api, "--work", work.toString())) {
                // while the chip is wedged: Prometheus fires the alert, Alertmanager delivers it to the webhook
                Waits.until("the webhook receives NpuChipWedged for node-0 chip 4:0", Duration.ofSeconds(150),
                        () -> wedgeNotification(am) != null || !scenario.alive(),
                        () -> "notifications: " + am.notifications() + "\nscenario:\n" + scenario.output());
                assertTrue(scenario.process().waitFor(420, TimeUnit.SECONDS), "scenario still running after 420 s:\n"
                        + scenario.output());
                to = Instant.now();
                String text = Files.readString(out);
                System.out.println(text);
                String timeline = stateTimeline(prom, from, to);
                System.out.println("upgrade states seen by Prometheus (wall-clock seconds after the start):\n"
                        + timeline);
                assertEquals(0, scenario.process().exitValue(), text + "\nupgrade states:\n" + timeline);
            }
            JsonNode notification = wedgeNotification(am);
            assertTrue(notification != null, "no NpuChipWedged notification; received " + am.notifications()
                    + "\nAlertmanager log:\n" + am.log() + "\nPrometheus log:\n" + prom.log());
            JsonNode alert = notification.path("alerts").path(0);
            assertEquals("critical", alert.path("labels").path("severity").asString(), notification.toString());
            assertEquals("npu-lifecycle-node-agent", alert.path("labels").path("job").asString());
            assertTrue(alert.path("annotations").path("description").asString()
                    .contains("kubectl annotate node node-0 npu.openfuyao.com/approve-reboot=true"), alert.toString());

            List<String> wrong = wrongSeries(prom, from, to);
            dashboardQueriesWithoutData(prom, from, to).forEach(q -> wrong.add("dashboard query without data: " + q));
            assertEquals(List.of(), wrong, "over the run " + from + " to " + to);
            System.out.printf("PrometheusIT: %s API server, %.1f s, %d notifications, Prometheus %s%n", api,
                    (System.nanoTime() - started) / 1e9, am.notifications().size(), prom.url());
        }
    }

    /** @return each change of the nodes per upgrade state (not done) during the run, one line each */
    static String stateTimeline(PrometheusServer prom, Instant from, Instant to) throws Exception {
        java.util.TreeMap<Long, java.util.TreeMap<String, String>> at = new java.util.TreeMap<>();
        for (JsonNode series : prom.queryRange("max by (state) (npu_lifecycle_nodes{state!=\"done\"}) > 0", from, to,
                1)) {
            String state = series.path("metric").path("state").asString();
            for (JsonNode v : series.path("values")) {
                at.computeIfAbsent(v.path(0).asLong() - from.getEpochSecond(), k -> new java.util.TreeMap<>())
                        .put(state, v.path(1).asString());
            }
        }
        StringBuilder b = new StringBuilder();
        String last = "";
        for (var e : at.entrySet()) {
            String now = e.getValue().toString();
            if (!now.equals(last)) {
                b.append("  +").append(e.getKey()).append(" s ").append(now).append('\n');
                last = now;
            }
        }
        return b.toString();
    }

    /** @return the first firing notification of NpuChipWedged for node-0's chip 4:0, or null */
    static JsonNode wedgeNotification(AlertmanagerServer am) {
        for (JsonNode n : am.notifications()) {
            for (JsonNode a : n.path("alerts")) {
                JsonNode l = a.path("labels");
                if ("firing".equals(a.path("status").asString()) && "NpuChipWedged".equals(l.path("alertname").asString())
                        && "node-0".equals(l.path("node").asString()) && "4".equals(l.path("npu").asString())
                        && "0".equals(l.path("chip").asString())) {
                    return n;
                }
            }
        }
        return null;
    }

    /** @return every expectation on the run's series that did not hold */
    private static List<String> wrongSeries(PrometheusServer prom, Instant from, Instant to) throws Exception {
        List<String> wrong = new ArrayList<>();
        expect(wrong, prom, from, to, "count(up{job=\"npu-lifecycle-node-agent\"} == 1)", 2);
        expect(wrong, prom, from, to, "count(up{job=\"npu-lifecycle-control-plane\"} == 1)", 1);
        expect(wrong, prom, from, to, "sum(npu_lifecycle_leader)", 1);
        // the wedge: strikes up to 3, then wedged; healthy again after the recovery reboot
        expect(wrong, prom, from, to,
                "npu_lifecycle_chip_health{node=\"node-0\",npu=\"4\",chip=\"0\",state=\"wedged\"}", 1);
        expect(wrong, prom, from, to, "npu_lifecycle_chip_consecutive_failures{node=\"node-0\",npu=\"4\",chip=\"0\"}", 3);
        expect(wrong, prom, from, to, "npu_lifecycle_wedges_total{node=\"node-0\"}", 1);
        expect(wrong, prom, from, to, "npu_lifecycle_approval_waiting{node=\"node-0\"}", 1);
        expect(wrong, prom, from, to, "npu_lifecycle_reboot_required{node=\"node-0\",reason=\"recovery\"}", 1);
        expect(wrong, prom, from, to, "sum(npu_lifecycle_reboots_total{node=\"node-0\",reason=\"recovery\"})", 1);
        expectLast(wrong, prom, from, to,
                "npu_lifecycle_chip_health{node=\"node-0\",npu=\"4\",chip=\"0\",state=\"healthy\"}", 1);
        // a chip answering "occupied" on node-0 before the wedge: probe errors, never a strike; node-1 never struck
        expect(wrong, prom, from, to, "sum(npu_lifecycle_probe_errors_total{node=\"node-0\",kind=\"npu-smi\"})", 1);
        expect(wrong, prom, from, to, "npu_lifecycle_chip_health{node=\"node-0\",npu=\"2\",chip=\"0\",state=\"probe-error\"}", 1);
        expectLast(wrong, prom, from, to, "max(npu_lifecycle_chip_consecutive_failures{node=\"node-1\"})", 0);
        // the manual upgrade: both nodes in flight at some point, both done at the end, one upgrade reboot each
        expect(wrong, prom, from, to, "max(npu_lifecycle_rollout_info{target=\"25.5.0\"})", 1);
        expect(wrong, prom, from, to, "sum(max by (state) (npu_lifecycle_nodes{state!=\"done\"}))", 1);
        expectLast(wrong, prom, from, to, "max(npu_lifecycle_nodes{state=\"done\"})", 2);
        expectLast(wrong, prom, from, to, "max(npu_lifecycle_nodes{state=\"upgrade-failed\"})", 0);
        expect(wrong, prom, from, to, "count(npu_lifecycle_driver_info{loaded=\"25.5.0\",desired=\"25.5.0\"})", 2);
        expect(wrong, prom, from, to, "count(sum by (node) (npu_lifecycle_reboots_total{reason=\"upgrade\"}))", 2);
        expect(wrong, prom, from, to, "sum(npu_lifecycle_upgrade_state_duration_seconds_count)", 2);
        // the alert as Prometheus saw it; no other alert fired (pending ones are fine: an agent restarting for its
        // reboot is unscraped for seconds, not the 5 minutes of NpuNodeAgentDown)
        expect(wrong, prom, from, to, "ALERTS{alertname=\"NpuChipWedged\",alertstate=\"firing\",node=\"node-0\"}", 1);
        String others = "ALERTS{alertstate=\"firing\",alertname!=\"NpuChipWedged\"}";
        if (!Double.isNaN(prom.maxOver("count(" + others + ")", from, to))) {
            wrong.add("other alerts fired: " + prom.queryRange(others, from, to, 5));
        }
        return wrong;
    }

    /** Expects the largest value of the expression during the run to be at least {@code atLeast}. */
    private static void expect(List<String> wrong, PrometheusServer prom, Instant from, Instant to, String expr,
            double atLeast) throws Exception {
        double max = prom.maxOver(expr, from, to);
        if (Double.isNaN(max) || max < atLeast) {
            wrong.add(expr + ": max over the run " + max + ", expected at least " + atLeast);
        }
    }

    /** Expects the last value of the expression's only series during the run to equal {@code value}. */
    private static void expectLast(List<String> wrong, PrometheusServer prom, Instant from, Instant to, String expr,
            double value) throws Exception {
        JsonNode result = prom.queryRange(expr, from, to, 1);
        if (result.size() != 1) {
            wrong.add(expr + ": " + result.size() + " series, expected 1: " + result);
            return;
        }
        JsonNode values = result.path(0).path("values");
        double last = Double.parseDouble(values.path(values.size() - 1).path(1).asString());
        if (last != value) {
            wrong.add(expr + ": last value " + last + ", expected " + value);
        }
    }

    /** @return every dashboard query (panel: expr) that returned no series over the run, as Grafana would send it */
    private static List<String> dashboardQueriesWithoutData(PrometheusServer prom, Instant from, Instant to)
            throws Exception {
        JsonNode dashboard = PrometheusServer.JSON.readTree(
                Files.readString(monitoringDir().resolve("grafana-dashboard.json")));
        String range = Math.max(60, Duration.between(from, to).toSeconds()) + "s";
        List<String> empty = new ArrayList<>();
        int queries = 0;
        for (JsonNode[] q : panelQueries(dashboard.path("panels"), new ArrayList<>())) {
            queries++;
            String expr = q[1].path("expr").asString().replace("${node}", "node-0").replace("$node", "node-0")
                    .replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", range);
            if (prom.queryRange(expr, from, to, 2).isEmpty()) {
                empty.add(q[0].path("title").asString() + ": " + expr);
            }
        }
        assertTrue(queries > 10, "dashboard queries: " + queries);
        return empty;
    }

    private static List<JsonNode[]> panelQueries(JsonNode panels, List<JsonNode[]> out) {
        for (JsonNode panel : panels) {
            for (JsonNode target : panel.path("targets")) {
                out.add(new JsonNode[] {panel, target});
            }
            panelQueries(panel.path("panels"), out);
        }
        return out;
    }
}
