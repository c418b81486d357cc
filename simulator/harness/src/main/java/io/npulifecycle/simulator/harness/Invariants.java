package io.npulifecycle.simulator.harness;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.spec.DrainSettings;
import io.npulifecycle.api.upgrade.spec.MaintenanceWindow;
import io.npulifecycle.api.upgrade.spec.SpecReader;
import io.npulifecycle.api.upgrade.spec.UpgradeState;

/**
 * The contract's invariants, each with a name, checked throughout a scenario that asks for them ({@code invariants:
 * all}, or a list of names; every chaos run does) from the API server's Nodes, Events, pods and budgets, the
 * simulator's records and the node agents' processes, on every poll of the run (every 500 ms of wall clock) and once
 * more at its end. The first one broken fails the run, named, with the simulated second it was seen and what was
 * seen.
 *
 * <ul>
 * <li>{@value #NO_LOAD} — no driver module loaded outside a fresh boot: the simulator counts none
 * ({@code Violations}).</li>
 * <li>{@value #ANNOUNCED} — every reboot of a node has its {@code RebootRequired} and {@code Rebooting} Events, within
 * {@value #ANNOUNCE_LAG_SECONDS} simulated seconds (a node agent cut off from the API server writes them when it
 * reaches it again), and by the end of the run.</li>
 * <li>{@value #AUTHORISED} — every {@code Rebooting} Event names its authority: a consumed approval, or
 * {@code autoRecover=true} / {@code autoUpgrade=true} while the scenario's policy had that switch on (at the Event's
 * simulated time or within {@value #POLICY_LAG_SECONDS} s before: the switch reaches the node agent through its
 * informer).</li>
 * <li>{@value #ONE_PER_APPROVAL} — no node rebooted by approval more often than the scenario approved it.</li>
 * <li>{@value #ADMIN_CORDON} — a node the scenario cordoned (an administrator's cordon) stays cordoned until the
 * scenario uncordons it: npu-lifecycle never lifts a cordon it did not make. A cordon step on a node npu-lifecycle
 * holds cordoned (its record {@code cordoned-by}) is no cordon of the administrator's, as {@code kubectl cordon} of a
 * cordoned node changes nothing: that cordon stays npu-lifecycle's and is lifted when its work ends.</li>
 * <li>{@value #WINDOW} — no upgrade reboot starts outside the maintenance window in force
 * ({@code spec.driver.upgradePolicy.maintenanceWindow}, docs/upgrade.md "Maintenance window"). An upgrade reboot is a
 * {@code Rebooting} Event whose message says {@code reason=upgrade} (the node agent's rebooter writes
 * {@code rebooting: reason=<reason>, authorised by <via>, leaving boot <id>} right before it calls the reboot); it
 * starts at the Event's time (the node agent's simulated clock), or, for a reboot authorised by
 * {@code approval consumed at <instant> (before a runtime restart)}, at that instant: the consumption is the point of
 * no return. It holds when some policy in force at a simulated second of [start − {@value #POLICY_LAG_SECONDS} s,
 * start] (the scenario's {@code policy:} and {@code setPolicy} steps merged as the JSON merge patch merges them, read
 * by the product's own {@link SpecReader}; a change reaches the controller and the node agents through their
 * informers, as for {@value #AUTHORISED}) has no window, is not applied by the product (refused as
 * {@code InvalidSpec}, or the NPUOperatorCtl deleted), or has its window ({@link MaintenanceWindow}, the product's
 * rule) open at some instant of [start − {@value #REBOOT_START_SLACK_SECONDS} s, start]: the Event is stamped after
 * the node agent's last look at the window (for an automatic reboot one state-file write later, for an approval the
 * consumption's PATCH and two state-file writes later: well under a second of wall clock, which is
 * {@value #REBOOT_START_SLACK_SECONDS} simulated seconds at the chaos runs' time scale of 120). A reboot that started
 * inside the window and lasts past its close holds, as the product lets a started reboot go on. Without
 * {@code cluster.startTime} (the run's time 0 unknown) every policy of the run is in force. Not judged: recovery
 * reboots ({@code recoveryPolicy.maintenanceWindow.enforce}), and a node's clock moved by {@code clockJump} (its
 * Events carry its own clock).</li>
 * <li>{@value #PROTECTED} — no node reboots while a pod its drain had to evict, under a PodDisruptionBudget, is still
 * on it. At each check the harness reads every node's reboot count, then every pod the scenario created (label
 * {@value Workloads#POD_LABEL}) and every budget, then each Node and its reboot count again. A pod is
 * <em>protected</em> at a check when it is bound to the node, not terminating (no {@code deletionTimestamp}) and not
 * finished ({@code Succeeded}, {@code Failed}), neither a DaemonSet's nor a mirror pod (the drain skips those:
 * docs/upgrade.md "Drain"), and a budget of its namespace selects it; it is <em>owed</em> to the drain once it was
 * seen at a check at which the node's drain was not over (the Node's {@code driver-upgrade-state} none of
 * {@code pod-restart-required}, {@code reboot-required}, {@code rebooting}, {@code validation-required}, and no
 * {@code recovery-reboot-granted}): a pod bound to a node after its drain ended is not evicted by the product (a node
 * in flight is not stopped by a pod that lands later). Broken at check k when the reboot count read before the pods
 * at k is above the count read after the pods at the previous check that read them, k−1 (so the reboot fell between
 * the two readings of the pods), and a pod owed at k−1 was protected at k−1 and at k (the same uid): it stayed on the
 * node, not evicted, across the reboot. A pod evicted in between does not count, whatever the order; a pod evicted
 * after the reboot but before the check k is not seen (the granularity of the checks). Not counted, because the
 * product may then reboot with such pods on the node: while a policy in force at a simulated second of
 * [t(k−1) − {@value #POLICY_LAG_SECONDS} s, t(k)] is not applied (the NPUOperatorCtl deleted, or refused as
 * {@code InvalidSpec}: a person's approval then reboots without a drain) or has {@code drain.enable: false} or
 * {@code drain.onTimeout: reboot} in {@code upgradePolicy} or {@code recoveryPolicy}, no pod; a pod outside the
 * {@code scope: npu} or {@code podSelector} of either drain (the check does not know which of the two the reboot was
 * for: its Event may come later).</li>
 * <li>{@value #MEMORY} — each node agent's resident memory ({@code VmRSS} of its JVM,
 * {@link ScenarioNode#agentProcess}) stays at or below {@value #MEMORY_LIMIT_MIB} MiB, the memory limit of the
 * chart's node-agent container ({@code nodeAgent.resources.limits.memory} in {@code charts/npu-lifecycle/values.yaml}),
 * and grows by at most {@value #MEMORY_GROWTH_MIB} MiB from its first reading after its first probe, per agent: a
 * restarted agent starts over, a new process as well as the OSGi framework a simulated reboot restarts inside the
 * same JVM (the emulated host's {@code restartMode=framework}; on a real host a reboot starts a new container). What
 * the earlier frameworks left in that JVM is no running agent's memory in production, so the limit is judged on a
 * process's first boot only (a fresh JVM, as the container's), the growth on every boot. Readings while the agent
 * goes down are not judged: the harness signalled the process to end (SIGTERM for a driver pod replaced or the run's
 * end, SIGKILL for {@code killAgent}) or a simulated reboot is restarting its framework; the report shows them
 * apart. The growth bound, measured (docs/benchmarks.md "Node-agent memory under chaos": chaos seed 1, 3 nodes, 7.7
 * simulated hours of three runs): the largest growth within one boot was 37.6 MiB, and all of it start-up: the first
 * reading after the first probe comes before the Kubernetes client and its informers are built (93 to 131 MiB), and
 * an agent settles at 125 to 139 MiB within about 20 simulated minutes; the longest-lived agent then grew by 3.1 MiB in
 * 6.6 simulated hours (0.8 MiB in its second hour, 0.1 MiB in its seventh). 64 MiB leaves 26 MiB (70 %) above that
 * start-up; a leak of a few MiB per simulated hour crosses it within a run. The simulated agents run with the
 * harness's JVM options ({@link RuntimeProcess#JAVA_OPTS}, a 160 MiB heap), not the launcher's {@code node} options
 * the DaemonSet uses. Holds without a reading where the harness does not run the node agent as its own process (the
 * real node's pod).</li>
 * </ul>
 *
 * <p>Thread-safe: the runner's step threads report actions ({@link #did}), its poller calls {@link #check}.
 */
