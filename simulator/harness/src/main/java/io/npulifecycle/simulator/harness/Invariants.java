package io.npulifecycle.simulator.harness;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import io.fabric8.kubernetes.api.model.Event;
import io.npulifecycle.api.node.NodeKeys;

/**
 * The contract's invariants, each with a name, checked throughout a scenario that asks for them ({@code invariants:
 * all}, or a list of names; every chaos run does) from the API server's Nodes and Events and the simulator's records,
 * on every poll of the run (every 500 ms of wall clock) and once more at its end. The first one broken fails the
 * run, named, with the simulated second it was seen and what was seen.
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
    /** Every invariant, in the order they are checked. */
    static final List<String> ALL = List.of(NO_LOAD, ANNOUNCED, AUTHORISED, ONE_PER_APPROVAL, ADMIN_CORDON);

    /** Simulated seconds a reboot's Events may come after it. */
    static final long ANNOUNCE_LAG_SECONDS = 900;
    /** Simulated seconds a policy switch may take to reach a node agent. */
    static final long POLICY_LAG_SECONDS = 300;
    /** Simulated seconds a cordon may take to show on the Node after the step that made it. */
    static final long CORDON_LAG_SECONDS = 120;

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

    /**
     * @param enabled the invariants to check ({@link #ALL} or some)
     * @param sim the cluster
     * @param rebootsAtStart each node's reboot count when the steps' clock started
     * @param startEpochSeconds the simulated epoch second of the run's time 0 ({@code cluster.startTime}; Events carry
     *        the runtimes' simulated time), or {@code Long.MIN_VALUE} when unknown ({@value #AUTHORISED} then checks
     *        the authority's name only)
     * @param initialPolicy the scenario's {@code policy:} ({@code spec.driver} fields)
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
     * Records what a step did that an invariant depends on: approvals, the administrator's cordons, policy switches.
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
        }
    }

    @SuppressWarnings("unchecked")
    private void policy(Map<String, Object> driver, long at) {
        Object up = driver.get("upgradePolicy");
        Object rp = driver.get("recoveryPolicy");
        if (up instanceof Map<?, ?> m && m.get("autoUpgrade") instanceof Boolean b) {
            switches.computeIfAbsent("autoUpgrade", k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                    .add(new long[] {at, b ? 1 : 0});
        }
        if (rp instanceof Map<?, ?> m && m.get("autoRecover") instanceof Boolean b) {
            switches.computeIfAbsent("autoRecover", k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                    .add(new long[] {at, b ? 1 : 0});
        }
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

    private Violation checkNow(long at, boolean last) {
        List<Event> events = enabled.contains(ANNOUNCED) || enabled.contains(AUTHORISED)
                || enabled.contains(ONE_PER_APPROVAL) ? sim.allEvents() : List.of();
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
        return null;
    }

    /** @return how many times the Event happened (its count, at least 1) */
    private static int count(Event e) {
        return e.getCount() == null || e.getCount() < 1 ? 1 : e.getCount();
    }

    /** @return the run's simulated second of the Event (the runtimes' clock), or null when unknown */
    private Long eventSecond(Event e) {
        if (startEpochSeconds == Long.MIN_VALUE) {
            return null;
        }
        String ts = e.getLastTimestamp() != null ? e.getLastTimestamp() : e.getFirstTimestamp();
        if (ts == null) {
            return null;
        }
        try {
            return java.time.Instant.parse(ts).getEpochSecond() - startEpochSeconds;
        } catch (java.time.format.DateTimeParseException x) {
            return null;
        }
    }
}
