package io.npulifecycle.simulator.harness;

import io.npulifecycle.api.node.NodeKeys;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.DoubleSupplier;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;

/**
 * What happened during one scenario, per node, in simulated and wall-clock time: the harness's own actions (wedges,
 * approvals, kills, outages), and what it saw change on the cluster each time {@link #poll()} runs: the node's
 * {@code npu.openfuyao.com/} labels and annotations (upgrade state, reboot-required, health, approvals),
 * {@code spec.unschedulable} and taints, the markers {@code driver-ready} and {@code reboot-required}, the simulator's
 * reboot count, and every new Kubernetes Event. Printed after the scenario, passing or failing ({@link #render()}).
 *
 * <p>Thread-safe: the shared steps, each case's thread and the poller add entries concurrently.
 */
final class Timeline {

    /** The node column of entries that concern no single node (the control plane, the API server, the policy). */
    static final String CLUSTER = "cluster";

    /**
     * One line of the timeline.
     *
     * @param simSeconds simulated seconds since the first step
     * @param wallSeconds wall-clock seconds since the first step
     * @param node a node name or {@link #CLUSTER}
     * @param what what happened, e.g. {@code label npu.openfuyao.com/npu-health: healthy -> unhealthy}
     */
    record Entry(double simSeconds, double wallSeconds, String node, String what) {
    }

    /** What the timeline reads from the simulated cluster; {@link #poll()} calls it from one thread. */
    interface ClusterView {
        /** @return the node names, in order */
        List<String> nodeNames();

        /** @return the Node object, or null when it cannot be read */
        Node node(String name);

        /** @return every Event of the cluster */
        List<Event> events();

        /** @return the simulator's reboot count of the node */
        int reboots(String name);

        /** @return the marker's content (reason for reboot-required, {@code present} for driver-ready), or null */
        String marker(String name, String marker);
    }

    private final ClusterView view;
    private final DoubleSupplier simSeconds;
    private final DoubleSupplier wallSeconds;
    private final List<Entry> entries = new ArrayList<>();
    /** Last seen state per node: key (label, annotation, marker, ...) to value. */
    private final Map<String, Map<String, String>> seen = new HashMap<>();
    private final Set<String> seenEvents = new HashSet<>();
    private boolean started;

    /**
     * @param view the cluster
     * @param simSeconds simulated seconds since the first step
     * @param wallSeconds wall-clock seconds since the first step
     */
    Timeline(ClusterView view, DoubleSupplier simSeconds, DoubleSupplier wallSeconds) {
        this.view = view;
        this.simSeconds = simSeconds;
        this.wallSeconds = wallSeconds;
    }

    /**
     * Adds a line now.
     *
     * @param node a node name or {@link #CLUSTER}
     * @param what what happened
     */
    synchronized void add(String node, String what) {
        entries.add(new Entry(simSeconds.getAsDouble(), wallSeconds.getAsDouble(), node, what));
    }

    /** @return the lines so far, in the order added */
    synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    /**
     * Reads the cluster once and adds a line for each change since the last call; the first call records the state
     * at the start as one line per node and value, and takes the Events that exist already as seen. A value that cannot be
     * read (the API server down in an outage step) is skipped, not recorded as a change.
     */
    void poll() {
        List<Event> events;
        try {
            events = view.events();
        } catch (RuntimeException e) {
            events = null;
        }
        for (String name : view.nodeNames()) {
            Map<String, String> now = state(name);
            if (now == null) {
                continue;
            }
            Map<String, String> before;
            synchronized (this) {
                before = seen.put(name, now);
            }
            if (before == null) {
                now.forEach((k, v) -> add(name, "at the start: " + k + "=" + v));
                continue;
            }
            Set<String> keys = new java.util.LinkedHashSet<>(before.keySet());
            keys.addAll(now.keySet());
            for (String k : keys) {
                String a = before.get(k);
                String b = now.get(k);
                if (!Objects.equals(a, b)) {
                    add(name, k + ": " + (a == null ? "(none)" : a) + " -> " + (b == null ? "(none)" : b));
                }
            }
        }
        if (events != null) {
            Set<String> nodes = new HashSet<>(view.nodeNames());
            List<Event> fresh = new ArrayList<>();
            for (Event e : events) {
                String id = e.getMetadata().getNamespace() + "/" + e.getMetadata().getName() + "#" + e.getCount();
                boolean isNew;
                synchronized (this) {
                    isNew = seenEvents.add(id);
                }
                if (isNew && started) {
                    fresh.add(e);
                }
            }
            fresh.sort(Comparator.comparing(e -> String.valueOf(e.getLastTimestamp())));
            for (Event e : fresh) {
                String on = e.getInvolvedObject() == null ? null : e.getInvolvedObject().getName();
                String kind = e.getInvolvedObject() == null ? "" : e.getInvolvedObject().getKind();
                boolean node = "Node".equals(kind) && nodes.contains(on);
                add(node ? on : CLUSTER, "Event " + e.getType() + " " + e.getReason()
                        + (node ? "" : " on " + kind + " " + on) + (e.getCount() != null && e.getCount() > 1
                                ? " (x" + e.getCount() + ")" : "") + ": " + e.getMessage());
            }
            started = true;
        }
    }

