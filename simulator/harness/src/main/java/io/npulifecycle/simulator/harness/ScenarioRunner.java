package io.npulifecycle.simulator.harness;

import io.npulifecycle.api.node.NodeKeys;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/**
 * {@code npu-lifecycle scenario FILE...}: runs scenario files on a simulated cluster and reports, for an expectation
 * that fails, which one, when (simulated time), and what was seen instead. Every file is parsed and validated before
 * anything runs.
 */
public final class ScenarioRunner {


    private final Scenario scenario;
    private final SimCluster sim;
    private final PrintStream out;
    private volatile long t0;
    private final Map<String, Integer> rebootsAtStart = new java.util.concurrent.ConcurrentHashMap<>();
    /** Verdict per case id: {@code null} = passed, else the failure; and its wall-clock seconds. */
    private final Map<String, String> caseFailures = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, Double> caseSeconds = new java.util.concurrent.ConcurrentHashMap<>();
    private static final String PASSED = "";

    ScenarioRunner(Scenario scenario, SimCluster sim, PrintStream out) {
        this.scenario = scenario;
        this.sim = sim;
        this.out = out;
    }

    /**
     * {@code npu-lifecycle scenario --list FILE...}: validates the files and prints, without running anything, one
     * line per reliability case: {@code CASE <file>#<id> | <build> | <category> | <name> | <outcome>}.
     *
     * @return 0, or 2 when a file is malformed
     */
    static int listFiles(List<Path> files, PrintStream out, PrintStream err) {
        int rc = 0;
        for (Path f : files) {
            try {
                Scenario s = Scenario.parse(f.toString(), Files.readString(f, StandardCharsets.UTF_8));
                for (Scenario.Case c : s.cases) {
                    out.println("CASE " + f.getFileName() + "#" + c.id() + " | " + s.build + " | " + c.category()
                            + " | " + c.name() + " | " + c.outcome());
                }
            } catch (IOException e) {
                err.println(f + ": cannot be read: " + e.getMessage());
                rc = 2;
            } catch (YamlTree.Invalid e) {
                err.println(f + ":" + e.getMessage());
                rc = 2;
            }
        }
        return rc;
    }

