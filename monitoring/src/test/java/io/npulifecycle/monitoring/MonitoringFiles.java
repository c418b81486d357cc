package io.npulifecycle.monitoring;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/** The files of config/monitoring and how the tests of this module read them. */
final class MonitoringFiles {

    /** The repository root: system property {@code npu.repo.root} (set by the pom), else the parent folder. */
    static final Path ROOT = Path.of(System.getProperty("npu.repo.root", "..")).toAbsolutePath().normalize();
    static final Path DIR = ROOT.resolve("config/monitoring");
    /** The PrometheusRule: the source of the rules (the chart renders its spec when prometheusRule.enabled). */
    static final Path OPERATOR_RULES = ROOT.resolve("charts/npu-lifecycle/files/alerts.yaml");
    /** The same groups as a plain Prometheus rules file, generated from {@link #OPERATOR_RULES}. */
    static final Path PLAIN_RULES = DIR.resolve("npu-lifecycle.rules.yaml");
    /** promtool unit tests of every alert. */
    static final Path RULE_TESTS = DIR.resolve("tests/alerts-test.yaml");
    static final Path DASHBOARD = DIR.resolve("grafana-dashboard.json");
    /** The metric contract: every metric with its type, labels and unit. */
    static final Path METRICS_DOC = ROOT.resolve("docs/metrics.md");

    static final String PLAIN_HEADER = """
            # Alert rules of npu-lifecycle as a plain Prometheus rules file (`rule_files:` in prometheus.yml).
            # GENERATED from alerts.yaml (the PrometheusRule's spec): edit that file, then
            # `mvn -pl monitoring test -Dmonitoring.regenerate=true`; MonitoringRulesTest fails while the two differ.
            """;

    private static final ObjectMapper YAML = YAMLMapper.builder().build();
    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private MonitoringFiles() {
    }

    /**
     * The plain rules file for a PrometheusRule: {@link #PLAIN_HEADER}, then the lines of its top-level {@code spec:}
     * block, two spaces less indented (comments and formatting kept).
     *
     * @param prometheusRule the text of a PrometheusRule whose {@code spec:} is the last top-level key
     * @return the text of the plain rules file
     * @throws IllegalArgumentException if there is no top-level {@code spec:} line or a key follows it
     */
    static String plainRulesFrom(String prometheusRule) {
        List<String> lines = prometheusRule.lines().toList();
        int spec = lines.indexOf("spec:");
        if (spec < 0) {
            throw new IllegalArgumentException(OPERATOR_RULES + ": no top-level 'spec:' line");
        }
        StringBuilder out = new StringBuilder(PLAIN_HEADER);
        for (String line : lines.subList(spec + 1, lines.size())) {
            if (!line.isEmpty() && !line.startsWith("  ")) {
                throw new IllegalArgumentException(OPERATOR_RULES + ": '" + line
                        + "' after spec: expected spec to be the last top-level key");
            }
            out.append(line.isEmpty() ? "" : line.substring(2)).append('\n');
        }
        return out.toString();
    }

    /** @return the YAML file parsed as a tree */
    static JsonNode yaml(Path file) throws IOException {
        return YAML.readTree(Files.readString(file));
    }

    /** @return the JSON file parsed as a tree */
    static JsonNode json(Path file) throws IOException {
        return JSON.readTree(Files.readString(file));
    }

    /** @return alert name to its rule, in file order, from the plain rules file's tree */
    static Map<String, JsonNode> alerts(JsonNode rulesFile) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (JsonNode group : rulesFile.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                if (rule.has("alert")) {
                    out.put(rule.path("alert").asString(), rule);
                }
            }
        }
        return out;
    }

    /** One query of a dashboard panel. */
    record PanelQuery(String panel, String refId, String expr) {
    }

    /** @return every target expression of every panel (rows' nested panels included), in file order */
    static List<PanelQuery> panelQueries(JsonNode dashboard) {
        List<PanelQuery> out = new ArrayList<>();
        collect(dashboard.path("panels"), out);
        return out;
    }

    private static void collect(JsonNode panels, List<PanelQuery> out) {
        for (JsonNode panel : panels) {
            for (JsonNode target : panel.path("targets")) {
                out.add(new PanelQuery(panel.path("title").asString(), target.path("refId").asString(),
                        target.path("expr").asString()));
            }
            collect(panel.path("panels"), out);
        }
    }

    /**
     * Replaces Grafana's variables in a query as Grafana would for one node and time range.
     *
     * @param expr a panel query
     * @param node the value of the dashboard's {@code node} variable
     * @param range the dashboard's time range as a PromQL duration ({@code $__range})
     * @return the PromQL that Grafana sends
     */
    static String substitute(String expr, String node, String range) {
        return expr.replace("${node}", node).replace("$node", node)
                .replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", range);
    }
}
