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
 * run, at least {@value #MIN_QUIET_HOURS} h), has none: it starts by giving the cluster back (deleted nodes
 * registered, NotReady ones Ready, a deleted NPUOperatorCtl awaited gone and created again) and back to the policy
 * (automatic upgrade and recovery on, a maintenance window removed, the administrator's cordons lifted, the budgets
 * deleted; wedges meant to pass were recovered by their own units) and then expects every node upgraded to the last version set, with no upgrade state,
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
        API_UNREACHABLE(2),
        /** a node's Node object deleted ({@code kubectl delete node}) and registered again 5 to 30 min later */
        NODE_DELETED(2),
        /** a node's kubelet silent (NotReady) for 2 to 20 min (real API server: its node-lifecycle controller) */
        NODE_NOT_READY(2),
        /** an upgrade maintenance window of 1 to 4 h set around the simulated time, removed 1 to 6 h later */
        MAINTENANCE_WINDOW(2),
        /** the NPUOperatorCtl deleted and applied again 5 to 30 min later (real API server: its finalizer) */
        CR_DELETED(1),
        /** kube-apiserver killed and started again, etcd kept (real API server) */
        API_SERVER_RESTART(1);

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

    /**
     * The policy a run starts with when none is given: automatic, one node at a time, generous deadlines. Both
     * drains wait 5400 s, longer than a drawn blocking budget is held (10 to 60 minutes, {@link Kind#BLOCKING_POD})
     * plus the time the drain may start before it: a drain that times out leaves the node to a person (the upgrade's
     * {@code upgrade-failed}, the recovery's {@code recovery-drain-failed}, docs/upgrade.md "Drain"), which the quiet
     * period, expecting every node back in service, would report as a failure of a correct product.
     */
    static final String DEFAULT_POLICY = "{autoUpgrade: true, maxParallelUpgrades: 1, autoRecover: true, "
            + "maxReboots: 20, window: 1h, upgradePolicy: {drain: {timeoutSeconds: 5400}, deadlines: "
            + "{podRestartSeconds: 3600, rebootingSeconds: 3600, validationSeconds: 3600}}, "
            + "recoveryPolicy: {drain: {timeoutSeconds: 5400}}}";

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
     * @param standing what else it leaves for the quiet period to give back ({@link Standing}), else null
     */
    record Unit(int index, Kind kind, List<Step> steps, String version, String standingCordon,
            String standingBudget, Standing standing) {
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
     * What a fault leaves standing into the quiet period, which gives it back before its expectations.
     *
     * @param deletedNode a node whose Node object it deleted and did not register again (registered by the quiet
     *        period), else null
     * @param notReadyNode a node it made NotReady and not Ready again (made Ready by the quiet period), else null
     * @param window whether it set a maintenance window and did not remove it (removed by the quiet period)
     * @param crDeleted whether it deleted the NPUOperatorCtl and did not create it again (the quiet period waits for
     *        the deletion's end and creates it)
     */
    record Standing(String deletedNode, String notReadyNode, boolean window, boolean crDeleted) {
    }

    /** How long the quiet period and a {@link Kind#CR_DELETED} wait for the NPUOperatorCtl's deletion, seconds. */
    static final long CR_GONE_WITHIN_SECONDS = 1800;

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
         * units were kept when not all were; a unit without steps counts for nothing.
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
            List<String> deleted = new ArrayList<>();
            List<String> notReady = new ArrayList<>();
            boolean window = false;
            boolean crDeleted = false;
            for (Unit u : in) {
                if (!u.steps().isEmpty()) {
                    // a draw without steps (it would have failed or changed nothing) is no fault of the run
                    counts.merge(u.kind(), 1, Integer::sum);
                }
                version = u.version() != null ? u.version() : version;
                if (u.standingCordon() != null) {
                    cordoned.add(u.standingCordon());
                }
                if (u.standingBudget() != null) {
                    budgets.add(u.standingBudget());
                }
                Standing st = u.standing();
                if (st != null) {
                    if (st.deletedNode() != null) {
                        deleted.add(st.deletedNode());
                    }
                    if (st.notReadyNode() != null) {
                        notReady.add(st.notReadyNode());
                    }
                    window |= st.window();
                    crDeleted |= st.crDeleted();
                }
            }
            // the quiet period: the cluster given back (the nodes, then the CR, then the policy), then what must
            // follow within it
            long q = quietStart;
            for (String n : deleted) {
                add(steps, q, "registerNode: {node: " + n + "}");
            }
            for (String n : notReady) {
                add(steps, q, "nodeReady: {node: " + n + "}");
            }
            if (crDeleted) {
                add(steps, q, "expect: {npuOperatorCtl: absent, within: " + CR_GONE_WITHIN_SECONDS + "s}");
                add(steps, q, "createCr: {}");
            }
            add(steps, q, "setPolicy: {autoUpgrade: true, autoRecover: true" + (window
                    ? ", upgradePolicy: {maintenanceWindow: null}" : "") + "}");
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
     * wedge lasts, when a cordon, a budget, a node's absence, a maintenance window or the CR's deletion is lifted),
     * in that fixed order.
     *
     * <p>Faults that would fail or mean nothing are drawn as units without steps (the draws are made all the same, so
     * the rest of the schedule does not move): a cordon of a node cordoned already; any fault naming a node while its
     * Node object is deleted (no Node to approve, cordon, label or put a pod on; its agent is gone); a node deleted or
     * made NotReady while it is already, or while another unit's steps on it are still to come (a cordon that its
     * deletion would lift, a pod that it would take); a change of the NPUOperatorCtl (version, policy, window) while
     * it is deleted, and its deletion while another unit's change of it is still to come.
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
        // node -> [first, last] simulated seconds of each unit's steps on it; node -> its absences (deleted or
        // NotReady); the NPUOperatorCtl's changes and deletions, as [first, last] of each unit
        Map<String, List<long[]>> onNode = new java.util.HashMap<>();
        Map<String, List<long[]>> deletedSpans = new java.util.HashMap<>();
        Map<String, List<long[]>> absentSpans = new java.util.HashMap<>();
        List<long[]> crChanges = new ArrayList<>();
        List<long[]> crDeletions = new ArrayList<>();
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
            Standing standing = null;
            long now = t;
            boolean nodeGone = overlaps(deletedSpans.get(node), now, now);
            boolean crGone = overlaps(crDeletions, now, now);
            switch (k) {
                case TRANSIENT_WEDGE -> {
                    long until = t + 30 + r.nextInt(60);
                    if (!nodeGone) {
                        step.accept(t, "wedge: " + chip);
                        step.accept(until, "recover: " + chip);
                    }
                }
                case LASTING_WEDGE -> {
                    if (!nodeGone) {
                        step.accept(t, "wedge: " + chip);
                    }
                }
                case APPROVE -> {
                    if (!nodeGone) {
                        step.accept(t, "approve: {node: " + node + "}");
                    }
                }
                case BAD_APPROVAL -> {
                    if (!nodeGone) {
                        step.accept(t, "annotate: {node: " + node
                                + ", key: npu.openfuyao.com/approve-reboot, value: \"yes\"}");
                    }
                }
                case SET_VERSION -> {
                    if (!crGone) {
                        version = 1 - version;
                        setsVersion = VERSIONS.get(version);
                        step.accept(t, "setVersion: {version: " + setsVersion + "}");
                    }
                }
                case POLICY_FLIP -> {
                    String flip = "setPolicy: {" + (r.nextBoolean() ? "autoUpgrade" : "autoRecover") + ": "
                            + r.nextBoolean() + "}";
                    if (!crGone) {
                        step.accept(t, flip);
                    }
                }
                case ADMIN_CORDON -> {
                    long until = t + 600 + r.nextInt(3000);
                    if (!cordoned.contains(node) && !nodeGone) {
                        cordoned.add(node);
                        step.accept(t, "cordon: {node: " + node + "}");
                        if (until < faultsEnd) {
                            cordoned.remove(node);
                            step.accept(until, "uncordon: {node: " + node + "}");
                        } else {
                            standingCordon = node;
                        }
                    }
                }
                case BLOCKING_POD -> {
                    long until = t + 600 + r.nextInt(3000);
                    if (!nodeGone) {
                        String name = "work-" + pods++;
                        step.accept(t, "pod: {node: " + node + ", name: " + name + ", namespace: chaos, labels: "
                                + "{app: " + name + "}}");
                        step.accept(t, "pdb: {name: " + name + ", namespace: chaos, selector: {app: " + name
                                + "}, minAvailable: 1}");
                        if (until < faultsEnd) {
                            step.accept(until, "deletePdb: {name: " + name + ", namespace: chaos}");
                        } else {
                            standingBudget = name;
                        }
                    }
                }
                case KILL_AGENT -> {
                    if (!nodeGone) {
                        step.accept(t, "killAgent: {node: " + node + "}");
                    }
                }
                case KILL_CONTROL_PLANE -> step.accept(t, "killControlPlane: {replica: leader, restart: true}");
                case API_UNREACHABLE -> step.accept(t, "apiUnreachable: {duration: " + (30 + r.nextInt(270))
                        + "s}");
                case NODE_DELETED -> {
                    long until = t + 300 + r.nextInt(1500);
                    long end = Math.min(until, faultsEnd);
                    // no other unit's step on the node may fall inside its absence (nor may it be absent already)
                    if (!overlaps(onNode.get(node), t, end) && !overlaps(absentSpans.get(node), t, end)) {
                        step.accept(t, "deleteNode: {node: " + node + "}");
                        if (until < faultsEnd) {
                            step.accept(until, "registerNode: {node: " + node + "}");
                        } else {
                            standing = new Standing(node, null, false, false);
                        }
                        deletedSpans.computeIfAbsent(node, x -> new ArrayList<>()).add(new long[] {t, end});
                        absentSpans.computeIfAbsent(node, x -> new ArrayList<>()).add(new long[] {t, end});
                    }
                }
                case NODE_NOT_READY -> {
                    long until = t + 120 + r.nextInt(1080);
                    long end = Math.min(until, faultsEnd);
                    // other faults may name a NotReady node (its Node is there); another absence may not overlap
                    if (!overlaps(absentSpans.get(node), t, end)) {
                        step.accept(t, "nodeNotReady: {node: " + node + "}");
                        if (until < faultsEnd) {
                            step.accept(until, "nodeReady: {node: " + node + "}");
                        } else {
                            standing = new Standing(null, node, false, false);
                        }
                        absentSpans.computeIfAbsent(node, x -> new ArrayList<>()).add(new long[] {t, end});
                    }
                }
                case MAINTENANCE_WINDOW -> {
                    String window = window(r, t);
                    long until = t + 3600 + r.nextInt(5 * 3600);
                    if (!crGone) {
                        step.accept(t, "setPolicy: {upgradePolicy: {maintenanceWindow: " + window + "}}");
                        if (until < faultsEnd) {
                            step.accept(until, "setPolicy: {upgradePolicy: {maintenanceWindow: null}}");
                        } else {
                            standing = new Standing(null, null, true, false);
                        }
                    }
                }
                case CR_DELETED -> {
                    long until = t + 300 + r.nextInt(1500);
                    long end = Math.min(until, faultsEnd);
                    // no change of the CR may fall inside its absence (it would fail: there is no CR to change)
                    if (!crGone && !overlaps(crChanges, t, end)) {
                        step.accept(t, "deleteCr: {}");
                        if (until < faultsEnd) {
                            step.accept(until, "expect: {npuOperatorCtl: absent, within: " + CR_GONE_WITHIN_SECONDS
                                    + "s}");
                            step.accept(until, "createCr: {}");
                        } else {
                            standing = new Standing(null, null, false, true);
                        }
                        crDeletions.add(new long[] {t, end});
                    }
                }
                case API_SERVER_RESTART -> step.accept(t, "restartApiServer: {}");
            }
            if (!steps.isEmpty()) {
                // a unit that leaves something standing holds it until the quiet period
                long[] span = {steps.get(0).at(), standingCordon != null || standingBudget != null
                        || standing != null ? faultsEnd : steps.stream().mapToLong(Step::at).max().orElse(t)};
                if (k == Kind.SET_VERSION || k == Kind.POLICY_FLIP || k == Kind.MAINTENANCE_WINDOW) {
                    crChanges.add(span);
                } else if (k != Kind.KILL_CONTROL_PLANE && k != Kind.API_UNREACHABLE && k != Kind.CR_DELETED
                        && k != Kind.API_SERVER_RESTART) {
                    onNode.computeIfAbsent(node, x -> new ArrayList<>()).add(span);
                }
            }
            units.add(new Unit(units.size(), k, steps, setsVersion, standingCordon, standingBudget, standing));
        }
        return new Drawn(s, units, faultsEnd, quiet);
    }

    /** The time zones a maintenance window is drawn in: UTC, and one with an offset (no daylight saving time). */
    static final List<String> WINDOW_ZONES = List.of("UTC", "Asia/Shanghai");
    private static final List<String> DAYS = List.of("mo", "tu", "we", "th", "fr", "sa", "su");

    /**
     * Draws an upgrade maintenance window around simulated second {@code t} of the run ({@link #START} + t): it opens
     * between 1 h (and the rounding) before and 2 h after, rounded down to a multiple of 5 minutes, lasts 1 to 4 h in quarter hours, in a zone of
     * {@link #WINDOW_ZONES}, every day or (one draw in two) only on the day it opens.
     *
     * @return the shorthand's {@code maintenanceWindow} mapping as flow YAML, e.g.
     *         {@code {startTime: "01:05", endTime: "03:35", timeZone: UTC}}
     */
    private static String window(SplittableRandom r, long t) {
        // on the simulated clock's five minutes (START is midnight UTC), so the file reads as an operator writes it
        long open = Math.floorDiv(t + (r.nextInt(37) - 12) * 300L, 300) * 300;
        int minutes = 60 + r.nextInt(13) * 15;
        java.time.ZoneId zone = java.time.ZoneId.of(WINDOW_ZONES.get(r.nextInt(WINDOW_ZONES.size())));
        boolean oneDay = r.nextBoolean();
        java.time.ZonedDateTime from = START.plusSeconds(open).atZone(zone);
        java.time.ZonedDateTime to = from.plusMinutes(minutes);
        java.time.format.DateTimeFormatter hhmm = java.time.format.DateTimeFormatter.ofPattern("HH:mm");
        return "{" + (oneDay ? "days: " + DAYS.get(from.getDayOfWeek().getValue() - 1) + ", " : "") + "startTime: \""
                + hhmm.format(from) + "\", endTime: \"" + hhmm.format(to) + "\", timeZone: " + zone.getId() + "}";
    }

    /** @return whether some span of {@code spans} (null: none) shares a second with [from, to] */
    private static boolean overlaps(List<long[]> spans, long from, long to) {
        if (spans == null) {
            return false;
        }
        for (long[] x : spans) {
            if (x[0] <= to && from <= x[1]) {
                return true;
            }
        }
        return false;
    }

    /** @return {@code transient-wedge} for {@link Kind#TRANSIENT_WEDGE} */
    static String kindName(Kind k) {
        return k.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** @return a kind drawn by weight, among those {@link #allowed} on this API server */
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

    /**
     * @return whether the kind is drawn on this API server: a blocking budget (eviction), a node NotReady (the
     *         node-lifecycle controller), the CR's deletion (its finalizer) and the API server's restart need the real
     *         one
     */
    static boolean allowed(Kind k, boolean realApi) {
        return realApi || !REAL_ONLY.contains(k);
    }

    /** The kinds drawn with {@code --api real} only. */
    static final java.util.Set<Kind> REAL_ONLY = java.util.EnumSet.of(Kind.BLOCKING_POD, Kind.NODE_NOT_READY,
            Kind.CR_DELETED, Kind.API_SERVER_RESTART);

    private static void add(TreeMap<Long, List<String>> steps, long at, String step) {
        steps.computeIfAbsent(at, x -> new ArrayList<>()).add(step);
    }
}
