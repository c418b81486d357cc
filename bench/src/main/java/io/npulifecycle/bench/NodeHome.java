package io.npulifecycle.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.npulifecycle.simulator.common.ChildProcess;

/**
 * The folders and configuration of one emulated node for a node-agent runtime under benchmark: the runtime home, the
 * simulator's host state (8 chips of 910B), the marker folder and the state folder, as the harness's SimNode lays them
 * out; the probe interval and the simulator's restart mode are the benchmark's.
 */
final class NodeHome {

    static final String USER = "operator";
    static final String PASSWORD = "bench-" + UUID.randomUUID();

    final Path root;
    final Path home;
    final int port;

    /**
     * @param root the node's folder (emptied first)
     * @param port HTTP port on 127.0.0.1
     * @param intervalSeconds probe interval
     * @param timeoutSeconds probe timeout (below the interval)
     * @param restartMode the simulator's {@code restartMode}
     */
    NodeHome(Path root, int port, double intervalSeconds, double timeoutSeconds, String restartMode) throws IOException {
        this(root, port, intervalSeconds, timeoutSeconds, restartMode, 8, 0);
    }

    /**
     * @param root the node's folder (emptied first)
     * @param port HTTP port on 127.0.0.1
     * @param intervalSeconds probe interval
     * @param timeoutSeconds probe timeout (below the interval)
     * @param restartMode the simulator's {@code restartMode}
     * @param npus emulated NPUs (one chip each)
     * @param metricsPort {@code metrics.port} ({@code 0}: a free one chosen at start)
     */
    NodeHome(Path root, int port, double intervalSeconds, double timeoutSeconds, String restartMode, int npus,
            int metricsPort) throws IOException {
        deleteTree(root);
        this.root = root;
        this.port = port;
        this.home = root.resolve("home");
        Path etc = Files.createDirectories(home.resolve("etc"));
        Path sim = Files.createDirectories(root.resolve("simulator"));
        Path run = Files.createDirectories(root.resolve("run-npu-operator"));
        Path varLib = Files.createDirectories(root.resolve("var-lib-npu-operator"));
        write(sim.resolve("boot_id"), UUID.randomUUID() + "\n");
        write(etc.resolve("runtime.properties"), "http.host=127.0.0.1\nhttp.port=" + port + "\nmetrics.port=" + metricsPort + "\n");
        write(etc.resolve("io.npulifecycle.simulator.cfg"), "stateDir=" + sim + "\nmarkersFolder=" + run
                + "\nchipType=910b\nnpus=" + npus + "\nchipsPerNpu=1\ndriverVersion=25.2.0\nrestartMode=" + restartMode + "\n");
        write(etc.resolve("io.npulifecycle.markers.cfg"), "folder=" + run + "\nbootIdPath=" + sim.resolve("boot_id")
                + "\n");
        write(etc.resolve("io.npulifecycle.probe.cfg"), "npuSmiCommand=" + sim.resolve("bin/npu-smi")
                + "\nexpectedChips=" + expected(npus) + "\ndriverModulesFile=" + sim.resolve("proc-modules")
                + "\ninterval=" + intervalSeconds + "\ntimeout=" + timeoutSeconds + "\n");
        write(etc.resolve("io.npulifecycle.driver.cfg"), "procModules=" + sim.resolve("proc-modules")
                + "\nstateDir=" + varLib + "\n");
        // many recovery reboots in a row are the benchmark's point, not a reboot loop to stop
        write(etc.resolve("io.npulifecycle.rebooter.cfg"), "stateDir=" + varLib + "\nrecovery.maxReboots=1000\n");
        write(etc.resolve("io.npulifecycle.kube.node.cfg"), "nodeName=node-0\nstateDir=" + varLib + "\n");
    }

    /**
     * @param install the installation
     * @param masterUrl the API server
     * @param javaOpts {@code NPU_LIFECYCLE_JAVA_OPTS}, or null for the launcher's options
     * @return the node agent of this home, to be given an output and started
     */
    ChildProcess.Builder process(Path install, String masterUrl, String javaOpts) throws IOException {
        return process(install, masterUrl, null, javaOpts);
    }

    /**
     * @param install the installation
     * @param masterUrl the API server
     * @param kubeconfig its credentials, written to {@code etc/io.npulifecycle.kube.cfg} (key {@code kubeconfig}),
     *        or null for none (the embedded API server)
     * @param javaOpts {@code NPU_LIFECYCLE_JAVA_OPTS}, or null for the launcher's options
     * @return the node agent of this home, to be given an output and started
     * @throws IOException when the configuration cannot be written
     */
    ChildProcess.Builder process(Path install, String masterUrl, Path kubeconfig, String javaOpts) throws IOException {
        if (kubeconfig != null) {
            write(home.resolve("etc/io.npulifecycle.kube.cfg"), "kubeconfig=" + kubeconfig + "\n");
        }
        Map<String, String> env = new java.util.LinkedHashMap<>();
        env.put("NPU_LIFECYCLE_JOLOKIA_USER", USER);
        env.put("NPU_LIFECYCLE_JOLOKIA_PASSWORD", PASSWORD);
        env.put("NPU_LIFECYCLE_KUBE_MASTER", masterUrl);
        env.put("NODE_NAME", "node-0");
        env.put("DRIVER_VERSION", "25.2.0");
        if (javaOpts != null) {
            env.put("NPU_LIFECYCLE_JAVA_OPTS", javaOpts);
        }
        return ChildProcess.builder(List.of(install.resolve("bin/npu-lifecycle").toString(), "node", "--no-shell",
                "--home", home.toString()))
                .removeEnv(k -> k.startsWith("NPU_LIFECYCLE_") || k.equals("JAVA_OPTS") || k.equals("NODE_NAME"))
                .env(env);
    }

    private static String expected(int npus) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < npus; i++) {
            b.append(i == 0 ? "" : ",").append(i).append(":0");
        }
        return b.toString();
    }

    static void write(Path file, String content) throws IOException {
        Files.writeString(file, content, StandardCharsets.UTF_8);
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
