package io.npulifecycle.simulator.harness;

import io.npulifecycle.api.node.NodeKeys;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;

/**
 * Runs one scenario on its simulated cluster ({@link ScenarioCommand} starts the cluster and prints the verdict): the
 * shared steps and, concurrently, each reliability case's, each at its simulated time; an {@code expect:} is checked
 * by {@link Expectations}, every other action by its handler. It prints a line per step as the file gives it, and
 * records what happened in a {@link Timeline}.
 */
public final class ScenarioRunner {

    private final Scenario scenario;
    private final ScenarioCluster sim;
    private final PrintStream out;
    private volatile long t0;
    /** {@link System#nanoTime()} when the run began, the cluster was up, every node was installed, the steps ended */
    private volatile long begunAt;
    private volatile long clusterUpAt;
    private volatile long installedAt;
    /** when the wait for the install ended, passed or not */
    private volatile long installEndedAt;
    private volatile long stepsEndedAt;
    private final Map<String, Integer> rebootsAtStart = new java.util.concurrent.ConcurrentHashMap<>();
    private final Expectations expectations;
    /** Verdict per case id: {@code null} = passed, else the failure; and its wall-clock seconds. */
    private final Map<String, String> caseFailures = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, Double> caseSeconds = new java.util.concurrent.ConcurrentHashMap<>();
    private static final String PASSED = "";
    /** The step in progress of the shared steps ({@code ""}) and of each case (its id): for {@link #doing()}. */
    private final Map<String, String> current = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile String phase = "starting its cluster";
    private final Timeline timeline;
    private volatile String wallStart = "";

    ScenarioRunner(Scenario scenario, ScenarioCluster sim, PrintStream out) {
        this.scenario = scenario;
        this.sim = sim;
        this.out = out;
        this.expectations = new Expectations(sim, rebootsAtStart, scenario);
        this.timeline = new Timeline(view(sim), () -> t0 == 0 ? 0 : simNow(),
                () -> t0 == 0 ? 0 : (System.nanoTime() - t0) / 1e9);
        registerHandlers();
    }

