package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONObject;

/**
 * The scrape targets of a simulated cluster as Prometheus file-based service discovery files ({@code file_sd_configs}),
 * in {@code <work>/prometheus/}: {@value #NODE_AGENTS} (one target per node agent, label {@code node} = the node's
 * name, as the PodMonitor relabels it from the pod's node in a cluster) and {@value #CONTROL_PLANE} (one per
 * control-plane replica, label {@code pod}). A Prometheus given these files with the jobs
 * {@code npu-lifecycle-node-agent} and {@code npu-lifecycle-control-plane} sees the series the shipped alert rules and
 * Grafana dashboard expect. Files are replaced atomically, so Prometheus never reads half a file.
 */
public final class PrometheusTargets {

    /** File name of the node agents' targets. */
    public static final String NODE_AGENTS = "node-agent.json";
    /** File name of the control-plane replicas' targets. */
    public static final String CONTROL_PLANE = "control-plane.json";

    private PrometheusTargets() {
    }

    /** @return the folder of the files for a cluster's work folder, {@code <work>/prometheus} */
    public static Path folder(Path work) {
        return work.resolve("prometheus");
    }

    /**
     * Writes both files.
     *
     * @param folder where ({@link #folder(Path)})
     * @param nodeAgents node name to the loopback port of its node agent's {@code /metrics}
     * @param controlPlanes pod name to the loopback port of that replica's {@code /metrics}
     * @throws IOException if a file cannot be written
     */
    public static void write(Path folder, Map<String, Integer> nodeAgents, Map<String, Integer> controlPlanes)
            throws IOException {
        Files.createDirectories(folder);
        write(folder.resolve(NODE_AGENTS), targets(nodeAgents, "node"));
        write(folder.resolve(CONTROL_PLANE), targets(controlPlanes, "pod"));
    }

    /** @return one target group per runtime, each with its own identifying label */
    static JSONArray targets(Map<String, Integer> ports, String label) {
        JSONArray groups = new JSONArray();
        new TreeMap<>(ports).forEach((name, port) -> {
            JSONObject labels = new JSONObject();
            labels.put(label, name);
            JSONObject group = new JSONObject();
            group.put("targets", new JSONArray(List.of("127.0.0.1:" + port)));
            group.put("labels", labels);
            groups.add(group);
        });
        return groups;
    }

    private static void write(Path file, JSONArray content) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, content.toJSONString() + "\n");
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