final class Invariants {

    static final String NO_LOAD = "no-module-load-outside-fresh-boot";
    static final String ANNOUNCED = "every-reboot-announced";
    static final String AUTHORISED = "every-reboot-authorised";
    static final String ONE_PER_APPROVAL = "one-reboot-per-approval";
    static final String ADMIN_CORDON = "administrator-cordon-kept";
    static final String WINDOW = "no-upgrade-reboot-outside-window";
    static final String PROTECTED = "no-reboot-with-a-protected-pod";
    static final String MEMORY = "node-agent-memory-bounded";
    /** Every invariant, in the order they are checked. */
    static final List<String> ALL = List.of(NO_LOAD, ANNOUNCED, AUTHORISED, ONE_PER_APPROVAL, ADMIN_CORDON, WINDOW,
            PROTECTED, MEMORY);

    /** Simulated seconds a reboot's Events may come after it. */
    static final long ANNOUNCE_LAG_SECONDS = 900;
    /** Simulated seconds a policy switch may take to reach a node agent. */
    static final long POLICY_LAG_SECONDS = 300;
    /** Simulated seconds a cordon may take to show on the Node after the step that made it. */
    static final long CORDON_LAG_SECONDS = 120;
    /**
     * Simulated seconds a {@code Rebooting} Event may be stamped after the node agent's last look at the maintenance
     * window (see {@value #WINDOW}).
     */
    static final long REBOOT_START_SLACK_SECONDS = 120;
    /** The memory limit of the chart's node-agent container, MiB ({@code nodeAgent.resources.limits.memory}). */
    static final long MEMORY_LIMIT_MIB = 256;
    /** The most a node agent's resident memory may grow after its first probe, MiB (see {@value #MEMORY}). */
    static final long MEMORY_GROWTH_MIB = 64;

