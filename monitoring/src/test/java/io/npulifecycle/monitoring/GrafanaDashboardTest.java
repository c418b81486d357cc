package io.npulifecycle.monitoring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;

/**
 * config/monitoring/grafana-dashboard.json: a fleet overview and a node drill-down on a templated {@code node}
 * variable, every panel on the {@code datasource} variable with at least one query. That the queries are valid PromQL
 * is {@link PromtoolTest}'s; that they return data on a real run is itests' PrometheusIT.
 */
class GrafanaDashboardTest {

    @Test
    void theDashboardHasTheFleetOverviewAndTheNodeDrillDown() throws Exception {
        JsonNode d = MonitoringFiles.json(MonitoringFiles.DASHBOARD);
        assertEquals("npu-lifecycle", d.path("uid").asString());
        List<String> titles = new ArrayList<>();
        d.path("panels").forEach(p -> titles.add(p.path("title").asString()));
        for (String t : List.of("Fleet overview", "Nodes by upgrade state", "Rollout progress", "Chips by health",
                "Reboots over time", "Time per upgrade state (p90)", "Node $node", "Chips on $node")) {
            assertTrue(titles.contains(t), "no panel '" + t + "' in " + titles);
        }
    }

    @Test
    void theNodeVariableListsTheNodesThatReportChips() throws Exception {
        JsonNode vars = MonitoringFiles.json(MonitoringFiles.DASHBOARD).path("templating").path("list");
        JsonNode node = null;
        JsonNode datasource = null;
        for (JsonNode v : vars) {
            if (v.path("name").asString().equals("node")) {
                node = v;
            } else if (v.path("name").asString().equals("datasource")) {
                datasource = v;
            }
        }
        assertTrue(datasource != null && datasource.path("query").asString().equals("prometheus"), vars.toString());
        assertTrue(node != null, "no variable 'node': " + vars);
        assertEquals("query", node.path("type").asString());
        assertEquals("label_values(npu_lifecycle_chip_health, node)", node.path("query").path("query").asString());
    }

    @Test
    void everyPanelQueriesTheDatasourceVariableAndIdsAreUnique() throws Exception {
        JsonNode d = MonitoringFiles.json(MonitoringFiles.DASHBOARD);
        Set<Integer> ids = new HashSet<>();
        List<String> problems = new ArrayList<>();
        for (JsonNode p : d.path("panels")) {
            String title = p.path("title").asString();
            if (!ids.add(p.path("id").asInt())) {
                problems.add(title + ": id " + p.path("id").asInt() + " used twice");
            }
            if (p.path("type").asString().equals("row")) {
                continue;
            }
            if (!p.path("datasource").path("uid").asString().equals("${datasource}")) {
                problems.add(title + ": datasource is not ${datasource}");
            }
            if (p.path("targets").isEmpty()) {
                problems.add(title + ": no query");
            }
            Set<String> refIds = new HashSet<>();
            for (JsonNode t : p.path("targets")) {
                if (!refIds.add(t.path("refId").asString()) || t.path("expr").asString().isBlank()) {
                    problems.add(title + ": refId " + t.path("refId") + " repeated or without expr");
                }
            }
            boolean drillDown = p.path("gridPos").path("y").asInt() > rowY(d, "Node $node");
            if (drillDown && p.path("targets").valueStream().anyMatch(t -> !t.path("expr").asString()
                    .contains("node=\"$node\""))) {
                problems.add(title + ": a drill-down query without node=\"$node\"");
            }
        }
        assertEquals(List.of(), problems);
        assertFalse(MonitoringFiles.panelQueries(d).isEmpty());
    }

    private static int rowY(JsonNode d, String title) {
        for (JsonNode p : d.path("panels")) {
            if (p.path("type").asString().equals("row") && p.path("title").asString().equals(title)) {
                return p.path("gridPos").path("y").asInt();
            }
        }
        throw new AssertionError("no row '" + title + "'");
    }
}
