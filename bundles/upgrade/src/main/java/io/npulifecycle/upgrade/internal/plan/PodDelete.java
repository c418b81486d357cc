package io.npulifecycle.upgrade.internal.plan;

/**
 * Delete one driver pod so that its OnDelete DaemonSet recreates it with the target image.
 *
 * @param namespace the pod's namespace
 * @param name the pod's name
 * @param uid the pod's uid (the delete's precondition, and what the controller remembers as deleted)
 * @param node the node it runs on
 * @param why {@code image <old> -> <new>}, for the log
 */
public record PodDelete(String namespace, String name, String uid, String node, String why) {
}