    /** A version for reading the merged policy when the scenario set none: the version is no invariant's concern. */
    private static final String ANY_VERSION = "0.0.0";
    /** The upgrade states in which a node's drain is over (or was skipped): the reboot comes next, or came. */
    private static final Set<String> DRAIN_OVER = Set.of(UpgradeState.POD_RESTART_REQUIRED.label(),
            UpgradeState.REBOOT_REQUIRED.label(), UpgradeState.REBOOTING.label(),
            UpgradeState.VALIDATION_REQUIRED.label());
    /** The authority of a reboot a restarted node agent makes on an approval its previous run consumed. */
    private static final Pattern CONSUMED_AT = Pattern.compile("approval consumed at (\\S+) \\(");

    /**
     * A broken invariant.
     *
     * @param name the invariant
     * @param atSeconds the simulated second of the run it was seen at
     * @param detail what was seen
     */
    record Violation(String name, long atSeconds, String detail) {
        @Override
        public String toString() {
            return "invariant " + name + " broken at simulated " + atSeconds + "s: " + detail;
        }
    }

    /**
     * The NPUOperatorCtl's {@code spec.driver} from a simulated second on, as the product reads it.
     *
     * @param at the simulated second the step that made it was done
     * @param spec what {@link SpecReader} makes of it; null once the NPUOperatorCtl is deleted
     */
    private record PolicyState(long at, SpecReader.Result spec) {
        /** @return whether the product applies it (it exists and is valid) */
        boolean applied() {
            return spec != null && spec.valid();
        }

        /** @return its upgrade maintenance window, or null when none (or not applied) */
        MaintenanceWindow window() {
            return applied() ? spec.policy().gates().window() : null;
        }
    }

    /**
     * What a check that read the pods saw on one node.
     *
     * @param at its simulated second
     * @param rebootsAfter the node's reboot count read after the pods
     * @param protectedPods the protected pods by uid
     * @param owed the uids of the pods owed to the node's drain
     */
    private record PodsSeen(long at, int rebootsAfter, Map<String, Pod> protectedPods, Set<String> owed) {
    }

    /** The readings of one node-agent process in one boot of its host (its node, process id and boot). */
    private static final class AgentMemory {
        final String node;
        final long pid;
        final int boot;
        /** whether this is the first boot read of the process: a fresh JVM, judged against the container's limit */
        final boolean fresh;
        /** the first reading after its first probe, or -1 */
        long baseKiB = -1;
        long baseAt;
        long peakKiB = -1;
        long peakAt;
        long lastKiB;
        long lastAt;
        /** a reading per simulated hour after the first, {second, KiB} */
        final List<long[]> hourly = new ArrayList<>();
        /** the highest reading while it went down (not judged), or -1 */
        long stoppingPeakKiB = -1;
        long stoppingPeakAt;

        AgentMemory(String node, long pid, int boot, boolean fresh) {
            this.node = node;
            this.pid = pid;
            this.boot = boot;
            this.fresh = fresh;
        }

        void read(long at, long kib, boolean probed, boolean stopping) {
            if (stopping) {
                if (kib > stoppingPeakKiB) {
                    stoppingPeakKiB = kib;
                    stoppingPeakAt = at;
                }
                return;
            }
            lastKiB = kib;
            lastAt = at;
            if (kib > peakKiB) {
                peakKiB = kib;
                peakAt = at;
            }
            if (baseKiB < 0 && probed) {
                baseKiB = kib;
                baseAt = at;
            } else if (baseKiB >= 0 && at - (hourly.isEmpty() ? baseAt : hourly.get(hourly.size() - 1)[0]) >= 3600) {
                hourly.add(new long[] {at, kib});
            }
        }

        String describe() {
            StringBuilder sb = new StringBuilder(node + " (pid " + pid + ", boot " + boot + (fresh ? "" : ", after a "
                    + "simulated reboot in the same JVM") + "): ");
            if (baseKiB < 0) {
                sb.append("no reading after its first probe while it ran");
            } else {
                sb.append(mib(baseKiB)).append(" MiB at ").append(baseAt).append("s (first after its first probe)");
                for (long[] h : hourly) {
                    sb.append(", ").append(mib(h[1])).append(" at ").append(h[0]).append('s');
                }
                sb.append(", ").append(mib(lastKiB)).append(" at ").append(lastAt).append("s (last); growth ")
                        .append(mib(lastKiB - baseKiB)).append(" MiB");
            }
            if (peakKiB >= 0) {
                sb.append("; peak ").append(mib(peakKiB)).append(" MiB at ").append(peakAt).append('s');
            }
            if (stoppingPeakKiB >= 0) {
                sb.append("; while going down (not judged): up to ").append(mib(stoppingPeakKiB))
                        .append(" MiB at ").append(stoppingPeakAt).append('s');
            }
            return sb.toString();
        }
    }