    /**
     * @return 0 when every scenario passed, 1 when one failed, 2 when a file is malformed (nothing was run)
     */
    static int runFiles(List<Path> files, Path work, Path install, PrintStream out, PrintStream err) {
        List<Scenario> scenarios = new ArrayList<>();
        boolean bad = false;
        for (Path f : files) {
            try {
                scenarios.add(Scenario.parse(f.toString(), Files.readString(f, StandardCharsets.UTF_8)));
            } catch (IOException e) {
                err.println(f + ": cannot be read: " + e.getMessage());
                bad = true;
            } catch (YamlTree.Invalid e) {
                err.println(f + ":" + e.getMessage());
                bad = true;
            }
        }
        if (bad) {
            err.println("npu-lifecycle scenario: nothing was run");
            return 2;
        }
        int failed = 0;
        int i = 0;
        for (Scenario s : scenarios) {
            Path dir = work.resolve("scenario-" + i++);
            boolean ok = run(s, dir, install, out);
            failed += ok ? 0 : 1;
        }
        out.println((failed == 0 ? "PASS" : "FAIL") + ": " + (scenarios.size() - failed) + " of " + scenarios.size()
                + " scenarios passed");
        out.println((scenarios.size() - failed) + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }

    /** Runs one scenario on a fresh simulated cluster. @return whether every expectation held */
    static boolean run(Scenario s, Path dir, Path install, PrintStream out) {
        int perNpu = s.chipType.equals("310p") ? 2 : 1;
        SimSettings settings = new SimSettings(s.nodes, s.chips / perNpu, perNpu, s.chipType, s.driverVersion,
                s.timeScale, System.currentTimeMillis(), System.getProperty("npu.sim.logLevel", "WARN"));
        out.println("== scenario " + s.name + " (" + s.file + "): " + s.nodes + " node(s), clock x" + s.timeScale);
        long wall = System.nanoTime();
        try (SimCluster sim = new SimCluster(settings, dir, install, line -> { })) {
            sim.controlPlaneReplicas(s.controlPlanes);
            sim.markersOnTmpfs(s.uses("markersReadOnly") || s.uses("markersFull"));
            ScenarioRunner r = new ScenarioRunner(s, sim, out);
            String failure = r.execute();
            double secs = (System.nanoTime() - wall) / 1e9;
            if (!s.cases.isEmpty()) {
                int failedCases = 0;
                for (Scenario.Case c : s.cases) {
                    String f = failure != null ? "the scenario failed: " + failure
                            : r.caseFailures.getOrDefault(c.id(), "did not run");
                    boolean ok = PASSED.equals(f);
                    failedCases += ok ? 0 : 1;
                    out.printf("   CASE %s %s (%.1f s) | %s | %s | %s%s%n", ok ? "PASS" : "FAIL", c.id(),
                            r.caseSeconds.getOrDefault(c.id(), secs), c.category(), c.name(), c.outcome(),
                            ok ? "" : " :: " + f);
                }
                if (failure == null && failedCases > 0) {
                    failure = failedCases + " of " + s.cases.size() + " case(s) failed";
                }
            }
            if (failure == null) {
                out.printf("   PASS %s (%d steps, %d cases, %.1f s)%n", s.name, s.steps.size(), s.cases.size(), secs);
                return true;
            }
            out.printf("   FAIL %s (%.1f s): %s%n", s.name, secs, failure);
            out.println("   runtime logs: " + dir + "/*/home/console.log");
            return false;
        } catch (Exception e) {
            out.println("   FAIL " + s.name + ": the harness failed: " + e);
            return false;
        }
    }

    /** @return {@code null} when every step passed, else the failure */
    String execute() throws Exception {
        List<String> versions = new ArrayList<>(List.of("25.5.0", "25.2.0", "24.1.0.3"));
        for (Scenario.Step st : scenario.steps) {
            if (st.kind().equals("setVersion")) {
                versions.add((String) st.args().get("version"));
            }
        }
        versions.remove(scenario.driverVersion);
        sim.start(versions);
        if (!scenario.policy.isEmpty()) {
            sim.patchDriver(scenario.policy);
        }
        Waiter w = new Waiter(() -> { });
        try {
            w.until("every node installed and validated at " + scenario.driverVersion, Duration.ofSeconds(150), () -> {
                for (SimNode n : sim.nodes().values()) {
                    if (!sim.annotations(n.name()).getOrDefault(NodeKeys.DRIVER_VALIDATED, "")
                            .startsWith(scenario.driverVersion + "@")) {
                        return false;
                    }
                }
                return true;
            }, () -> "driver-validated: " + validated());
        } catch (Waiter.Timeout e) {
            return "install: " + e.getMessage();
        }
        for (SimNode n : sim.nodes().values()) {
            rebootsAtStart.put(n.name(), n.reboots());
        }
        t0 = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (Scenario.Case c : scenario.cases) {
            Thread t = new Thread(() -> {
                String f;
                try {
                    f = runSteps(c.steps(), c.id() + ": ");
                } catch (InterruptedException e) {
                    f = "interrupted";
                } catch (Exception e) {
                    f = "the harness failed: " + e;
                }
                caseSeconds.put(c.id(), (System.nanoTime() - t0) / 1e9);
                caseFailures.put(c.id(), f == null ? PASSED : f);
            }, "case-" + c.id());
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        String shared = scenario.steps.isEmpty() ? null : runSteps(scenario.steps, "");
        for (Thread t : threads) {
            t.join();
        }
        if (shared != null) {
            return shared;
        }
        // A driver unloaded in a running kernel fails every scenario, whether or not it asked about violations.
        int violations = sim.nodes().values().stream().mapToInt(SimNode::violations).sum();
        if (violations != 0) {
            return "the simulator recorded " + violations + " violation(s) (a driver unloaded in a running kernel); "
                    + "see io.npulifecycle:type=Simulator/Violations";
        }
        return null;
    }

    /**
     * Runs one sequence of steps (the shared ones, or one case's).
     *
     * @return {@code null} when every step passed, else the failure
     */
    private String runSteps(List<Scenario.Step> steps, String prefix) throws Exception {
        int index = 0;
        for (Scenario.Step st : steps) {
            index++;
            sleepUntil(st.at());
            String label = prefix + "step " + index + " (line " + st.line() + ", at " + st.at().toSeconds() + "s) "
                    + st.kind();
            try {
                if (st.kind().equals("expect")) {
                    String failure = expect(st, 200);
                    if (failure != null) {
                        return label + ": " + failure + " (checked at simulated " + simNow() + "s)";
                    }
                    out.println("   ok  " + label + " " + st.args() + " at simulated " + simNow() + "s");
                } else {
                    Scenario.Step when = (Scenario.Step) st.args().get("when");
                    if (when != null) {
                        String failure = expect(when, 20);
                        if (failure != null) {
                            return label + ": its condition (when, line " + when.line() + ") never held: " + failure
                                    + " (checked at simulated " + simNow() + "s)";
                        }
                    }
                    act(st);
                    out.println("   did " + label + " " + st.args() + " at simulated " + simNow() + "s");
                }
            } catch (RuntimeException e) {
                return label + ": " + e;
            }
        }
        return null;
    }

    private String validated() {
        StringBuilder sb = new StringBuilder();
        for (SimNode n : sim.nodes().values()) {
            sb.append(n.name()).append('=').append(sim.annotations(n.name()).get(NodeKeys.DRIVER_VALIDATED)).append(' ');
        }
        return sb.toString();
    }

    long simNow() {
        return (long) ((System.nanoTime() - t0) / 1e9 * scenario.timeScale);
    }

    private void sleepUntil(Duration at) throws InterruptedException {
        long wallNanos = (long) (at.toNanos() / scenario.timeScale);
        long wait = t0 + wallNanos - System.nanoTime();
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // the scenario's own schedule
        }
    }

    // ---- actions ----

    void act(Scenario.Step st) throws IOException, InterruptedException {
        Map<String, Object> a = st.args();
        SimNode n = a.containsKey("node") ? sim.nodes().get(String.valueOf(a.get("node"))) : null;
        switch (st.kind()) {
            case "wedge": n.simulator("wedge", a.get("npu"), a.get("chip")); break;
            case "recover": n.simulator("recover", a.get("npu"), a.get("chip")); break;
            case "setChip": n.simulator("setChip", a.get("npu"), a.get("chip"), a.get("state")); break;
            case "persistent": n.simulator("persistent", a.get("npu"), a.get("chip"), true); break;
            case "approve": sim.approve(n.name()); break;
            case "annotate": sim.annotate(n.name(), (String) a.get("key"), (String) a.get("value")); break;
            case "setPolicy": sim.patchDriver(a); break;
            case "setVersion": sim.patchDriver(Map.of("version", a.get("version"))); break;
            case "killAgent": n.killAgent(); break;
            case "killControlPlane":
                sim.killControlPlane((String) a.get("replica"), (Boolean) a.get("restart"));
                break;
            case "startControlPlane": sim.startControlPlane(Integer.parseInt((String) a.get("replica"))); break;
            case "apiGone": {
                // the API server compacted its history: every open watch ends with 410 Expired, and the next watch
                // requests are answered 410 Gone, so informers must list again (DESIGN.md, known traps)
                sim.cluster().failNextWatches((Integer) a.get("failNext"));
                sim.cluster().expireWatches();
                break;
            }
            case "apiUnreachable": {
                Duration d = (Duration) a.get("duration");
                sim.unreachableFor(Duration.ofNanos((long) (d.toNanos() / scenario.timeScale)));
                break;
            }
            case "clockJump":
                if ("control-plane".equals(a.get("node"))) {
                    sim.jumpControlPlaneClock((Duration) a.get("by"));
                } else {
                    n.jumpClock((Duration) a.get("by"));
                }
                break;
            case "markersReadOnly": n.markersReadOnly((Boolean) a.get("on")); break;
            case "markersFull": n.markersFull((Boolean) a.get("on")); break;
            case "apiOutage": {
                Duration d = (Duration) a.get("duration");
                sim.cluster().outageFor(Duration.ofNanos((long) (d.toNanos() / scenario.timeScale)),
                        EmbeddedCluster.OutageMode.SERVICE_UNAVAILABLE);
                break;
            }
            default: throw new IllegalStateException("unknown action " + st.kind());
        }
    }

    // ---- expectations ----

    String expect(Scenario.Step st, long pollMillis) throws InterruptedException {
        Duration within = st.within();
        long end = System.nanoTime() + (within == null ? 0 : (long) (within.toNanos() / scenario.timeScale));
        String failure;
        while (true) {
            try {
                failure = check(st.args());
            } catch (RuntimeException e) {
                failure = "could not check: " + e.getMessage();
            }
            if (failure == null || System.nanoTime() >= end) {
                break;
            }
            Thread.sleep(pollMillis); // poll period while waiting 'within'
        }
        Duration hold = (Duration) st.args().get("holdFor");
        if (failure != null || hold == null) {
            return failure;
        }
        // it holds: it must go on holding (nothing more happens: no second reboot, no label coming back)
        long holdEnd = System.nanoTime() + (long) (hold.toNanos() / scenario.timeScale);
        while (System.nanoTime() < holdEnd) {
            Thread.sleep(500); // poll period while checking 'holdFor'
            try {
                failure = check(st.args());
            } catch (RuntimeException e) {
                failure = null; // e.g. the node agent restarting: not a change of state
            }
            if (failure != null) {
                return "held, then stopped holding within holdFor " + hold.toSeconds() + "s: " + failure;
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    String check(Map<String, Object> e) {
        String which = (String) e.get("node");
        List<SimNode> nodes = "all".equals(which) ? List.copyOf(sim.nodes().values())
                : List.of(sim.nodes().get(which));
        for (SimNode n : nodes) {
            String name = n.name();
            if (e.containsKey("labels")) {
                String f = compare("label", name, sim.labels(name), (Map<String, String>) e.get("labels"));
                if (f != null) {
                    return f;
                }
            }
            if (e.containsKey("annotations")) {
                String f = compare("annotation", name, sim.annotations(name),
                        (Map<String, String>) e.get("annotations"));
                if (f != null) {
                    return f;
                }
            }
            if (e.containsKey("driverVersion")) {
                String v = sim.labels(name).get(NodeKeys.DRIVER_VERSION);
                if (!Objects.equals(e.get("driverVersion"), v)) {
                    return "driverVersion of " + name + ": expected " + e.get("driverVersion") + ", saw " + show(v);
                }
            }
            if (e.containsKey("upgradeState")) {
                String v = sim.labels(name).get(NodeKeys.DRIVER_UPGRADE_STATE);
                if (!Objects.equals(e.get("upgradeState"), v == null || v.isEmpty() ? null : v)) {
                    return "upgradeState of " + name + ": expected " + show((String) e.get("upgradeState"))
                            + ", saw " + show(v);
                }
            }
            if (e.containsKey("reboots")) {
                int r = n.reboots() - rebootsAtStart.getOrDefault(name, 0);
                if (r != (Integer) e.get("reboots")) {
                    return "reboots of " + name + " since the start: expected " + e.get("reboots") + ", saw " + r;
                }
            }
            if (e.containsKey("markers")) {
                Map<String, Object> mk = (Map<String, Object>) e.get("markers");
                if (mk.containsKey("driver-ready")) {
                    boolean present = n.marker("driver-ready") != null;
                    if (present != (Boolean) mk.get("driver-ready")) {
                        return "marker driver-ready on " + name + ": expected " + (present ? "absent" : "present")
                                + ", saw " + (present ? "present" : "absent");
                    }
                }
                if (mk.containsKey("reboot-required")) {
                    Properties rr = n.marker("reboot-required");
                    String reason = rr == null ? null : rr.getProperty("reason");
                    if (!Objects.equals(mk.get("reboot-required"), reason)) {
                        return "marker reboot-required on " + name + ": expected " + show((String) mk.get(
                                "reboot-required")) + ", saw " + show(reason);
                    }
                }
            }
            if (e.containsKey("events")) {
                for (Map<String, Object> ev : (List<Map<String, Object>>) e.get("events")) {
                    long count = sim.events(name).stream().filter(x -> Objects.equals(ev.get("reason"), x.getReason())
                            && (!ev.containsKey("messageContains") || (x.getMessage() != null
                                    && x.getMessage().contains((String) ev.get("messageContains"))))).count();
                    boolean ok = ev.containsKey("count") ? count == (Integer) ev.get("count") : count >= 1;
                    if (!ok) {
                        return "events on " + name + ": expected " + (ev.containsKey("count") ? ev.get("count") : ">= 1")
                                + " " + ev + ", saw " + count + " (reasons seen: " + sim.events(name).stream()
                                        .map(x -> x.getReason()).toList() + ")";
                    }
                }
            }
        }
        if (e.containsKey("mbean")) {
            Map<String, Object> mb = (Map<String, Object>) e.get("mbean");
            for (SimNode n : nodes) {
                Object v = n.jolokia().read((String) mb.get("name"), (String) mb.get("attribute"));
                String seen = v == null ? null : String.valueOf(v);
                String what = "MBean " + mb.get("name") + " " + mb.get("attribute") + " on " + n.name();
                if (mb.containsKey("equals") && !Objects.equals(mb.get("equals"), seen)) {
                    return what + ": expected " + show((String) mb.get("equals")) + ", saw " + show(seen);
                }
                if (mb.containsKey("contains") && (seen == null || !seen.contains((String) mb.get("contains")))) {
                    return what + ": expected to contain " + show((String) mb.get("contains")) + ", saw " + show(seen);
                }
                if (mb.containsKey("atLeast")) {
                    long num;
                    try {
                        num = seen == null ? Long.MIN_VALUE : Long.parseLong(seen.trim());
                    } catch (NumberFormatException x) {
                        num = Long.MIN_VALUE;
                    }
                    if (num < (Integer) mb.get("atLeast")) {
                        return what + ": expected at least " + mb.get("atLeast") + ", saw " + show(seen);
                    }
                }
            }
        }
        if (e.containsKey("violations")) {
            int total = nodes.stream().mapToInt(SimNode::violations).sum();
            if (total != (Integer) e.get("violations")) {
                return "violations: expected " + e.get("violations") + ", saw " + total;
            }
        }
        if (e.containsKey("status")) {
            GenericKubernetesResource cr = sim.npuOperatorCtl();
            Object status = cr == null ? null : cr.getAdditionalProperties().get("status");
            for (Map.Entry<String, String> x : ((Map<String, String>) e.get("status")).entrySet()) {
                Object v = path(status, x.getKey());
                String seen = v == null ? null : String.valueOf(v);
                if (!Objects.equals(x.getValue(), seen)) {
                    return "status." + x.getKey() + ": expected " + show(x.getValue()) + ", saw " + show(seen);
                }
            }
        }
        return null;
    }

    private static String compare(String what, String node, Map<String, String> actual, Map<String, String> expected) {
        for (Map.Entry<String, String> x : expected.entrySet()) {
            String v = actual.get(x.getKey());
            if (!Objects.equals(x.getValue(), v)) {
                return what + " " + x.getKey() + " on " + node + ": expected " + show(x.getValue()) + ", saw "
                        + show(v);
            }
        }
        return null;
    }

    private static String show(String v) {
        return v == null ? "absent" : "\"" + v + "\"";
    }

    /**
     * @param root the status object
     * @param path {@code a.b.c} with list selection {@code conditions[type=Complete].status}
     * @return the value, or {@code null}
     */
    @SuppressWarnings("unchecked")
    static Object path(Object root, String path) {
        Object cur = root;
        for (String part : path.split("\\.")) {
            String key = part;
            String selK = null;
            String selV = null;
            int b = part.indexOf('[');
            if (b > 0 && part.endsWith("]")) {
                key = part.substring(0, b);
                String sel = part.substring(b + 1, part.length() - 1);
                int eq = sel.indexOf('=');
                if (eq > 0) {
                    selK = sel.substring(0, eq);
                    selV = sel.substring(eq + 1);
                } else {
                    selK = "#";
                    selV = sel;
                }
            }
            if (!(cur instanceof Map)) {
                return null;
            }
            cur = ((Map<String, Object>) cur).get(key);
            if (selK != null) {
                if (!(cur instanceof List)) {
                    return null;
                }
                List<Object> l = (List<Object>) cur;
                Object found = null;
                if ("#".equals(selK)) {
                    int idx = Integer.parseInt(selV);
                    found = idx < l.size() ? l.get(idx) : null;
                } else {
                    for (Object o : l) {
                        if (o instanceof Map && selV.equals(String.valueOf(((Map<String, Object>) o).get(selK)))) {
                            found = o;
                        }
                    }
                }
                cur = found;
            }
        }
        return cur;
    }
}
