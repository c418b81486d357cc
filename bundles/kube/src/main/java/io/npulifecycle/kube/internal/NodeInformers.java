package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.api.time.TimeSource;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

/**
 * The two informers of the node sync, each on one named object: this runtime's Node and the {@code NPUOperatorCtl}
 * (by name, so the RBAC's {@code resourceNames} applies to list and watch). They are created together and re-created
 * together ({@link #restart()}: a relist, which delivers both objects again and so rebuilds the node's state). A start
 * that fails is recorded in the {@link ApiHealth}; {@link InformerWatchdog} re-creates the informers. Thread-safe.
 */
final class NodeInformers {

    private static final System.Logger LOG = System.getLogger(NodeInformers.class.getName());

    /** The {@code NPUOperatorCtl}'s coordinates (DESIGN.md), for generic access without a discovery round trip. */
    static final ResourceDefinitionContext CRD = new ResourceDefinitionContext.Builder()
            .withGroup(NpuOperatorCtlType.GROUP).withVersion(NpuOperatorCtlType.VERSION)
            .withPlural(NpuOperatorCtlType.PLURAL).withKind(NpuOperatorCtlType.KIND)
            .withNamespaced(NpuOperatorCtlType.NAMESPACED).build();

    /** What the informers deliver; called on the informers' threads. */
    interface Listener {
        /** @param node the Node, added or changed */
        void onNode(Node node);

        /** The Node was deleted. */
        void onNodeDeleted();

        /** @param cr the {@code NPUOperatorCtl}, added or changed, or {@code null} when it was deleted */
        void onPolicy(GenericKubernetesResource cr);

        /** An informer has listed its object (a good moment to write the desired state). */
        void onSynced();
    }

    private final KubernetesClient client;
    private final NodeSync.Settings settings;
    private final TimeSource time;
    private final ApiHealth health;
    private final Listener listener;
    private volatile SharedIndexInformer<Node> nodeInformer;
    private volatile SharedIndexInformer<GenericKubernetesResource> crInformer;
    /** The start of each informer: done once its first list completed or failed. */
    private volatile CompletableFuture<Void> nodeStart;
    private volatile CompletableFuture<Void> crStart;
    private volatile Instant lastEventAt;
    private boolean stopped;

    /**
     * @param client the fabric8 client (not closed by this class)
     * @param settings the node name and the {@code NPUOperatorCtl}'s namespace and name
     * @param time the TimeSource (time of the last event)
     * @param health where a failed start is recorded
     * @param listener gets the objects
     */
    NodeInformers(KubernetesClient client, NodeSync.Settings settings, TimeSource time, ApiHealth health,
            Listener listener) {
        this.client = Objects.requireNonNull(client, "client");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.time = Objects.requireNonNull(time, "time");
        this.health = Objects.requireNonNull(health, "health");
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** Creates and starts both informers (they list, then watch); does nothing once {@link #stop()} was called. */
    synchronized void start() {
        if (stopped) {
            return;
        }
        SharedIndexInformer<Node> ni = client.nodes().withName(settings.nodeName()).runnableInformer(0);
        ni.addEventHandler(handler(listener::onNode, () -> {
            LOG.log(Level.WARNING, "Node " + settings.nodeName() + " was deleted from the API server");
            listener.onNodeDeleted();
        }));
        SharedIndexInformer<GenericKubernetesResource> ci = client.genericKubernetesResources(CRD)
                .inNamespace(settings.crNamespace()).withName(settings.crName()).runnableInformer(0);
        ci.addEventHandler(handler(listener::onPolicy, () -> listener.onPolicy(null)));
        nodeInformer = ni;
        crInformer = ci;
        CompletableFuture<Void> nodeDone = new CompletableFuture<>();
        CompletableFuture<Void> crDone = new CompletableFuture<>();
        nodeStart = nodeDone;
        crStart = crDone;
        ni.start().whenComplete((v, e) -> {
            nodeDone.complete(null);
            started("Node " + settings.nodeName(), e);
        });
        ci.start().whenComplete((v, e) -> {
            crDone.complete(null);
            started("NPUOperatorCtl " + policyResource(), e);
        });
    }

    /** @return a handler that notes the time of each event and passes the object added or changed, or the delete */
    private <T> ResourceEventHandler<T> handler(Consumer<T> changed, Runnable deleted) {
        return new ResourceEventHandler<T>() {
            @Override
            public void onAdd(T obj) {
                lastEventAt = time.now();
                changed.accept(obj);
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                lastEventAt = time.now();
                changed.accept(newObj);
            }

            @Override
            public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                lastEventAt = time.now();
                deleted.run();
            }
        };
    }

    private void started(String what, Throwable e) {
        if (e != null) {
            String error = "informer on " + what + " failed to start: " + e.getMessage();
            health.failed(error);
            LOG.log(Level.WARNING, error + " (retried at the next health tick)");
        } else {
            LOG.log(Level.INFO, "informer on " + what + " synced");
            listener.onSynced();
        }
    }

    /** Closes both informers and creates new ones (relist); does nothing once {@link #stop()} was called. */
    synchronized void restart() {
        close();
        start();
    }

    /** Closes both informers for good. */
    synchronized void stop() {
        stopped = true;
        close();
    }

    private void close() {
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {nodeInformer, crInformer}) {
            if (i != null) {
                try {
                    i.close();
                } catch (RuntimeException e) {
                    LOG.log(Level.DEBUG, "closing informer: " + e);
                }
            }
        }
        nodeInformer = null;
        crInformer = null;
        nodeStart = null;
        crStart = null;
    }

    /** @return whether {@link #stop()} was called */
    synchronized boolean stopped() {
        return stopped;
    }

    /** @return the Node informer, or {@code null} while there is none */
    SharedIndexInformer<Node> nodeInformer() {
        return nodeInformer;
    }

    /** @return the {@code NPUOperatorCtl} informer, or {@code null} while there is none */
    SharedIndexInformer<GenericKubernetesResource> policyInformer() {
        return crInformer;
    }

    /**
     * @return whether the Node informer exists and its start (the first list) has neither completed nor failed yet:
     *         it does not watch yet, and that is no sign of a stopped watch
     */
    boolean nodeStarting() {
        return pending(nodeStart);
    }

    /** @return whether the {@code NPUOperatorCtl} informer is starting, as {@link #nodeStarting()} */
    boolean policyStarting() {
        return pending(crStart);
    }

    private static boolean pending(CompletableFuture<Void> start) {
        return start != null && !start.isDone();
    }

    /** @return whether the Node informer exists and watches */
    boolean nodeWatching() {
        return watching(nodeInformer);
    }

    /** @return whether the {@code NPUOperatorCtl} informer exists and watches */
    boolean policyWatching() {
        return watching(crInformer);
    }

    /** @return the time of the last event of either informer, or {@code null} */
    Instant lastEventAt() {
        return lastEventAt;
    }

    /** @return the {@code NPUOperatorCtl} watched, {@code namespace/name} */
    String policyResource() {
        return settings.crNamespace() + "/" + settings.crName();
    }

    static boolean watching(SharedIndexInformer<?> i) {
        return i != null && i.isWatching();
    }
}
