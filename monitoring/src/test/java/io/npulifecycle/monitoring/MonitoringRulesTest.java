package io.npulifecycle.monitoring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;

/**
 * The alert rules of config/monitoring: the plain rules file is the PrometheusRule's spec, the alerts the operator
 * needs are there, each says what to run, and each has a promtool unit test that fires it and one that must not.
 */
class MonitoringRulesTest {

    /** The alerts every installation needs (issue's list); more may follow. */
    static final Set<String> REQUIRED = Set.of("NpuChipWedged", "NpuNodeRecoveryBlocked", "NpuRebootApprovalPending",
            "NpuNodeUpgradeFailed", "NpuRolloutStalled", "NpuDrainBlocked", "NpuProbeDegraded", "NpuNodeAgentDown",
            "NpuControlPlaneNoLeader");

    @Test
    void thePlainRulesFileIsThePrometheusRulesSpec() throws Exception {
        String expected = MonitoringFiles.plainRulesFrom(Files.readString(MonitoringFiles.OPERATOR_RULES));
        if (Boolean.getBoolean("monitoring.regenerate")) {
            Files.writeString(MonitoringFiles.PLAIN_RULES, expected);
            System.out.println("rewrote " + MonitoringFiles.PLAIN_RULES);
        }
        assertEquals(expected, Files.readString(MonitoringFiles.PLAIN_RULES), MonitoringFiles.PLAIN_RULES
                + " differs from the spec of " + MonitoringFiles.OPERATOR_RULES
                + ": edit alerts.yaml, then run `mvn -pl monitoring test -Dmonitoring.regenerate=true`");
        // and both parse to the same groups
        JsonNode rule = MonitoringFiles.yaml(MonitoringFiles.OPERATOR_RULES);
        assertEquals(rule.path("spec"), MonitoringFiles.yaml(MonitoringFiles.PLAIN_RULES));
    }

    @Test
    void thePrometheusRuleIsForTheOperatorsNamespace() throws Exception {
        JsonNode rule = MonitoringFiles.yaml(MonitoringFiles.OPERATOR_RULES);
        assertEquals("monitoring.coreos.com/v1", rule.path("apiVersion").asString());
        assertEquals("PrometheusRule", rule.path("kind").asString());
        assertEquals("npu-operator", rule.path("metadata").path("namespace").asString());
        assertEquals("npu-lifecycle", rule.path("metadata").path("labels").path("app.kubernetes.io/part-of").asString());
    }

    @Test
    void everyRequiredAlertIsThereAndTellsTheOperatorWhatToRun() throws Exception {
        Map<String, JsonNode> alerts = MonitoringFiles.alerts(MonitoringFiles.yaml(MonitoringFiles.PLAIN_RULES));
        assertTrue(alerts.keySet().containsAll(REQUIRED), "missing alerts: "
                + REQUIRED.stream().filter(a -> !alerts.containsKey(a)).sorted().toList());
        List<String> problems = new ArrayList<>();
        alerts.forEach((name, rule) -> {
            String severity = rule.path("labels").path("severity").asString();
            if (!Set.of("critical", "warning").contains(severity)) {
                problems.add(name + ": severity '" + severity + "', expected critical or warning");
            }
            JsonNode ann = rule.path("annotations");
            if (ann.path("summary").asString().isBlank()) {
                problems.add(name + ": no summary");
            }
            String description = ann.path("description").asString();
            if (!description.contains("`kubectl ") && !description.contains("`curl ")) {
                problems.add(name + ": the description names no `kubectl ...` or `curl ...` (Jolokia) command");
            }
        });
        assertEquals(List.of(), problems);
    }

    @Test
    void everyAlertHasAUnitTestThatFiresItAndOneThatMustNot() throws Exception {
        Set<String> alerts = MonitoringFiles.alerts(MonitoringFiles.yaml(MonitoringFiles.PLAIN_RULES)).keySet();
        JsonNode tests = MonitoringFiles.yaml(MonitoringFiles.RULE_TESTS);
        assertEquals("../npu-lifecycle.rules.yaml", tests.path("rule_files").path(0).asString());
        Set<String> fired = new TreeSet<>();
        Set<String> quiet = new TreeSet<>();
        for (JsonNode test : tests.path("tests")) {
            for (JsonNode c : test.path("alert_rule_test")) {
                (c.path("exp_alerts").isEmpty() ? quiet : fired).add(c.path("alertname").asString());
            }
        }
        assertEquals(new TreeSet<>(alerts), fired, "alerts with a case where they fire");
        assertEquals(new TreeSet<>(alerts), quiet, "alerts with a case where they must not fire");
    }

    @Test
    void everyMetricTheRulesAndTheDashboardQueryIsDocumented() throws Exception {
        String doc = Files.readString(MonitoringFiles.METRICS_DOC);
        Set<String> used = new TreeSet<>();
        MonitoringFiles.alerts(MonitoringFiles.yaml(MonitoringFiles.PLAIN_RULES)).values()
                .forEach(r -> used.addAll(metricNames(r.path("expr").asString())));
        MonitoringFiles.panelQueries(MonitoringFiles.json(MonitoringFiles.DASHBOARD))
                .forEach(q -> used.addAll(metricNames(q.expr())));
        assertTrue(used.size() > 15, "metrics found: " + used);
        List<String> undocumented = used.stream().filter(m -> !doc.contains("`" + m + "`")
                && !doc.contains("`" + m + "{")).toList();
        assertEquals(List.of(), undocumented, "metrics queried but not in " + MonitoringFiles.METRICS_DOC);
    }

    /** @return the npu_lifecycle_* metric names of a PromQL expression, histogram suffixes removed */
    static Set<String> metricNames(String expr) {
        Set<String> out = new TreeSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\bnpu_lifecycle_[a-z_]+").matcher(expr);
        while (m.find()) {
            out.add(m.group().replaceAll("_(bucket|sum|count)$", ""));
        }
        return out;
    }
}