    private final List<String> enabled;
    private final ScenarioCluster sim;
    private final Map<String, Integer> rebootsAtStart;
    private final long startEpochSeconds;
    private final AtomicReference<Violation> first = new AtomicReference<>();
    private final Map<String, Integer> approvals = new ConcurrentHashMap<>();
    /** node → simulated second of the scenario's cordon, while it stands */
    private final Map<String, Long> adminCordons = new ConcurrentHashMap<>();
    /** policy switch → simulated seconds at which it was set, with its value */
    private final Map<String, List<long[]>> switches = new ConcurrentHashMap<>();
    /** node → simulated second its reboot count was first seen above its Events' */
    private final Map<String, Long> unannounced = new HashMap<>();
    /** {@code spec.driver} as the scenario's steps made it (guarded by itself) */
    private final Map<String, Object> driver = new LinkedHashMap<>();
    /** {@code spec.driver} at each change, in the order the steps were done */
    private final List<PolicyState> policies = new CopyOnWriteArrayList<>();
    /** node → what the previous check that read the pods saw there */
    private final Map<String, PodsSeen> podsSeen = new HashMap<>();
    /** node → uids of the pods owed to its drain */
    private final Map<String, Set<String>> owed = new HashMap<>();
    /** {@code <node>/<pid>/<boot>} → the readings of that agent, in the order first seen */
    private final Map<String, AgentMemory> agents = new LinkedHashMap<>();

    /**
     * @param enabled the invariants to check ({@link #ALL} or some)
     * @param sim the cluster
     * @param rebootsAtStart each node's reboot count when the steps' clock started
     * @param startEpochSeconds the simulated epoch second of the run's time 0 ({@code cluster.startTime}; Events carry
     *        the runtimes' simulated time), or {@code Long.MIN_VALUE} when unknown ({@value #AUTHORISED} then checks
     *        the authority's name only, {@value #WINDOW} takes every policy of the run as in force)
     * @param initialPolicy the scenario's {@code policy:} ({@code spec.driver} fields), merged into the
     *        NPUOperatorCtl before time 0
     */
    Invariants(List<String> enabled, ScenarioCluster sim, Map<String, Integer> rebootsAtStart, long startEpochSeconds,
            Map<String, Object> initialPolicy) {
        this.enabled = List.copyOf(enabled);
        this.sim = sim;
        this.rebootsAtStart = rebootsAtStart;
        this.startEpochSeconds = startEpochSeconds;
        policy(initialPolicy, Long.MIN_VALUE / 2);
    }

    /** @return whether any invariant is checked */
    boolean enabled() {
        return !enabled.isEmpty();
    }

    /** @return the first invariant broken, or null */
    Violation violation() {
        return first.get();
    }

    /**
     * Records, before a step acts, what must count from the instant its write can reach the API server: the
     * scenario's uncordon lifts its cordon then (a check between the write and {@link #did} would otherwise see the
     * Node schedulable while the cordon still stands). A step that then fails ends the run, so nothing is undone.
     *
     * @param a the action about to be done
     */
    void doing(Action a) {
        if (a instanceof Action.Uncordon u) {
            adminCordons.remove(u.node());
        }
    }

    /**
     * Records what a step did that an invariant depends on: approvals, the administrator's cordons, the
     * NPUOperatorCtl's policy and version, its deletion and its creation again.
     *
     * @param a the action, done
     * @param atSeconds the run's simulated second
     */
    void did(Action a, long atSeconds) {
        if (a instanceof Action.Approve ap) {
            approvals.merge(ap.node(), 1, Integer::sum);
        } else if (a instanceof Action.Cordon c) {
            // kubectl cordon of a node npu-lifecycle holds cordoned changes nothing: the cordon stays ours (its record
            // npu.openfuyao.com/cordoned-by), and ours is lifted when its work ends (docs/upgrade.md "Drain")
            if (!NodeKeys.CORDONED_BY_VALUE.equals(sim.annotations(c.node()).get(NodeKeys.CORDONED_BY))) {
                adminCordons.putIfAbsent(c.node(), atSeconds);
            }
        } else if (a instanceof Action.Uncordon u) {
            adminCordons.remove(u.node());
        } else if (a instanceof Action.SetPolicy p) {
            policy(p.policy().driver(), atSeconds);
        } else if (a instanceof Action.SetVersion v) {
            policy(Map.of("version", v.version()), atSeconds);
        } else if (a instanceof Action.DeleteCr) {
            policies.add(new PolicyState(atSeconds, null));
        } else if (a instanceof Action.CreateCr) {
            // created again with the spec the steps made: the merged policy in force again
            policy(Map.of(), atSeconds);
        }
    }

