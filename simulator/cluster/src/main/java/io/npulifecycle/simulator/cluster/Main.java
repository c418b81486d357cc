package io.npulifecycle.simulator.cluster;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;

/**
 * Runs an {@link EmbeddedCluster} on its own, for manual checks with kubectl and a runtime:
 *
 * <pre>
 * java -cp ... io.npulifecycle.simulator.cluster.Main [--port N] [--nodes N] [--kubeconfig FILE] [--driver VERSION]
 * </pre>
 *
 * Creates the CRD (or registers the type), {@code --nodes} NPU nodes {@code node-0...} (default 3) with a driver pod
 * each, and the NPUOperatorCtl sample with {@code --driver} (default 25.0.0); prints the master URL (use it as
 * {@code NPU_LIFECYCLE_KUBE_MASTER}) and runs until killed. Exit code 2 on a bad argument.
 */
public final class Main {

    private Main() {
    }

    /**
     * @param args see the class comment
     * @throws InterruptedException never in practice (waits forever)
     */
    public static void main(String[] args) throws InterruptedException {
        int port = 0;
        int nodes = 3;
        String driver = "25.0.0";
        Path kubeconfig = null;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--port": port = Integer.parseInt(args[++i]); break;
                    case "--nodes": nodes = Integer.parseInt(args[++i]); break;
                    case "--driver": driver = args[++i]; break;
                    case "--kubeconfig": kubeconfig = Paths.get(args[++i]); break;
                    default: throw new IllegalArgumentException("unknown argument " + args[i]);
                }
            }
        } catch (RuntimeException e) {
            System.err.println("usage: Main [--port N] [--nodes N] [--kubeconfig FILE] [--driver VERSION]: " + e);
            System.exit(2);
            return;
        }
        EmbeddedCluster cluster = EmbeddedCluster.start(port);
        Runtime.getRuntime().addShutdownHook(new Thread(cluster::close, "embedded-cluster-stop"));
        Path crd = cluster.installCrd();
        for (int i = 0; i < nodes; i++) {
            cluster.addNode(EmbeddedCluster.npuNode("node-" + i));
            cluster.addDriverPod("node-" + i, EmbeddedCluster.driverImage(driver, "910b"));
        }
        cluster.createNpuOperatorCtl(driver, false, false);
        if (kubeconfig != null) {
            cluster.writeKubeconfig(kubeconfig);
        }
        System.out.println("EmbeddedCluster " + cluster.masterUrl() + " (CRD " + (crd == null ? "registered without a file"
                : crd) + ", " + nodes + " NPU nodes" + (kubeconfig == null ? "" : ", kubeconfig " + kubeconfig) + ")");
        new CountDownLatch(1).await();
    }
}
