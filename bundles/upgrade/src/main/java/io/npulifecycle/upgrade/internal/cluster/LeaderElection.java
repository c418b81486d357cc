package io.npulifecycle.upgrade.internal.cluster;

import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;

/**
 * Leader election through a {@code coordination.k8s.io/v1} Lease in the control plane's namespace (fabric8
 * {@code LeaderElector}). Only the holder reconciles and writes; {@code onStopLeading} (renewal failed within the
 * renew deadline, or {@link #close()}) stops writing at once. A replica that dies without releasing is replaced
 * when its lease expires (lease duration). fabric8's elector keeps its own wall-clock time: it is not scaled by the
 * TimeSource.
 */
public final class LeaderElection implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(LeaderElection.class.getName());
    private final CompletableFuture<?> future;
    private final String identity;

    /**
     * Starts campaigning.
     *
     * @param client Kubernetes client
     * @param cfg namespace, lease name and timings, identity
     * @param onLeading receives true when this replica leads, false when it stops
     * @param releaseOnCancel release the lease on {@link #close()} (false simulates a crash in tests)
     */
    public LeaderElection(KubernetesClient client, ControllerConfig cfg, Consumer<Boolean> onLeading, boolean releaseOnCancel) {
        this.identity = cfg.identity().isBlank() ? defaultIdentity() : cfg.identity();
        future = client.leaderElector().withConfig(new LeaderElectionConfigBuilder().withName(cfg.leaseName())
                .withLeaseDuration(cfg.leaseDuration()).withRenewDeadline(cfg.renewDeadline())
                .withRetryPeriod(cfg.retryPeriod()).withReleaseOnCancel(releaseOnCancel)
                .withLock(new LeaseLock(cfg.namespace(), cfg.leaseName(), identity))
                .withLeaderCallbacks(new LeaderCallbacks(() -> onLeading.accept(true), () -> onLeading.accept(false),
                        id -> LOG.log(Level.INFO, "lease " + cfg.namespace() + "/" + cfg.leaseName() + " held by " + id)))
                .build()).build().start();
        LOG.log(Level.INFO, "campaigning for lease " + cfg.namespace() + "/" + cfg.leaseName() + " as " + identity);
    }

    /** @return POD_NAME from the environment, else hostname-random */
    public static String defaultIdentity() {
        String pod = System.getenv("POD_NAME");
        if (pod != null && !pod.isBlank()) {
            return pod;
        }
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "control-plane";
        }
        byte[] b = new byte[4];
        new SecureRandom().nextBytes(b);
        return host + "-" + HexFormat.of().formatHex(b);
    }

    /** @return this replica's identity in the lease */
    public String identity() {
        return identity;
    }

    @Override
    public void close() {
        future.cancel(true);
    }
}
