package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;

/**
 * What {@code npu-lifecycle scenario} prints and writes for CI, without starting a cluster: steps as the file gives
 * them, every validation error, {@code --list}, YAML aliases, the timeline and the JUnit report.
 */
class ScenarioOutputTest {

    @TempDir
    Path tmp;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private PrintStream out() {
        return new PrintStream(out, true, StandardCharsets.UTF_8);
    }

    private PrintStream err() {
        return new PrintStream(err, true, StandardCharsets.UTF_8);
    }

    @Test
    void stepsKeepTheirYamlAsWrittenConditionsIncluded() throws Exception {
        Scenario s = Scenario.parse("s.yaml", String.join("\n",
                "cluster: {nodes: 2}",
                "steps:",
                "  - at: 0s",
                "    wedge:",
                "      node: node-0",
                "      npu: 4",
                "      chip: 0",
                "  - at: 10s",
                "    killAgent: {node: node-1, when: {node: node-1, labels: {npu.openfuyao.com/reboot-required: "
                        + "\"true\"}, within: 5m}}",
                "  - at: 20s",
                "    expect: {node: all, events: [{reason: RebootRequired, messageContains: \"reason=a: b\"}],",
                "             annotations: {a: \"4\", b: null}, within: 1m}",
                ""));
        assertEquals("wedge: {node: node-0, npu: 4, chip: 0}", s.steps.get(0).yaml());
        assertEquals("killAgent: {node: node-1, when: {node: node-1, labels: {npu.openfuyao.com/reboot-required: "
                + "\"true\"}, within: 5m}}", s.steps.get(1).yaml());
        assertEquals("expect: {node: all, events: [{reason: RebootRequired, messageContains: \"reason=a: b\"}], "
                + "annotations: {a: \"4\", b: null}, within: 1m}", s.steps.get(2).yaml());
        // the printed line, given as a step, is the same step
        for (Scenario.Step st : s.steps) {
            Scenario.Step again = Scenario.parse("again.yaml", "cluster: {nodes: 2}\nsteps:\n  - at: 0s\n    "
                    + st.yaml() + "\n").steps.get(0);
            assertEquals(st.action(), again.action());
            assertEquals(st.when(), again.when());
            assertEquals(st.yaml(), again.yaml());
        }
        assertEquals("{reason: RebootRequired, count: 0}",
                new Action.EventCheck("RebootRequired", null, 0).yaml(), "no record dump in failures");
    }

    @Test
    void everyErrorOfAFileIsReportedWithItsLine() throws Exception {
        Path f = Files.writeString(tmp.resolve("bad.yaml"), String.join("\n",
                "name: three mistakes",
                "cluster: {nodes: 2, chips: 99}",
                "colour: blue",
                "steps:",
                "  - at: 0s",
                "    wedgee: {node: node-0, npu: 0, chip: 0}",
                "  - at: 10s",
                "    wedge: {node: node-7, npu: 0, chip: 0}",
                "  - at: soon",
                "    approve: {node: node-0}",
                "  - at: 30s",
                "    approve: {node: node-1}",
                ""));
        YamlTree.Invalid e = assertThrows(YamlTree.Invalid.class,
                () -> Scenario.parse(f.toString(), Files.readString(f)));
        List<String> all = e.all().stream().map(YamlTree.Invalid::where).toList();
        assertEquals(5, all.size(), String.join("\n", all));
        assertEquals(f + ":line 3: the scenario: unknown key 'colour' (expected [build, cases, cluster, invariants, name, "
                + "policy, steps, timeScale])", all.get(0));
        assertTrue(all.get(1).startsWith(f + ":line 2: cluster.chips 99 is outside 1..32"), all.get(1));
        assertTrue(all.get(2).startsWith(f + ":line 6: steps[0]: unknown key 'wedgee'"), all.get(2));
        assertTrue(all.get(3).startsWith(f + ":line 8: steps[1].wedge.node: no node 'node-7' in a cluster of 2"),
                all.get(3));
        assertTrue(all.get(4).startsWith(f + ":line 9: steps[2].at 'soon' is not a duration"), all.get(4));
        assertEquals(e.getMessage(), e.all().get(0).getMessage(), "the first error is the exception's own");

        assertEquals(2, ScenarioCommand.run(List.of(f), tmp.resolve("work"), tmp, "embedded", false, null, 1,
                new Interruption("scenario", err()), out(), err()));
        String text = err.toString(StandardCharsets.UTF_8);
        for (String line : all) {
            assertTrue(text.contains(line + "\n"), text);
        }
        assertTrue(text.contains(f + ": 5 errors\nnpu-lifecycle scenario: nothing was run"), text);
    }

