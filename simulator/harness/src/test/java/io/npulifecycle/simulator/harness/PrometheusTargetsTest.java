package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file_sd files of a simulated cluster and the demo's Prometheus configuration. */
class PrometheusTargetsTest {

    @TempDir
    Path work;

    @Test
    void oneTargetGroupPerRuntimeWithItsNodeOrPodLabel() throws Exception {
        Path dir = PrometheusTargets.folder(work);
        PrometheusTargets.write(dir, Map.of("node-1", 4002, "node-0", 4001),
                Map.of("npu-lifecycle-control-plane-0", 4100));
        JSONArray agents = (JSONArray) new JSONParser().parse(Files.readString(dir.resolve("node-agent.json")));
        assertEquals(2, agents.size());
        JSONObject first = (JSONObject) agents.get(0);
        assertEquals(java.util.List.of("127.0.0.1:4001"), first.get("targets"));
        assertEquals("node-0", ((JSONObject) first.get("labels")).get("node"));
        JSONArray cp = (JSONArray) new JSONParser().parse(Files.readString(dir.resolve("control-plane.json")));
        assertEquals("npu-lifecycle-control-plane-0", ((JSONObject) ((JSONObject) cp.get(0)).get("labels")).get("pod"));
        assertFalse(Files.exists(dir.resolve("node-agent.json.tmp")), "no temporary file left");
    }

    @Test
    void theDemosPrometheusScrapesBothJobsAndLoadsTheRules() {
        Path dir = PrometheusTargets.folder(work);
        String config = DemoPrometheus.config(dir, Path.of("/opt/npu/conf/monitoring/npu-lifecycle.rules.yaml"));
        assertTrue(config.contains("job_name: npu-lifecycle-node-agent"), config);
        assertTrue(config.contains("job_name: npu-lifecycle-control-plane"), config);
        assertTrue(config.contains("- '" + dir.resolve("node-agent.json") + "'")
                || config.contains("files: ['" + dir.resolve("node-agent.json") + "']"), config);
        assertTrue(config.contains("rule_files:\n  - '/opt/npu/conf/monitoring/npu-lifecycle.rules.yaml'"), config);
        assertFalse(DemoPrometheus.config(dir, null).contains("rule_files"));
    }
}
