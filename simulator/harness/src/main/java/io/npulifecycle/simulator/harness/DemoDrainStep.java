package io.npulifecycle.simulator.harness;

import io.npulifecycle.api.node.NodeKeys;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;

/**
 * The demo's upgrade drain step ({@link Demo}): an NPU training job (a ReplicaSet of one pod on node-0 requesting 8
 * chips) with a PodDisruptionBudget ({@code minAvailable: 1}) blocks node-0's drain for the driver change to
 * {@link #TARGET} ({@code holdNodesWithNpuWorkloads: false}, so the job does not hold the node before its slot and the
 * drain has to evict it): {@code DrainBlocked} names the budget; the operator scales the job to zero, the drain
 * finishes, node-0 upgrades and comes back uncordoned, then the other nodes one by one. PodDisruptionBudgets and
 * the Eviction API exist only on a real kube-apiserver, so the step runs only with {@code --api real}.
 */
final class DemoDrainStep {

    /** The driver version of the step: installed beside {@link Demo#TO} in the registry and the ImageWhiteList. */
    static final String TARGET = "25.5.1";
    static final String NAMESPACE = "training";
    static final String JOB = "llama-train-0";
    static final String PDB = "llama-train";
    static final String NODE = "node-0";

    private final SimCluster sim;
    private final PrintStream out;
    private final Waiter wait;
    private final Supplier<String> table;

    /**
     * @param sim the simulated cluster, on a real API server
     * @param out where to print
     * @param wait waits with the progress table
     * @param table the progress table, shown when a wait times out
     */
    DemoDrainStep(SimCluster sim, PrintStream out, Waiter wait, Supplier<String> table) {
        this.sim = sim;
        this.out = out;
        this.wait = wait;
        this.table = table;
    }

    /**
     * Runs the step.
     *
     * @return what it showed
     * @throws Exception when a wait times out or a check fails (the message says which)
     */
    String run() throws Exception {
        Workloads w = sim.workloads();
        w.addPod(new Action.PodStep(NODE, JOB, NAMESPACE, 8, Map.of("job", "llama"), "ReplicaSet", false));
        w.applyPdb(new Action.Pdb(PDB, NAMESPACE, Map.of("job", "llama"), 1, null));
        out.println("   training job " + NAMESPACE + "/" + JOB + " (ReplicaSet, 8 x huawei.com/Ascend910) on " + NODE
                + ", PodDisruptionBudget " + NAMESPACE + "/" + PDB + " minAvailable: 1");
        out.println("   trigger: spec.driver.version=" + TARGET + ", upgradePolicy: {autoUpgrade: true, "
                + "holdNodesWithNpuWorkloads: false, drain: {timeoutSeconds: 3600}} (one node at a time, " + NODE
                + " first)");
        sim.patchDriver(Map.of("version", TARGET, "upgradePolicy", Map.of("autoUpgrade", true,
                "holdNodesWithNpuWorkloads", false, "drain", Map.of("timeoutSeconds", 3600))));
        wait.until(NODE + " cordoned, its drain blocked by the budget", Duration.ofSeconds(120),
                () -> "drain-required".equals(label(NODE)) && unschedulable(NODE)
                        && drainBlocked().contains("PodDisruptionBudget " + NAMESPACE + "/" + PDB), table);
        out.println("   Event DrainBlocked on " + NODE + ": " + drainBlocked());
        int reboots = sim.nodes().get(NODE).reboots();
        if (!"drain-required".equals(label(NODE))
                || sim.client().pods().inNamespace(NAMESPACE).withName(JOB).get() == null) {
            throw new IllegalStateException(NODE + " went on although the budget refused the eviction");
        }
        out.println("   kubectl scale replicaset " + JOB + " -n " + NAMESPACE + " --replicas=0");
        sim.client().apps().replicaSets().inNamespace(NAMESPACE).withName(JOB).scale(0);
        // the ReplicaSet controller's part (the simulated cluster runs only the disruption controller): the pod
        // beyond the replicas is deleted with its grace period, which the kubelet emulation ends
        sim.client().pods().inNamespace(NAMESPACE).withName(JOB).delete();
        wait.until(NODE + " drained, rebooted into " + TARGET + ", validated and uncordoned", Duration.ofSeconds(180),
                () -> TARGET.equals(sim.labels(NODE).get(NodeKeys.DRIVER_VERSION)) && label(NODE) == null
                        && !unschedulable(NODE) && sim.annotations(NODE).get(NodeKeys.CORDONED_BY) == null, table);
        if (sim.nodes().get(NODE).reboots() != reboots + 1) {
            throw new IllegalStateException(NODE + " rebooted " + (sim.nodes().get(NODE).reboots() - reboots)
                    + " times for the upgrade, expected once");
        }
        if (sim.client().pods().inNamespace(NAMESPACE).withName(JOB).get() != null) {
            throw new IllegalStateException(NAMESPACE + "/" + JOB + " is still there");
        }
        wait.until("every node on " + TARGET, Duration.ofSeconds(300), () -> sim.nodes().keySet().stream()
                .allMatch(n -> TARGET.equals(sim.labels(n).get(NodeKeys.DRIVER_VERSION)) && label(n) == null
                        && !unschedulable(n)), table);
        return NODE + "'s drain blocked by PodDisruptionBudget " + NAMESPACE + "/" + PDB + " until the job was scaled"
                + " to zero; then drained, one reboot, uncordoned; every node on " + TARGET;
    }

    private String label(String node) {
        return sim.labels(node).get(NodeKeys.DRIVER_UPGRADE_STATE);
    }

    private boolean unschedulable(String node) {
        Node n = sim.client().nodes().withName(node).get();
        return n != null && n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
    }

    /** @return the message of the latest DrainBlocked Event on {@link #NODE}, or "" */
    private String drainBlocked() {
        String msg = "";
        for (Event e : sim.events(NODE)) {
            if (NodeKeys.EVENT_DRAIN_BLOCKED.equals(e.getReason())) {
                msg = Objects.toString(e.getMessage(), "");
            }
        }
        return msg;
    }
}
