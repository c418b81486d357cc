package io.npulifecycle.api.upgrade;

import java.util.List;
import java.util.Map;

import io.npulifecycle.api.management.Description;

/**
 * The driver rollout as seen by one control-plane replica: {@code io.npulifecycle:type=UpgradeOrchestrator}. Every
 * replica computes the same view from its informers; only the leader writes.
 */
@Description("The cluster-wide driver rollout and recovery drain (io.npulifecycle:type=UpgradeOrchestrator): node states, "
        + "slots, approvals, per node the drain, the blocking pods, the maintenance-window wait and the recovery step; "
        + "pause and resume.")
public interface UpgradeOrchestratorMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=UpgradeOrchestrator";

    /** @return {@code spec.driver.version} being rolled out, "" without a (valid) NPUOperatorCtl */
    @Description("The spec.driver.version being rolled out, \"\" without a (valid) NPUOperatorCtl.")
    String getTargetVersion();

    /** @return NPU nodes per state (upgrade states plus pending, upgraded, unvalidated, unknown) */
    @Description("NPU nodes per state (upgrade states plus pending, upgraded, unvalidated, unknown).")
    Map<String, Integer> getCountsPerState();

    /** @return each NPU node's state ("upgraded" when done) */
    @Description("Each NPU node's state (\"upgraded\" when done).")
    Map<String, String> getNodeStates();

    /**
     * @return nodes in {@code reboot-required} or {@code reboot-deferred} waiting for
     *         {@code npu.openfuyao.com/approve-reboot=true}
     */
    @Description("Nodes in reboot-required or reboot-deferred waiting for npu.openfuyao.com/approve-reboot=true.")
    List<String> getAwaitingApproval();

    /**
     * @return the nodes holding a rollout slot, {@code name: why} (state, approval, what it waits for, or the
     *         approved node it gives its slot to), as in the status' {@code slotHolders}
     * @since 1.1
     */
    @Description("The nodes holding a rollout slot, name: why (state, approval, what it waits for, or the approved node it "
            + "gives its slot to), as in the status' slotHolders.")
    List<String> getSlotHolders();

    /**
     * @return the nodes of the upgrade drain ({@code cordon-required}, {@code drain-required}), {@code name: reason}
     *         naming the pods left and what blocks each (the PodDisruptionBudget, no controller, emptyDir data), as
     *         the status' {@code drainingNodes}; empty from an implementation without the per-node view
     * @since 2.0
     */
    @Description("The nodes of the upgrade drain (cordon-required, drain-required), name: reason naming the pods left and "
            + "what blocks each (the PodDisruptionBudget, no controller, emptyDir data), as the status' drainingNodes.")
    default List<String> getDrainingNodes() {
        return List.of();
    }

    /**
     * @return the nodes that get no rollout slot while a pod matching {@code upgradePolicy.blockingPodSelector} runs
     *         on them, {@code name: reason} naming the pods, as the status' {@code blockedNodes}
     * @since 2.0
     */
    @Description("The nodes that get no rollout slot while a pod matching upgradePolicy.blockingPodSelector runs on them, "
            + "name: reason naming the blocking pods, as the status' blockedNodes.")
    default List<String> getBlockedNodes() {
        return List.of();
    }

    /**
     * @return the nodes waiting for a rollout slot while {@code upgradePolicy.maintenanceWindow} is closed,
     *         {@code name: reason} naming the window and its next opening (RFC 3339), as the status'
     *         {@code waitingForWindow}
     * @since 2.0
     */
    @Description("The nodes waiting for a rollout slot while upgradePolicy.maintenanceWindow is closed, name: reason naming "
            + "the window and its next opening (RFC 3339), as the status' waitingForWindow.")
    default List<String> getWaitingForWindow() {
        return List.of();
    }

    /**
     * @return the wedged nodes in the recovery flow (taint, storm protection, the enforced
     *         {@code recoveryPolicy.maintenanceWindow}, cordon, drain with the pods left, grant, failed drain,
     *         validation), {@code name: reason}, as the status' {@code recoveringNodes}
     * @since 2.0
     */
    @Description("The wedged nodes in the recovery flow, name: step and why (tainted, waiting for the storm protection or "
            + "the enforced recoveryPolicy.maintenanceWindow with its next opening, cordoning, draining with the pods "
            + "left and what blocks them, granted, drain failed, validating), as the status' recoveringNodes.")
    default List<String> getRecoveringNodes() {
        return List.of();
    }

    /** @return failed nodes, {@code name: reason} */
    @Description("Failed nodes, name: reason.")
    List<String> getFailedNodes();

    /** @return the status conditions, {@code Type=Status (Reason): message} */
    @Description("The status conditions, Type=Status (Reason): message.")
    List<String> getConditions();

    /** @return whether this replica holds the lease and writes */
    @Description("Whether this replica holds the lease and writes.")
    boolean isLeader();

    /** @return this replica's lease identity */
    @Description("This replica's lease identity.")
    String getIdentity();

    /** @return whether the rollout is paused (annotation {@code npu.openfuyao.com/paused=true} on the CR) */
    @Description("Whether the rollout is paused (annotation npu.openfuyao.com/paused=true on the CR).")
    boolean isPaused();

    /** @return writes made by this replica, by kind, plus reconciles, 409 conflicts and informer rebuilds */
    @Description("Writes made by this replica, by kind, plus reconciles, 409 conflicts and informer rebuilds.")
    Map<String, Long> getWriteCounts();

    /**
     * Pauses the rollout (operator role): annotates the NPUOperatorCtl with {@code npu.openfuyao.com/paused=true}, so
     * it survives a leader change; no node gets a new slot, nodes in flight finish their current step. Logged.
     * {@link #isPaused()} reads the new state at once.
     *
     * @return the new state: {@code true} (paused)
     * @throws RuntimeException when the CR cannot be patched (message from the API server)
     */
    @Description("Pauses the rollout (operator role): annotates the NPUOperatorCtl with npu.openfuyao.com/paused=true, so "
            + "it survives a leader change; no node gets a new slot, nodes in flight finish their current step. Logged. "
            + "Paused reads the new state at once. Returns the new state: true (paused).")
    boolean pause();

    /**
     * Resumes the rollout (removes the annotation). Logged. {@link #isPaused()} reads the new state at once.
     *
     * @return the new state: {@code false} (not paused)
     * @throws RuntimeException when the CR cannot be patched (message from the API server)
     */
    @Description("Resumes the rollout (removes the annotation). Logged. Paused reads the new state at once. Returns the "
            + "new state: false (not paused).")
    boolean resume();
}
