package io.npulifecycle.simulator.harness;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * The kubelets' heartbeats of the harness's nodes, where kube-controller-manager runs the node-lifecycle controller
 * ({@code RealApiServer.Builder.nodeLifecycle}): every {@value #PERIOD_MILLIS} ms of wall clock the Lease
 * {@code kube-node-lease/<node>} of each node is renewed, as a kubelet does, except for the nodes made silent
 * ({@code nodeNotReady}: the kubelet stopped), which the controller then marks {@code Ready=Unknown} and taints
 * {@code node.kubernetes.io/unreachable}. Speaking again ({@code nodeReady}) renews the Lease and posts
 * {@code Ready=True}, as a kubelet that starts again does.
 */
final class KubeletHeartbeats implements AutoCloseable {

    /** Wall-clock milliseconds between two renewals of a node's Lease. */
    static final long PERIOD_MILLIS = 1000;
    /** The Lease's {@code leaseDurationSeconds}, as a kubelet writes it. */
    static final int LEASE_SECONDS = 40;
    private static final String NAMESPACE = "kube-node-lease";
    private static final DateTimeFormatter MICRO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'");

    private final KubernetesClient client;
    private final Supplier<Set<String>> nodes;
    private final Consumer<String> log;
    private final Set<String> silent = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sim-kubelet-heartbeats");
        t.setDaemon(true);
        return t;
    });

    /**
     * Starts renewing at once.
     *
     * @param client the admin client
     * @param nodes the names of the nodes whose kubelets beat
     * @param log where a failed renewal is reported (the next one tries again)
     */
    KubeletHeartbeats(KubernetesClient client, Supplier<Set<String>> nodes, Consumer<String> log) {
        this.client = client;
        this.nodes = nodes;
        this.log = log;
        timer.scheduleWithFixedDelay(this::beat, 0, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** @return whether {@code node}'s kubelet is silent */
    boolean silent(String node) {
        return silent.contains(node);
    }

    /**
     * Silences a node's kubelet ({@code nodeNotReady}): no Lease renewal, no status.
     *
     * @param node the node
     */
    void silence(String node) {
        silent.add(node);
        log.accept("kubelet: " + node + ": silent (no Lease renewal, no status): the node-lifecycle controller marks it"
                + " NotReady after its grace period");
    }

    /**
     * A node's kubelet speaks again ({@code nodeReady}): its Lease renewed and {@code Ready=True} posted at once.
     *
     * @param node the node
     */
    void speak(String node) {
        silent.remove(node);
        renew(node);
        io.npulifecycle.simulator.cluster.NodeEdits.retryOnConflict(() -> client.nodes().withName(node).editStatus(n -> {
            String now = MICRO.format(ZonedDateTime.now(ZoneOffset.UTC)).substring(0, 19) + "Z";
            for (NodeCondition c : n.getStatus().getConditions()) {
                if ("Ready".equals(c.getType())) {
                    if (!"True".equals(c.getStatus())) {
                        c.setLastTransitionTime(now);
                    }
                    c.setStatus("True");
                    c.setReason("KubeletReady");
                    c.setMessage("kubelet is posting ready status");
                    c.setLastHeartbeatTime(now);
                }
            }
            return n;
        }));
        log.accept("kubelet: " + node + ": speaking again (Lease renewed, Ready=True posted)");
    }

    private void beat() {
        for (String node : nodes.get()) {
            if (!silent.contains(node)) {
                try {
                    renew(node);
                } catch (KubernetesClientException e) {
                    log.accept("kubelet: " + node + ": Lease renewal failed (" + e.getCode() + "), again in "
                            + PERIOD_MILLIS + " ms");
                } catch (RuntimeException e) {
                    // the server closing with the run: the next beat (if any) tries again
                }
            }
        }
    }

    private void renew(String node) {
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        var leases = client.leases().inNamespace(NAMESPACE);
        Lease old = leases.withName(node).get();
        if (old == null) {
            leases.resource(new LeaseBuilder().withNewMetadata().withName(node).withNamespace(NAMESPACE).endMetadata()
                    .withNewSpec().withHolderIdentity(node).withLeaseDurationSeconds(LEASE_SECONDS)
                    .withRenewTime(now).endSpec().build()).create();
            return;
        }
        old.getSpec().setRenewTime(now);
        leases.resource(old).update();
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
