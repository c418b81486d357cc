package io.npulifecycle.kube.internal;

import java.util.List;

import io.npulifecycle.api.node.NodeSyncMXBean;

/**
 * {@value NodeSyncMXBean#OBJECT_NAME}: the node-side sync's MBean, an adapter that answers every attribute and
 * operation from its {@link NodeSync} at the time of the call (nothing is cached here). Registered by
 * {@link NodeSyncComponent} as a {@code DynamicMBean} service with {@code jmx.objectname} set
 * ({@link io.npulifecycle.api.management.MBeanRegistrations}); the attribute and operation names are those of
 * {@link NodeSyncMXBean}, which Jolokia clients, Hawtio and the metrics bundle read.
 */
public final class NodeSyncMBean implements NodeSyncMXBean {
    private final NodeSync sync;

    /** @param sync the sync whose state is shown and whose operations are called */
    public NodeSyncMBean(NodeSync sync) {
        this.sync = java.util.Objects.requireNonNull(sync, "sync");
    }

    @Override
    public String getNodeName() {
        return sync.getNodeName();
    }

    @Override
    public String getPolicyResource() {
        return sync.getPolicyResource();
    }

    @Override
    public boolean isConnected() {
        return sync.isConnected();
    }

    @Override
    public boolean isNodeInformerWatching() {
        return sync.isNodeInformerWatching();
    }

    @Override
    public boolean isPolicyInformerWatching() {
        return sync.isPolicyInformerWatching();
    }

    @Override
    public String getLastInformerEvent() {
        return sync.getLastInformerEvent();
    }

    @Override
    public String getLastWrite() {
        return sync.getLastWrite();
    }

    @Override
    public long getReconnects() {
        return sync.getReconnects();
    }

    @Override
    public long getRelists() {
        return sync.getRelists();
    }

    @Override
    public long getWrites() {
        return sync.getWrites();
    }

    @Override
    public long getEventsPosted() {
        return sync.getEventsPosted();
    }

    @Override
    public int getPendingEvents() {
        return sync.getPendingEvents();
    }

    @Override
    public List<String> getPendingWrites() {
        return sync.getPendingWrites();
    }

    @Override
    public String getPendingWritesFile() {
        return sync.getPendingWritesFile();
    }

    @Override
    public String getPendingWritesProblem() {
        return sync.getPendingWritesProblem();
    }

    @Override
    public String getPolicy() {
        return sync.getPolicy();
    }

    @Override
    public String getPolicyProblem() {
        return sync.getPolicyProblem();
    }

    @Override
    public String getApproval() {
        return sync.getApproval();
    }

    @Override
    public String getLastError() {
        return sync.getLastError();
    }

    @Override
    public String relist() {
        return sync.relist();
    }
}
