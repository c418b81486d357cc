package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.PodDelete;
import io.npulifecycle.upgrade.internal.rollout.RolloutStatus;

import io.npulifecycle.api.node.NodeKeys;

import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.api.model.Condition;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * The two ways the control plane runs (PID {@code io.npulifecycle.upgrade} key {@code driverManagement}, chart value
 * {@code driver.enabled}) and what each adds to a reconcile:
 * <ul>
 * <li>{@value #MANAGED}: driver DaemonSets rendered from the template of a ConfigMap ({@link Templates}); while the
 * template is missing or malformed no DaemonSet is written, no new node gets a rollout slot, no driver pod is deleted
 * for a DaemonSet that could not be written, and the condition {@value #CONDITION_TEMPLATE} says why, naming the
 * ConfigMap and the field;</li>
 * <li>{@value #HOST}: drivers installed on the hosts by the administrator: no driver DaemonSet, no upgrade,
 * {@code spec.driver.version} reported in the status (condition {@value #CONDITION_MANAGEMENT}), never acted on; the
 * recovery flow runs as in managed mode.</li>
 * </ul>
 */
public final class DriverModes {

    private static final System.Logger LOG = System.getLogger(DriverModes.class.getName());

    /** {@code driverManagement} value: driver DaemonSets and upgrades (the default). */
    public static final String MANAGED = "managed";
    /** {@code driverManagement} value: drivers installed on the hosts, self-healing only. */
    public static final String HOST = "host";
    /** Condition type: whether the driver DaemonSet template could be read (managed mode). */
    static final String CONDITION_TEMPLATE = "DriverTemplateReady";
    /** Condition type: the driver management mode (host mode only). */
    static final String CONDITION_MANAGEMENT = "DriverManagement";
    /** Reason of {@code Progressing=False} while the template is unusable. */
    static final String REASON_TEMPLATE_UNAVAILABLE = "DriverTemplateUnavailable";

    private DriverModes() {
    }

    /**
     * The template as the ConfigMap informer holds it, parsed once per resourceVersion; a problem is logged once per
     * change (ERROR, naming the ConfigMap and the field), its end once (INFO).
     */
    static final class Templates {
        private final KubernetesSerialization serialization;
        private final String namespace;
        private final String name;
        private String seenVersion = "";
        private Current current;

        /**
         * @param serialization YAML
         * @param namespace the ConfigMap's namespace (the control plane's)
         * @param name the ConfigMap's name
         */
        Templates(KubernetesSerialization serialization, String namespace, String name) {
            this.serialization = serialization;
            this.namespace = namespace;
            this.name = name;
        }

        /**
         * @param cm the ConfigMap as the informer holds it, or null when absent
         * @return the renderer, or the problem
         */
        synchronized Current current(ConfigMap cm) {
            String version = cm == null ? "<absent>" : String.valueOf(cm.getMetadata().getResourceVersion());
            if (current != null && version.equals(seenVersion)) {
                return current;
            }
            Current previous = current;
            seenVersion = version;
            try {
                current = new Current(DriverDaemonSets.fromConfigMap(serialization, cm, namespace, name), null);
                if (previous == null || previous.problem() != null || !previous.renderer().hash().equals(current.renderer().hash())) {
                    LOG.log(Level.INFO, "driver DaemonSet template read from " + current.renderer().source() + " (digest "
                            + current.renderer().hash() + "): DaemonSets created or updated from now on use it");
                }
            } catch (IllegalStateException e) {
                current = new Current(null, e.getMessage());
                if (previous == null || !e.getMessage().equals(previous.problem())) {
                    LOG.log(Level.ERROR, e.getMessage() + "; the driver rollout waits until it is fixed");
                }
            }
            return current;
        }
    }

    /**
     * @param renderer the template's renderer, or null
     * @param problem why there is none (names the ConfigMap and the field), or null
     */
    record Current(DriverDaemonSets renderer, String problem) {
    }

    /**
     * What a managed-mode plan becomes while the template is unusable: no DaemonSet write, no deletion of a driver pod
     * whose DaemonSet was to be written (its replacement would run the old image), the status' {@code paused} as the
     * CR says (the plan was made with slot grants blocked), {@code Progressing=False} with reason
     * {@value #REASON_TEMPLATE_UNAVAILABLE} instead of {@code Paused}; then the condition
     * {@value #CONDITION_TEMPLATE} (False with the problem; True once the problem is gone, only when it was there).
     *
     * @param plan the plan (made with {@code paused || problem != null})
     * @param problem the template's problem, or null
     * @param paused what the CR's pause annotation says
     * @param driverPods driver pods by node
     * @param previous the status last written, or null
     * @param now now
     * @return the plan to apply
     */
    static Plan withTemplate(Plan plan, String problem, boolean paused, Map<String, Pod> driverPods,
            NpuOperatorCtlStatus previous, Instant now) {
        NpuOperatorCtlStatus prev = previous == null ? new NpuOperatorCtlStatus() : previous;
        NpuOperatorCtlStatus st = plan.status();
        boolean had = prev.getConditions() != null && prev.getConditions().stream()
                .anyMatch(c -> CONDITION_TEMPLATE.equals(c.getType()));
        Plan out = plan;
        List<Condition> conds = new ArrayList<>(st.getConditions());
        conds.removeIf(c -> CONDITION_TEMPLATE.equals(c.getType()));
        if (problem != null) {
            Set<String> notWritten = new java.util.HashSet<>();
            plan.daemonSets().forEach(d -> notWritten.add(d.combination().key()));
            List<PodDelete> deletes = new ArrayList<>();
            for (PodDelete d : plan.podDeletes()) {
                Pod p = driverPods.get(d.node());
                String combo = p == null || p.getMetadata().getLabels() == null ? null
                        : p.getMetadata().getLabels().get(NodeKeys.DRIVER_COMBINATION);
                if (combo != null && !notWritten.contains(combo)) {
                    deletes.add(d);
                }
            }
            st.setPaused(paused);
            for (int i = 0; i < conds.size(); i++) {
                Condition c = conds.get(i);
                if ("Progressing".equals(c.getType()) && "Paused".equals(c.getReason()) && !paused) {
                    conds.set(i, RolloutStatus.cond(prev, "Progressing", "False", REASON_TEMPLATE_UNAVAILABLE,
                            "held: no node gets a rollout slot while the driver DaemonSet template is unusable: "
                                    + problem, now));
                }
            }
            conds.add(RolloutStatus.cond(prev, CONDITION_TEMPLATE, "False", "TemplateUnavailable", problem, now));
            out = new Plan(plan.nodePatches(), deletes, List.of(), plan.crEvents(), plan.imagesToCheck(), st,
                    plan.nodeStates(), plan.nextWakeup(), plan.releasing());
        } else if (had) {
            conds.add(RolloutStatus.cond(prev, CONDITION_TEMPLATE, "True", "TemplateLoaded",
                    "the driver DaemonSet template is readable", now));
        }
        st.setConditions(conds);
        return out;
    }

    /**
     * The plan of host mode: no node, pod or DaemonSet write, no registry check; a status that reports
     * {@code spec.driver.version} and the versions the nodes have loaded (label
     * {@value io.npulifecycle.api.node.NodeKeys#DRIVER_VERSION}), conditions {@value #CONDITION_MANAGEMENT}
     * {@code True Host} and {@code Progressing False DriverManagementHost}.
     *
     * @param generation the CR's generation
     * @param version {@code spec.driver.version}
     * @param paused the CR's pause annotation
     * @param nodes the NPU nodes
     * @param previous the status last written, or null
     * @param now now
     * @return the plan
     */
    static Plan hostPlan(Long generation, String version, boolean paused, Collection<Node> nodes,
            NpuOperatorCtlStatus previous, Instant now) {
        NpuOperatorCtlStatus prev = previous == null ? new NpuOperatorCtlStatus() : previous;
        NpuOperatorCtlStatus st = new NpuOperatorCtlStatus();
        st.setObservedGeneration(generation);
        st.setPaused(paused);
        st.setTargetVersion(version);
        Map<String, Integer> loaded = new TreeMap<>();
        Map<String, String> nodeStates = new TreeMap<>();
        for (Node n : nodes) {
            Map<String, String> l = n.getMetadata().getLabels();
            String v = l == null ? null : l.get(NodeKeys.DRIVER_VERSION);
            loaded.merge(v == null || v.isBlank() ? "unknown" : v, 1, Integer::sum);
            nodeStates.put(n.getMetadata().getName(), "");
        }
        String msg = "driverManagement=host: the drivers are installed on the hosts by their administrator; "
                + "spec.driver.version " + version + " is reported, never acted on (no driver DaemonSet, no upgrade); "
                + "recovery of wedged chips runs; loaded on the NPU nodes: " + (loaded.isEmpty() ? "no NPU node"
                        : loaded.entrySet().stream().map(e -> e.getKey() + " on " + e.getValue())
                                .collect(java.util.stream.Collectors.joining(", ")));
        List<Condition> conds = new ArrayList<>();
        conds.add(RolloutStatus.cond(prev, "InvalidSpec", "False", "Valid", "spec is valid", now));
        conds.add(RolloutStatus.cond(prev, CONDITION_MANAGEMENT, "True", "Host", msg, now));
        conds.add(RolloutStatus.cond(prev, "Progressing", "False", "DriverManagementHost",
                "no driver rollout: driverManagement=host", now));
        st.setConditions(conds);
        return new Plan(List.of(), List.of(), List.of(), List.of(), Set.of(), st, nodeStates, null);
    }
}
