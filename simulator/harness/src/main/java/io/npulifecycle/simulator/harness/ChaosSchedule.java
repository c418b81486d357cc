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
 *
 * <p>A schedule is drawn by fault ({@link #schedule}: one {@link Unit} per fault, its steps together) and then
 * written as text ({@link Drawn#render(List)}), so that a shrink ({@link ChaosShrinker}) can write any subset of the
 * faults with the quiet period that subset needs.
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
     * One step of a schedule.
     *
     * @param at the simulated second it runs at
     * @param order its place in the draw: steps at one second run in this order
     * @param text the step's action, one line of flow YAML, e.g. {@code wedge: {node: node-0, npu: 3, chip: 0}}
     */
    record Step(long at, int order, String text) {
    }

    /**
     * One fault as drawn: the steps that stand or fall together when a schedule is shrunk ({@link ChaosShrinker}),
     * so that any subset of units is still a coherent schedule: a wedge with its recover, a cordon with its uncordon,
     * a pod with its budget and the budget's deletion; any other fault is one step.
     *
     * @param index its place among the schedule's units, from 0, in the order drawn
     * @param kind what it is
     * @param steps its steps in the order drawn; empty for a draw that changed nothing (a cordon of a node cordoned
     *        already)
     * @param version the driver version it sets ({@link Kind#SET_VERSION}), else null
     * @param standingCordon the node it cordons and does not uncordon before the quiet period (its uncordon is
     *        then the quiet period's), else null
     * @param standingBudget the budget it creates and does not delete before the quiet period (deleted by the quiet
     *        period), else null
     */
    record Unit(int index, Kind kind, List<Step> steps, String version, String standingCordon,
            String standingBudget) {
        Unit {
            steps = List.copyOf(steps);
        }

        /** @return {@code transient-wedge}: the kind as the file's header and the output name it */
        String kindName() {
            return ChaosSchedule.kindName(kind);
        }

        /** @return its steps on one line: {@code at 3600s wedge: {...}; at 3690s recover: {...}} */
        String describe() {
            return String.join("; ", steps.stream().map(x -> "at " + x.at() + "s " + x.text()).toList());
        }
    }

    /**
     * A schedule drawn from a seed, by fault, before it is written as text: {@link #render(List)} writes any subset of
     * its units as a scenario file, with the quiet period that subset needs.
     *
     * @param settings what was drawn
     * @param units every fault drawn, in the order drawn ({@link Unit#index()} is the position)
     * @param quietStart the simulated second the quiet period starts at
     * @param quiet the quiet period's length, seconds
     */
    record Drawn(Settings settings, List<Unit> units, long quietStart, long quiet) {
        Drawn {
            units = List.copyOf(units);
        }

        /** @return the units that have steps, in the order drawn: the ones a shrink keeps or drops */
        List<Unit> faults() {
            return units.stream().filter(u -> !u.steps().isEmpty()).toList();
        }

        /** @return the whole schedule's scenario file: {@link ChaosSchedule#draw} */
        String render() {
            return render(units);
        }

        /**
         * Writes some of the units as a scenario file. The quiet period is the one these units need: the policy given
         * back, an uncordon for each kept cordon without its own, a deletion for each kept budget without its own,
         * and the expectation that every node ends at the last version a kept unit set ({@code 25.2.0}, the
         * installed one, when none sets one). The header's fault counts are the kept units'; the name says how many
         * units were kept when not all were.
         *
         * @param kept units of this schedule, any order (written in the order drawn)
         * @return the scenario file's text
         */
        String render(List<Unit> kept) {
            List<Unit> in = kept.stream().sorted(java.util.Comparator.comparingInt(Unit::index)).toList();
            // steps by simulated second; several at one second keep the order they were drawn in
            TreeMap<Long, List<String>> steps = new TreeMap<>();
            in.stream().flatMap(u -> u.steps().stream()).sorted(java.util.Comparator.comparingInt(Step::order))
                    .forEach(x -> add(steps, x.at(), x.text()));
            Map<Kind, Integer> counts = new LinkedHashMap<>();
            String version = VERSIONS.get(0);
            List<String> cordoned = new ArrayList<>();
            List<String> budgets = new ArrayList<>();
            for (Unit u : in) {
                counts.merge(u.kind(), 1, Integer::sum);
                version = u.version() != null ? u.version() : version;
                if (u.standingCordon() != null) {
                    cordoned.add(u.standingCordon());
                }
                if (u.standingBudget() != null) {
                    budgets.add(u.standingBudget());
                }
            }
            // the quiet period: the cluster given back to the policy, then what must follow within it
            long q = quietStart;
            add(steps, q, "setPolicy: {autoUpgrade: true, autoRecover: true}");
            for (String n : cordoned) {
                add(steps, q, "uncordon: {node: " + n + "}");
            }
            for (String b : budgets) {
                add(steps, q, "deletePdb: {name: " + b + ", namespace: chaos}");
            }
            long bound = quiet - 600;
            add(steps, q, "expect: {node: all, driverVersion: " + version + ", upgradeState: null, "
                    + "unschedulable: false, labels: {npu.openfuyao.com/reboot-required: null}, "
                    + "annotations: {npu.openfuyao.com/cordoned-by: null}, within: " + bound + "s}");
            add(steps, q, "expect: {status: {\"conditions[type=Complete].status\": \"True\"}, within: 600s}");
            add(steps, q, "expect: {node: all, violations: 0}");

            Settings s = settings;
            StringBuilder y = new StringBuilder();
            y.append("# npu-lifecycle chaos --seed ").append(s.seed()).append(" --nodes ").append(s.nodes())
                    .append(" --duration ").append(s.duration().toHours()).append("h --api ")
                    .append(s.realApi() ? "real" : "embedded").append(" (docs/simulator.md \"Chaos runs\")\n");
            y.append("# faults: ").append(counts.isEmpty() ? "none" : counts.entrySet().stream()
                    .map(e -> kindName(e.getKey()) + " " + e.getValue())
                    .reduce((a, b) -> a + ", " + b).orElse("")).append("; quiet from ").append(q).append(" s\n");
            y.append("name: \"chaos seed ").append(s.seed());
            if (!in.containsAll(faults())) {
                y.append(" shrunk to ").append(in.size()).append(" of ").append(faults().size()).append(" faults");
            }
            y.append(": ").append(s.nodes()).append(" node(s), ").append(s.duration().toHours())
                    .append(" simulated hours\"\n");
            y.append("cluster: {nodes: ").append(s.nodes()).append(", chips: 8, driverVersion: ")
                    .append(VERSIONS.get(0)).append(", startTime: \"").append(START).append("\"}\n");
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
    }

    /**
     * @param s what to draw
     * @return the scenario file's text: {@code schedule(s).render()}
     */
    static String draw(Settings s) {
        return schedule(s).render();
    }

    /**
     * Draws a schedule: the faults' times (exponential gaps of mean {@value #MEAN_GAP_SECONDS} s from 60 s on, until
     * the quiet period), each one's kind by weight, its node and chip, and what its kind needs (how long a transient
     * wedge lasts, when a cordon or a budget is lifted), in that fixed order.
     *
     * @param s what to draw
     * @return the schedule, by fault
     */
    static Drawn schedule(Settings s) {
        SplittableRandom r = new SplittableRandom(s.seed());
        long total = s.duration().toSeconds();
        long quiet = Math.max(MIN_QUIET_HOURS * 3600L, total / 4);
        long faultsEnd = total - quiet;
        List<Unit> units = new ArrayList<>();
        // nodes cordoned at the time of the draw, whose uncordon is not drawn yet
        List<String> cordoned = new ArrayList<>();
        int[] order = {0};
        int version = 0;
        int pods = 0;
        long t = 60;
        while (true) {
            t += 1 + (long) (-Math.log(1 - r.nextDouble()) * MEAN_GAP_SECONDS);
            if (t >= faultsEnd) {
                break;
            }
            Kind k = kind(r, s.realApi());
            String node = "node-" + r.nextInt(s.nodes());
            String chip = "{node: " + node + ", npu: " + r.nextInt(8) + ", chip: 0}";
            List<Step> steps = new ArrayList<>();
            java.util.function.BiConsumer<Long, String> step = (at, text) -> steps.add(new Step(at, order[0]++,
                    text));
            String setsVersion = null;
            String standingCordon = null;
            String standingBudget = null;
            switch (k) {
                case TRANSIENT_WEDGE -> {
                    step.accept(t, "wedge: " + chip);
                    step.accept(t + 30 + r.nextInt(60), "recover: " + chip);
                }
                case LASTING_WEDGE -> step.accept(t, "wedge: " + chip);
                case APPROVE -> step.accept(t, "approve: {node: " + node + "}");
                case BAD_APPROVAL -> step.accept(t, "annotate: {node: " + node
                        + ", key: npu.openfuyao.com/approve-reboot, value: \"yes\"}");
                case SET_VERSION -> {
                    version = 1 - version;
                    setsVersion = VERSIONS.get(version);
                    step.accept(t, "setVersion: {version: " + setsVersion + "}");
                }
                case POLICY_FLIP -> step.accept(t, "setPolicy: {" + (r.nextBoolean() ? "autoUpgrade" : "autoRecover")
                        + ": " + r.nextBoolean() + "}");
                case ADMIN_CORDON -> {
                    if (!cordoned.contains(node)) {
                        cordoned.add(node);
                        step.accept(t, "cordon: {node: " + node + "}");
                        long until = t + 600 + r.nextInt(3000);
                        if (until < faultsEnd) {
                            cordoned.remove(node);
                            step.accept(until, "uncordon: {node: " + node + "}");
                        } else {
                            standingCordon = node;
                        }
                    }
                }
                case BLOCKING_POD -> {
                    String name = "work-" + pods++;
                    step.accept(t, "pod: {node: " + node + ", name: " + name + ", namespace: chaos, labels: {app: "
                            + name + "}}");
                    step.accept(t, "pdb: {name: " + name + ", namespace: chaos, selector: {app: " + name
                            + "}, minAvailable: 1}");
                    long until = t + 600 + r.nextInt(3000);
                    if (until < faultsEnd) {
                        step.accept(until, "deletePdb: {name: " + name + ", namespace: chaos}");
                    } else {
                        standingBudget = name;
                    }
                }
                case KILL_AGENT -> step.accept(t, "killAgent: {node: " + node + "}");
                case KILL_CONTROL_PLANE -> step.accept(t, "killControlPlane: {replica: leader, restart: true}");
                case API_UNREACHABLE -> step.accept(t, "apiUnreachable: {duration: " + (30 + r.nextInt(270))
                        + "s}");
            }
            units.add(new Unit(units.size(), k, steps, setsVersion, standingCordon, standingBudget));
        }
        return new Drawn(s, units, faultsEnd, quiet);
    }

    /** @return {@code transient-wedge} for {@link Kind#TRANSIENT_WEDGE} */
    static String kindName(Kind k) {
        return k.name().toLowerCase(Locale.ROOT).replace('_', '-');
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
