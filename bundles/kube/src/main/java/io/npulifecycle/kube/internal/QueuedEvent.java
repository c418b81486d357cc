package io.npulifecycle.kube.internal;

import java.time.Instant;
import java.util.Objects;

/**
 * One Event the node agent owes the API server: what {@link NodeEventQueue} creates and what
 * {@link PendingWritesFile} keeps on the host until it is created.
 *
 * @param key identifies the occurrence; the Event's name is derived from it ({@link NodeEventQueue#eventName})
 * @param type {@code Normal} or {@code Warning}
 * @param reason e.g. {@code RebootRequired}
 * @param message human-readable, one line
 * @param at when it was recorded (the Event's first and last timestamp), TimeSource time
 */
record QueuedEvent(String key, String type, String reason, String message, Instant at) {

    /**
     * Checks the fields.
     *
     * @throws NullPointerException when one is {@code null}, naming it
     */
    QueuedEvent {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(at, "at");
    }
}
