package io.npulifecycle.api.node;

import io.npulifecycle.api.management.Description;

/** The node-side Kubernetes sync, object name {@code io.npulifecycle:type=NodeSync}. */
@Description("The node agent's link to Kubernetes (io.npulifecycle:type=NodeSync): informers, Node writes, Events, the "
        + "policy read from the NPUOperatorCtl.")
public interface NodeSyncMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=NodeSync";

    /** @return the node name */
    @Description("The Kubernetes Node name of this node.")
    String getNodeName();

    /** @return the NPUOperatorCtl watched, {@code namespace/name} */
    @Description("The NPUOperatorCtl watched, namespace/name.")
    String getPolicyResource();

    /** @return whether the API server answered the last request and the Node informer is watching */
    @Description("Whether the API server answered the last request and the Node informer is watching.")
    boolean isConnected();

    /** @return whether the Node informer is watching */
    @Description("Whether the Node informer is watching.")
    boolean isNodeInformerWatching();

    /** @return whether the NPUOperatorCtl informer is watching */
    @Description("Whether the NPUOperatorCtl informer is watching.")
    boolean isPolicyInformerWatching();

    /** @return ISO-8601 time of the last informer event, or {@code null} */
    @Description("ISO-8601 time of the last informer event, or null.")
    String getLastInformerEvent();

    /** @return ISO-8601 time of the last Node write, or {@code null} */
    @Description("ISO-8601 time of the last Node write, or null.")
    String getLastWrite();

    /** @return how many times both informers went back to watching after not watching */
    @Description("How many times (a count, since start) both informers went back to watching after not watching.")
    long getReconnects();

    /** @return how many times the informers were re-created (relist) */
    @Description("How many times (a count, since start) the informers were re-created (relist).")
    long getRelists();

    /** @return Node writes done */
    @Description("Node writes (labels, annotations) done since start (a count).")
    long getWrites();

    /** @return Events created */
    @Description("Kubernetes Events created since start (a count).")
    long getEventsPosted();

    /** @return Events queued (API server unreachable) */
    @Description("Kubernetes Events queued while the API server is unreachable (a count).")
    int getPendingEvents();

    /**
     * @return the writes the API server has not received yet, oldest Event first, one line each:
     *         {@code Event <reason> <name> (<type>, since <ISO-8601>)}, {@code label <key>=<value>},
     *         {@code label <key> removed}, {@code annotation <key>=<value>}, {@code annotation <key> removed}; they
     *         are kept in {@link #getPendingWritesFile()} and written when the API server answers
     */
    @Description("The writes the API server has not received yet, oldest Event first, one line each: Event <reason> <name> "
            + "(<type>, since <ISO-8601>), label <key>=<value>, label <key> removed, annotation <key>=<value>, "
            + "annotation <key> removed; they are kept in PendingWritesFile and written when the API server answers.")
    java.util.List<String> getPendingWrites();

    /**
     * @return the file on the host that keeps the pending writes across a restart and a reboot
     *         ({@code <stateDir>/node-writes.pending}), or {@code null} when they are kept in memory only
     */
    @Description("The file on the host that keeps the pending writes across a restart and a reboot "
            + "(<stateDir>/node-writes.pending), or null when they are kept in memory only.")
    String getPendingWritesFile();

    /**
     * @return why the pending writes are not (all) on disk or what was wrong with the file found at the start (it was
     *         moved aside as {@code node-writes.pending.corrupt-<epoch ms>}), or {@code null}
     */
    @Description("Why the pending writes are not (all) on disk or what was wrong with the file found at the start (it was "
            + "moved aside as node-writes.pending.corrupt-<epoch ms>), or null.")
    String getPendingWritesProblem();

    /** @return the policy as read, or {@code unknown (why)} */
    @Description("The policy as read, or unknown (why).")
    String getPolicy();

    /** @return why the policy is unknown (malformed NPUOperatorCtl...), or {@code null} */
    @Description("Why the policy is unknown (malformed NPUOperatorCtl...), or null.")
    String getPolicyProblem();

    /** @return {@code approved}, {@code absent}, {@code invalid value '...'} or {@code unknown} */
    @Description("The reboot approval of this node (annotation npu.openfuyao.com/approve-reboot): approved, absent, "
            + "invalid value '...' or unknown.")
    String getApproval();

    /** @return the last API error, or {@code null} */
    @Description("The last API error, or null.")
    String getLastError();

    /**
     * Re-creates both informers (relist). Logged.
     *
     * @return what was done
     */
    @Description("Re-creates both informers (relist). Logged. Returns what was done.")
    String relist();
}
