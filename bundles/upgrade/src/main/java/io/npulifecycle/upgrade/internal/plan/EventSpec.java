package io.npulifecycle.upgrade.internal.plan;

/**
 * An Event to create.
 *
 * @param kind {@code Node} or {@code NPUOperatorCtl}
 * @param name the node's name; null on the CR (the writer names it)
 * @param type {@code Normal} or {@code Warning}
 * @param reason the Event's reason, e.g. {@code DrainStarted}
 * @param message the Event's message
 */
public record EventSpec(String kind, String name, String type, String reason, String message) {
}
