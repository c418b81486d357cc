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
import java.util.Set;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;

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
    /** The step in progress of the shared steps ({@code ""}) and of each case (its id): for {@link #doing()}. */
    private final Map<String, String> current = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile String phase = "starting its cluster";
    private final Timeline timeline;
    private volatile String wallStart = "";

    ScenarioRunner(Scenario scenario, SimCluster sim, PrintStream out) {
        this.scenario = scenario;
        this.sim = sim;
        this.out = out;
        this.timeline = new Timeline(view(sim), () -> t0 == 0 ? 0 : simNow(),
                () -> t0 == 0 ? 0 : (System.nanoTime() - t0) / 1e9);
        registerHandlers();
    }

    /** @return what the timeline reads from the simulated cluster */
    private static Timeline.ClusterView view(SimCluster sim) {
        return new Timeline.ClusterView() {
            @Override
            public List<String> nodeNames() {
                return List.copyOf(sim.nodes().keySet());
            }

            @Override
            public io.fabric8.kubernetes.api.model.Node node(String name) {
                return sim.node(name);
            }

            @Override
            public List<io.fabric8.kubernetes.api.model.Event> events() {
                return sim.allEvents();
            }

            @Override
            public int reboots(String name) {
                return sim.nodes().get(name).reboots();
            }

            @Override
            public String marker(String name, String marker) {
                Properties p = sim.nodes().get(name).marker(marker);
                return p == null ? null : p.getProperty("reason", "present");
            }
        };
    }

    /**
     * @param id a case of the scenario
     * @return null when it passed, else its failure ({@code did not run} when it has no verdict)
     */
    String caseFailure(String id) {
        String f = caseFailures.getOrDefault(id, "did not run");
        return PASSED.equals(f) ? null : f;
    }

    /** @return the wall-clock seconds from the first step to the case's verdict, or {@code otherwise} */
    double caseSeconds(String id, double otherwise) {
        return caseSeconds.getOrDefault(id, otherwise);
    }

    /** @return what runs now, for the message on SIGTERM: the steps in progress, or the phase */
    String doing() {
        List<String> now = new ArrayList<>(current.values());
        if (now.isEmpty()) {
            return phase;
        }
        return String.join("; ", now) + " (at simulated " + simNow() + "s)";
    }

    /** @return the timeline of the run ({@link Timeline#render}), or "" before the first step */
    String timeline() {
        return t0 == 0 ? "" : timeline.render(wallStart);
    }

    /** @return {@code 200s}, {@code 1.5s}: a step's time as the file can give it */
    static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms / 1000.0 + "s";
    }

    /** @return {@code null} when every step passed, else the failure */
    String execute() throws Exception {
        List<String> versions = new ArrayList<>(List.of("25.5.0", "25.2.0", "24.1.0.3"));
        for (Scenario.Step st : scenario.steps) {
            if (st.action() instanceof Action.SetVersion v) {
                versions.add(v.version());
            }
        }
        versions.remove(scenario.driverVersion);
        sim.start(versions);
        for (SimNode n : sim.nodes().values()) {
            out.println("   " + n.name() + ": Jolokia " + n.jolokia().url() + ", credentials in "
                    + sim.writeJolokiaCredentials(n));
        }
        if (!scenario.policy.isEmpty()) {
            sim.patchDriver(scenario.policy);
        }
        phase = "waiting for every node to be installed and validated at " + scenario.driverVersion;
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
        wallStart = java.time.format.DateTimeFormatter.ISO_LOCAL_TIME.format(java.time.LocalTime.now(
                java.time.ZoneOffset.UTC).truncatedTo(java.time.temporal.ChronoUnit.SECONDS)) + "Z";
        timeline.poll(); // the state at the start, before the scenario's clock starts
        t0 = System.nanoTime();
        phase = "between steps";
        java.util.concurrent.ScheduledExecutorService poller = java.util.concurrent.Executors
                .newSingleThreadScheduledExecutor(task -> {
                    Thread t = new Thread(task, "timeline-poller");
                    t.setDaemon(true);
                    return t;
                });
        poller.scheduleWithFixedDelay(timeline::poll, POLL_MILLIS, POLL_MILLIS,
                java.util.concurrent.TimeUnit.MILLISECONDS);
        try {
            return runAll();
        } finally {
            poller.shutdownNow();
            poller.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
            timeline.poll();
        }
    }

    /** How often the timeline reads the cluster, in wall-clock milliseconds. */
    private static final long POLL_MILLIS = 500;

    private String runAll() throws Exception {
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
        String key = prefix.isEmpty() ? "" : prefix;
        int index = 0;
        try {
            for (Scenario.Step st : steps) {
                index++;
                String label = prefix + "step " + index + " (line " + st.line() + ", at " + seconds(st.at()) + ") "
                        + st.yaml();
                current.put(key, "waiting for " + label);
                sleepUntil(st.at());
                current.put(key, label);
                String failure = step(st, label);
                if (failure != null) {
                    timeline.add(where(st.action()), "FAILED " + failure);
                    return failure;
                }
            }
            return null;
        } finally {
            current.remove(key);
        }
    }

    /** @return null when the step passed, else its failure, naming it by {@code label} */
    private String step(Scenario.Step st, String label) throws Exception {
        try {
            if (st.action() instanceof Action.Expect e) {
                String failure = expect(e, 200);
                if (failure != null) {
                    return label + ": " + failure + " (checked at simulated " + simNow() + "s)";
                }
                out.println("   ok  " + label + " at simulated " + simNow() + "s");
                return null;
            }
            if (st.when() != null) {
                String failure = expect(st.when(), 20);
                if (failure != null) {
                    return label + ": its condition (when, line " + st.whenLine() + ") never held: " + failure
                            + " (checked at simulated " + simNow() + "s)";
                }
            }
            act(st.action());
            timeline.add(where(st.action()), "did " + st.yaml());
            out.println("   did " + label + " at simulated " + simNow() + "s");
            return null;
        } catch (RuntimeException e) {
            return label + ": " + e;
        }
    }

    /** @return the node an action is about, for the timeline, or {@link Timeline#CLUSTER} */
    private String where(Action a) {
        String node = a instanceof Action.OnNode o ? o.node() : a instanceof Action.ClockJump j ? j.node()
                : a instanceof Action.Expect e ? e.node() : null;
        return node != null && sim.nodes().containsKey(node) ? node : Timeline.CLUSTER;
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

    /**
     * Does one action on the simulated cluster.
     *
     * @param <A> the action's record
     */
    @FunctionalInterface
    interface Handler<A extends Action> {
        /**
         * @param action the action, checked against the scenario's cluster when the file was parsed
         * @throws IOException when the simulator or the API server cannot be reached
         * @throws InterruptedException when interrupted
         */
        void run(A action) throws IOException, InterruptedException;
    }

    private final Map<Class<? extends Action>, Handler<? extends Action>> handlers = new HashMap<>();

    private <A extends Action> void on(Class<A> type, Handler<A> handler) {
        handlers.put(type, handler);
    }

    /** One handler per action record ({@link Action.Expect} is checked by {@link #expect}). */
    private void registerHandlers() {
        on(Action.Wedge.class, a -> node(a).simulator("wedge", a.npu(), a.chip()));
        on(Action.Recover.class, a -> node(a).simulator("recover", a.npu(), a.chip()));
        on(Action.SetChip.class, a -> node(a).simulator("setChip", a.npu(), a.chip(), a.state()));
        on(Action.Persistent.class, a -> node(a).simulator("persistent", a.npu(), a.chip(), true));
        on(Action.Approve.class, a -> sim.approve(a.node()));
        on(Action.Annotate.class, a -> sim.annotate(a.node(), a.key(), a.value().value()));
        on(Action.SetPolicy.class, a -> sim.patchDriver(a.policy().driver()));
        on(Action.SetVersion.class, a -> sim.patchDriver(Map.of("version", a.version())));
        on(Action.KillAgent.class, a -> node(a).killAgent());
        on(Action.KillControlPlane.class, a -> sim.killControlPlane(a.replica(), a.restart()));
        on(Action.StartControlPlane.class, a -> sim.startControlPlane(Integer.parseInt(a.replica())));
        // the API server compacted its history: every open watch ends with 410 Expired, and the next watch
        // requests are answered 410 Gone, so informers must list again (DESIGN.md, known traps)
        // on a real server: etcd compacted for real and the runtimes' watches closed, so they resume into 410 Gone
        on(Action.ApiGone.class, a -> out.println("   api: " + sim.apiGone(a.failNext())));
        on(Action.ApiUnreachable.class, a -> sim.unreachableFor(wall(a.duration())));
        on(Action.ApiOutage.class, a -> out.println("   api: " + sim.unavailableFor(wall(a.duration()))));
        on(Action.ClockJump.class, a -> {
            if (Action.ClockJump.CONTROL_PLANE.equals(a.node())) {
                sim.jumpControlPlaneClock(a.by());
            } else {
                sim.nodes().get(a.node()).jumpClock(a.by());
            }
        });
        on(Action.MarkersReadOnly.class, a -> node(a).markersReadOnly(a.on()));
        on(Action.MarkersFull.class, a -> node(a).markersFull(a.on()));
        on(Action.PodStep.class, a -> sim.workloads().addPod(a));
        on(Action.Pdb.class, a -> sim.workloads().applyPdb(a));
        on(Action.DeletePdb.class, a -> sim.workloads().deletePdb(a.name(), a.namespace()));
        on(Action.Cordon.class, a -> sim.workloads().setUnschedulable(a.node(), true));
        on(Action.Uncordon.class, a -> sim.workloads().setUnschedulable(a.node(), false));
    }

    /** @return the action types that have a handler */
    Set<Class<? extends Action>> handledActions() {
        return Set.copyOf(handlers.keySet());
    }

    private SimNode node(Action.OnNode a) {
        return sim.nodes().get(a.node());
    }

    /** @return the wall-clock length of a simulated duration */
    private Duration wall(Duration simulated) {
        return Duration.ofNanos((long) (simulated.toNanos() / scenario.timeScale));
    }

    @SuppressWarnings("unchecked")
    void act(Action action) throws IOException, InterruptedException {
        Handler<Action> h = (Handler<Action>) handlers.get(action.getClass());
        if (h == null) {
            throw new IllegalStateException("no handler for action " + action.kind());
        }
        h.run(action);
    }

    // ---- expectations ----

    String expect(Action.Expect e, long pollMillis) throws InterruptedException {
        Duration within = e.within();
        long end = System.nanoTime() + (within == null ? 0 : (long) (within.toNanos() / scenario.timeScale));
        String failure;
        while (true) {
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

    String check(Action.Expect e) {
        String which = e.node();
        List<SimNode> nodes = Action.Expect.ALL.equals(which) ? List.copyOf(sim.nodes().values())
                : List.of(sim.nodes().get(which));
        for (SimNode n : nodes) {
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
            for (SimNode n : nodes) {
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
            for (String ref : e.pods().absent()) {
                var p = w.pod(ref);
                if (p != null) {
                    return "pod " + ref + ": expected absent, saw " + (p.getMetadata().getDeletionTimestamp() != null
                            ? "terminating" : "present");
                }
            }
        }
        if (e.violations() != null) {
            int total = nodes.stream().mapToInt(SimNode::violations).sum();
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
