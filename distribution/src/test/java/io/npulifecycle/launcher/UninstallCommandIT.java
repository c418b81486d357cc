package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/npu-lifecycle uninstall} run as the chart's pre-delete hook runs it, from the assembled installation
 * (its plain class path over the upgrade, api and kubeclient bundles): against the embedded API server of
 * {@code bin/npu-lifecycle cluster}, a driver DaemonSet, our node label and annotation and our cordon are removed and an
 * administrator's cordon is kept (exit 0, each said); a bad argument exits 2 naming it.
 */
class UninstallCommandIT {

    @TempDir
    Path tmp;
    final ClusterCommandIT cluster = new ClusterCommandIT();

    @Test
    void removesWhatWeAddedAndKeepsTheAdministratorsCordon() throws Exception {
        cluster.tmp = tmp;
        Path kc = tmp.resolve("kubeconfig");
        ClusterCommandIT.Started s = cluster.start("cluster", "--api", "embedded", "--nodes", "2", "--kubeconfig",
                kc.toString());
        try {
            ClusterCommandIT.awaitReady(s);
            Path ds = tmp.resolve("ds.yaml");
            Files.writeString(ds, """
                    apiVersion: apps/v1
                    kind: DaemonSet
                    metadata: {name: npu-driver-910b-0123456789, namespace: npu-operator, labels: {app: npu-driver-daemonset}}
                    spec:
                      selector: {matchLabels: {app: npu-driver-daemonset}}
                      template:
                        metadata: {labels: {app: npu-driver-daemonset}}
                        spec: {containers: [{name: driver, image: registry.local/mlops/ascend-driver:25.5.0-910b}]}
                    """);
            cluster.kubectl(kc, "apply", "--validate=false", "-f", ds.toString());
            cluster.kubectl(kc, "label", "node", "node-0", "npu.openfuyao.com/driver-upgrade-state=upgrade-required");
            cluster.kubectl(kc, "annotate", "node", "node-0", "npu.openfuyao.com/cordoned-by=npu-lifecycle",
                    "npu.openfuyao.com/driver-upgrade-progress=state=upgrade-required");
            cluster.kubectl(kc, "patch", "node", "node-0", "--type=merge", "-p", "{\"spec\":{\"unschedulable\":true}}");
            cluster.kubectl(kc, "patch", "node", "node-1", "--type=merge", "-p", "{\"spec\":{\"unschedulable\":true}}");

            ClusterCommandIT.Started u = cluster.start("uninstall", "--kubeconfig", kc.toString(), "--namespace",
                    "npu-operator", "--timeout", "30");
            assertTrue(u.process().waitFor(120, TimeUnit.SECONDS), u.text());
            assertEquals(0, u.process().exitValue(), u.text());
            String out = ClusterCommandIT.read(u.out());
            assertTrue(out.contains("removed DaemonSet npu-operator/npu-driver-910b-0123456789"), u.text());
            assertTrue(out.contains("removed node node-0: label npu.openfuyao.com/driver-upgrade-state"), u.text());
            assertTrue(out.contains("removed node node-0: cordon (npu.openfuyao.com/cordoned-by=npu-lifecycle)"),
                    u.text());
            assertTrue(out.contains("kept node node-1: cordon (not made by npu-lifecycle"), u.text());
            assertTrue(out.contains("done: nothing npu-lifecycle added is left"), u.text());
            assertEquals("", cluster.kubectl(kc, "-n", "npu-operator", "get", "daemonsets", "-l",
                    "app=npu-driver-daemonset", "-o", "name").strip());
            assertEquals("true", cluster.kubectl(kc, "get", "node", "node-1", "-o",
                    "jsonpath={.spec.unschedulable}").strip(), "the administrator's cordon stays");
            assertEquals("", cluster.kubectl(kc, "get", "node", "node-0", "-o",
                    "jsonpath={.spec.unschedulable}").strip(), "our cordon released");
        } finally {
            s.process().destroyForcibly();
        }
    }

    @Test
    void aBadArgumentExitsWith2NamingIt() throws Exception {
        cluster.tmp = tmp;
        ClusterCommandIT.Started u = cluster.start("uninstall", "--timeout", "soon");
        assertTrue(u.process().waitFor(60, TimeUnit.SECONDS), u.text());
        assertEquals(2, u.process().exitValue(), u.text());
        assertTrue(ClusterCommandIT.read(u.err()).contains("--timeout 'soon' is not a number of seconds"), u.text());
    }
}
