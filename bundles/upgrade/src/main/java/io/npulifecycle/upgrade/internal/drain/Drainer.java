package io.npulifecycle.upgrade.internal.drain;

import io.npulifecycle.api.upgrade.spec.PodSelector;
import io.npulifecycle.upgrade.internal.plan.NodeWrites;
import io.npulifecycle.upgrade.internal.plan.EventSpec;

import io.npulifecycle.api.upgrade.spec.DrainSettings;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.node.NodeKeys;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.npulifecycle.api.time.TimeSource;

/**
 * Evicts the pods of a node's drain through the Eviction API ({@code policy/v1} {@code pods/eviction}), so their
 * PodDisruptionBudgets decide, as {@code kubectl drain} does: a pod without a controller is drained only under
 * {@code force}, and then evicted like any other (its budget holds); a plain DELETE is sent only under
 * {@code disableEviction} ({@code kubectl drain --disable-eviction}), which deletes every pod of the drain without
 * consulting a budget. A refused eviction is tried again after a backoff in simulated time (the injected
 * {@link TimeSource}): {@value #FIRST_BACKOFF_SECONDS} s, doubling up to {@value #MAX_BACKOFF_SECONDS} s per pod, never
 * in a loop: {@code 429 Too Many Requests} (a PodDisruptionBudget refused; the Event {@code DrainBlocked} names the pod
 * and the budget), {@code 500} for a pod under several budgets (a misconfiguration the API server cannot decide; the
 * Event names the budgets). A pod without a controller (unless {@code force}) or with emptyDir data (unless
 * {@code deleteEmptyDirData}) is not touched: it blocks the drain, named. Memory: per pod, its attempts and what blocks
 * it, forgotten when the pod or its node's drain is gone; lost with the process, which only means the next attempt
 * comes sooner. Reconcile thread only.
 */
public final class Drainer {

    private static final System.Logger LOG = System.getLogger(Drainer.class.getName());
    /** The first wait after a refused eviction, seconds. */
    static final long FIRST_BACKOFF_SECONDS = 5;
    /** The longest wait between two evictions of one pod, seconds. */
    static final long MAX_BACKOFF_SECONDS = 30;

    /** Whether the planted bug {@link PlantedBug#DRAIN_SKIPPED} is active (never in the product). */
    private volatile boolean skipDrain;
    private final KubernetesClient client;
    private final TimeSource time;
    private final NodeWrites writer;
    private final BooleanSupplier leader;
    private final Map<String, Attempt> attempts = new HashMap<>();

    /**
     * One pod's evictions: how many were refused, when the next may be sent (monotonic nanos), what blocks it, and
     * the UID of the pod an eviction (or delete) was accepted for. The API server answers an eviction only once it has
     * deleted the pod (or set its deletionTimestamp), so that pod is never sent another: the informer's copy that
     * still shows it running is only late.
     */
    private static final class Attempt {
        int refused;
        long nextAt = Long.MIN_VALUE;
        String blocker;
        String acceptedUid;
    }

