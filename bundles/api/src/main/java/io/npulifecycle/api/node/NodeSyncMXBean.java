package io.npulifecycle.api.node;

/** The node-side Kubernetes sync, object name {@code io.npulifecycle:type=NodeSync}. */
public interface NodeSyncMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=NodeSync";

    /** @return the node name */
    String getNodeName();

    /** @return the NPUOperatorCtl watched, {@code namespace/name} */
    String getPolicyResource();

    /** @return whether the API server answered the last request and the Node informer is watching */
    boolean isConnected();

    /** @return whether the Node informer is watching */
    boolean isNodeInformerWatching();

    /** @return whether the NPUOperatorCtl informer is watching */
    boolean isPolicyInformerWatching();

    /** @return ISO-8601 time of the last informer event, or {@code null} */
    String getLastInformerEvent();

    /** @return ISO-8601 time of the last Node write, or {@code null} */
    String getLastWrite();

    /** @return how many times both informers went back to watching after not watching */
    long getReconnects();

    /** @return how many times the informers were re-created (relist) */
    long getRelists();

    /** @return Node writes done */
    long getWrites();

    /** @return Events created */
    long getEventsPosted();

    /** @return Events queued (API server unreachable) */
    int getPendingEvents();

    /**
     * @return the writes the API server has not received yet, oldest Event first, one line each:
     *         {@code Event <reason> <name> (<type>, since <ISO-8601>)}, {@code label <key>=<value>},
     *         {@code label <key> removed}, {@code annotation <key>=<value>}, {@code annotation <key> removed}; they
     *         are kept in {@link #getPendingWritesFile()} and written when the API server answers
     */
    java.util.List<String> getPendingWrites();

    /**
     * @return the file on the host that keeps the pending writes across a restart and a reboot
     *         ({@code <stateDir>/node-writes.pending}), or {@code null} when they are kept in memory only
     */
    String getPendingWritesFile();

    /**
     * @return why the pending writes are not (all) on disk or what was wrong with the file found at the start (it was
     *         moved aside as {@code node-writes.pending.corrupt-<epoch ms>}), or {@code null}
     */
    String getPendingWritesProblem();

    /** @return the policy as read, or {@code unknown (why)} */
    String getPolicy();

    /** @return why the policy is unknown (malformed NPUOperatorCtl...), or {@code null} */
    String getPolicyProblem();

    /** @return {@code approved}, {@code absent}, {@code invalid value '...'} or {@code unknown} */
    String getApproval();

    /** @return the last API error, or {@code null} */
    String getLastError();

    /**
     * Re-creates both informers (relist). Logged.
     *
     * @return what was done
     */
    String relist();
}