    /**
     * A --parallel run stopped by a signal prints what every started file printed and had not had printed yet, in
     * file order (files already printed, or never started, are null), each marked as cut short.
     */
    @Test
    void aSignalPrintsTheHeldOutputOfEveryStartedFileInFileOrder() {
        java.io.ByteArrayOutputStream[] held = new java.io.ByteArrayOutputStream[4];
        held[1] = new java.io.ByteArrayOutputStream();
        held[1].writeBytes("== scenario b\n   FAIL b (1.0 s): why\n".getBytes(StandardCharsets.UTF_8));
        held[3] = new java.io.ByteArrayOutputStream();
        held[3].writeBytes("== scenario d\n".getBytes(StandardCharsets.UTF_8));
        java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        ScenarioCommand.printHeld(held, new java.io.PrintStream(printed, true, StandardCharsets.UTF_8));
        assertEquals("== scenario b\n   FAIL b (1.0 s): why\n   (output of file 2 until the signal)\n"
                + "== scenario d\n   (output of file 4 until the signal)\n", printed.toString(StandardCharsets.UTF_8));
        assertTrue(java.util.Arrays.stream(held).allMatch(java.util.Objects::isNull), "printed once");
    }

    @Test
    void listPrintsTheStepsOfAStepsOnlyFileAndOfEachCase() throws Exception {
        Path f = Files.writeString(tmp.resolve("01-a.yaml"), ScenarioTest.EXAMPLE);
        Path c = Files.writeString(tmp.resolve("02-cases.yaml"), ScenarioTest.CASES);
        assertEquals(0, ScenarioCommand.list(List.of(f, c), false, out(), err()), err.toString(StandardCharsets.UTF_8));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals("SCENARIO 01-a.yaml | default | wedge then recover before reboot | 2 node(s) x 8 910b, driver "
                + "25.2.0, clock x100", lines.get(0));
        assertEquals("STEP 01-a.yaml#1 | line 6 | at 0s | wedge: {node: node-0, npu: 4, chip: 0}", lines.get(1));
        assertEquals("STEP 01-a.yaml#3 | line 11 | at 220s | recover: {node: node-0, npu: 4, chip: 0}", lines.get(3));
        assertEquals("STEP 01-a.yaml#4 | line 13 | at 300s | expect: {node: node-0, labels: "
                + "{npu.openfuyao.com/reboot-required: null}, reboots: 0, within: 1m}", lines.get(4));
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("CASE 02-cases.yaml#")), String.join("\n", lines));
        assertTrue(lines.stream().anyMatch(l -> l.matches("STEP 02-cases\\.yaml#[a-z0-9-]+/1 \\| line \\d+ \\| at "
                + "\\d+s \\| .+")), String.join("\n", lines));
    }

    @Test
    void aliasesStandForTheAnchoredValue() throws Exception {
        Scenario s = Scenario.parse("a.yaml", String.join("\n",
                "cluster: {nodes: 2}",
                "steps:",
                "  - at: 0s",
                "    wedge: &chip0 {node: node-0, npu: 4, chip: 0}",
                "  - at: 10s",
                "    recover: *chip0",
                "  - at: 20s",
                "    expect:",
                "      node: node-1",
                "      labels: &healthy",
                "        npu.openfuyao.com/npu-health: healthy",
                "  - at: 30s",
                "    expect: {node: node-0, labels: *healthy}",
                ""));
        assertEquals(new Action.Recover("node-0", 4, 0), s.steps.get(1).action());
        assertEquals(Map.of("npu.openfuyao.com/npu-health", "healthy"),
                ((Action.Expect) s.steps.get(3).action()).labels());
        assertEquals("recover: {node: node-0, npu: 4, chip: 0}", s.steps.get(1).yaml());
        // not the alias's name in place of the value, as a plain token reader gives it
        YamlTree.Invalid scalar = assertThrows(YamlTree.Invalid.class, () -> Scenario.parse("b.yaml",
                "steps:\n  - at: 0s\n    wedge: {node: &n node-0, npu: 0, chip: 0}\n  - at: 1s\n"
                        + "    approve: {node: *n}\n"));
        assertTrue(scalar.where().startsWith("b.yaml:line 5: alias *n names no mapping or list anchored &n"),
                scalar.where());
        assertTrue(scalar.getMessage().contains("write the value out"), scalar.getMessage());
    }

    /** A cluster whose state the test sets. */
    static final class FakeView implements Timeline.ClusterView {
        final Map<String, Node> nodes = new HashMap<>();
        final List<Event> events = new ArrayList<>();
        final Map<String, String> markers = new HashMap<>();
        int reboots;

        @Override
        public List<String> nodeNames() {
            return List.of("node-0", "node-1");
        }

        @Override
        public Node node(String name) {
            return nodes.get(name);
        }

        @Override
        public List<Event> events() {
            return List.copyOf(events);
        }

        @Override
        public int reboots(String name) {
            return name.equals("node-0") ? reboots : 0;
        }

        @Override
        public String marker(String name, String marker) {
            return markers.get(name + "/" + marker);
        }
    }

    static Node node(String name, Map<String, String> labels) {
        return new NodeBuilder().withNewMetadata().withName(name).withLabels(labels)
                .withAnnotations(Map.of("other.io/x", "ignored")).endMetadata().withNewSpec().endSpec().build();
    }

    static Event event(String name, String node, String reason, String message) {
        return new EventBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
                .withNewInvolvedObject().withKind("Node").withName(node).endInvolvedObject().withType("Normal")
                .withReason(reason).withMessage(message).withCount(1).build();
    }

    @Test
    void theTimelineRecordsActionsAndWhatChangedPerNode() {
        FakeView v = new FakeView();
        double[] sim = {0};
        double[] wall = {0};
        Timeline t = new Timeline(v, () -> sim[0], () -> wall[0]);
        v.nodes.put("node-0", node("node-0", Map.of("npu.openfuyao.com/npu-health", "healthy")));
        v.nodes.put("node-1", node("node-1", Map.of("npu.openfuyao.com/npu-health", "healthy")));
        v.markers.put("node-0/driver-ready", "present");
        v.events.add(event("old", "node-0", "DriverValidated", "before the first step"));
        t.poll();

        sim[0] = 30;
        wall[0] = 0.5;
        t.add("node-0", "did wedge: {node: node-0, npu: 4, chip: 0}");
        sim[0] = 60;
        wall[0] = 1;
        v.nodes.put("node-0", node("node-0", Map.of("npu.openfuyao.com/npu-health", "unhealthy",
                "npu.openfuyao.com/reboot-required", "true")));
        v.markers.put("node-0/reboot-required", "recovery");
        v.events.add(event("new", "node-0", "RebootRequired", "reason=recovery"));
        t.poll();
        sim[0] = 90;
        wall[0] = 1.5;
        v.reboots = 1;
        v.nodes.put("node-1", null); // the API server cannot answer: no change recorded
        t.add(Timeline.CLUSTER, "did apiOutage: {duration: 60s}");
        t.poll();

        String text = t.render("23:00:00Z");
        List<String> lines = text.lines().toList();
        assertEquals("   timeline (simulated seconds since the first step; wall seconds since 23:00:00Z):",
                lines.get(0));
        assertEquals("     node-0", lines.get(1));
        assertEquals(List.of("label npu.openfuyao.com/npu-health=healthy", "unschedulable=false",
                "marker driver-ready=present", "marker reboot-required=absent", "reboots=0"),
                lines.subList(2, 7).stream().map(l -> l.replace("       sim      0.0s  wall     0.0s  at the start: ",
                        "")).toList());
        assertEquals("       sim     30.0s  wall     0.5s  did wedge: {node: node-0, npu: 4, chip: 0}", lines.get(7));
        assertTrue(text.contains("sim     60.0s  wall     1.0s  label npu.openfuyao.com/npu-health: healthy -> "
                + "unhealthy\n"), text);
        assertTrue(text.contains("sim     60.0s  wall     1.0s  label npu.openfuyao.com/reboot-required: (none) -> "
                + "true\n"), text);
        assertTrue(text.contains("sim     60.0s  wall     1.0s  marker reboot-required: absent -> reason=recovery\n"),
                text);
        assertTrue(text.contains("sim     60.0s  wall     1.0s  Event Normal RebootRequired: reason=recovery\n"), text);
        assertTrue(text.contains("sim     90.0s  wall     1.5s  reboots: 0 -> 1\n"), text);
        assertTrue(text.contains("     cluster\n       sim     90.0s  wall     1.5s  did apiOutage: {duration: 60s}\n"),
                text);
        assertFalse(text.contains("DriverValidated"), "Events from before the first step are not news: " + text);
        assertFalse(text.contains("other.io/x"), text);
        assertEquals(List.of("     node-1"), text.lines().dropWhile(l -> !l.equals("     node-1"))
                .takeWhile(l -> !l.equals("     cluster")).filter(l -> !l.contains("at the start: ")).toList(),
                "node-1 did not change: " + text);
    }

    @Test
    void theJUnitReportParsesBackWithOneTestCasePerScenarioAndPerCase() throws Exception {
        String timeline = "   timeline (...):\n     node-0\n       sim 1.0s  wall 0.1s  did wedge: {node: node-0}\n";
        List<ScenarioResult> results = List.of(
                new ScenarioResult("passes", "itests/scenarios/01-a.yaml", 12.5, null, List.of(), timeline),
                new ScenarioResult("fails <&> \"quoted\"", "/x/02-b.yaml", 3, "step 2 (line 9, at 10s) expect: "
                        + "{node: node-0}: reboots of node-0: expected 1, saw 0",
                        List.of(new ScenarioResult.CaseResult("killed-early", "agent killed", "agent killed at strike 1",
                                "one reboot", 2.25, null),
                                new ScenarioResult.CaseResult("killed-late", "agent killed", "agent killed late",
                                        "one reboot", 2.5, "the scenario failed: x\u001b[0m")), ""));
        Path report = tmp.resolve("reports/junit.xml");
        JUnitReport.write(report, results);

        Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(report.toFile());
        Element root = d.getDocumentElement();
        assertEquals("testsuites", root.getTagName());
        assertEquals("4", root.getAttribute("tests"));
        assertEquals("2", root.getAttribute("failures"));
        NodeList suites = root.getElementsByTagName("testsuite");
        assertEquals(2, suites.getLength());
        Element first = (Element) suites.item(0);
        assertEquals("01-a.yaml", first.getAttribute("name"));
        assertEquals("12.500", first.getAttribute("time"));
        NodeList firstCases = first.getElementsByTagName("testcase");
        assertEquals(1, firstCases.getLength());
        Element pass = (Element) firstCases.item(0);
        assertEquals("scenario.01-a", pass.getAttribute("classname"));
        assertEquals("passes", pass.getAttribute("name"));
        assertEquals(0, pass.getElementsByTagName("failure").getLength());
        assertEquals(timeline, pass.getElementsByTagName("system-out").item(0).getTextContent());

        Element second = (Element) suites.item(1);
        assertEquals("3", second.getAttribute("tests"));
        assertEquals("2", second.getAttribute("failures"));
        NodeList cases = second.getElementsByTagName("testcase");
        Element failed = (Element) cases.item(0);
        assertEquals("fails <&> \"quoted\"", failed.getAttribute("name"));
        Element failure = (Element) failed.getElementsByTagName("failure").item(0);
        assertEquals("step 2 (line 9, at 10s) expect: {node: node-0}: reboots of node-0: expected 1, saw 0",
                failure.getAttribute("message"));
        assertEquals(failure.getAttribute("message"), failure.getTextContent());
        assertEquals("killed-early: agent killed at strike 1", ((Element) cases.item(1)).getAttribute("name"));
        assertEquals(0, ((Element) cases.item(1)).getElementsByTagName("failure").getLength());
        assertEquals("the scenario failed: x?[0m", ((Element) ((Element) cases.item(2)).getElementsByTagName("failure")
                .item(0)).getAttribute("message"));
    }
    @Test
    void aMissingOrBinaryScenarioFileIsNamedWithWhyItCannotBeRead() throws Exception {
        Path binary = Files.write(tmp.resolve("binary.yaml"), new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1});
        Path missing = tmp.resolve("missing.yaml");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(null, ScenarioCommand.parseAll(List.of(binary, missing), new PrintStream(err, true,
                StandardCharsets.UTF_8)));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains(binary + ": cannot be read: not UTF-8 text"), text);
        assertTrue(text.contains(missing + ": cannot be read: no such file"), text);
    }

    /** A run stopped by the violation it reports names it once; another failure beside it is kept after "; and ". */
    @Test
    void aBrokenInvariantIsNamedOnceWhetherOrNotItStoppedTheSteps() {
        Invariants.Violation v = new Invariants.Violation("every-reboot-announced", 945, "node-0 rebooted unannounced");
        String broken = "invariant every-reboot-announced broken at simulated 945s: node-0 rebooted unannounced";
        assertEquals(broken, ScenarioRunner.verdict(v, null));
        String stopped = broken + " (while step 3 (line 9, at 3600s) expect: {node: all} waited for its time)";
        assertEquals(stopped, ScenarioRunner.verdict(v, stopped));
        String other = "step 4 (line 11, at 3600s) expect: {node: all, reboots: 1}: reboots was 2";
        assertEquals(broken + "; and " + other, ScenarioRunner.verdict(v, other));
    }
}
