package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.api.time.TimeSource;

/**
 * The controller's part of the uninstall (called by {@link UpgradeController} before it plans):
 * <ul>
 * <li>the leader puts the finalizer {@value NodeKeys#FINALIZER_CLEANUP} on the NPUOperatorCtl it reconciles;</li>
 * <li>once the resource is being deleted, the leader plans nothing more and runs a {@link ClusterCleanup} pass
 * ({@link ClusterCleanup.Scope#RESOURCE_DELETED}) at every reconcile (and every {@link #RETRY} while it waits for a
 * node in its reboot or for terminating pods), then removes the finalizer once a pass finds nothing left;</li>
 * <li>while the resource carries {@value ClusterCleanup#UNINSTALLING} with an instant at or after this controller's
 * start ({@code npu-lifecycle uninstall} runs), the controller writes nothing; an older instant is a previous
 * installation's, and the leader removes it; a value that is not an RFC 3339 instant is removed too, with a warning
 * naming it.</li>
 * </ul>
 * Reconcile thread only.
 */
final class CleanupFinalizer {

    private static final System.Logger LOG = System.getLogger(CleanupFinalizer.class.getName());
    /** The wait before the next cleanup pass while one waits (a reboot, terminating pods) or failed. */
    static final Duration RETRY = Duration.ofSeconds(5);

    private final KubernetesClient client;
    private final TimeSource time;
    private final ControllerConfig cfg;
    private final BooleanSupplier leader;
    private final Runnable trigger;
    private final Instant startedAt;
    private ClusterCleanup cleanup;
    private String lastProblem;
    private boolean standingDown;

    /**
     * @param client the control plane's client
     * @param time the injected clock (this controller's start, the retry)
     * @param cfg the namespace and resource name
     * @param leader whether this replica may write
     * @param trigger asks for a reconcile
     */
    CleanupFinalizer(KubernetesClient client, TimeSource time, ControllerConfig cfg, BooleanSupplier leader,
            Runnable trigger) {
        this.client = client;
        this.time = time;
        this.cfg = cfg;
        this.leader = leader;
        this.trigger = trigger;
        this.startedAt = time.now();
    }

    /**
     * @param cr the NPUOperatorCtl as the informer has it
     * @return true when the reconcile must stop here (the resource is being deleted, or an uninstall runs)
     */
    boolean intercept(GenericKubernetesResource cr) {
        List<String> fins = cr.getMetadata().getFinalizers() == null ? List.of() : cr.getMetadata().getFinalizers();
        if (cr.getMetadata().getDeletionTimestamp() != null) {
            if (leader.getAsBoolean() && fins.contains(NodeKeys.FINALIZER_CLEANUP)) {
                cleanUp(cr, fins);
            }
            return true;
        }
        Map<String, String> ann = cr.getMetadata().getAnnotations() == null ? Map.of() : cr.getMetadata().getAnnotations();
        String mark = ann.get(ClusterCleanup.UNINSTALLING);
        if (mark != null) {
            Instant at = null;
            try {
                at = Instant.parse(mark);
            } catch (DateTimeParseException e) {
                LOG.log(Level.WARNING, "NPUOperatorCtl " + name() + ": " + ClusterCleanup.UNINSTALLING + "='" + mark
                        + "' is not an RFC 3339 instant: ignored and removed");
            }
            if (at != null && !at.isBefore(startedAt)) {
                if (!standingDown) {
                    standingDown = true;
                    LOG.log(Level.INFO, "NPUOperatorCtl " + name() + ": npu-lifecycle uninstall runs (since " + mark
                            + "): this control plane writes nothing more");
                }
                return true;
            }
            if (leader.getAsBoolean()) {
                if (at != null) {
                    LOG.log(Level.INFO, "NPUOperatorCtl " + name() + ": " + ClusterCleanup.UNINSTALLING + "=" + mark
                            + " is from before this control plane started (a reinstall): removed");
                }
                Map<String, Object> a = new LinkedHashMap<>();
                a.put(ClusterCleanup.UNINSTALLING, null);
                patch(cr, Map.of("annotations", a), "remove " + ClusterCleanup.UNINSTALLING);
            }
        }
        standingDown = false;
        if (leader.getAsBoolean() && !fins.contains(NodeKeys.FINALIZER_CLEANUP)) {
            if (patch(cr, Map.of("finalizers", ClusterCleanup.Finalizers.with(fins)), "add the finalizer "
                    + NodeKeys.FINALIZER_CLEANUP)) {
                LOG.log(Level.INFO, "NPUOperatorCtl " + name() + ": finalizer " + NodeKeys.FINALIZER_CLEANUP
                        + " added (its deletion removes what npu-lifecycle added to the cluster)");
            }
        }
        return false;
    }

