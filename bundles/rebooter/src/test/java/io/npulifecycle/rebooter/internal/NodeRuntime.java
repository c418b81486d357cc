package io.npulifecycle.rebooter.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.clock.testing.ManualTimeSource;
import io.npulifecycle.simulator.common.TcpProxy;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.reboot.DriverLoader;
import io.npulifecycle.api.reboot.RebootExecutor;
import io.npulifecycle.driver.internal.DriverEngine;
import io.npulifecycle.driver.internal.HealthView;
import io.npulifecycle.kube.internal.NodeSync;
import io.npulifecycle.markers.internal.FileMarkerStore;

/**
 * One node-agent "runtime" of one boot: marker store, node sync, rebooter engine, driver engine; and the cluster side
 * the rebooter tests share: the embedded API server with the node {@value #NODE}, a {@link TcpProxy} in front of it
 * for the agents (so the API server can be made unreachable), and the NPUOperatorCtl policy.
 */
final class NodeRuntime implements AutoCloseable {
    /** The node the agents run on. */
    static final String NODE = "npu-node-1";
    /** Where the agents write their Events (their client's namespace). */
    static final String EVENTS_NAMESPACE = "default";
    /** How long the tests wait for the agent or the API server. */
    static final Duration WAIT = Duration.ofSeconds(20);

    final String bootId;
    final FileMarkerStore markers;
    final NodeSync sync;
    final RebootEngine rebooter;
    final DriverEngine driver;

    NodeRuntime(String bootId, Path markerDir, Path stateDir, KubernetesClient client, ManualTimeSource time,
            Supplier<ApprovalService> approvals, RebootExecutor executor, DriverLoader loader, HealthView health,
            Path procModules, String podVersion, boolean dryRun) {
        this.bootId = bootId;
        markers = new FileMarkerStore(markerDir, bootId, time::now, null);
        sync = new NodeSync(client, NodeSync.Settings.builder(NODE).stateDir(stateDir).build(), time, markers, null);
        sync.start();
        Supplier<ApprovalService> as = approvals != null ? approvals : () -> sync;
        rebooter = new RebootEngine(markers, () -> sync, as, () -> sync, () -> executor, time,
                RebootEngine.Settings.builder().stateDir(stateDir).dryRun(dryRun).flushTimeoutMillis(300).build());
        driver = new DriverEngine(markers, () -> sync, () -> loader, () -> health, time,
                new DriverEngine.Settings(podVersion, procModules, Set.of("drv_davinci_intf", "drv_devdrv"),
                        stateDir, Duration.ofMinutes(10)));
    }

    @Override
    public void close() {
        sync.stop();
    }

    /** The node agent's ServiceAccount (charts/npu-lifecycle/templates/10-rbac-node-agent.yaml). */
    static final String NODE_AGENT_SA = "npu-lifecycle-node-agent";

    /**
     * @param kind {@code embedded} or {@code real} ({@link ClusterFixture#start(String)})
     * @return a started cluster with the NPU node {@value #NODE} (label {@code openfuyao.com/npu.present})
     */
    static ClusterFixture startCluster(String kind) {
        return withNode(ClusterFixture.start(kind));
    }

    /**
     * @param cluster a started cluster
     * @return {@code cluster}, with the NPU node {@value #NODE} created
     */
    static ClusterFixture withNode(ClusterFixture cluster) {
        cluster.admin().nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
                .addToLabels("openfuyao.com/npu.present", "true").endMetadata().build()).create();
        return cluster;
    }

    /**
     * @param cluster the cluster
     * @return a proxy in front of its API server, closed with the cluster; the agents talk through it
     * @throws IOException when no port can be bound
     */
    static TcpProxy proxy(ClusterFixture cluster) throws IOException {
        return cluster.own(new TcpProxy(cluster.port()));
    }

    /**
     * @param cluster the cluster
     * @param proxy its proxy
     * @return a new client for one node-agent runtime, through the proxy (each runtime has its own, as in
     *         production), authenticated as the node agent's ServiceAccount with a token bound to a pod on
     *         {@value #NODE} (on a real server: RBAC and the admission policy apply); it fails fast (10 s request
     *         timeout, no retry), as the outage tests need
     */
    static KubernetesClient agentClient(ClusterFixture cluster, TcpProxy proxy) {
        return cluster.serviceAccountClient(NODE_AGENT_SA, NODE, agentConfig(cluster, proxy));
    }

    /**
     * @param cluster the cluster
     * @param proxy its proxy
     * @return the configuration of {@link #agentClient}: through the proxy (the backend's scheme), namespace
     *         {@value #EVENTS_NAMESPACE}, 10 s request timeout, no retry
     */
    static java.util.function.Consumer<io.fabric8.kubernetes.client.Config> agentConfig(ClusterFixture cluster,
            TcpProxy proxy) {
        String scheme = java.net.URI.create(cluster.masterUrl()).getScheme();
        return c -> {
            c.setMasterUrl(scheme + "://127.0.0.1:" + proxy.port());
            c.setNamespace(EVENTS_NAMESPACE);
            c.setRequestTimeout(10_000);
            c.setConnectionTimeout(5_000);
            c.setRequestRetryBackoffLimit(0);
        };
    }

    /**
     * @return the {@code spec.driver} of version 25.5.0 with this policy, and {@code recoveryPolicy.drain.enable:
     *         false}: no control plane runs here to drain the node and grant its recovery reboot (RecoveryGrantTest
     *         covers the grant); a null value leaves its key out
     */
    static Map<String, Object> policy(Boolean autoUpgrade, Object autoRecover, Object maxReboots, Object window) {
        Map<String, Object> rp = new HashMap<>();
        rp.put("drain", Map.of("enable", false));
        if (autoRecover != null) {
            rp.put("autoRecover", autoRecover);
        }
        if (maxReboots != null) {
            rp.put("maxReboots", maxReboots);
        }
        if (window != null) {
            rp.put("window", window);
        }
        Map<String, Object> driver = new HashMap<>();
        driver.put("version", "25.5.0");
        driver.put("upgradePolicy", Map.of("autoUpgrade", autoUpgrade != null && autoUpgrade));
        driver.put("recoveryPolicy", rp);
        return driver;
    }

    /** Waits {@link #WAIT} for {@code condition}. */
    static void await(String what, BooleanSupplier condition) {
        Waits.until(what, WAIT, condition);
    }

    /** Waits {@link #WAIT} for {@code condition}, running {@code eachRound} after each poll that found it false. */
    static void await(String what, BooleanSupplier condition, Runnable eachRound) {
        Waits.untilRunning(what, WAIT, condition, eachRound);
    }
}
