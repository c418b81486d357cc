package io.npulifecycle.simulator.harness;

import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;

/**
 * Checks a scenario's {@code expect:} (and an action's {@code when:}) against the simulated cluster: the node's labels,
 * annotations, taints and {@code spec.unschedulable} and its Events (from the API server), its markers and reboot count
 * (the simulator's files), MBean attributes (Jolokia), samples of the node agent's {@code /metrics}, pods, and the
 * NPUOperatorCtl's existence and status. A failure says what was
 * expected and what was seen.
 */
final class Expectations {

    private final ScenarioCluster sim;
    private final Map<String, Integer> rebootsAtStart;
    private final Scenario scenario;

    /**
     * @param sim the cluster
     * @param rebootsAtStart each node's reboot count at the first step ({@code reboots:} counts from there), filled
     *        in before the first check
     * @param scenario the scenario (its time scale: simulated seconds per wall-clock second)
     */
    Expectations(ScenarioCluster sim, Map<String, Integer> rebootsAtStart, Scenario scenario) {
        this.sim = sim;
        this.rebootsAtStart = rebootsAtStart;
        this.scenario = scenario;
    }

    /**
     * Checks until it holds or {@code within} passes, then, with {@code holdFor}, that it goes on holding. Before
     * each check, {@link ScenarioCluster#checkRuntimes()}: a runtime that keeps exiting ends the wait at once.
     *
     * @param pollMillis wall-clock milliseconds between checks while waiting
     * @return null when it held, else what was seen
     * @throws InterruptedException when interrupted
     * @throws CrashLoopException when a runtime of the cluster keeps exiting on its own
     */
    String expect(Action.Expect e, long pollMillis) throws InterruptedException {
        Duration within = e.within();
        long end = System.nanoTime() + (within == null ? 0 : (long) (within.toNanos() / scenario.timeScale));
        String failure;
        while (true) {
            sim.checkRuntimes();
            try {
                failure = check(e);
            } catch (RuntimeException x) {
                failure = "could not check: " + x.getMessage();
            }
            if (failure == null || System.nanoTime() >= end) {
                break;
            }
            Thread.sleep(pollMillis); // poll period while waiting 'within'
        }
        Duration hold = e.holdFor();
        if (failure != null || hold == null) {
            return failure;
        }
        // it holds: it must go on holding (nothing more happens: no second reboot, no label coming back)
        long holdEnd = System.nanoTime() + (long) (hold.toNanos() / scenario.timeScale);
        while (System.nanoTime() < holdEnd) {
            Thread.sleep(500); // poll period while checking 'holdFor'
            sim.checkRuntimes();
            try {
                failure = check(e);
            } catch (RuntimeException x) {
                failure = null; // e.g. the node agent restarting: not a change of state
            }
            if (failure != null) {
                return "held, then stopped holding within holdFor " + hold.toSeconds() + "s: " + failure;
            }
        }
        return null;
    }