    /** @return the node's tracked state, ordered, or null when the Node cannot be read */
    private Map<String, String> state(String name) {
        Node n;
        try {
            n = view.node(name);
        } catch (RuntimeException e) {
            return null;
        }
        if (n == null) {
            return null;
        }
        Map<String, String> s = new LinkedHashMap<>();
        prefixed(n.getMetadata().getLabels(), "label ", s);
        prefixed(n.getMetadata().getAnnotations(), "annotation ", s);
        boolean cordoned = n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
        s.put("unschedulable", String.valueOf(cordoned));
        if (n.getSpec() != null && n.getSpec().getTaints() != null) {
            for (Taint t : n.getSpec().getTaints()) {
                s.put("taint " + t.getKey(), (t.getValue() == null ? "" : t.getValue()) + ":" + t.getEffect());
            }
        }
        try {
            s.put("marker driver-ready", view.marker(name, "driver-ready") == null ? "absent" : "present");
            String rr = view.marker(name, "reboot-required");
            s.put("marker reboot-required", rr == null ? "absent" : "reason=" + rr);
            s.put("reboots", String.valueOf(view.reboots(name)));
        } catch (RuntimeException e) {
            // the simulator's files are being rewritten: read them at the next poll
        }
        return s;
    }

    private static void prefixed(Map<String, String> m, String what, Map<String, String> into) {
        if (m == null) {
            return;
        }
        new TreeMap<>(m).forEach((k, v) -> {
            if (k.startsWith(NodeKeys.PREFIX)) {
                into.put(what + k, v);
            }
        });
    }

    /**
     * @param wallStart the wall-clock time of the first step, for the heading (e.g. {@code 23:41:05Z})
     * @return the timeline, indented for the scenario output: one block per node (in {@link ClusterView#nodeNames()}
     *         order, then {@link #CLUSTER}), each line {@code sim   120.0s  wall    2.0s  <what>}; empty when nothing
     *         was recorded
     */
    String render(String wallStart) {
        List<Entry> all = entries();
        if (all.isEmpty()) {
            return "";
        }
        Map<String, List<Entry>> byNode = new LinkedHashMap<>();
        for (String n : view.nodeNames()) {
            byNode.put(n, new ArrayList<>());
        }
        for (Entry e : all) {
            byNode.computeIfAbsent(e.node(), k -> new ArrayList<>()).add(e);
        }
        List<Entry> cluster = byNode.remove(CLUSTER);
        if (cluster != null) {
            byNode.put(CLUSTER, cluster);
        }
        StringBuilder sb = new StringBuilder();
        sb.append("   timeline (simulated seconds since the first step; wall seconds since ").append(wallStart)
                .append("):\n");
        for (Map.Entry<String, List<Entry>> n : byNode.entrySet()) {
            if (n.getValue().isEmpty()) {
                continue;
            }
            sb.append("     ").append(n.getKey()).append('\n');
            List<Entry> l = new ArrayList<>(n.getValue());
            l.sort(Comparator.comparingDouble(Entry::wallSeconds));
            for (Entry e : l) {
                sb.append(String.format(java.util.Locale.ROOT, "       sim %8.1fs  wall %7.1fs  %s%n", e.simSeconds(),
                        e.wallSeconds(), e.what()));
            }
        }
        return sb.toString();
    }
}
