package io.npulifecycle.simulator.harness;

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

    static final String P = "npu.openfuyao.com/";

    private final Scenario scenario;
    private final SimCluster sim;
    private final PrintStream out;
    private long t0;
    private final Map<String, Integer> rebootsAtStart = new HashMap<>();

    ScenarioRunner(Scenario scenario, SimCluster sim, PrintStream out) {
        this.scenario = scenario;
        this.sim = sim;
        this.out = out;
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
            ScenarioRunner r = new ScenarioRunner(s, sim, out);
            String failure = r.execute();
            double secs = (System.nanoTime() - wall) / 1e9;
            if (failure == null) {
                out.printf("   PASS %s (%d steps, %.1f s)%n", s.name, s.steps.size(), secs);
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
                    if (!sim.annotations(n.name()).getOrDefault(P + "driver-validated", "")
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
        int index = 0;
        for (Scenario.Step st : scenario.steps) {
            index++;
            sleepUntil(st.at());
            String label = "step " + index + " (line " + st.line() + ", at " + st.at().toSeconds() + "s) " + st.kind();
            try {
                if (st.kind().equals("expect")) {
                    String failure = expect(st);
                    if (failure != null) {
                        return label + ": " + failure + " (checked at simulated " + simNow() + "s)";
                    }
                    out.println("   ok  " + label + " " + st.args());
                } else {
                    act(st);
                    out.println("   did " + label + " " + st.args());
                }
            } catch (RuntimeException e) {
                return label + ": " + e.getMessage();
            }
        }
        // A driver unloaded in a running kernel fails every scenario, whether or not it asked about violations.
        int violations = sim.nodes().values().stream().mapToInt(SimNode::violations).sum();
        if (violations != 0) {
            return "the simulator recorded " + violations + " violation(s) (a driver unloaded in a running kernel); "
                    + "see io.npulifecycle:type=Simulator/Violations";
        }
        return null;
    }

    private String validated() {
        StringBuilder sb = new StringBuilder();
        for (SimNode n : sim.nodes().values()) {
            sb.append(n.name()).append('=').append(sim.annotations(n.name()).get(P + "driver-validated")).append(' ');
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

    void act(Scenario.Step st) throws IOException {
        Map<String, Object> a = st.args();
        SimNode n = a.containsKey("node") ? sim.nodes().get((String) a.get("node")) : null;
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
            case "killControlPlane": sim.restartControlPlane(true); break;
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

    String expect(Scenario.Step st) throws InterruptedException {
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
                return failure;
            }
            Thread.sleep(200); // poll period while waiting 'within'
        }
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
                String v = sim.labels(name).get(P + "driver-version");
                if (!Objects.equals(e.get("driverVersion"), v)) {
                    return "driverVersion of " + name + ": expected " + e.get("driverVersion") + ", saw " + show(v);
                }
            }
            if (e.containsKey("upgradeState")) {
                String v = sim.labels(name).get(P + "driver-upgrade-state");
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