    @SuppressWarnings("unchecked")
    private void policy(Map<String, Object> driver, long at) {
        Object up = driver.get("upgradePolicy");
        Object rp = driver.get("recoveryPolicy");
        if (up instanceof Map<?, ?> m && m.get("autoUpgrade") instanceof Boolean b) {
            switches.computeIfAbsent("autoUpgrade", k -> new CopyOnWriteArrayList<>()).add(new long[] {at, b ? 1 : 0});
        }
        if (rp instanceof Map<?, ?> m && m.get("autoRecover") instanceof Boolean b) {
            switches.computeIfAbsent("autoRecover", k -> new CopyOnWriteArrayList<>()).add(new long[] {at, b ? 1 : 0});
        }
        synchronized (this.driver) {
            // as ScenarioCluster.patchDriver merges it into the stored spec (a JSON merge patch)
            SimCluster.merge(this.driver, copy(driver));
            Map<String, Object> d = copy(this.driver);
            d.putIfAbsent("version", ANY_VERSION);
            policies.add(new PolicyState(at, SpecReader.parse(Map.of("driver", d))));
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> copy(Map<String, Object> m) {
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(k, v instanceof Map ? copy((Map<String, Object>) v) : v));
        return out;
    }

    /**
     * @return the policies in force at some simulated second of [from, to]: the last one set at or before
     *         {@code from} (the scenario's own policy at least), and those set after it up to {@code to}
     */
    private List<PolicyState> inForce(long from, long to) {
        List<PolicyState> out = new ArrayList<>();
        PolicyState before = null;
        for (PolicyState p : policies) {
            if (p.at() <= from) {
                if (before == null || p.at() >= before.at()) {
                    before = p;
                }
            } else if (p.at() <= to) {
                out.add(p);
            }
        }
        if (before != null) {
            out.add(0, before);
        }
        return out;
    }

    /** @return whether {@code name} was on at some simulated second in [from, to] (off when never set) */
    private boolean onDuring(String name, long from, long to) {
        List<long[]> l = switches.getOrDefault(name, List.of());
        boolean on = false;
        for (long[] e : l) {
            if (e[0] <= from) {
                on = e[1] == 1;
            } else if (e[0] <= to && e[1] == 1) {
                return true;
            }
        }
        return on;
    }

    /**
     * Checks every enabled invariant now; the first broken is kept.
     *
     * @param atSeconds the run's simulated second
     * @param last whether this is the check at the end of the run (every reboot's Events must be there)
     * @return the first invariant broken so far, or null
     */
    synchronized Violation check(long atSeconds, boolean last) {
        if (first.get() != null) {
            return first.get();
        }
        try {
            Violation v = checkNow(atSeconds, last);
            if (v != null) {
                first.compareAndSet(null, v);
            }
        } catch (RuntimeException e) {
            // the API server out (an injected fault) or a runtime restarting: the next poll checks again
        }
        return first.get();
    }

    /**
     * @return one line per node agent read ({@value #MEMORY}), per process and boot: its node, process id and boot,
     *         its first resident memory after its first probe, one reading per simulated hour after it, the last, the
     *         growth, the peak and the highest while it went down, in MiB at simulated seconds; empty when none was
     *         read
     */
    synchronized List<String> memoryReport() {
        return agents.values().stream().map(AgentMemory::describe).toList();
    }

    private Violation checkNow(long at, boolean last) {
        List<Event> events = enabled.contains(ANNOUNCED) || enabled.contains(AUTHORISED)
                || enabled.contains(ONE_PER_APPROVAL) || enabled.contains(WINDOW) ? sim.allEvents() : List.of();
        for (ScenarioNode n : sim.nodes().values()) {
            String name = n.name();
            if (enabled.contains(NO_LOAD) && n.violations() > 0) {
                return new Violation(NO_LOAD, at, name + ": the simulator recorded " + n.violations()
                        + " driver load(s) or unload(s) outside a fresh boot (io.npulifecycle:type=Simulator "
                        + "Violations)");
            }
            List<Event> rebooting = new ArrayList<>();
            int requested = 0;
            for (Event e : events) {
                if (e.getInvolvedObject() != null && name.equals(e.getInvolvedObject().getName())) {
                    if (NodeKeys.EVENT_REBOOT_REQUIRED.equals(e.getReason())) {
                        requested += count(e);
                    } else if (NodeKeys.EVENT_REBOOTING.equals(e.getReason())) {
                        rebooting.add(e);
                    }
                }
            }
            int reboots = n.reboots() - rebootsAtStart.getOrDefault(name, 0);
            int announced = Math.min(requested, rebooting.stream().mapToInt(Invariants::count).sum());
            if (enabled.contains(ANNOUNCED)) {
                if (reboots > announced) {
                    long since = unannounced.computeIfAbsent(name, k -> at);
                    if (last || at - since > ANNOUNCE_LAG_SECONDS) {
                        return new Violation(ANNOUNCED, at, name + " rebooted " + reboots + " time(s) but has "
                                + requested + " RebootRequired and " + rebooting.size() + " Rebooting Event(s)"
                                + (last ? " at the end of the run" : " for " + (at - since) + " s"));
                    }
                } else {
                    unannounced.remove(name);
                }
            }
            int byApproval = 0;
            for (Event e : rebooting) {
                String msg = e.getMessage() == null ? "" : e.getMessage();
                if (enabled.contains(WINDOW) && msg.contains("reason=upgrade")) {
                    String outside = outsideWindow(e, msg);
                    if (outside != null) {
                        return new Violation(WINDOW, at, name + ": " + outside);
                    }
                }
                int i = msg.indexOf("authorised by ");
                String via = i < 0 ? "" : msg.substring(i + "authorised by ".length());
                if (via.startsWith("approval")) {
                    byApproval += count(e);
                    continue;
                }
                if (!enabled.contains(AUTHORISED)) {
                    continue;
                }
                String sw = via.startsWith("autoRecover=true") ? "autoRecover"
                        : via.startsWith("autoUpgrade=true") ? "autoUpgrade" : null;
                if (sw == null) {
                    return new Violation(AUTHORISED, at, name + ": a Rebooting Event names no authority: " + msg);
                }
                Long when = eventSecond(e);
                if (when != null && !onDuring(sw, when - POLICY_LAG_SECONDS, when)) {
                    return new Violation(AUTHORISED, at, name + ": rebooted at simulated " + when + "s " + "by " + sw
                            + "=true, but the scenario had " + sw + " off from " + (when - POLICY_LAG_SECONDS)
                            + "s to then: " + msg);
                }
            }
            if (enabled.contains(ONE_PER_APPROVAL) && byApproval > approvals.getOrDefault(name, 0)) {
                return new Violation(ONE_PER_APPROVAL, at, name + " rebooted " + byApproval + " time(s) by approval, "
                        + "approved " + approvals.getOrDefault(name, 0) + " time(s)");
            }
            Long cordonedAt = adminCordons.get(name);
            if (enabled.contains(ADMIN_CORDON) && cordonedAt != null && at - cordonedAt > CORDON_LAG_SECONDS
                    && sim.node(name) != null && !sim.workloads().unschedulable(name)) {
                return new Violation(ADMIN_CORDON, at, name + " was cordoned by the scenario at simulated "
                        + cordonedAt + "s and is schedulable now, before the scenario uncordoned it");
            }
        }
        Violation v = enabled.contains(PROTECTED) ? protectedPods(at) : null;
        if (v == null && enabled.contains(MEMORY)) {
            v = memory(at);
        }
        return v;
    }

    // ---- no-upgrade-reboot-outside-window ----

    /**
     * @param e a {@code Rebooting} Event with {@code reason=upgrade}
     * @param msg its message
     * @return what was seen when the reboot started outside every maintenance window in force then, else null
     */
    private String outsideWindow(Event e, String msg) {
        Instant stamped = eventInstant(e);
        if (stamped == null) {
            return null;
        }
        Instant started = stamped;
        Matcher m = CONSUMED_AT.matcher(msg);
        if (m.find()) {
            try {
                started = Instant.parse(m.group(1));
            } catch (java.time.format.DateTimeParseException x) {
                // the Event's own time, then
            }
        }
        boolean placed = startEpochSeconds != Long.MIN_VALUE;
        long s = placed ? started.getEpochSecond() - startEpochSeconds : 0;
        List<PolicyState> states = placed ? inForce(s - POLICY_LAG_SECONDS, s) : List.copyOf(policies);
        Set<String> closed = new LinkedHashSet<>();
        for (PolicyState p : states) {
            MaintenanceWindow w = p.window();
            if (w == null || openDuring(w, started.minusSeconds(REBOOT_START_SLACK_SECONDS), started)) {
                return null; // no window, not applied, or open then
            }
            closed.add(w.describe() + " (next opening " + w.nextOpening(started) + ")");
        }
        return "an upgrade reboot started at " + (placed ? "simulated " + s + "s (" + started + ")" : started)
                + ", outside the maintenance window " + String.join(" and ", closed) + (placed ? " in force from "
                        + (s - POLICY_LAG_SECONDS) + "s to then" : "") + ", closed throughout "
                + started.minusSeconds(REBOOT_START_SLACK_SECONDS) + " to " + started + "; Rebooting Event: " + msg;
    }

    /** @return whether the window is open at some instant of [from, to] */
    private static boolean openDuring(MaintenanceWindow w, Instant from, Instant to) {
        return w.isOpen(from) || !w.nextOpening(from).isAfter(to);
    }

    // ---- no-reboot-with-a-protected-pod ----

    private Violation protectedPods(long at) {
        Map<String, Integer> before = new HashMap<>();
        for (ScenarioNode n : sim.nodes().values()) {
            before.put(n.name(), n.reboots());
        }
        Workloads w = sim.workloads();
        List<Pod> pods = w.scenarioPods();
        List<PodDisruptionBudget> budgets = pods.isEmpty() ? List.of() : w.budgets();
        Violation found = null;
        for (ScenarioNode n : sim.nodes().values()) {
            String name = n.name();
            boolean drainOver = drainOver(sim.node(name));
            Set<String> owedHere = owed.computeIfAbsent(name, k -> new HashSet<>());
            Set<String> here = new HashSet<>();
            Map<String, Pod> protectedNow = new LinkedHashMap<>();
            for (Pod p : pods) {
                if (p.getSpec() == null || !name.equals(p.getSpec().getNodeName()) || !running(p)) {
                    continue;
                }
                String uid = p.getMetadata().getUid() != null ? p.getMetadata().getUid() : ref(p);
                here.add(uid);
                if (!drainOver) {
                    owedHere.add(uid);
                }
                if (!skippedByEveryDrain(p) && budgetOf(p, budgets) != null) {
                    protectedNow.put(uid, p);
                }
            }
            owedHere.retainAll(here);
            PodsSeen prev = podsSeen.put(name, new PodsSeen(at, n.reboots(), protectedNow, Set.copyOf(owedHere)));
            if (found != null || prev == null || before.get(name) <= prev.rebootsAfter()) {
                continue;
            }
            List<PolicyState> states = inForce(prev.at() - POLICY_LAG_SECONDS, at);
            for (Map.Entry<String, Pod> e : protectedNow.entrySet()) {
                Pod p = e.getValue();
                if (prev.protectedPods().containsKey(e.getKey()) && prev.owed().contains(e.getKey())
                        && !leftByPolicy(p, states)) {
                    found = new Violation(PROTECTED, at, name + " rebooted (its reboot count " + prev.rebootsAfter()
                            + " at simulated " + prev.at() + "s, " + before.get(name) + " at " + at + "s) with pod "
                            + ref(p) + " on it, not evicted, under PodDisruptionBudget " + budgetOf(p, budgets)
                            + ": it was there before its node's drain ended and at both checks");
                    break;
                }
            }
        }
        return found;
    }

    /** @return whether the Node shows its drain over: its reboot comes next or came (docs/upgrade.md) */
    private static boolean drainOver(Node node) {
        if (node == null || node.getMetadata() == null) {
            return false;
        }
        Map<String, String> labels = node.getMetadata().getLabels();
        Map<String, String> ann = node.getMetadata().getAnnotations();
        String state = labels == null ? null : labels.get(NodeKeys.DRIVER_UPGRADE_STATE);
        return state != null && DRAIN_OVER.contains(state)
                || ann != null && ann.containsKey(NodeKeys.RECOVERY_REBOOT_GRANTED);
    }

    /** @return whether the pod runs: not terminating and not finished */
    private static boolean running(Pod p) {
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        return p.getMetadata().getDeletionTimestamp() == null && !"Succeeded".equals(phase) && !"Failed".equals(phase);
    }

    /** @return whether no drain evicts the pod: a DaemonSet's, or a static pod's mirror (docs/upgrade.md "Drain") */
    private static boolean skippedByEveryDrain(Pod p) {
        if (p.getMetadata().getAnnotations() != null
                && p.getMetadata().getAnnotations().containsKey(Workloads.MIRROR_ANNOTATION)) {
            return true;
        }
        for (OwnerReference o : p.getMetadata().getOwnerReferences() == null ? List.<OwnerReference>of()
                : p.getMetadata().getOwnerReferences()) {
            if (Boolean.TRUE.equals(o.getController()) && "DaemonSet".equals(o.getKind())) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return {@code namespace/name} of a budget of the pod's namespace whose selector selects it (policy/v1: a null
     *         selector selects no pod, an empty one every pod of the namespace), or null
     */
    private static String budgetOf(Pod p, List<PodDisruptionBudget> budgets) {
        Map<String, String> labels = p.getMetadata().getLabels() == null ? Map.of() : p.getMetadata().getLabels();
        for (PodDisruptionBudget b : budgets) {
            if (b.getMetadata().getNamespace().equals(p.getMetadata().getNamespace()) && b.getSpec() != null
                    && b.getSpec().getSelector() != null && selects(b.getSpec().getSelector(), labels)) {
                return b.getMetadata().getNamespace() + "/" + b.getMetadata().getName();
            }
        }
        return null;
    }

    /** @return whether the budget's selector selects the labels (the API's {@code PodSelector}, as the drain reads it) */
    private static boolean selects(io.fabric8.kubernetes.api.model.LabelSelector s, Map<String, String> labels) {
        return io.npulifecycle.api.upgrade.spec.PodSelector.of(s.getMatchLabels(), s.getMatchExpressions() == null
                ? null : s.getMatchExpressions().stream().map(r -> io.npulifecycle.api.upgrade.spec.PodSelector
                        .Requirement.expression(r.getKey(), r.getOperator(), r.getValues())).toList()).matches(labels);
    }

    /**
     * @return whether some policy of {@code states} lets the product reboot the pod's node with the pod on it: not
     *         applied, a drain disabled or rebooting on its timeout, or the pod outside a drain's scope or selector
     */
    private static boolean leftByPolicy(Pod p, List<PolicyState> states) {
        Map<String, String> labels = p.getMetadata().getLabels() == null ? Map.of() : p.getMetadata().getLabels();
        for (PolicyState s : states) {
            if (!s.applied()) {
                return true;
            }
            for (DrainSettings d : List.of(s.spec().policy().drain(), s.spec().recovery().drain())) {
                if (!d.enable() || d.rebootOnTimeout() || d.npuOnly() && !npuWorkload(p)
                        || !d.podSelector().matches(labels)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** @return whether the pod requests or limits a {@code huawei.com/Ascend*} resource (the drain's scope npu) */
    private static boolean npuWorkload(Pod p) {
        for (var c : p.getSpec().getContainers()) {
            if (c.getResources() == null) {
                continue;
            }
            for (Map<String, Quantity> m : java.util.Arrays.asList(c.getResources().getRequests(),
                    c.getResources().getLimits())) {
                if (m != null && m.keySet().stream().anyMatch(k -> k.startsWith("huawei.com/Ascend"))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String ref(Pod p) {
        return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
    }

    // ---- node-agent-memory-bounded ----

    private Violation memory(long at) {
        for (ScenarioNode n : sim.nodes().values()) {
            ScenarioNode.AgentProcess p = n.agentProcess();
            if (p.pid() < 0 || p.rssKiB() < 0) {
                continue;
            }
            String process = n.name() + "/" + p.pid();
            boolean fresh = agents.keySet().stream().noneMatch(k -> k.startsWith(process + "/"));
            AgentMemory m = agents.computeIfAbsent(process + "/" + p.boot(),
                    k -> new AgentMemory(n.name(), p.pid(), p.boot(), fresh));
            m.read(at, p.rssKiB(), p.probed(), p.stopping());
            if (p.stopping()) {
                continue;
            }
            if (m.fresh && p.rssKiB() > MEMORY_LIMIT_MIB * 1024) {
                return new Violation(MEMORY, at, n.name() + ": the node agent (pid " + p.pid() + ") holds "
                        + mib(p.rssKiB()) + " MiB resident (VmRSS), above " + MEMORY_LIMIT_MIB + " MiB, the memory "
                        + "limit of the chart's node-agent container");
            }
            if (m.baseKiB >= 0 && p.rssKiB() - m.baseKiB > MEMORY_GROWTH_MIB * 1024) {
                return new Violation(MEMORY, at, n.name() + ": the node agent (pid " + p.pid() + ", boot " + p.boot()
                        + ") grew from " + mib(m.baseKiB) + " MiB resident (VmRSS) at simulated " + m.baseAt
                        + "s, its first reading after its first probe, to " + mib(p.rssKiB()) + " MiB: "
                        + mib(p.rssKiB() - m.baseKiB) + " MiB, above the bound of " + MEMORY_GROWTH_MIB + " MiB");
            }
        }
        return null;
    }

    /** @return KiB as MiB with one decimal, e.g. {@code 101.3} */
    private static String mib(long kib) {
        return String.format(java.util.Locale.ROOT, "%.1f", kib / 1024.0);
    }

    // ---- Events ----

    /** @return how many times the Event happened (its count, at least 1) */
    private static int count(Event e) {
        return e.getCount() == null || e.getCount() < 1 ? 1 : e.getCount();
    }

    /** @return the Event's instant (the runtimes' simulated clock; its last time, else its first), or null */
    private static Instant eventInstant(Event e) {
        String ts = e.getLastTimestamp() != null ? e.getLastTimestamp() : e.getFirstTimestamp();
        if (ts == null) {
            return null;
        }
        try {
            return Instant.parse(ts);
        } catch (java.time.format.DateTimeParseException x) {
            return null;
        }
    }

    /** @return the run's simulated second of the Event (the runtimes' clock), or null when unknown */
    private Long eventSecond(Event e) {
        if (startEpochSeconds == Long.MIN_VALUE) {
            return null;
        }
        Instant t = eventInstant(e);
        return t == null ? null : t.getEpochSecond() - startEpochSeconds;
    }
}
