package io.npulifecycle.upgrade.internal.plan;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * What to do: the result of {@code rollout.Reconciler.plan}, applied by the controller's writer.
 *
 * @param nodePatches node writes, at most one per node
 * @param podDeletes driver pod deletions
 * @param daemonSets DaemonSet creations/updates
 * @param crEvents events on the CR (start, completion)
 * @param imagesToCheck images the registry preflight must answer for
 * @param status the status to write (when it differs from the last one)
 * @param nodeStates the resulting state of each node ("" = none, "upgraded", "unknown", "pending"), for the MBean
 * @param nextWakeup earliest deadline among in-flight nodes, or null
 * @param releasing per node the plan would make done or {@code upgrade-failed} but holds in its state until our
 *        cordon of it is released ({@code rollout.DrainStates#releaseFirst}): why the controller uncordons it now (the
 *        Event {@code Uncordoned}); such a node gets no patch in this plan
 */
public record Plan(List<NodePatch> nodePatches, List<PodDelete> podDeletes, List<DaemonSetApply> daemonSets,
        List<EventSpec> crEvents, Set<String> imagesToCheck, NpuOperatorCtlStatus status,
        Map<String, String> nodeStates, Instant nextWakeup, Map<String, String> releasing) {

    /**
     * A plan that releases no node.
     *
     * @param nodePatches see the record
     * @param podDeletes see the record
     * @param daemonSets see the record
     * @param crEvents see the record
     * @param imagesToCheck see the record
     * @param status see the record
     * @param nodeStates see the record
     * @param nextWakeup see the record
     */
    public Plan(List<NodePatch> nodePatches, List<PodDelete> podDeletes, List<DaemonSetApply> daemonSets,
            List<EventSpec> crEvents, Set<String> imagesToCheck, NpuOperatorCtlStatus status,
            Map<String, String> nodeStates, Instant nextWakeup) {
        this(nodePatches, podDeletes, daemonSets, crEvents, imagesToCheck, status, nodeStates, nextWakeup,
                Map.of());
    }
}
