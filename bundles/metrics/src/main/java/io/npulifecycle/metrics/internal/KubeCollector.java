package io.npulifecycle.metrics.internal;

import java.util.List;

import io.npulifecycle.api.kube.KubernetesClientMXBean;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * {@code npu_lifecycle_kubernetes_connected}, in both runtimes: the outcome of the Kubernetes client's last request
 * of any user (the object behind the MBean {@value KubernetesClientMXBean#OBJECT_NAME}, attribute
 * {@code Connected}); no series when the client bundle is not there.
 */
final class KubeCollector implements MultiCollector {

    private final MBeans mbeans;
    private final LabelCache labels = new LabelCache();

    /** @param mbeans the MBean reader */
    KubeCollector(MBeans mbeans) {
        this.mbeans = mbeans;
    }

    @Override
    public MetricSnapshots collect() {
        List<MetricSnapshot> out = Families.list();
        Families.Gauge g = Families.gauge(labels, "npu_lifecycle_kubernetes_connected",
                "1 when the last request to the Kubernetes API server was answered (not a connection failure or a 5xx)");
        KubernetesClientMXBean k = mbeans.get(KubernetesClientMXBean.OBJECT_NAME, KubernetesClientMXBean.class);
        try {
            if (k != null) {
                g.add(k.isConnected() ? 1 : 0);
            }
        } catch (RuntimeException failed) {
            // a getter that fails leaves its series out of this scrape, not the scrape
        }
        out.add(g.build());
        labels.endScrape();
        return new MetricSnapshots(out);
    }
}
