package io.npulifecycle.api.upgrade.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Condition;

/**
 * {@code status} of an NPUOperatorCtl, written by the leader of the control plane. Condition types:
 * {@code PreflightPassed}, {@code Progressing}, {@code Complete}, {@code Degraded}, {@code InvalidSpec}, {@code RecoveryStorm}.
 */
public class NpuOperatorCtlStatus {
    private Long observedGeneration;
    private String targetVersion;
    private String progress;
    private Boolean paused;
    private String startTime;
    private String completionTime;
    private Map<String, Integer> nodeCounts = new LinkedHashMap<>();
    private List<String> awaitingApproval = new ArrayList<>();
    private List<NodeIssue> failedNodes = new ArrayList<>();
    private List<NodeIssue> heldNodes = new ArrayList<>();
    private List<NodeIssue> slotHolders = new ArrayList<>();
    private List<NodeIssue> drainingNodes = new ArrayList<>();
    private List<NodeIssue> blockedNodes = new ArrayList<>();
    private List<NodeIssue> waitingForWindow = new ArrayList<>();
    private List<NodeIssue> recoveringNodes = new ArrayList<>();
    private List<Condition> conditions = new ArrayList<>();

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    /** @return the driver version being rolled out */
    public String getTargetVersion() {
        return targetVersion;
    }

    public void setTargetVersion(String targetVersion) {
        this.targetVersion = targetVersion;
    }

    /** @return {@code <upgraded>/<NPU nodes>}, the printer column */
    public String getProgress() {
        return progress;
    }

    public void setProgress(String progress) {
        this.progress = progress;
    }

    public Boolean getPaused() {
        return paused;
    }

    public void setPaused(Boolean paused) {
        this.paused = paused;
    }

    /** @return RFC 3339 instant the rollout to {@link #getTargetVersion()} started */
    public String getStartTime() {
        return startTime;
    }

    public void setStartTime(String startTime) {
        this.startTime = startTime;
    }

    /** @return RFC 3339 instant every NPU node was validated on the target */
    public String getCompletionTime() {
        return completionTime;
    }

    public void setCompletionTime(String completionTime) {
        this.completionTime = completionTime;
    }

    /** @return NPU nodes per state: every upgrade state, plus {@code upgraded} and {@code unknown} */
    public Map<String, Integer> getNodeCounts() {
        return nodeCounts;
    }

    public void setNodeCounts(Map<String, Integer> nodeCounts) {
        this.nodeCounts = nodeCounts;
    }

    /**
     * @return nodes in {@code reboot-required} or {@code reboot-deferred} waiting for
     *         {@code npu.openfuyao.com/approve-reboot=true}
     */
    public List<String> getAwaitingApproval() {
        return awaitingApproval;
    }

    public void setAwaitingApproval(List<String> awaitingApproval) {
        this.awaitingApproval = awaitingApproval;
    }

    /** @return nodes in upgrade-failed with the reason */
    public List<NodeIssue> getFailedNodes() {
        return failedNodes;
    }

    public void setFailedNodes(List<NodeIssue> failedNodes) {
        this.failedNodes = failedNodes;
    }

    /** @return nodes held by a preflight check (NPU workloads, missing chip label) with the reason */
    public List<NodeIssue> getHeldNodes() {
        return heldNodes;
    }

    public void setHeldNodes(List<NodeIssue> heldNodes) {
        this.heldNodes = heldNodes;
    }

    /**
     * @return the nodes holding a rollout slot ({@code maxParallelUpgrades}) with why: their state, whether they are
     *         approved, what they wait for, and, for a node giving its slot up in this reconcile, the approved node
     *         it gives it to
     * @since 1.1
     */
    public List<NodeIssue> getSlotHolders() {
        return slotHolders;
    }

    /**
     * @param slotHolders see {@link #getSlotHolders()}
     * @since 1.1
     */
    public void setSlotHolders(List<NodeIssue> slotHolders) {
        this.slotHolders = slotHolders;
    }

    /**
     * @return nodes being drained, each with the pods left and what blocks them (the PodDisruptionBudget that
     *         refused an eviction, a pod without a controller, emptyDir data)
     * @since 1.1
     */
    public List<NodeIssue> getDrainingNodes() {
        return drainingNodes;
    }

    /**
     * @param drainingNodes see {@link #getDrainingNodes()}
     * @since 1.1
     */
    public void setDrainingNodes(List<NodeIssue> drainingNodes) {
        this.drainingNodes = drainingNodes;
    }

    /**
     * @return nodes that get no rollout slot while a pod matching {@code upgradePolicy.blockingPodSelector} runs on
     *         them, each naming the pods
     * @since 1.2
     */
    public List<NodeIssue> getBlockedNodes() {
        return blockedNodes;
    }

    /**
     * @param blockedNodes see {@link #getBlockedNodes()}
     * @since 1.2
     */
    public void setBlockedNodes(List<NodeIssue> blockedNodes) {
        this.blockedNodes = blockedNodes;
    }

    /**
     * @return nodes waiting for a rollout slot while {@code upgradePolicy.maintenanceWindow} is closed, each naming
     *         the window and when it opens
     * @since 1.2
     */
    public List<NodeIssue> getWaitingForWindow() {
        return waitingForWindow;
    }

    /**
     * @param waitingForWindow see {@link #getWaitingForWindow()}
     * @since 1.2
     */
    public void setWaitingForWindow(List<NodeIssue> waitingForWindow) {
        this.waitingForWindow = waitingForWindow;
    }

    /**
     * @return nodes in recovery (a wedge declared, or rebooted and not validated yet), each with its step: tainted,
     *         draining with the pods left, waiting for the storm limit ({@code RecoveryStorm}), granted, rebooted
     * @since 1.2
     */
    public List<NodeIssue> getRecoveringNodes() {
        return recoveringNodes;
    }

    /**
     * @param recoveringNodes see {@link #getRecoveringNodes()}
     * @since 1.2
     */
    public void setRecoveringNodes(List<NodeIssue> recoveringNodes) {
        this.recoveringNodes = recoveringNodes;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof NpuOperatorCtlStatus s)) {
            return false;
        }
        return Objects.equals(observedGeneration, s.observedGeneration) && Objects.equals(targetVersion, s.targetVersion)
                && Objects.equals(progress, s.progress) && Objects.equals(paused, s.paused)
                && Objects.equals(startTime, s.startTime) && Objects.equals(completionTime, s.completionTime)
                && Objects.equals(nodeCounts, s.nodeCounts) && Objects.equals(awaitingApproval, s.awaitingApproval)
                && Objects.equals(failedNodes, s.failedNodes) && Objects.equals(heldNodes, s.heldNodes)
                && Objects.equals(slotHolders, s.slotHolders) && Objects.equals(drainingNodes, s.drainingNodes)
                && Objects.equals(blockedNodes, s.blockedNodes) && Objects.equals(waitingForWindow, s.waitingForWindow)
                && Objects.equals(recoveringNodes, s.recoveringNodes) && Objects.equals(conditions, s.conditions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(targetVersion, progress, nodeCounts);
    }
}
