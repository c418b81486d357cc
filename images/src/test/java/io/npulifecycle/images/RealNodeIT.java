package io.npulifecycle.images;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.npulifecycle.simulator.cluster.RealNode;

/**
 * The images of this build on a real node of this machine, as README's {@code demo --api real --kubelet} runs
 * them: a kubelet and containerd run the control plane's Deployment (two replicas, leader election, the leader's pod
 * deleted) and the driver DaemonSet's pod (the simulated vendor driver image beside the node agent: probes, the
 * bound token under the admission policy); a wedge injected through Jolokia over {@code kubectl port-forward} is
 * healed through the real pods (a PodDisruptionBudget blocks the drain of a real workload pod until it allows it; the
 * simulated reboot restarts the node agent's container with a new boot id); a manual upgrade approved with
 * {@code kubectl annotate} replaces the driver pod through the DaemonSet controller and the runbook's step-4 command
 * prints the new image. Then nothing of the node is left running or mounted, also when the demo is stopped by SIGTERM
 * while it installs. Needs root; the work folder of a failed run is kept in {@code target/real-node-work} (pod logs in
 * {@code node/kubelet/pods-logs/}).
 */
class RealNodeIT {

    static final Path INSTALL = Path.of(System.getProperty("npu.images.tarball", "../distribution/target/x.tar.gz"))
            .toAbsolutePath().getParent().resolve("npu-lifecycle").normalize();

    @Test
    void theDemoRunsThroughRealPodsOnARealNodeAndLeavesNothingBehind() throws Exception {
        Path error = Path.of(System.getProperty("npu.images.dir", "../distribution/target/images")).resolve("images.error");
        if (Files.exists(error)) {
            String why = Files.readString(error);
            Assumptions.assumeFalse(why.contains("-Dnpu.images.skip=true)"), why);
            throw new AssertionError("no images to run: " + why);
        }
        Path work = Path.of("target/real-node-work").toAbsolutePath();
        deleteTree(work);
        Path out = Files.createDirectories(work.getParent()).resolve("real-node-demo.txt");
        Process demo = new ProcessBuilder(INSTALL.resolve("bin/npu-lifecycle").toString(), "demo", "--api", "real",
                "--kubelet", "--work", work.toString()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        String text;
        try {
            assertTrue(demo.waitFor(15, TimeUnit.MINUTES), "demo still running after 15 min");
            text = Files.readString(out, StandardCharsets.UTF_8);
        } finally {
            demo.destroy();
        }
        System.out.println(text);
        String kept = "\n(work folder kept: " + work + "; output " + out + ")";
        assertEquals(0, demo.exitValue(), text + kept);
        for (String step : List.of("PASS 1 a real node, the API server, helm install",
                "PASS 2 NPUOperatorCtl 25.2.0: the driver pod on the node becomes Ready",
                "PASS 3 the node agent's Jolokia through kubectl port-forward",
                "PASS 4 leader election: delete the leader's pod",
                "PASS 5 self-healing through the real pods (approved, PDB-aware drain)",
                "PASS 6 manual upgrade 25.2.0 -> 25.5.0 through the DaemonSet",
                "PASS 7 nothing left running or mounted")) {
            assertTrue(text.contains(step), "missing '" + step + "' in:\n" + text + kept);
        }
        assertTrue(text.contains("DrainBlocked: pod npu-jobs/npu-training-job-")
                && text.contains("PodDisruptionBudget npu-jobs/npu-training-job allows no disruption"), text + kept);
        assertTrue(text.lines().anyMatch(l -> l.strip().matches(
                "npu-node-0\\s+registry\\.local/mlops/ascend-driver:25\\.5\\.0-910b-.*")),
                "the runbook's step 4 prints the new image:\n" + text + kept);
        assertEquals(List.of(), RealNode.leftovers(work.resolve("node")), "left behind after the demo" + kept);
        assertTrue(ProcessHandle.allProcesses().noneMatch(p -> p.info().commandLine().orElse("")
                .contains(work.toString())), "a process of the demo still runs" + kept);
        deleteTree(work);
    }

    @Test
    void aDemoStoppedBySigtermLeavesNothingBehind() throws Exception {
        Path work = Path.of("target/real-node-sigterm").toAbsolutePath();
        deleteTree(work);
        Path out = Files.createDirectories(work.getParent()).resolve("real-node-sigterm.txt");
        Process demo = new ProcessBuilder(INSTALL.resolve("bin/npu-lifecycle").toString(), "demo", "--api", "real",
                "--kubelet", "--work", work.toString()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            // SIGTERM once the node is Ready and the chart is being installed: pods, containerd, kubelet, mounts
            org.awaitility.Awaitility.await("a Ready node").atMost(java.time.Duration.ofMinutes(10))
                    .pollInterval(java.time.Duration.ofMillis(200))
                    .failFast("the demo ended before its node was Ready", () -> !demo.isAlive())
                    .until(() -> Files.readString(out, StandardCharsets.UTF_8).contains("node npu-node-0 Ready in"));
            demo.destroy();
            assertTrue(demo.waitFor(3, TimeUnit.MINUTES), "the demo did not end within 3 min of SIGTERM");
        } finally {
            demo.destroyForcibly();
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        assertTrue(demo.exitValue() != 0, "a stopped demo does not pass:\n" + text);
        assertEquals(List.of(), RealNode.leftovers(work.resolve("node")), "left behind after SIGTERM:\n" + text);
        assertTrue(ProcessHandle.allProcesses().noneMatch(p -> p.info().commandLine().orElse("")
                .contains(work.toString())), "a process of the demo still runs:\n" + text);
        deleteTree(work);
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