    private void cleanUp(GenericKubernetesResource cr, List<String> fins) {
        if (cleanup == null) {
            LOG.log(Level.INFO, "NPUOperatorCtl " + name() + " is being deleted: removing what npu-lifecycle added "
                    + "(driver DaemonSets, node labels, annotations, taint, condition, our cordons), then the finalizer");
            cleanup = new ClusterCleanup(client, cfg.namespace(), ClusterCleanup.Scope.RESOURCE_DELETED);
        }
        ClusterCleanup.Report r;
        try {
            r = cleanup.pass();
        } catch (ClusterCleanup.CleanupException e) {
            if (!e.getMessage().equals(lastProblem)) {
                lastProblem = e.getMessage();
                LOG.log(Level.ERROR, "NPUOperatorCtl " + name() + " is being deleted but the cleanup cannot go on: "
                        + e.getMessage() + " (the finalizer stays; tried again every " + RETRY.toSeconds() + " s)");
            }
            time.schedule(trigger, RETRY);
            return;
        }
        r.removed().forEach(s -> LOG.log(Level.INFO, "cleanup: removed " + s));
        r.waitingFor().forEach(s -> LOG.log(Level.INFO, "cleanup: waiting for " + s));
        if (!r.done()) {
            time.schedule(trigger, r.waitingFor().isEmpty() ? Duration.ofMillis(200) : RETRY);
            return;
        }
        r.kept().forEach(s -> LOG.log(Level.INFO, "cleanup: kept " + s));
        if (patch(cr, Map.of("finalizers", ClusterCleanup.Finalizers.without(fins)), "remove the finalizer "
                + NodeKeys.FINALIZER_CLEANUP)) {
            LOG.log(Level.INFO, "NPUOperatorCtl " + name() + ": cleanup done, finalizer " + NodeKeys.FINALIZER_CLEANUP
                    + " removed");
        } else {
            time.schedule(trigger, RETRY);
        }
    }

    /** @return false when the patch failed (logged; the next reconcile tries again) */
    private boolean patch(GenericKubernetesResource cr, Map<String, Object> metadata, String purpose) {
        Map<String, Object> meta = new LinkedHashMap<>(metadata);
        meta.put("resourceVersion", cr.getMetadata().getResourceVersion());
        GenericKubernetesResource stub = new GenericKubernetesResource();
        stub.setApiVersion(NpuOperatorCtlType.GROUP + "/" + NpuOperatorCtlType.VERSION);
        stub.setKind(NpuOperatorCtlType.KIND);
        stub.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(cr.getMetadata().getName())
                .withNamespace(cr.getMetadata().getNamespace()).build());
        try {
            client.genericKubernetesResources(UpgradeController.CTX).inNamespace(cr.getMetadata().getNamespace())
                    .resource(stub).patch(PatchContext.of(PatchType.JSON_MERGE),
                            client.getKubernetesSerialization().asJson(Map.of("metadata", meta)));
            return true;
        } catch (KubernetesClientException e) {
            LOG.log(e.getCode() == 409 ? Level.DEBUG : Level.WARNING, "NPUOperatorCtl " + name() + ": cannot "
                    + purpose + " (" + e.getCode() + "): " + e.getMessage());
            return false;
        }
    }

    private String name() {
        return cfg.namespace() + "/" + cfg.resourceName();
    }
}