    /** @return what the timeline reads from the simulated cluster */
    private static Timeline.ClusterView view(ScenarioCluster sim) {
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

    /**
     * Where the run's wall time went, for the suite's measurements (docs/benchmarks.md): {@code cluster start X s,
     * install Y s, steps Z s} (seconds, one decimal), as far as the run got.
     *
     * @return the phases reached, or "" before the cluster was started
     */
    String phases() {
        StringBuilder b = new StringBuilder();
        if (begunAt != 0 && clusterUpAt != 0) {
            b.append(String.format(java.util.Locale.ROOT, "cluster start %.1f s", (clusterUpAt - begunAt) / 1e9));
        }
        if (clusterUpAt != 0 && installEndedAt != 0) {
            b.append(String.format(java.util.Locale.ROOT, ", install %.1f s%s", (installEndedAt - clusterUpAt) / 1e9,
                    installedAt == 0 ? " (failed)" : ""));
        }
        if (installedAt != 0 && stepsEndedAt != 0) {
            b.append(String.format(java.util.Locale.ROOT, ", steps %.1f s", (stepsEndedAt - installedAt) / 1e9));
        }
        return b.toString();
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
        begunAt = System.nanoTime();
        sim.start(extraVersions());
        return executeStarted();
    }

    /** @return the driver versions the registry holds beyond the installed one: the scenario's targets and more */
    List<String> extraVersions() {
        List<String> versions = new ArrayList<>(List.of("25.5.0", "25.2.0", "24.1.0.3"));
        for (Scenario.Step st : scenario.steps) {
            if (st.action() instanceof Action.SetVersion v) {
                versions.add(v.version());
            }
        }
        versions.remove(scenario.driverVersion);
        return versions;
    }

    /**
     * The run on a cluster {@link ScenarioCluster#start started} with {@link #extraVersions()}: waits for every node to
     * be installed and validated, then runs the steps ({@link #execute()}; a test starts the cluster itself to
     * change something first).
     *
     * @return {@code null} when every step passed, else the failure
     */
    String executeStarted() throws Exception {
        clusterUpAt = System.nanoTime();
        for (ScenarioNode n : sim.nodes().values()) {
            out.println("   " + n.name() + ": Jolokia " + n.jolokiaAddress() + ", credentials in "
                    + sim.writeJolokiaCredentials(n));
        }
        if (!scenario.policy.isEmpty()) {
            sim.patchDriver(scenario.policy);
        }
        phase = "waiting for every node to be installed and validated at " + scenario.driverVersion;
        // a runtime that keeps exiting (a refused configuration, a port in use) fails the install now, naming it
        Waiter w = new Waiter(() -> { }, sim::checkRuntimes);
        try {
            w.until("every node installed and validated at " + scenario.driverVersion, sim.installTimeout(), () -> {
                for (ScenarioNode n : sim.nodes().values()) {
                    if (!sim.annotations(n.name()).getOrDefault(NodeKeys.DRIVER_VALIDATED, "")
                            .startsWith(scenario.driverVersion + "@")) {
                        return false;
                    }
                }
                return true;
            }, () -> "driver-validated: " + validated());
        } catch (Waiter.Timeout | CrashLoopException e) {
            installEndedAt = System.nanoTime();
            return "install: " + e.getMessage();
        }
        installEndedAt = System.nanoTime();
        for (ScenarioNode n : sim.nodes().values()) {
            rebootsAtStart.put(n.name(), n.reboots());
        }
        wallStart = java.time.format.DateTimeFormatter.ISO_LOCAL_TIME.format(java.time.LocalTime.now(
                java.time.ZoneOffset.UTC).truncatedTo(java.time.temporal.ChronoUnit.SECONDS)) + "Z";
        if (scenario.startTime != null) {
            long jump = sim.setSimulatedTime(scenario.startTime);
            out.println("   clock: every runtime's simulated time set to " + scenario.startTime
                    + " (cluster.startTime; a jump of " + Math.round(jump / 1000.0) + " simulated s)");
        }
        timeline.poll(); // the state at the start, before the scenario's clock starts
        t0 = System.nanoTime();
        installedAt = t0;
        phase = "between steps";
        java.util.concurrent.ScheduledExecutorService poller = java.util.concurrent.Executors
                .newSingleThreadScheduledExecutor(task -> {
                    Thread t = new Thread(task, "timeline-poller");
                    t.setDaemon(true);
                    return t;
                });
        poller.scheduleWithFixedDelay(timeline::poll, POLL_MILLIS, POLL_MILLIS,
                java.util.concurrent.TimeUnit.MILLISECONDS);
        invariants = new Invariants(scenario.invariants, sim, rebootsAtStart, scenario.startTime == null
                ? Long.MIN_VALUE : scenario.startTime.getEpochSecond(), scenario.policy);
        if (invariants.enabled()) {
            out.println("   invariants checked throughout: " + String.join(", ", scenario.invariants));
            poller.scheduleWithFixedDelay(() -> {
                Invariants.Violation v = invariants.check(simNow(), false);
                if (v != null && reported.compareAndSet(false, true)) {
                    timeline.add(Timeline.CLUSTER, "BROKEN " + v);
                }
            }, POLL_MILLIS, POLL_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
        try {
            String failure = runAll();
            if (invariants.enabled()) {
                Invariants.Violation v = invariants.check(simNow(), true);
                for (String line : invariants.memoryReport()) {
                    out.println("   node-agent memory (VmRSS, simulated s): " + line);
                }
                if (v != null) {
                    return verdict(v, failure);
                }
                out.println("   invariants held: " + String.join(", ", scenario.invariants) + " (checked every "
                        + POLL_MILLIS + " ms of wall clock, " + simNow() + " simulated s)");
            }
            return failure;
        } finally {
            stepsEndedAt = System.nanoTime();
            poller.shutdownNow();
            poller.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
            timeline.poll();
        }
    }

    /** The contract's invariants, when the scenario asks for them; set when the steps' clock starts. */
    private volatile Invariants invariants;
    private final java.util.concurrent.atomic.AtomicBoolean reported = new java.util.concurrent.atomic.AtomicBoolean();

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
        int violations = sim.nodes().values().stream().mapToInt(ScenarioNode::violations).sum();
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
                String failure;
                try {
                    sleepUntil(st.at());
                    current.put(key, label);
                    failure = step(st, label);
                } catch (CrashLoopException e) {
                    failure = label + ": " + e.getMessage() + " (before its time came)";
                } catch (InvariantBroken e) {
                    failure = e.getMessage() + " (while " + label + " waited for its time)";
                }
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

    /**
     * @return null when the step passed, else its failure, naming it by {@code label}; a runtime that keeps exiting
     *         fails it at once, with that runtime's last error ({@link CrashLoopException})
     */
    private String step(Scenario.Step st, String label) throws Exception {
        try {
            if (st.action() instanceof Action.Expect e) {
                String failure = expectations.expect(e, 200);
                if (failure != null) {
                    return label + ": " + failure + " (checked at simulated " + simNow() + "s)";
                }
                out.println("   ok  " + label + " at simulated " + simNow() + "s");
                return null;
            }
            if (st.when() != null) {
                String failure = expectations.expect(st.when(), 20);
                if (failure != null) {
                    return label + ": its condition (when, line " + st.whenLine() + ") never held: " + failure
                            + " (checked at simulated " + simNow() + "s)";
                }
            }
            Invariants inv = invariants;
            if (inv != null) {
                inv.doing(st.action());
            }
            act(st.action());
            if (inv != null) {
                inv.did(st.action(), simNow());
            }
            timeline.add(where(st.action()), "did " + st.yaml());
            out.println("   did " + label + " at simulated " + simNow() + "s");
            return null;
        } catch (CrashLoopException e) {
            return label + ": " + e.getMessage();
        } catch (RuntimeException e) {
            // e.g. the node agent does not answer a fault injection: because it keeps exiting?
            CrashLoopException loop = sim.crashLoop();
            return label + ": " + (loop != null ? loop.getMessage() : describe(e));
        }
    }

    /**
     * @return what went wrong in a step, as a user reads it: the harness's own refusals by their message, the API
     *         server's answers by their code and message (not the client's dump), anything else as it is
     */
    static String describe(RuntimeException e) {
        if (e instanceof IllegalStateException || e instanceof UnsupportedOperationException) {
            return e.getMessage();
        }
        if (e instanceof io.fabric8.kubernetes.client.KubernetesClientException k && k.getCode() > 0) {
            String m = k.getStatus() != null && k.getStatus().getMessage() != null ? k.getStatus().getMessage()
                    : k.getMessage();
            return "the API server answered " + k.getCode() + ": " + m;
        }
        return e.toString();
    }

    /** @return the node an action is about, for the timeline, or {@link Timeline#CLUSTER} */
    private String where(Action a) {
        String node = a instanceof Action.OnNode o ? o.node() : a instanceof Action.ClockJump j ? j.node()
                : a instanceof Action.Expect e ? e.node() : null;
        return node != null && sim.nodes().containsKey(node) ? node : Timeline.CLUSTER;
    }

    private String validated() {
        StringBuilder sb = new StringBuilder();
        for (ScenarioNode n : sim.nodes().values()) {
            sb.append(n.name()).append('=').append(sim.annotations(n.name()).get(NodeKeys.DRIVER_VALIDATED)).append(' ');
        }
        return sb.toString();
    }

    long simNow() {
        return (long) ((System.nanoTime() - t0) / 1e9 * scenario.timeScale);
    }

    /**
     * Waits for a step's simulated time, checking on the way that no runtime keeps exiting.
     *
     * @throws CrashLoopException when one does
     */
    private void sleepUntil(Duration at) throws InterruptedException {
        long wallNanos = (long) (at.toNanos() / scenario.timeScale);
        while (true) {
            sim.checkRuntimes();
            Invariants inv = invariants;
            if (inv != null && inv.violation() != null) {
                throw new InvariantBroken(inv.violation());
            }
            long wait = t0 + wallNanos - System.nanoTime();
            if (wait <= 0) {
                return;
            }
            long slice = Math.min(wait, GUARD_NANOS);
            Thread.sleep(slice / 1_000_000, (int) (slice % 1_000_000)); // the scenario's own schedule
        }
    }

    /** How often a wait for a step's time checks the runtimes, in wall-clock nanoseconds. */
    private static final long GUARD_NANOS = 500_000_000L;

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
        on(Action.Label.class, a -> sim.workloads().label(a.node(), a.key(), a.value().value()));
        on(Action.DeletePod.class, a -> sim.workloads().deletePod(a));
        on(Action.SetPodReady.class, a -> sim.workloads().setPodReady(a));
        on(Action.RemoveFinalizers.class, a -> sim.workloads().removeFinalizers(a));
        on(Action.DeleteNode.class, a -> sim.deleteNode(a.node()));
        on(Action.RegisterNode.class, a -> sim.registerNode(a.node()));
        on(Action.DeleteCr.class, a -> {
            // the spec as the scenario made it, for a createCr: what the operator's file says
            GenericKubernetesResource cr = sim.npuOperatorCtl();
            Object spec = cr == null ? null : cr.getAdditionalProperties().get("spec");
            sim.deleteNpuOperatorCtl();
            deletedSpec = spec instanceof Map<?, ?> m ? copy(m) : new LinkedHashMap<>();
        });
        on(Action.CreateCr.class, a -> {
            if (deletedSpec == null) {
                throw new IllegalStateException("createCr: no deleteCr step deleted the NPUOperatorCtl before it "
                        + "(createCr applies the CR as it was when deleted)");
            }
            sim.createNpuOperatorCtl(deletedSpec);
        });
        on(Action.RestartApiServer.class, a -> out.println("   api: kube-apiserver restarted, away "
                + sim.restartApiServer().toMillis() + " ms of wall clock"));
        on(Action.NodeNotReady.class, a -> sim.nodeNotReady(a.node()));
        on(Action.NodeReady.class, a -> sim.nodeReady(a.node()));
    }

    /** {@code spec} of the NPUOperatorCtl when the last {@code deleteCr} deleted it: what {@code createCr} applies. */
    private volatile Map<String, Object> deletedSpec;

    @SuppressWarnings("unchecked")
    private static Map<String, Object> copy(Map<?, ?> m) {
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(String.valueOf(k), v instanceof Map<?, ?> inner ? copy(inner)
                : v instanceof List<?> l ? new ArrayList<>(l) : v));
        return out;
    }

    /** @return the action types that have a handler */
    Set<Class<? extends Action>> handledActions() {
        return Set.copyOf(handlers.keySet());
    }

    private ScenarioNode node(Action.OnNode a) {
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

    /**
     * The failure of a run that broke an invariant.
     *
     * @param v the first violation the checker recorded
     * @param failure what stopped the steps, or null when they all ran: a step loop stopped by this violation names
     *        it first ({@link InvariantBroken}, "... (while step N waited for its time)")
     * @return {@code failure} when it begins with the violation, else the violation and, after "; and ", the failure
     */
    static String verdict(Invariants.Violation v, String failure) {
        String broken = v.toString();
        if (failure == null) {
            return broken;
        }
        return failure.startsWith(broken) ? failure : broken + "; and " + failure;
    }

    /** An invariant broken while a step waits for its time: the run stops there. */
    static final class InvariantBroken extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InvariantBroken(Invariants.Violation v) {
            super(v.toString());
        }
    }
}
