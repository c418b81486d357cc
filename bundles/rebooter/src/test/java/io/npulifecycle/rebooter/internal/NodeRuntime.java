package io.npulifecycle.rebooter.internal;

import io.npulifecycle.clock.testing.ManualTimeSource;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.function.Supplier;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.reboot.DriverLoader;
import io.npulifecycle.api.reboot.RebootExecutor;
import io.npulifecycle.driver.internal.DriverEngine;
import io.npulifecycle.driver.internal.HealthView;
import io.npulifecycle.kube.internal.NodeSync;
import io.npulifecycle.markers.internal.FileMarkerStore;

/** One node-agent "runtime" of one boot: marker store, node sync, rebooter engine, driver engine. */
final class NodeRuntime implements AutoCloseable {
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
        sync = new NodeSync(client, new NodeSync.Settings(TestCluster.NODE, "npu-operator", "npuoperatorctl-sample",
                "default", Duration.ofSeconds(30)), time, markers, null);
        sync.start();
        Supplier<ApprovalService> as = approvals != null ? approvals : () -> sync;
        rebooter = new RebootEngine(markers, () -> sync, as, () -> sync, () -> executor, time,
                new RebootEngine.Settings(stateDir, 3, Duration.ofHours(24), dryRun, 300));
        driver = new DriverEngine(markers, () -> sync, () -> loader, () -> health, time,
                new DriverEngine.Settings(podVersion, procModules, Set.of("drv_davinci_intf", "drv_devdrv"),
                        stateDir, Duration.ofMinutes(10)));
    }

    @Override
    public void close() {
        sync.stop();
    }
}