    /** @return null when the expectation holds now, else what was seen instead */
    String check(Action.Expect e) {
        String which = e.node();
        List<ScenarioNode> nodes = Action.Expect.ALL.equals(which) ? List.copyOf(sim.nodes().values())
                : List.of(sim.nodes().get(which));
        for (ScenarioNode n : nodes) {
            String name = n.name();
            if (e.labels() != null) {
                String f = compare("label", name, sim.labels(name), e.labels());
                if (f != null) {
                    return f;
                }
            }
            if (e.annotations() != null) {
                String f = compare("annotation", name, sim.annotations(name), e.annotations());
                if (f != null) {
                    return f;
                }
            }
            if (e.driverVersion() != null) {
                String v = sim.labels(name).get(NodeKeys.DRIVER_VERSION);
                if (!Objects.equals(e.driverVersion(), v)) {
                    return "driverVersion of " + name + ": expected " + e.driverVersion() + ", saw " + show(v);
                }
            }
            if (e.upgradeState() != null) {
                String v = sim.labels(name).get(NodeKeys.DRIVER_UPGRADE_STATE);
                String expected = e.upgradeState().value();
                if (!Objects.equals(expected, v == null || v.isEmpty() ? null : v)) {
                    return "upgradeState of " + name + ": expected " + show(expected) + ", saw " + show(v);
                }
            }
            if (e.unschedulable() != null) {
                boolean v = sim.workloads().unschedulable(name);
                if (v != e.unschedulable()) {
                    return "unschedulable of " + name + ": expected " + e.unschedulable() + ", saw " + v;
                }
            }
            if (e.taints() != null) {
                String f = compare("taint", name, sim.workloads().taints(name), e.taints());
                if (f != null) {
                    return f;
                }
            }
            if (e.reboots() != null) {
                int r = n.reboots() - rebootsAtStart.getOrDefault(name, 0);
                if (r != e.reboots()) {
                    return "reboots of " + name + " since the start: expected " + e.reboots() + ", saw " + r;
                }
            }
            if (e.markers() != null) {
                Action.MarkerCheck mk = e.markers();
                if (mk.driverReady() != null) {
                    boolean present = n.marker("driver-ready") != null;
                    if (present != mk.driverReady()) {
                        return "marker driver-ready on " + name + ": expected " + (present ? "absent" : "present")
                                + ", saw " + (present ? "present" : "absent");
                    }
                }
                if (mk.rebootRequired() != null) {
                    Properties rr = n.marker("reboot-required");
                    String reason = rr == null ? null : rr.getProperty("reason");
                    if (!Objects.equals(mk.rebootRequired().value(), reason)) {
                        return "marker reboot-required on " + name + ": expected " + show(mk.rebootRequired().value())
                                + ", saw " + show(reason);
                    }
                }
            }
            if (e.events() != null) {
                for (Action.EventCheck ev : e.events()) {
                    long count = sim.events(name).stream().filter(x -> Objects.equals(ev.reason(), x.getReason())
                            && (ev.messageContains() == null || (x.getMessage() != null
                                    && x.getMessage().contains(ev.messageContains())))).count();
                    boolean ok = ev.count() != null ? count == ev.count() : count >= 1;
                    if (!ok) {
                        return "events on " + name + ": expected " + (ev.count() != null ? ev.count() : ">= 1")
                                + " event(s) " + ev.yaml() + ", saw " + count + " (reasons seen: "
                                + sim.events(name).stream().map(x -> x.getReason()).toList() + ")";
                    }
                }
            }
        }
        if (e.mbean() != null) {
            Action.MBeanCheck mb = e.mbean();
            for (ScenarioNode n : nodes) {
                Object v = n.jolokia().read(mb.name(), mb.attribute());
                String seen = v == null ? null : String.valueOf(v);
                String what = "MBean " + mb.name() + " " + mb.attribute() + " on " + n.name();
                if (mb.equalTo() != null && !Objects.equals(mb.equalTo(), seen)) {
                    return what + ": expected " + show(mb.equalTo()) + ", saw " + show(seen);
                }
                if (mb.contains() != null && (seen == null || !seen.contains(mb.contains()))) {
                    return what + ": expected to contain " + show(mb.contains()) + ", saw " + show(seen);
                }
                if (mb.atLeast() != null) {
                    long num;
                    try {
                        num = seen == null ? Long.MIN_VALUE : Long.parseLong(seen.trim());
                    } catch (NumberFormatException x) {
                        num = Long.MIN_VALUE;
                    }
                    if (num < mb.atLeast()) {
                        return what + ": expected at least " + mb.atLeast() + ", saw " + show(seen);
                    }
                }
            }
        }
        if (e.pods() != null) {
            Workloads w = sim.workloads();
            for (String ref : e.pods().present()) {
                var p = w.pod(ref);
                if (p == null || p.getMetadata().getDeletionTimestamp() != null) {
                    return "pod " + ref + ": expected present, saw " + (p == null ? "absent" : "terminating");
                }
            }
            for (String ref : e.pods().terminating()) {
                var p = w.pod(ref);
                if (p == null || p.getMetadata().getDeletionTimestamp() == null) {
                    return "pod " + ref + ": expected terminating, saw " + (p == null ? "absent" : "present");
                }
            }
            for (String ref : e.pods().absent()) {
                var p = w.pod(ref);
                if (p != null) {
                    return "pod " + ref + ": expected absent, saw " + (p.getMetadata().getDeletionTimestamp() != null
                            ? "terminating" : "present");
                }
            }
        }
        if (e.metrics() != null) {
            for (ScenarioNode n : nodes) {
                String text;
                try {
                    text = sim.metrics(n);
                } catch (java.io.IOException x) {
                    return "metrics of " + n.name() + ": could not be read: " + x.getMessage();
                }
                List<PrometheusText.Sample> samples;
                try {
                    samples = PrometheusText.parse(text);
                } catch (IllegalArgumentException x) {
                    return "metrics of " + n.name() + ": " + x.getMessage();
                }
                java.util.Set<String> families = PrometheusText.families(text);
                for (Action.MetricCheck m : e.metrics()) {
                    String f = metricFailure(samples, families, m);
                    if (f != null) {
                        return "metric " + m.yaml() + " on " + n.name() + ": " + f;
                    }
                }
            }
        }
        if (e.apiRequests() != null) {
            List<AuditLog.Request> requests;
            try {
                requests = sim.apiRequests();
            } catch (java.io.IOException x) {
                return "apiRequests: the audit log could not be read: " + x.getMessage();
            }
            for (Action.RequestCheck c : e.apiRequests()) {
                String f = AuditLog.failure(requests, c, scenario.timeScale);
                if (f != null) {
                    return "apiRequests " + c.yaml() + ": " + f;
                }
            }
        }
        if (e.npuOperatorCtl() != null) {
            boolean exists = sim.npuOperatorCtl() != null;
            if (exists != e.npuOperatorCtl().equals("present")) {
                return "npuOperatorCtl: expected " + e.npuOperatorCtl() + ", saw " + (exists ? "present" : "absent");
            }
        }
        if (e.violations() != null) {
            int total = nodes.stream().mapToInt(ScenarioNode::violations).sum();
            if (total != e.violations()) {
                return "violations: expected " + e.violations() + ", saw " + total;
            }
        }
        if (e.status() != null) {
            GenericKubernetesResource cr = sim.npuOperatorCtl();
            Object status = cr == null ? null : cr.getAdditionalProperties().get("status");
            for (Map.Entry<String, String> x : e.status().entrySet()) {
                Object v = path(status, x.getKey());
                String seen = v == null ? null : String.valueOf(v);
                if (!Objects.equals(x.getValue(), seen)) {
                    return "status." + x.getKey() + ": expected " + show(x.getValue()) + ", saw " + show(seen);
                }
            }
        }
        return null;
    }

