package io.npulifecycle.api.node;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The node agent's writes to its own Node (an OSGi service of the Kubernetes bundle). Writes are <em>desired
 * state</em>: they are reconciled onto the Node whenever the informer shows a difference, after a relist and when the
 * API server comes back, so callers never block on the API server and never lose a write to an outage. Events are
 * queued and created once each. What the API server has not received yet is kept on the host (the state folder)
 * before a write method returns, so it survives a SIGKILL and a reboot and is written when the API server answers.
 */
@ProviderType
public interface NodeWriter {

    /** @return the node name ({@code NODE_NAME}) */
    String nodeName();

    /** @return whether the API server answered the last request and the Node informer is watching */
    boolean connected();

    /**
     * Sets (or with {@code null}, removes) a label the node agent owns.
     *
     * @param key a key under {@value NodeKeys#PREFIX} ({@link NodeKeys#writableByNodeAgent})
     * @param value a valid label value (at most 63 characters of {@code [A-Za-z0-9._-]}), or {@code null} to remove
     * @throws IllegalArgumentException on a key the node agent does not own or an invalid value
     */
    void setLabel(String key, String value);

    /**
     * Sets (or with {@code null}, removes) an annotation the node agent owns.
     *
     * @param key a key under {@value NodeKeys#PREFIX} ({@link NodeKeys#writableByNodeAgent})
     * @param value the value (one line), or {@code null} to remove
     * @throws IllegalArgumentException on a key the node agent does not own
     */
    void setAnnotation(String key, String value);

    /**
     * Records an Event on the Node, once per {@code key}: the Event's name is derived from the node name and the key,
     * so the same key is never posted twice, not even across a runtime restart (the API server answers 409).
     * Queued while the API server is unreachable.
     *
     * @param key identifies the occurrence, e.g. {@code RebootRequired/<boot-id>/<since>}
     * @param type {@value NodeKeys#NORMAL} or {@value NodeKeys#WARNING}
     * @param reason e.g. {@value NodeKeys#EVENT_REBOOT_REQUIRED}
     * @param message human-readable, one line
     */
    void recordEvent(String key, String type, String reason, String message);

    /**
     * Waits until the desired labels and annotations are on the Node and every queued Event is created, or the
     * timeout passes (used right before a reboot, which would otherwise cut the writes short). What is still not
     * written when it returns is kept on the host and written after the reboot.
     *
     * @param timeoutMillis the longest wait, in ms of wall-clock time (an I/O bound, not simulated time)
     * @return whether everything was written
     */
    boolean flush(long timeoutMillis);
}