    /**
     * @param client the control plane's client ({@code pods/eviction create}, {@code poddisruptionbudgets list},
     *        {@code pods delete} for {@code disableEviction})
     * @param time the injected clock (backoff)
     * @param writer creates the Events, counts the requests
     * @param leader whether this replica may write, checked before each request
     */
    public Drainer(KubernetesClient client, TimeSource time, NodeWrites writer, BooleanSupplier leader) {
        this.client = client;
        this.time = time;
        this.writer = writer;
        this.leader = leader;
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}).
     *
     * @param bug {@link PlantedBug#DRAIN_SKIPPED}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        skipDrain = bug == PlantedBug.DRAIN_SKIPPED;
    }

    /**
     * @param pods the pods of a node's drain still on it
     * @return each as {@code namespace/name}, with what blocks it when known (the refusing budget, no controller,
     *         emptyDir data, terminating)
     */
    public List<String> describe(List<Pod> pods) {
        List<String> out = new ArrayList<>();
        if (skipDrain) {
            // planted bug (testing the chaos checker only): breaks "no reboot while a pod the drain had to evict,
            // under a PodDisruptionBudget, is on the node", as the drain reports done with its pods still there
            return out;
        }
        for (Pod p : pods) {
            String ref = DrainScope.ref(p);
            Attempt a = attempts.get(ref);
            if (p.getMetadata().getDeletionTimestamp() != null
                    || a != null && a.acceptedUid != null && a.acceptedUid.equals(p.getMetadata().getUid())) {
                out.add(ref + " (terminating)");
            } else if (a != null && a.blocker != null) {
                out.add(ref + " (" + a.blocker + ")");
            } else {
                out.add(ref);
            }
        }
        return out;
    }

    /**
     * Evicts (or, under {@code disableEviction}, deletes) each pod of a node's drain whose next attempt is due.
     *
     * @param node the node being drained
     * @param pods its pods of the drain ({@link DrainScope})
     * @param drain the policy's drain
     * @return how long until the earliest next attempt of a refused pod, or null when none waits
     */
    public Duration drain(String node, List<Pod> pods, DrainSettings drain) {
        if (skipDrain) {
            return null; // planted bug: nothing evicted (see describe)
        }
        long now = time.monotonicNanos();
        Long earliest = null;
        for (Pod p : pods) {
            if (p.getMetadata().getDeletionTimestamp() != null || !leader.getAsBoolean()) {
                continue; // evicted or deleted: the drain waits until it is gone
            }
            String ref = DrainScope.ref(p);
            Attempt a = attempts.computeIfAbsent(ref, k -> new Attempt());
            String uid = p.getMetadata().getUid();
            if (uid != null && uid.equals(a.acceptedUid)) {
                continue; // accepted already; the informer has not yet seen it terminating or gone
            }
            if (DrainScope.controllerKind(p) == null && !drain.force()) {
                block(node, p, a, "no controller: only drain.force drains it (nothing recreates it)",
                        NodeKeys.WARNING);
                continue;
            }
            if (DrainScope.hasEmptyDir(p) && !drain.deleteEmptyDirData()) {
                block(node, p, a, "emptyDir data: only drain.deleteEmptyDirData evicts it", NodeKeys.WARNING);
                continue;
            }
            if (a.nextAt != Long.MIN_VALUE && now < a.nextAt) {
                earliest = earliest == null ? a.nextAt : Math.min(earliest, a.nextAt);
                continue;
            }
            if (evictOrDelete(node, p, a, drain)) {
                a.blocker = null;
                a.acceptedUid = uid;
            } else {
                a.refused++;
                long wait = Math.min(FIRST_BACKOFF_SECONDS << Math.min(a.refused - 1, 10), MAX_BACKOFF_SECONDS);
                a.nextAt = now + Duration.ofSeconds(wait).toNanos();
                earliest = earliest == null ? a.nextAt : Math.min(earliest, a.nextAt);
            }
        }
        return earliest == null ? null : Duration.ofNanos(Math.max(0, earliest - now));
    }

    /**
     * Forgets every pod not among {@code refs} (gone, or its node no longer drained).
     *
     * @param refs the pods still to drain, each as {@code namespace/name}
     */
    public void retain(Set<String> refs) {
        attempts.keySet().retainAll(refs);
    }

    /**
     * Evicts the pod, or deletes it under {@code disableEviction}; a pod without a controller (admitted by
     * {@code force}) is evicted like any other, so a budget that selects it holds.
     *
     * @return true when the pod was evicted (or deleted, or is gone already); false when refused
     */
    private boolean evictOrDelete(String node, Pod p, Attempt a, DrainSettings drain) {
        String ns = p.getMetadata().getNamespace();
        String name = p.getMetadata().getName();
        Long grace = drain.gracePeriodSeconds() < 0 ? null : drain.gracePeriodSeconds();
        try {
            if (drain.disableEviction()) {
                var op = client.pods().inNamespace(ns).withName(name);
                (grace == null ? op : op.withGracePeriod(grace)).delete();
                writer.count("pod-delete-no-eviction");
                LOG.log(Level.INFO, "node " + node + ": deleted " + ns + "/" + name + " (drain.disableEviction: no "
                        + "PodDisruptionBudget consulted)");
                return true;
            }
            var eviction = new EvictionBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata();
            if (grace != null) {
                eviction.withDeleteOptions(new DeleteOptionsBuilder().withGracePeriodSeconds(grace).build());
            }
            writer.count("eviction");
            var body = eviction.build();
            if (once(c -> c.pods().inNamespace(ns).withName(name).evict(body))) {
                LOG.log(Level.INFO, "node " + node + ": evicted " + ns + "/" + name);
                return true;
            }
            // 429: a PodDisruptionBudget does not allow the disruption now
            block(node, p, a, budgetsOf(p, false), NodeKeys.WARNING);
            return false;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return true; // gone already
            }
            if (e.getCode() == 500 && String.valueOf(e.getMessage()).contains("more than one PodDisruptionBudget")) {
                block(node, p, a, "misconfiguration: " + budgetsOf(p, true)
                        + " select it, and the Eviction API refuses a pod under several budgets", NodeKeys.WARNING);
                return false;
            }
            block(node, p, a, "eviction failed (" + e.getCode() + "): " + e.getMessage(), NodeKeys.WARNING);
            return false;
        }
    }

    /**
     * Runs one request without fabric8's own retries, which resend a 429 or a 500 at once and then up to 10 times
     * within seconds, holding the reconcile thread: a refused eviction is tried again by this class's backoff only.
     */
    private <T> T once(java.util.function.Function<KubernetesClient, T> call) {
        RequestConfig noRetry = new RequestConfigBuilder().withRequestRetryBackoffLimit(0)
                .withRequestTimeout(client.getConfiguration().getRequestTimeout()).build();
        return client.adapt(NamespacedKubernetesClient.class).withRequestConfig(noRetry).call(call::apply);
    }

    /** Records what blocks a pod; the Event {@code DrainBlocked} when that is new for the pod. */
    private void block(String node, Pod p, Attempt a, String blocker, String type) {
        if (blocker.equals(a.blocker)) {
            return;
        }
        a.blocker = blocker;
        writer.nodeEvent(new EventSpec("Node", node, type, NodeKeys.EVENT_DRAIN_BLOCKED,
                "pod " + DrainScope.ref(p) + " cannot be evicted: " + blocker));
    }

    /** @return the budgets of the pod's namespace that select it, named; {@code several}: for the 500 message */
    private String budgetsOf(Pod p, boolean several) {
        List<String> names = new ArrayList<>();
        List<String> refusing = new ArrayList<>();
        try {
            for (PodDisruptionBudget b : client.policy().v1().podDisruptionBudget()
                    .inNamespace(p.getMetadata().getNamespace()).list().getItems()) {
                if (selects(b.getSpec().getSelector(), p.getMetadata().getLabels())) {
                    String n = "PodDisruptionBudget " + b.getMetadata().getNamespace() + "/" + b.getMetadata().getName();
                    names.add(n);
                    if (b.getStatus() == null || b.getStatus().getDisruptionsAllowed() == null
                            || b.getStatus().getDisruptionsAllowed() <= 0) {
                        refusing.add(n);
                    }
                }
            }
        } catch (KubernetesClientException e) {
            return "a PodDisruptionBudget (listing them failed: " + e.getCode() + ")";
        }
        if (several) {
            return String.join(", ", names);
        }
        List<String> shown = refusing.isEmpty() ? names : refusing;
        return shown.isEmpty() ? "refused with 429 (no PodDisruptionBudget found)"
                : String.join(", ", shown) + " allows no disruption now";
    }

    /**
     * Whether a PodDisruptionBudget's selector selects a pod, as policy/v1 reads it: a null selector selects no pod,
     * an empty one ({@code selector: {}}) every pod of the budget's namespace (the v1beta1 meaning, none, ended with
     * policy/v1; Kubernetes API reference, PodDisruptionBudgetSpec.selector).
     *
     * @param s the budget's {@code spec.selector}, or null
     * @param labels the pod's labels, or null for none
     * @return whether the budget counts the pod
     */
    static boolean selects(LabelSelector s, Map<String, String> labels) {
        if (s == null) {
            return false;
        }
        if ((s.getMatchLabels() == null || s.getMatchLabels().isEmpty())
                && (s.getMatchExpressions() == null || s.getMatchExpressions().isEmpty())) {
            return true;
        }
        return labelSelector(s).matches(labels == null ? Map.of() : labels);
    }

    /**
     * @param s a fabric8 {@code LabelSelector}
     * @return it as the API's selector ({@link PodSelector#of}): matchLabels and matchExpressions, all of which hold
     */
    static PodSelector labelSelector(LabelSelector s) {
        return PodSelector.of(s.getMatchLabels(), s.getMatchExpressions() == null ? null
                : s.getMatchExpressions().stream().map(r -> PodSelector.Requirement.expression(r.getKey(),
                        r.getOperator(), r.getValues())).toList());
    }
}
