package io.npulifecycle.simulator.harness;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * A random fault schedule drawn from a seed ({@code npu-lifecycle chaos}), written as a scenario file that
 * {@code scenario} runs as it runs any other: the same seed, nodes, duration, policy and API server give the same
 * file, byte for byte ({@link SplittableRandom} seeded once, draws in a fixed order).
 *
 * <p>The faults ({@link Kind}) fall in the first part of the run (a chip broken for good, which survives reboots and
 * is left to a person by the recovery limit, is not drawn: the quiet period expects every node back in service); the last part, the quiet period (a quarter of the
 * run, at least {@value #MIN_QUIET_HOURS} h), has none: it starts by giving the cluster back to the policy (automatic
 * upgrade and recovery on, the administrator's cordons lifted, the budgets and workload pods deleted, wedges that
 * were meant to pass recovered) and then expects every node upgraded to the last version set, with no upgrade state,
 * no reboot request and schedulable, the rollout complete, and no violation of the simulator. The invariants of
 * {@link Invariants} are checked throughout ({@code invariants: all}).
 */
final class ChaosSchedule {

    /** The fault kinds and their weights (how often each is drawn relative to the others). */
    enum Kind {
        /** a chip wedges and recovers before the health-watch threshold: no reboot expected */
        TRANSIENT_WEDGE(6),
        /** a chip wedges until a reboot (the driver's dev_num=0 state: only a reboot brings it back) */
        LASTING_WEDGE(3),
        /** an approval of a node, given whether or not it waits for one */
        APPROVE(4),
        /** an approval annotation with a value that is not {@code true} */
        BAD_APPROVAL(1),
        /** the driver version changed: up, and back again */
        SET_VERSION(3),
        /** autoUpgrade or autoRecover switched */
        POLICY_FLIP(3),
        /** an administrator cordons a node and uncordons it later */
        ADMIN_CORDON(2),
        /** a workload pod under a PodDisruptionBudget that blocks its eviction, released later (real API server) */
        BLOCKING_POD(2),
        /** a node agent SIGKILLed (its DaemonSet restarts it) */
        KILL_AGENT(3),
        /** the control plane's leader SIGKILLed and restarted */
        KILL_CONTROL_PLANE(2),
        /** the API server unreachable for the runtimes, 30 s to 5 min */
        API_UNREACHABLE(2);

        final int weight;

        Kind(int weight) {
            this.weight = weight;
        }
    }

    /** The shortest quiet period, hours of simulated time. */
    static final int MIN_QUIET_HOURS = 3;
    /** The simulated instant a chaos run starts at (its {@code cluster.startTime}). */
    static final Instant START = Instant.parse("2026-12-07T00:00:00Z");
    /** The driver versions a run moves between. */
    static final List<String> VERSIONS = List.of("25.2.0", "25.5.0");
    /** Mean simulated seconds between two faults. */
    static final long MEAN_GAP_SECONDS = 1200;

    /**
     * One draw's settings.
     *
     * @param seed the seed
     * @param nodes nodes of the simulated cluster, 1 to 16
     * @param duration the run's simulated length, at least 4 hours
     * @param timeScale simulated seconds per wall-clock second
     * @param realApi whether the run is on the real API server (budgets and eviction exist only there)
     * @param policy the policy shorthand the run starts with ({@code policy:} of the file), as YAML flow text, or
     *        null for the default
     */
    record Settings(long seed, int nodes, Duration duration, double timeScale, boolean realApi, String policy) {
        Settings {
            if (nodes < 1 || nodes > 16) {
                throw new IllegalArgumentException("--nodes " + nodes + " is outside 1..16");
            }
            if (duration.compareTo(Duration.ofHours(4)) < 0 || duration.compareTo(Duration.ofDays(30)) > 0) {
                throw new IllegalArgumentException("--duration " + duration.toHours() + "h is outside 4h..30d");
            }
        }
    }

    /** The policy a run starts with when none is given: automatic, one node at a time, generous deadlines. */
    static final String DEFAULT_POLICY = "{autoUpgrade: true, maxParallelUpgrades: 1, autoRecover: true, "
            + "maxReboots: 20, window: 1h, upgradePolicy: {drain: {timeoutSeconds: 1800}, deadlines: "
            + "{podRestartSeconds: 3600, rebootingSeconds: 3600, validationSeconds: 3600}}}";

    private ChaosSchedule() {
    }

    /**
     * @param s what to draw
     * @return the scenario file's text
     */
    static String draw(Settings s) {
        SplittableRandom r = new SplittableRandom(s.seed());
        long total = s.duration().toSeconds();
        long quiet = Math.max(MIN_QUIET_HOURS * 3600L, total / 4);
        long faultsEnd = total - quiet;
        // steps by simulated second; several at one second keep their order
        TreeMap<Long, List<String>> steps = new TreeMap<>();
        Map<Kind, Integer> counts = new LinkedHashMap<>();
        List<String> cordoned = new ArrayList<>();
        List<String> budgets = new ArrayList<>();
        int version = 0;
        int pods = 0;
        long t = 60;
        while (true) {
            t += 1 + (long) (-Math.log(1 - r.nextDouble()) * MEAN_GAP_SECONDS);
            if (t >= faultsEnd) {
                break;
            }
            Kind k = kind(r, s.realApi());
            counts.merge(k, 1, Integer::sum);
            String node = "node-" + r.nextInt(s.nodes());
            String chip = "{node: " + node + ", npu: " + r.nextInt(8) + ", chip: 0}";
            switch (k) {
                case TRANSIENT_WEDGE -> {
                    add(steps, t, "wedge: " + chip);
                    add(steps, t + 30 + r.nextInt(60), "recover: " + chip);
                }
                case LASTING_WEDGE -> add(steps, t, "wedge: " + chip);
                case APPROVE -> add(steps, t, "approve: {node: " + node + "}");
                case BAD_APPROVAL -> add(steps, t, "annotate: {node: " + node
                        + ", key: npu.openfuyao.com/approve-reboot, value: \"yes\"}");
                case SET_VERSION -> {
                    version = 1 - version;
                    add(steps, t, "setVersion: {version: " + VERSIONS.get(version) + "}");
                }
                case POLICY_FLIP -> add(steps, t, "setPolicy: {" + (r.nextBoolean() ? "autoUpgrade" : "autoRecover")
                        + ": " + r.nextBoolean() + "}");
                case ADMIN_CORDON -> {
                    if (!cordoned.contains(node)) {
                        cordoned.add(node);
                        add(steps, t, "cordon: {node: " + node + "}");
                        long until = t + 600 + r.nextInt(3000);
                        if (until < faultsEnd) {
                            cordoned.remove(node);
                            add(steps, until, "uncordon: {node: " + node + "}");
                        }
                    }
                }
                case BLOCKING_POD -> {
                    String name = "work-" + pods++;
                    add(steps, t, "pod: {node: " + node + ", name: " + name + ", namespace: chaos, labels: {app: "
                            + name + "}}");
                    add(steps, t, "pdb: {name: " + name + ", namespace: chaos, selector: {app: " + name
                            + "}, minAvailable: 1}");
                    long until = t + 600 + r.nextInt(3000);
                    if (until < faultsEnd) {
                        add(steps, until, "deletePdb: {name: " + name + ", namespace: chaos}");
                    } else {
                        budgets.add(name);
                    }
                }
                case KILL_AGENT -> add(steps, t, "killAgent: {node: " + node + "}");
                case KILL_CONTROL_PLANE -> add(steps, t, "killControlPlane: {replica: leader, restart: true}");
                case API_UNREACHABLE -> add(steps, t, "apiUnreachable: {duration: " + (30 + r.nextInt(270)) + "s}");
            }
        }
        // the quiet period: the cluster given back to the policy, then what must follow within it
        long q = faultsEnd;
        add(steps, q, "setPolicy: {autoUpgrade: true, autoRecover: true}");
        for (String n : cordoned) {
            add(steps, q, "uncordon: {node: " + n + "}");
        }
        for (String b : budgets) {
            add(steps, q, "deletePdb: {name: " + b + ", namespace: chaos}");
        }
        long bound = quiet - 600;
        add(steps, q, "expect: {node: all, driverVersion: " + VERSIONS.get(version) + ", upgradeState: null, "
                + "unschedulable: false, labels: {npu.openfuyao.com/reboot-required: null}, "
                + "annotations: {npu.openfuyao.com/cordoned-by: null}, within: " + bound + "s}");
        add(steps, q, "expect: {status: {\"conditions[type=Complete].status\": \"True\"}, within: 600s}");
        add(steps, q, "expect: {node: all, violations: 0}");

        StringBuilder y = new StringBuilder();
        y.append("# npu-lifecycle chaos --seed ").append(s.seed()).append(" --nodes ").append(s.nodes())
                .append(" --duration ").append(s.duration().toHours()).append("h --api ")
                .append(s.realApi() ? "real" : "embedded").append(" (docs/simulator.md \"Chaos runs\")\n");
        y.append("# faults: ").append(counts.isEmpty() ? "none" : counts.entrySet().stream()
                .map(e -> e.getKey().name().toLowerCase(Locale.ROOT).replace('_', '-') + " " + e.getValue())
                .reduce((a, b) -> a + ", " + b).orElse("")).append("; quiet from ").append(q).append(" s\n");
        y.append("name: \"chaos seed ").append(s.seed()).append(": ").append(s.nodes()).append(" node(s), ")
                .append(s.duration().toHours()).append(" simulated hours\"\n");
        y.append("cluster: {nodes: ").append(s.nodes()).append(", chips: 8, driverVersion: ").append(VERSIONS.get(0))
                .append(", startTime: \"").append(START).append("\"}\n");
        y.append("policy: ").append(s.policy() == null ? DEFAULT_POLICY : s.policy()).append('\n');
        y.append("timeScale: ").append(ScenarioCommand.number(s.timeScale())).append('\n');
        y.append("invariants: all\n");
        y.append("steps:\n");
        for (Map.Entry<Long, List<String>> e : steps.entrySet()) {
            for (String step : e.getValue()) {
                y.append("  - at: ").append(e.getKey()).append("s\n    ").append(step).append('\n');
            }
        }
        return y.toString();
    }

    /** @return a kind drawn by weight (budgets only on the real API server) */
    private static Kind kind(SplittableRandom r, boolean realApi) {
        int total = 0;
        for (Kind k : Kind.values()) {
            total += allowed(k, realApi) ? k.weight : 0;
        }
        int pick = r.nextInt(total);
        for (Kind k : Kind.values()) {
            if (!allowed(k, realApi)) {
                continue;
            }
            pick -= k.weight;
            if (pick < 0) {
                return k;
            }
        }
        throw new IllegalStateException("no kind drawn");
    }

    private static boolean allowed(Kind k, boolean realApi) {
        return realApi || k != Kind.BLOCKING_POD;
    }

    private static void add(TreeMap<Long, List<String>> steps, long at, String step) {
        steps.computeIfAbsent(at, x -> new ArrayList<>()).add(step);
    }
}
