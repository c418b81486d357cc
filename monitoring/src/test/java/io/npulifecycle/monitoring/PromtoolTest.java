package io.npulifecycle.monitoring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real promtool on the shipped files: the rules load ({@code check rules}), every alert's unit test passes
 * ({@code test rules}), and every query of the Grafana dashboard is valid PromQL (checked as recording rules).
 */
class PromtoolTest {

    @TempDir
    Path tmp;

    @Test
    void theRulesFileLoads() throws Exception {
        Promtool.Result r = Promtool.run(MonitoringFiles.DIR, "check", "rules", MonitoringFiles.PLAIN_RULES.toString());
        assertEquals(0, r.exitCode(), r.output());
        int alerts = MonitoringFiles.alerts(MonitoringFiles.yaml(MonitoringFiles.PLAIN_RULES)).size();
        assertTrue(r.output().contains("SUCCESS: " + alerts + " rules found"), r.output());
    }

    @Test
    void everyAlertsUnitTestPasses() throws Exception {
        Path tests = MonitoringFiles.RULE_TESTS;
        Promtool.Result r = Promtool.run(tests.getParent(), "test", "rules", tests.getFileName().toString());
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("SUCCESS"), r.output());
    }

    @Test
    void everyDashboardQueryIsValidPromQl() throws Exception {
        List<MonitoringFiles.PanelQuery> queries = MonitoringFiles.panelQueries(
                MonitoringFiles.json(MonitoringFiles.DASHBOARD));
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        for (int i = 0; i < queries.size(); i++) {
            String expr = MonitoringFiles.substitute(queries.get(i).expr(), "node-0", "1h");
            rules.append("      - record: dashboard:query_").append(i).append('\n')
                    .append("        expr: '").append(expr.replace("'", "''")).append("'\n");
        }
        Path file = Files.writeString(tmp.resolve("dashboard.rules.yaml"), rules);
        Promtool.Result r = Promtool.run(tmp, "check", "rules", file.toString());
        assertEquals(0, r.exitCode(), "the dashboard's queries as rules:\n" + rules + "\n" + r.output());
    }
}
