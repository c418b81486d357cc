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
        Action.Expect expect = (Action.Expect) last.action();
        assertEquals(Duration.ofMinutes(1), expect.within());
        assertEquals(13, last.line(), "the line of the step's \"- at:\"");
        Map<String, String> labels = expect.labels();
        assertTrue(labels.containsKey("npu.openfuyao.com/reboot-required"));
        assertNull(labels.get("npu.openfuyao.com/reboot-required"), "null means absent");
        assertEquals(List.of(new Action.EventCheck("RebootRequired", "reason=recovery", null)),
                ((Action.Expect) s.steps.get(1).action()).events());
        assertEquals(new Action.Wedge("node-0", 4, 0), s.steps.get(0).action());
    }

    static String rejected(String yaml) {
        return assertThrows(YamlTree.Invalid.class, () -> Scenario.parse("bad.yaml", yaml)).getMessage();
    }

    @Test
    void malformedFilesAreRejectedWithTheLine() throws Exception {
        assertTrue(rejected("name: x\nsteps:\n  - at: 0s\n    wedge: {node: node-0, npu: 4, chip: 0\n")
                .contains("not valid YAML"));
        String unknown = rejected("name: x\nsteps:\n  - at: 0s\n    wedge: {node: node-0, npu: 4, chip: 0}\n"
                + "    frobnicate: {}\n");
        assertTrue(unknown.startsWith("line 5:") && unknown.contains("unknown key 'frobnicate'"), unknown);
        String top = rejected("name: x\nclusterz: {}\nsteps: []\n");
        assertTrue(top.startsWith("line 2:") && top.contains("clusterz"), top);
        String dur = rejected("steps:\n  - at: soon\n    approve: {node: node-0}\n");
        assertTrue(dur.startsWith("line 2:") && dur.contains("not a duration"), dur);
        // longer than the simulated clock can add up: refused before any cluster starts, not an overflow later
        String huge = rejected("steps:\n  - at: 9999999999999h\n    approve: {node: node-0}\n");
        assertTrue(huge.startsWith("line 2:") && huge.contains("at most 8760h"), huge);
        String within = rejected("steps:\n  - at: 0s\n    expect: {node: node-0, reboots: 0, within: 9999999999999h}\n");
        assertTrue(within.startsWith("line 3:") && within.contains("at most 8760h"), within);
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
        // the CRD's pattern: three parts at least
        String twoParts = rejected("steps:\n  - at: 0s\n    setVersion: {version: 25.5}\n");
        assertTrue(twoParts.contains("not a driver version"), twoParts);
        // the upgrade drain's policy, checked as the CRD schema checks it
        String onTimeout = rejected("steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {drain: {onTimeout: maybe}}}\n");
        assertTrue(onTimeout.startsWith("line 3:") && onTimeout.contains("onTimeout"), onTimeout);
        String timeout = rejected("steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {drain: {timeoutSeconds: 0}}}\n");
        assertTrue(timeout.contains("timeoutSeconds") && timeout.contains("1.."), timeout);
        String scope = rejected("steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {drain: {scope: gpu}}}\n");
        assertTrue(scope.contains("all or npu"), scope);
        String maybe = rejected("policy: {autoRecover: maybe}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertTrue(maybe.startsWith("line 1:") && maybe.contains("policy.autoRecover must be true or false"), maybe);
        String lots = rejected("steps:\n  - at: 0s\n    setPolicy: {maxReboots: lots}\n");
        assertTrue(lots.startsWith("line 3:") && lots.contains("maxReboots"), lots);
        String pct = rejected("policy: {maxUnavailable: half}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertTrue(pct.contains("percentage"), pct);
        String win = rejected("policy: {recoveryPolicy: {window: forever}}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertTrue(win.contains("is not a duration above zero"), win);
        // the CR's grammar, as the CRD and the reader have it: units in any order; zero and above a year refused
        Scenario anyOrder = Scenario.parse("s.yaml", "policy: {recoveryPolicy: {autoRecover: true, window: 30m1h}}\n"
                + "steps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertEquals(Map.of("autoRecover", true, "window", "30m1h"), anyOrder.policy.get("recoveryPolicy"));
        for (String w : List.of("0s", "8761h", "1.5h")) {
            assertTrue(rejected("policy: {recoveryPolicy: {window: " + w + "}}\nsteps:\n  - at: 0s\n    approve: "
                    + "{node: node-0}\n").contains("window"), w);
        }
        assertTrue(rejected("steps:\n  - at: 0s\n    setVersion: {version: " + "25.5.0." + "1".repeat(26) + "}\n")
                .contains("at most 32 characters"));
        String big = rejected("cluster: {chips: 4}\nsteps:\n  - at: 0s\n    pod: {node: node-0, name: big, npu: 8}\n");
        assertTrue(big.startsWith("line 4:") && big.contains("npu 8 is more than the node's 4 chips"), big);
        assertTrue(rejected("name: x\nsteps: []\n").contains("at least one step"));
        String dup = rejected("name: a\nname: b\nsteps: []\n");
        assertTrue(dup.contains("twice") || dup.contains("not valid YAML"), dup);
    }

    @Test
    void everyBadValueOfAScenarioIsReportedAtOnceWithItsPath() {
        YamlTree.Invalid e = assertThrows(YamlTree.Invalid.class, () -> Scenario.parse("bad.yaml", "steps:\n"
                + "  - at: 0s\n"
                + "    setPolicy:\n"
                + "      upgradePolicy:\n"
                + "        maxParallelUpgrades: -1\n"
                + "        drain: {scope: gpu, timeoutSeconds: 0, onTimeout: maybe}\n"
                + "        deadlines: {podRestartSeconds: 31536001}\n"
                + "      recoveryPolicy: {maxReboots: lots, window: forever}\n"
                + "  - at: 10s\n"
                + "    wedge: {node: node-0, npu: 9, chip: 0}\n"
                + "  - at: 20s\n"
                + "    wedge: {node: node-0, npu: 1, chip: 0, frobnicate: 1}\n"));
        List<String> all = e.all().stream().map(Throwable::getMessage).toList();
        for (String expected : new String[] {"setPolicy.upgradePolicy.maxParallelUpgrades -1 is outside 0..100000",
            "setPolicy.upgradePolicy.drain.scope 'gpu' is not all or npu",
            "setPolicy.upgradePolicy.drain.timeoutSeconds 0 is outside 1..31536000",
            "setPolicy.upgradePolicy.drain.onTimeout 'maybe' is not fail or reboot",
            "setPolicy.upgradePolicy.deadlines.podRestartSeconds 31536001 is outside 0..31536000",
            "setPolicy.recoveryPolicy.maxReboots must be a whole number, got lots",
            "setPolicy.recoveryPolicy.window 'forever'", "wedge.npu 9 is outside 0..7", "unknown key 'frobnicate'"}) {
            assertTrue(all.stream().anyMatch(m -> m.contains(expected)), expected + " in " + all);
        }
        assertEquals(9, all.size(), all.toString());
    }

    @Test
    void everyBadValueOfOneActionIsNamed() {
        YamlTree.Invalid e = assertThrows(YamlTree.Invalid.class, () -> Scenario.parse("bad.yaml", "steps:\n"
                + "  - at: 0s\n"
                + "    wedge: {node: node-9, npu: 99, chip: -1}\n"));
        List<String> all = e.all().stream().map(Throwable::getMessage).toList();
        assertEquals(3, all.size(), all.toString());
        assertTrue(all.get(0).contains("steps[0].wedge.node: no node 'node-9'"), all.toString());
        assertTrue(all.get(1).contains("steps[0].wedge.npu 99 is outside 0..7"), all.toString());
        assertTrue(all.get(2).contains("steps[0].wedge.chip -1 is outside 0..0"), all.toString());
        String keys = rejected("steps:\n  - at: 0s\n    expect: {node: node-0, annotations: {'no spaces': x, "
                + "ok/key: y, '-lead': z}}\n");
        assertTrue(keys.contains("expect.annotations 'no spaces', '-lead' are not Kubernetes annotation keys"), keys);
    }

    /**
     * {@code disableEviction} (docs/upgrade.md "Drain") goes through the policy shorthand into both drains'
     * {@code spec.driver} fields; a value that is not a boolean is rejected with its line.
     */
    @Test
    void disableEvictionIsPassedOnForBothDrainsAndTypeChecked() throws Exception {
        Scenario s = Scenario.parse("ok.yaml", "steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {drain: {force: true, "
                + "disableEviction: true}}, recoveryPolicy: {drain: {disableEviction: false}}}\n");
        Map<String, Object> driver = ((Action.SetPolicy) s.steps.get(0).action()).policy().driver();
        assertEquals(Map.of("drain", Map.of("force", true, "disableEviction", true)), driver.get("upgradePolicy"));
        assertEquals(Map.of("drain", Map.of("disableEviction", false)), driver.get("recoveryPolicy"));
        String bad = rejected("steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {drain: {disableEviction: maybe}}}\n");
        assertTrue(bad.startsWith("line 3:") && bad.contains("disableEviction must be true or false"), bad);
    }

    /**
     * {@code maintenanceWindow: null} removes the window (a null in the merge patch); an absent key leaves it; a
     * window that is not a mapping is rejected with its line.
     */
    @Test
    void aMaintenanceWindowIsSetAndRemovedThroughTheShorthand() throws Exception {
        Scenario s = Scenario.parse("ok.yaml", String.join("\n", "steps:",
                "  - at: 0s", "    setPolicy: {upgradePolicy: {maintenanceWindow: {startTime: \"01:00\", endTime: "
                        + "\"02:00\", timeZone: UTC}}}",
                "  - at: 1s", "    setPolicy: {upgradePolicy: {maintenanceWindow: null}, recoveryPolicy: "
                        + "{maintenanceWindow: null}}",
                "  - at: 2s", "    setPolicy: {upgradePolicy: {autoUpgrade: true}}", ""));
        Map<String, Object> set = ((Action.SetPolicy) s.steps.get(0).action()).policy().driver();
        assertEquals(Map.of("maintenanceWindow", Map.of("startTime", "01:00", "endTime", "02:00", "timeZone", "UTC")),
                set.get("upgradePolicy"));
        Map<String, Object> removed = ((Action.SetPolicy) s.steps.get(1).action()).policy().driver();
        Map<String, Object> nullWindow = new java.util.HashMap<>();
        nullWindow.put("maintenanceWindow", null);
        assertEquals(nullWindow, removed.get("upgradePolicy"));
        assertEquals(nullWindow, removed.get("recoveryPolicy"));
        Map<String, Object> untouched = ((Action.SetPolicy) s.steps.get(2).action()).policy().driver();
        assertEquals(Map.of("autoUpgrade", true), untouched.get("upgradePolicy"));
        // merged as the CR is patched: the window is gone, the rest stays
        Map<String, Object> cr = new java.util.LinkedHashMap<>();
        SimCluster.merge(cr, set);
        SimCluster.merge(cr, removed);
        SimCluster.merge(cr, untouched);
        assertEquals(Map.of("autoUpgrade", true), cr.get("upgradePolicy"));
        String bad = rejected("steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {maintenanceWindow: always}}\n");
        assertTrue(bad.startsWith("line 3:") && bad.contains("maintenanceWindow"), bad);
    }

    /** {@code createCr} and {@code restartApiServer} take no field and are refused by the mock with their line. */
    @Test
    void createCrAndRestartApiServerAreRealOnly() throws Exception {
        Scenario s = Scenario.parse("real-only.yaml", String.join("\n", "cluster: {nodes: 1}", "steps:",
                "  - at: 0s", "    deleteCr: {}",
                "  - at: 1s", "    expect: {npuOperatorCtl: absent, within: 600s}",
                "  - at: 1s", "    createCr: {}",
                "  - at: 2s", "    restartApiServer: {}", ""));
        assertTrue(s.steps.get(2).action() instanceof Action.CreateCr);
        assertTrue(s.steps.get(3).action() instanceof Action.RestartApiServer);
        java.util.List<String> why = ScenarioCommand.embeddedRefusals(s);
        assertEquals(3, why.size(), why.toString());
        assertTrue(why.get(1).startsWith("real-only.yaml:line 7: createCr needs --api real: it follows a deleteCr"),
                why.get(1));
        assertTrue(why.get(2).startsWith("real-only.yaml:line 9: restartApiServer needs --api real: the embedded "
                + "mock has no kube-apiserver"), why.get(2));
        assertTrue(RealNodeCluster.refusals(s).toString().contains("restartApiServer cannot run on the real node"),
                RealNodeCluster.refusals(s).toString());
        String head = "cluster: {nodes: 1}\nsteps:\n  - at: 0s\n    ";
        assertTrue(invalid(head + "createCr: {spec: x}\n").where().contains("steps[0].createCr"));
        assertTrue(invalid(head + "restartApiServer: {etcd: true}\n").where().contains("steps[0].restartApiServer"));
    }

    @Test
    void drainSecondsFollowTheCrdsBoundAndAnnotationKeysMustBeQualifiedNames() throws Exception {
        Scenario.parse("ok.yaml", "steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {drain: {timeoutSeconds: "
                + "31536000}}}\n  - at: 1s\n    annotate: {node: node-0, key: npu.openfuyao.com/approve-reboot, value: "
                + "'true'}\n");
        String big = rejected("steps:\n  - at: 0s\n    setPolicy: {upgradePolicy: {drain: {timeoutSeconds: "
                + "10000000}}}\n  - at: 1s\n    setPolicy: {recoveryPolicy: {drain: {timeoutSeconds: 31536001}}}\n");
        assertTrue(big.contains("timeoutSeconds 31536001 is outside 1..31536000"), big);
        for (String key : new String[] {"'bad key'", "-leading", "npu.openfuyao.com/", "Upper.Case/x", "a/b/c",
            "x".repeat(64)}) {
            String annotate = rejected("steps:\n  - at: 0s\n    annotate: {node: node-0, key: " + key
                    + ", value: x}\n");
            assertTrue(annotate.startsWith("line 3:") && annotate.contains("is not a Kubernetes annotation key"),
                    key + ": " + annotate);
        }
        String expect = rejected("steps:\n  - at: 0s\n    expect: {node: node-0, annotations: {'no spaces': x}}\n");
        assertTrue(expect.contains("expect.annotations 'no spaces' is not a Kubernetes annotation key"), expect);
    }

    @Test
    void everyScenarioOfTheCiSuiteAndTheReliabilityMatrixIsValid() throws Exception {
        java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("npu.scenarios.dir", "../../itests/scenarios"));
        for (java.nio.file.Path d : List.of(dir, dir.resolve("reliability"))) {
            List<java.nio.file.Path> files;
            try (var s = java.nio.file.Files.list(d)) {
                files = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
            }
            assertTrue(files.size() >= 8, "the scenarios are in " + d);
            for (java.nio.file.Path f : files) {
                Scenario sc = Scenario.parse(f.toString(), java.nio.file.Files.readString(f));
                assertTrue(sc.steps.size() >= 2 || !sc.cases.isEmpty(), f.toString());
            }
        }
    }

    @Test
    void everyActionHasAHandler() {
        java.util.Set<Class<? extends Action>> actions = new java.util.HashSet<>(Scenario.ACTIONS.values());
        actions.remove(Action.Expect.class);
        assertEquals(actions, new ScenarioRunner(null, null, System.out).handledActions());
        assertEquals(java.util.Set.of("wedge", "recover", "setChip", "persistent", "approve", "annotate", "setPolicy",
                "setVersion", "killAgent", "killControlPlane", "startControlPlane", "apiOutage", "apiGone",
                "apiUnreachable", "clockJump", "markersReadOnly", "markersFull", "pod", "pdb", "deletePdb", "cordon",
                "uncordon", "label", "deleteNode", "registerNode", "deletePod", "setPodReady", "removeFinalizers",
                "deleteCr", "createCr", "restartApiServer", "nodeNotReady", "nodeReady", "expect"),
                Scenario.ACTIONS.keySet(),
                "the actions of docs/simulator.md");
    }

    static YamlTree.Invalid invalid(String yaml) {
        return assertThrows(YamlTree.Invalid.class, () -> Scenario.parse("bad.yaml", yaml));
    }

    @Test
    void badActionsNameTheFileTheLineAndWhatWasExpected() {
        YamlTree.Invalid unknown = invalid("cluster: {nodes: 1}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n"
                + "  - at: 5s\n    wedgee: {node: node-0, npu: 0, chip: 0}\n");
        assertEquals("bad.yaml", unknown.file());
        assertEquals(6, unknown.line());
        assertTrue(unknown.where().startsWith("bad.yaml:line 6: steps[1]: unknown key 'wedgee' (expected at and one "
                + "of [annotate, apiGone,"), unknown.where());

        YamlTree.Invalid wrongType = invalid("steps:\n  - at: 0s\n    wedge:\n      node: node-0\n"
                + "      npu: four\n      chip: 0\n");
        assertEquals(5, wrongType.line(), wrongType.where());
        assertEquals("bad.yaml:line 5: steps[0].wedge.npu must be a whole number, got four", wrongType.where());

        YamlTree.Invalid text = invalid("steps:\n  - at: 0s\n    wedge: {node: node-0, npu: \"4\", chip: 0}\n");
        assertTrue(text.where().contains("steps[0].wedge.npu must be a whole number, got the text \"4\""),
                text.where());
        YamlTree.Invalid fraction = invalid("steps:\n  - at: 0s\n    apiGone: {failNext: 2.5}\n");
        assertTrue(fraction.where().contains("apiGone.failNext must be a whole number, got 2.5"), fraction.where());
        YamlTree.Invalid flag = invalid("steps:\n  - at: 0s\n    markersFull: {node: node-0, on: 1}\n");
        assertTrue(flag.where().contains("markersFull.on must be true or false, got 1"), flag.where());
        YamlTree.Invalid list = invalid("steps:\n  - at: 0s\n    expect: {events: {reason: X}}\n");
        assertTrue(list.where().contains("expect.events must be a list"), list.where());
        YamlTree.Invalid eventType = invalid("steps:\n  - at: 0s\n    expect:\n      events:\n"
                + "        - {reason: A}\n        - {reason: B, count: many}\n");
        assertEquals("bad.yaml:line 6: steps[0].expect.events[1].count must be a whole number, got many",
                eventType.where());

        YamlTree.Invalid missing = invalid("steps:\n  - at: 0s\n    approve: {}\n");
        assertEquals("bad.yaml:line 3: steps[0].approve.node is missing (a node name)", missing.where());
        YamlTree.Invalid missingChip = invalid("steps:\n  - at: 0s\n    wedge: {node: node-0, npu: 1}\n");
        assertTrue(missingChip.where().contains("steps[0].wedge.chip is missing (a chip of the NPU)"),
                missingChip.where());
        YamlTree.Invalid missingValue = invalid("steps:\n  - at: 0s\n    annotate: {node: node-0, key: a}\n");
        assertTrue(missingValue.where().contains("annotate.value is missing (null removes the annotation)"),
                missingValue.where());
        YamlTree.Invalid noBody = invalid("steps:\n  - at: 0s\n    apiOutage:\n");
        assertTrue(noBody.where().startsWith("bad.yaml:line 3: steps[0].apiOutage must be a mapping"),
                noBody.where());
        YamlTree.Invalid nothing = invalid("steps:\n  - at: 0s\n    expect: {node: node-0, within: 5s}\n");
        assertTrue(nothing.where().contains("steps[0].expect: nothing to check"), nothing.where());
        YamlTree.Invalid inCase = invalid(CASES.replace("reboots: 1, violations: 0", "reboots: -1, violations: 0"));
        assertEquals("bad.yaml:line 22: cases[0].steps[5].expect.reboots -1 is outside 0..10000", inCase.where());
    }

    @Test
    void typedValuesKeepTheirDefaultsAndNulls() throws Exception {
        Scenario s = Scenario.parse("ok.yaml", String.join("\n",
                "cluster: {controlPlanes: 2}",
                "steps:",
                "  - at: 0s",
                "    killControlPlane: {}",
                "  - at: 1s",
                "    apiGone: {}",
                "  - at: 2s",
                "    annotate: {node: node-0, key: a, value: null}",
                "  - at: 3s",
                "    expect: {upgradeState: null, markers: {reboot-required: null}}",
                "  - at: 4s",
                "    expect: {markers: {driver-ready: true}}",
                "  - at: 5s",
                "    setPolicy: {maxUnavailable: 25%, recoveryPolicy: {window: 24h}, upgradePolicy: {deadlines: "
                        + "{rebootingSeconds: 600}}}",
                ""));
        assertEquals(new Action.KillControlPlane("0", true), s.steps.get(0).action());
        assertEquals(new Action.ApiGone(5), s.steps.get(1).action());
        assertEquals(new Action.Expected(null), ((Action.Annotate) s.steps.get(2).action()).value());
        Action.Expect none = (Action.Expect) s.steps.get(3).action();
        assertEquals(new Action.Expected(null), none.upgradeState(), "null: no state");
        assertEquals(new Action.Expected(null), none.markers().rebootRequired(), "null: no marker");
        Action.Expect ready = (Action.Expect) s.steps.get(4).action();
        assertNull(ready.upgradeState(), "absent: not checked");
        assertNull(ready.markers().rebootRequired(), "absent: not checked");
        assertEquals("all", ready.node());
        assertEquals(Map.of("upgradePolicy", Map.of("maxUnavailable", "25%", "deadlines", Map.of("rebootingSeconds", 600)),
                "recoveryPolicy", Map.of("window", "24h")), ((Action.SetPolicy) s.steps.get(5).action()).policy().driver());
    }

    @Test
    void workloadStepsParseWithTheirDefaults() throws Exception {
        Scenario s = Scenario.parse("ok.yaml", String.join("\n",
                "cluster: {nodes: 2}",
                "steps:",
                "  - at: 0s",
                "    pod: {node: node-1, name: train-0, namespace: ml, npu: 8, labels: {job: train},"
                        + " controller: StatefulSet, emptyDir: true}",
                "  - at: 0s",
                "    pod: {node: node-0, name: bare, controller: none}",
                "  - at: 1s",
                "    pdb: {name: train, namespace: ml, selector: {job: train}, minAvailable: 1}",
                "  - at: 1s",
                "    pdb: {name: half, selector: {job: train}, maxUnavailable: 50%}",
                "  - at: 2s",
                "    deletePdb: {name: train, namespace: ml}",
                "  - at: 3s",
                "    cordon: {node: node-0}",
                "  - at: 4s",
                "    uncordon: {node: node-0}",
                "  - at: 5s",
                "    expect: {node: node-0, unschedulable: false, taints: {npu.openfuyao.com/npu-unhealthy: null},"
                        + " pods: {present: [ml/train-0], absent: [default/bare]}}",
                ""));
        assertEquals(new Action.PodStep("node-1", "train-0", "ml", 8, Map.of("job", "train"), "StatefulSet", true),
                s.steps.get(0).action());
        assertEquals(new Action.PodStep("node-0", "bare", "default", 0, Map.of(), "none", false),
                s.steps.get(1).action());
        assertEquals(new Action.Pdb("train", "ml", Map.of("job", "train"), 1, null), s.steps.get(2).action());
        assertEquals(new Action.Pdb("half", "default", Map.of("job", "train"), null, "50%"), s.steps.get(3).action());
        assertEquals(new Action.DeletePdb("train", "ml"), s.steps.get(4).action());
        assertEquals(new Action.Cordon("node-0"), s.steps.get(5).action());
        assertEquals(new Action.Uncordon("node-0"), s.steps.get(6).action());
        Action.Expect e = (Action.Expect) s.steps.get(7).action();
        assertEquals(Boolean.FALSE, e.unschedulable());
        java.util.Map<String, String> noTaint = new java.util.HashMap<>();
        noTaint.put("npu.openfuyao.com/npu-unhealthy", null);
        assertEquals(noTaint, e.taints());
        assertEquals(new Action.PodsCheck(java.util.List.of("ml/train-0"), java.util.List.of("default/bare"), java.util.List.of()), e.pods());
    }

    /**
     * The actions and expectations of chaos's fault kinds (issue #28): a node deleted and registered again, the CR
     * deleted, a label set as an operator retries, pods deleted, not Ready, held by a finalizer, a budget's
     * unhealthyPodEvictionPolicy, the recovery's blockingPodSelector in the shorthand, metrics and the CR's existence.
     */
    @Test
    void chaosActionsParseWithTheirDefaults() throws Exception {
        Scenario s = Scenario.parse("ok.yaml", String.join("\n",
                "cluster: {nodes: 2}",
                "policy: {recoveryPolicy: {blockingPodSelector: 'job=train', window: 30m1h}}",
                "steps:",
                "  - at: 0s",
                "    pod: {node: node-1, name: nb, ready: false, finalizers: [example.com/hold]}",
                "  - at: 1s",
                "    pdb: {name: nb, selector: {a: b}, minAvailable: 1, unhealthyPodEvictionPolicy: AlwaysAllow}",
                "  - at: 2s",
                "    setPodReady: {name: nb, ready: true}",
                "  - at: 3s",
                "    deletePod: {name: nb, gracePeriodSeconds: 0}",
                "  - at: 4s",
                "    removeFinalizers: {name: nb}",
                "  - at: 5s",
                "    label: {node: node-0, key: npu.openfuyao.com/driver-upgrade-state, value: upgrade-required}",
                "  - at: 6s",
                "    label: {node: node-0, key: example.com/gone, value: null}",
                "  - at: 7s",
                "    deleteNode: {node: node-1}",
                "  - at: 8s",
                "    registerNode: {node: node-1}",
                "  - at: 9s",
                "    deleteCr: {}",
                "  - at: 10s",
                "    expect: {node: node-0, npuOperatorCtl: absent, pods: {terminating: [default/nb]},",
                "             metrics: [{name: npu_lifecycle_reboots_total, labels: {reason: recovery}, atLeast: 1},",
                "                       {name: npu_lifecycle_wedges_total, equals: 0}]}",
                ""));
        assertEquals(Map.of("recoveryPolicy", Map.of("blockingPodSelector", "job=train", "window", "30m1h")),
                s.policy);
        assertEquals(new Action.PodStep("node-1", "nb", "default", 0, Map.of(), "ReplicaSet", false, false,
                java.util.List.of("example.com/hold")), s.steps.get(0).action());
        assertEquals(new Action.Pdb("nb", "default", Map.of("a", "b"), 1, null, "AlwaysAllow"), s.steps.get(1).action());
        assertEquals(new Action.SetPodReady("nb", "default", true), s.steps.get(2).action());
        assertEquals(new Action.DeletePod("nb", "default", 0), s.steps.get(3).action());
        assertEquals(new Action.RemoveFinalizers("nb", "default"), s.steps.get(4).action());
        assertEquals(new Action.Label("node-0", "npu.openfuyao.com/driver-upgrade-state",
                new Action.Expected("upgrade-required")), s.steps.get(5).action());
        assertEquals(new Action.Expected(null), ((Action.Label) s.steps.get(6).action()).value());
        assertEquals(new Action.DeleteNode("node-1"), s.steps.get(7).action());
        assertEquals(new Action.RegisterNode("node-1"), s.steps.get(8).action());
        assertEquals(new Action.DeleteCr(), s.steps.get(9).action());
        Action.Expect e = (Action.Expect) s.steps.get(10).action();
        assertEquals("absent", e.npuOperatorCtl());
        assertEquals(java.util.List.of("default/nb"), e.pods().terminating());
        assertEquals(new Action.MetricCheck("npu_lifecycle_reboots_total", Map.of("reason", "recovery"), null, 1.0,
                null), e.metrics().get(0));
        assertEquals(0.0, e.metrics().get(1).equalTo());
        assertTrue(new Action.PodStep("node-0", "a", null, null, null, null, null).ready(), "Ready by default");
    }

    /**
     * {@code cluster.startTime}: the simulated instant at time 0; the runtimes start behind it by more than the start
     * and install can take, so the one jump to it at time 0 goes forward; bad values named; refused on the real node.
     */
    @Test
    void startTimeIsAnInstantTheClocksStartBehind() throws Exception {
        Scenario s = Scenario.parse("ok.yaml", "cluster: {nodes: 1, startTime: \"2026-12-07T01:50:00Z\"}\n"
                + "timeScale: 60\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n");
        assertEquals(java.time.Instant.parse("2026-12-07T01:50:00Z"), s.startTime);
        long anchor = java.time.Instant.parse("2026-12-05T17:00:00Z").toEpochMilli();
        long offset = ScenarioCommand.startOffset(s, anchor);
        SimSettings settings = new SimSettings(1, 8, 1, "910b", "25.2.0", 60, anchor, "WARN", offset);
        long atStart = settings.simulatedAt(anchor, offset);
        long latestInstall = settings.simulatedAt(anchor + ScenarioCommand.START_AND_INSTALL_WALL_SECONDS * 1000,
                offset);
        assertEquals(s.startTime.toEpochMilli() - 3_600_000L, latestInstall,
                "an hour behind startTime after the longest start and install");
        assertTrue(atStart < latestInstall);
        assertTrue(settings.timeConfig().contains("wallOffsetMillis=" + offset), settings.timeConfig());
        assertEquals(0, ScenarioCommand.startOffset(Scenario.parse("ok.yaml",
                "cluster: {nodes: 1}\nsteps:\n  - at: 0s\n    approve: {node: node-0}\n"), anchor));
        assertTrue(invalid("cluster: {nodes: 1, startTime: yesterday}\nsteps:\n  - at: 0s\n    approve: {node: "
                + "node-0}\n").where().contains("cluster.startTime 'yesterday' is not an RFC 3339 instant"));
        assertTrue(invalid("cluster: {nodes: 1, startTime: \"1970-01-01T00:00:00Z\"}\nsteps:\n  - at: 0s\n    "
                + "approve: {node: node-0}\n").where().contains("is outside 2000 to 2200"));
        assertTrue(RealNodeCluster.refusals(s).toString().contains("cluster.startTime"),
                RealNodeCluster.refusals(s).toString());
    }

    /** What the embedded mock cannot do is refused before anything runs, each step with its file and line. */
    @Test
    void theMocksRefusalsNameEachStep() throws Exception {
        Scenario s = Scenario.parse("real-only.yaml", String.join("\n", "cluster: {nodes: 1}", "steps:",
                "  - at: 0s", "    nodeNotReady: {node: node-0}",
                "  - at: 1s", "    nodeReady: {node: node-0}",
                "  - at: 2s", "    deleteCr: {}",
                "  - at: 3s", "    expect: {apiRequests: [{verb: create, resource: pods, atLeast: 0}]}",
                "  - at: 4s", "    approve: {node: node-0}", ""));
        java.util.List<String> why = ScenarioCommand.embeddedRefusals(s);
        assertEquals(4, why.size(), why.toString());
        assertTrue(why.get(0).startsWith("real-only.yaml:line 3: nodeNotReady needs --api real"), why.get(0));
        assertTrue(why.get(2).contains("line 7: deleteCr needs --api real: the mock deletes the NPUOperatorCtl"),
                why.get(2));
        assertTrue(why.get(3).contains("expect.apiRequests reads kube-apiserver's audit log"), why.get(3));
    }

    /** {@code invariants}: all, or a list of names; a name that is not one is refused with the list. */
    @Test
    void invariantsAreAllOrNamed() throws Exception {
        String steps = "steps:\n  - at: 0s\n    approve: {node: node-0}\n";
        assertEquals(Invariants.ALL, Scenario.parse("ok.yaml", "cluster: {nodes: 1}\ninvariants: all\n" + steps)
                .invariants);
        assertEquals(java.util.List.of("administrator-cordon-kept"), Scenario.parse("ok.yaml",
                "cluster: {nodes: 1}\ninvariants: [administrator-cordon-kept]\n" + steps).invariants);
        assertEquals(java.util.List.of(), Scenario.parse("ok.yaml", "cluster: {nodes: 1}\n" + steps).invariants);
        assertTrue(invalid("cluster: {nodes: 1}\ninvariants: [no-reboot-ever]\n" + steps).where()
                .contains("invariants: 'no-reboot-ever' is not one of [no-module-load-outside-fresh-boot"));
        assertTrue(invalid("cluster: {nodes: 1}\ninvariants: some\n" + steps).where()
                .contains("invariants must be all or a list of"));
    }

    @Test
    void badChaosActionsNameTheField() {
        String head = "cluster: {nodes: 1}\nsteps:\n  - at: 0s\n    ";
        assertTrue(invalid(head + "pod: {node: node-0, name: a, finalizers: [hold]}\n").where()
                .contains("steps[0].pod.finalizers 'hold' is not a finalizer"));
        assertTrue(invalid(head + "pdb: {name: p, selector: {a: b}, minAvailable: 1, unhealthyPodEvictionPolicy: "
                + "Never}\n").where().contains("steps[0].pdb.unhealthyPodEvictionPolicy 'Never' is not IfHealthyBudget "
                        + "or AlwaysAllow"));
        assertTrue(invalid(head + "setPodReady: {name: a}\n").where()
                .contains("steps[0].setPodReady.ready is missing"));
        assertTrue(invalid(head + "deletePod: {name: a, gracePeriodSeconds: -1}\n").where()
                .contains("steps[0].deletePod.gracePeriodSeconds -1 is outside"));
        assertTrue(invalid(head + "label: {node: node-0, key: 'bad key', value: x}\n").where()
                .contains("steps[0].label.key 'bad key' is not a Kubernetes label key: an optional DNS subdomain"));
        assertTrue(invalid(head + "label: {node: node-0, key: a..b/x, value: x}\n").where()
                .contains("'a..b/x' is not a Kubernetes label key"));
        assertTrue(invalid(head + "label: {node: node-0, key: example.com/x, value: 'bad value'}\n").where()
                .contains("steps[0].label.value 'bad value' is not a label value: at most 63 characters"));
        assertTrue(invalid(head + "pod: {node: node-0, name: a, finalizers: [null]}\n").where()
                .contains("steps[0].pod.finalizers item 0 is null: a finalizer such as example.com/hold"));
        assertTrue(invalid(head + "pod: {node: node-0, name: a, labels: {a: null}}\n").where()
                .contains("steps[0].pod.labels 'a' has no value"));
        assertTrue(invalid(head + "expect: {metrics: [{name: up, labels: {'bad label': x}, atMost: 0}]}\n").where()
                .contains("'bad label' is not a Prometheus label name"));
        assertTrue(invalid(head + "expect: {metrics: [{name: up, atLeast: -1}]}\n").where()
                .contains("atLeast must be a number from 0"));
        assertTrue(invalid(head + "expect: {metrics: [{name: up, equals: one}]}\n").where()
                .contains("equals must be a number, got one"));
        assertTrue(invalid(head + "expect: {metrics: []}\n").where().contains("metrics is empty"));
        assertTrue(invalid(head + "expect: {apiRequests: [{verb: create, resource: leases, count: 1}]}\n").where()
                .contains("'leases' is not recorded"));
        assertTrue(invalid(head + "deletePod: {name: a, gracePeriodSeconds: 99999999999}\n").where()
                .contains("gracePeriodSeconds is outside"));
        assertTrue(invalid("cluster: {nodes: 1}\npolicy: {recoveryPolicy: {blockingPodSelector: ''}}\nsteps:\n"
                + "  - at: 0s\n    approve: {node: node-0}\n").where()
                .contains("blockingPodSelector is empty"));
        assertTrue(invalid(head + "label: {node: node-0, key: a}\n").where()
                .contains("steps[0].label.value is missing (null removes the label)"));
        assertTrue(invalid(head + "deleteNode: {node: node-4}\n").where()
                .contains("steps[0].deleteNode.node: no node 'node-4'"));
        assertTrue(invalid(head + "deleteCr: {wait: true}\n").where().contains("steps[0].deleteCr"));
        assertTrue(invalid(head + "expect: {npuOperatorCtl: gone}\n").where()
                .contains("steps[0].expect.npuOperatorCtl 'gone' is not present or absent"));
        assertTrue(invalid(head + "expect: {metrics: [{name: 'a b', atLeast: 1}]}\n").where()
                .contains("'a b' is not a Prometheus metric name"));
        assertTrue(invalid(head + "expect: {metrics: [{name: up}]}\n").where()
                .contains("needs exactly one of equals, atLeast, atMost"));
    }

    @Test
    void badWorkloadStepsNameTheField() {
        String head = "cluster: {nodes: 1}\nsteps:\n  - at: 0s\n    ";
        assertTrue(invalid(head + "pod: {node: node-3, name: a}\n").where()
                .contains("steps[0].pod.node: no node 'node-3'"));
        assertTrue(invalid(head + "pod: {node: node-0}\n").where()
                .contains("steps[0].pod.name is missing (the pod's name)"));
        assertTrue(invalid(head + "pod: {node: node-0, name: Big_Pod}\n").where()
                .contains("steps[0].pod.name 'Big_Pod' is not a lower-case DNS label"));
        assertTrue(invalid(head + "pod: {node: node-0, name: a, controller: Deployment}\n").where()
                .contains("steps[0].pod.controller 'Deployment' is not one of [ReplicaSet, StatefulSet, DaemonSet,"
                        + " mirror, none]"));
        assertTrue(invalid(head + "pod: {node: node-0, name: a, npu: -1}\n").where()
                .contains("steps[0].pod.npu -1 is outside 0..64"));
        assertTrue(invalid(head + "pod: {node: node-0, name: a, namespace: npu-operator}\n").where()
                .contains("steps[0].pod.namespace 'npu-operator' is the operator's own namespace"));
        assertTrue(invalid(head + "pdb: {name: p, selector: {a: b}}\n").where()
                .contains("steps[0].pdb.minAvailable needs exactly one of minAvailable and maxUnavailable"));
        assertTrue(invalid(head + "pdb: {name: p, selector: {a: b}, minAvailable: 1, maxUnavailable: 1}\n").where()
                .contains("steps[0].pdb.maxUnavailable needs exactly one of minAvailable and maxUnavailable"));
        assertTrue(invalid(head + "pdb: {name: p, selector: {a: b}, maxUnavailable: lots}\n").where()
                .contains("steps[0].pdb.maxUnavailable must be a number of pods (0..100000) or a percentage"));
        assertTrue(invalid(head + "pdb: {name: p, minAvailable: 1}\n").where()
                .contains("steps[0].pdb.selector is missing"));
        assertTrue(invalid(head + "deletePdb: {namespace: ml}\n").where()
                .contains("steps[0].deletePdb.name is missing"));
        assertTrue(invalid(head + "cordon: {node: node-9}\n").where()
                .contains("steps[0].cordon.node: no node 'node-9'"));
        assertTrue(invalid(head + "expect: {pods: {present: [just-a-name]}}\n").where()
                .contains("steps[0].expect.pods.present 'just-a-name' is not namespace/name"));
        assertTrue(invalid(head + "expect: {unschedulable: maybe}\n").where()
                .contains("steps[0].expect.unschedulable must be true or false, got maybe"));
    }

    @Test
    void statusPathsSelectListElements() {
        Map<String, Object> status = Map.of("nodeCounts", Map.of("upgraded", 3), "conditions",
                List.of(Map.of("type", "Complete", "status", "True"), Map.of("type", "Degraded", "status", "False")));
        assertEquals(3, Expectations.path(status, "nodeCounts.upgraded"));
        assertEquals("True", Expectations.path(status, "conditions[type=Complete].status"));
        assertEquals("False", Expectations.path(status, "conditions[1].status"));
        assertNull(Expectations.path(status, "conditions[type=Nope].status"));
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
            "        killAgent: {node: node-0, when: {node: node-0, mbean: {name: \"io.npulifecycle:type=Chip,name=npu1-chip0\",",
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
        Action.Expect when = kill.when();
        assertEquals(11, kill.whenLine(), "the line of when:");
        assertEquals(new Action.KillAgent("node-0"), kill.action());
        assertEquals(Duration.ofSeconds(600), when.within());
        assertEquals(new Action.MBeanCheck("io.npulifecycle:type=Chip,name=npu1-chip0", "ConsecutiveFailures", null, null,
                1), when.mbean());
        assertEquals(new Action.ClockJump("control-plane", Duration.ofHours(-1)), c.steps().get(1).action());
        assertEquals(new Action.KillControlPlane("leader", false), c.steps().get(2).action());
        assertEquals(Duration.ofSeconds(600), ((Action.Expect) c.steps().get(5).action()).holdFor());
        assertTrue(s.uses(Action.MarkersFull.class));
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

    @Test
    void driverManagementIsManagedOrHost() throws Exception {
        assertEquals("managed", Scenario.parse("a.yaml", EXAMPLE).driverManagement);
        Scenario host = Scenario.parse("h.yaml", EXAMPLE.replace("driverVersion: 25.2.0}",
                "driverVersion: 25.2.0, driverManagement: host}"));
        assertEquals("host", host.driverManagement);
        String m = rejected(EXAMPLE.replace("driverVersion: 25.2.0}", "driverVersion: 25.2.0, driverManagement: hosted}"));
        assertTrue(m.contains("cluster.driverManagement 'hosted' is not managed or host"), m);
    }
}