    /**
     * @param samples a {@code /metrics} page's samples
     * @param families the families its {@code # TYPE} lines declare
     * @param m the check: the sum of the samples of its name whose labels include its labels
     * @return null when it holds, else what was seen ({@code equals} and {@code atLeast} need at least one sample;
     *         {@code atMost} holds for none)
     */
    static String metricFailure(List<PrometheusText.Sample> samples, java.util.Set<String> families,
            Action.MetricCheck m) {
        if (!PrometheusText.declared(m.name(), families) && samples.stream().noneMatch(x -> x.name().equals(m.name()))) {
            return "the node agent's /metrics has no family of " + m.name() + " (a name mistyped? docs/metrics.md "
                    + "lists the node agent's families; the control plane's are not on it)";
        }
        List<PrometheusText.Sample> match = samples.stream().filter(x -> x.name().equals(m.name())
                && x.labels().entrySet().containsAll(m.labels().entrySet())).toList();
        double sum = match.stream().mapToDouble(PrometheusText.Sample::value).sum();
        boolean ok = m.equalTo() != null ? !match.isEmpty() && sum == m.equalTo()
                : m.atLeast() != null ? !match.isEmpty() && sum >= m.atLeast()
                : match.isEmpty() || sum <= m.atMost();
        return ok ? null : "saw " + (match.isEmpty() ? "no such sample" : match.size() + " sample(s) summing to " + sum);
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
