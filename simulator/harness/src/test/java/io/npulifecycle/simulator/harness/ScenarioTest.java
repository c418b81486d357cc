package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class ScenarioTest {

    static final String EXAMPLE = String.join("\n",
            "name: wedge then recover before reboot",
            "cluster: {nodes: 2, chips: 8, chipType: 910b, driverVersion: 25.2.0}",
            "policy: {autoUpgrade: false, autoRecover: false}",
            "timeScale: 100",
            "steps:",
            "  - at: 0s",
            "    wedge: {node: node-0, npu: 4, chip: 0}",
            "  - at: 200s",
            "    expect: {node: node-0, labels: {npu.openfuyao.com/reboot-required: \"true\"},",
            "             events: [{reason: RebootRequired, messageContains: \"reason=recovery\"}]}",
            "  - at: 220s",
            "    recover: {node: node-0, npu: 4, chip: 0}",
            "  - at: 300s",
            "    expect: {node: node-0, labels: {npu.openfuyao.com/reboot-required: null}, reboots: 0, within: 1m}",
            "");

    @Test
    void theIssueExampleParses() throws Exception {
        Scenario s = Scenario.parse("example.yaml", EXAMPLE);
        assertEquals("wedge then recover before reboot", s.name);
        assertEquals(2, s.nodes);
        assertEquals(100.0, s.timeScale);
        assertEquals(4, s.steps.size());
        assertEquals(Map.of("upgradePolicy", Map.of("autoUpgrade", false), "recoveryPolicy",
                Map.of("autoRecover", false)), s.policy);
        Scenario.Step last = s.steps.get(3);
        assertEquals("expect", last.kind());
        assertEquals(Duration.ofSeconds(300), last.at());
        assertEquals(Duration.ofMinutes(1), last.within());
        assertEquals(13, last.line(), "the line of the step's \"- at:\"");
        @SuppressWarnings("unchecked")
        Map<String, String> labels = (Map<String, String>) last.args().get("labels");
        assertTrue(labels.containsKey("npu.openfuyao.com/reboot-required"));
        assertNull(labels.get("npu.openfuyao.com/reboot-required"), "null means absent");
        assertEquals(List.of(Map.of("reason", "RebootRequired", "messageContains", "reason=recovery")),
                s.steps.get(1).args().get("events"));
    }

    static String rejected(String yaml) {
        return assertThrows(YamlTree.Invalid.class, () -> Scenario.parse("bad.yaml", yaml)).getMessage();
    }

    @Test
    void malformedFilesAreRejectedWithTheLine() {
        assertTrue(rejected("name: x\nsteps:\n  - at: 0s\n    wedge: {node: node-0, npu: 4, chip: 0\n")
                .contains("not valid YAML"));
        String unknown = rejected("name: x\nsteps:\n  - at: 0s\n    wedge: {node: node-0, npu: 4, chip: 0}\n"
                + "    frobnicate: {}\n");
        assertTrue(unknown.startsWith("line 5:") && unknown.contains("unknown key 'frobnicate'"), unknown);
        String top = rejected("name: x\nclusterz: {}\nsteps: []\n");
        assertTrue(top.startsWith("line 2:") && top.contains("clusterz"), top);
        String dur = rejected("steps:\n  - at: soon\n    approve: {node: node-0}\n");
        assertTrue(dur.startsWith("line 2:") && dur.contains("not a duration"), dur);
        String node = rejected("cluster: {nodes: 2}\nsteps:\n  - at: 0s\n    approve: {node: node-7}\n");
        assertTrue(node.startsWith("line 4:") && node.contains("node-7"), node);
        String chip = rejected("steps:\n  - at: 0s\n    wedge: {node: node-0, npu: 9, chip: 0}\n");
        assertTrue(chip.contains("npu 9 is outside 0..7"), chip);
        String state = rejected("steps:\n  - at: 0s\n    setChip: {node: node-0, npu: 1, chip: 0, state: melted}\n");
        assertTrue(state.startsWith("line 3:") && state.contains("melted"), state);
        String two = rejected("steps:\n  - at: 0s\n    approve: {node: node-0}\n    killAgent: {node: node-0}\n");
        assertTrue(two.contains("exactly one action"), two);
        String marker = rejected("steps:\n  - at: 0s\n    expect: {markers: {reboot-required: maybe}}\n");
        assertTrue(marker.contains("recovery, upgrade or null"), marker);
        assertTrue(rejected("").contains("empty"));
        assertTrue(rejected("name: x\n").contains("no steps"));
        assertTrue(rejected("cluster: {chipType: 310p, chips: 3}\nsteps: []\n").contains("even"));
        String version = rejected("steps:\n  - at: 0s\n    setVersion: {version: latest}\n");
        assertTrue(version.contains("not a driver version"), version);
        String maybe = rejected("policy: {autoRecover: maybe}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertTrue(maybe.startsWith("line 1:") && maybe.contains("policy.autoRecover must be true or false"), maybe);
        String lots = rejected("steps:\n  - at: 0s\n    setPolicy: {maxReboots: lots}\n");
        assertTrue(lots.startsWith("line 3:") && lots.contains("maxReboots"), lots);
        String pct = rejected("policy: {maxUnavailable: half}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertTrue(pct.contains("percentage"), pct);
        String win = rejected("policy: {recoveryPolicy: {window: forever}}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertTrue(win.contains("not a duration"), win);
        assertTrue(rejected("name: x\nsteps: []\n").contains("at least one step"));
        String dup = rejected("name: a\nname: b\nsteps: []\n");
        assertTrue(dup.contains("twice") || dup.contains("not valid YAML"), dup);
    }

    @Test
    void everyScenarioOfTheCiSuiteIsValid() throws Exception {
        java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("npu.scenarios.dir", "../../itests/scenarios"));
        List<java.nio.file.Path> files;
        try (var s = java.nio.file.Files.list(dir)) {
            files = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
        assertTrue(files.size() >= 8, "the CI scenario suite is in " + dir);
        for (java.nio.file.Path f : files) {
            Scenario sc = Scenario.parse(f.toString(), java.nio.file.Files.readString(f));
            assertTrue(sc.steps.size() >= 2, f.toString());
        }
    }

    @Test
    void statusPathsSelectListElements() {
        Map<String, Object> status = Map.of("nodeCounts", Map.of("upgraded", 3), "conditions",
                List.of(Map.of("type", "Complete", "status", "True"), Map.of("type", "Degraded", "status", "False")));
        assertEquals(3, ScenarioRunner.path(status, "nodeCounts.upgraded"));
        assertEquals("True", ScenarioRunner.path(status, "conditions[type=Complete].status"));
        assertEquals("False", ScenarioRunner.path(status, "conditions[1].status"));
        assertNull(ScenarioRunner.path(status, "conditions[type=Nope].status"));
    }

    @Test
    void driverPodVersionComesFromTheImageTag() {
        assertEquals("25.5.0", DaemonSetController.versionOf(
                "127.0.0.1:5000/mlops/ascend-driver:25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3"));
        assertEquals("24.1.0.3", DaemonSetController.versionOf("r/mlops/ascend-driver:24.1.0.3-310p-k-os"));
    }

    static final String CASES = String.join("\n",
            "name: reliability",
            "build: long",
            "cluster: {nodes: 2, chips: 2, controlPlanes: 2}",
            "cases:",
            "  - id: strike-1",
            "    category: agent killed",
            "    name: killed after strike 1",
            "    outcome: one reboot",
            "    steps:",
            "      - at: 0s",
            "        killAgent: {node: node-0, when: {node: node-0, mbean: {name: \"io.npulifecycle:type=Chip,npu=1,chip=0\",",
            "                    attribute: ConsecutiveFailures, atLeast: 1}, within: 600s}}",
            "      - at: 0s",
            "        clockJump: {node: control-plane, by: -1h}",
            "      - at: 0s",
            "        killControlPlane: {replica: leader, restart: false}",
            "      - at: 0s",
            "        apiUnreachable: {duration: 60s}",
            "      - at: 0s",
            "        markersFull: {node: node-1, on: true}",
            "      - at: 0s",
            "        expect: {node: node-0, reboots: 1, violations: 0, holdFor: 600s, within: 60s}",
            "");

    @Test
    void reliabilityCasesParse() throws Exception {
        Scenario s = Scenario.parse("cases.yaml", CASES);
        assertEquals("long", s.build);
        assertEquals(2, s.controlPlanes);
        assertEquals(1, s.cases.size());
        Scenario.Case c = s.cases.get(0);
        assertEquals("agent killed", c.category());
        assertEquals(6, c.steps().size());
        Scenario.Step kill = c.steps().get(0);
        Scenario.Step when = (Scenario.Step) kill.args().get("when");
        assertEquals(Duration.ofSeconds(600), when.within());
        assertEquals(Map.of("name", "io.npulifecycle:type=Chip,npu=1,chip=0", "attribute", "ConsecutiveFailures",
                "atLeast", 1), when.args().get("mbean"));
        assertEquals(Duration.ofHours(-1), c.steps().get(1).args().get("by"));
        assertEquals("control-plane", c.steps().get(1).args().get("node"));
        assertEquals(false, c.steps().get(2).args().get("restart"));
        assertEquals(Duration.ofSeconds(600), c.steps().get(5).args().get("holdFor"));
        assertTrue(s.uses("markersFull"));
    }

    @Test
    void malformedReliabilityCasesAreRejectedWithTheLine() {
        assertTrue(rejected(CASES.replace("category: agent killed", "category: gremlins"))
                .contains("is not one of"));
        assertTrue(rejected(CASES.replace("within: 600s}}", "}}")).contains("when needs 'within'"));
        assertTrue(rejected(CASES.replace("replica: leader", "replica: 7")).contains("replica '7'"));
        assertTrue(rejected(CASES.replace("controlPlanes: 2", "controlPlanes: 1").replace("leader", "1"))
                .contains("replica '1'"));
        assertTrue(rejected(CASES.replace("on: true", "on: maybe")).contains("on must be true or false"));
        assertTrue(rejected(CASES.replace("by: -1h", "by: soon")).contains("is not a duration"));
        assertTrue(rejected(CASES.replace("atLeast: 1", "atLeast: 1, equals: x")).contains("exactly one of"));
        assertTrue(rejected(CASES.replace("apiUnreachable: {duration: 60s}", "apiUnreachable: {duration: 60s, how: rst}"))
                .contains("unknown key 'how'"));
        assertTrue(rejected(CASES.replace("name: killed after strike 1", "name: a | b")).contains("'|'"));
        assertTrue(rejected(CASES.replace("build: long", "build: sometimes")).contains("build must be"));
    }
}
