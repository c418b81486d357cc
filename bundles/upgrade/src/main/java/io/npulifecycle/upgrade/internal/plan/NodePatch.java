package io.npulifecycle.upgrade.internal.plan;

import java.util.List;
import java.util.Map;

/**
 * One JSON merge patch of a node's labels and annotations, guarded by the node's resourceVersion, and the Events to
 * create once it succeeded.
 *
 * @param node the node's name
 * @param resourceVersion the resourceVersion the plan read: the patch is refused (409) when the node changed since
 * @param labels the labels to set; a null value removes the key
 * @param annotations the annotations to set; a null value removes the key
 * @param why the transition, {@code <state> -> <state>} ({@code none} without a state), for the log
 * @param events the Events on the node, created after the patch
 */
public record NodePatch(String node, String resourceVersion, Map<String, String> labels,
        Map<String, String> annotations, String why, List<EventSpec> events) {
}
