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
 * prints the new image. The scenarios of {@code itests/scenarios/real-node/} pass through real pods ({@code scenario
 * --kubelet}). Then nothing of the node is left running or mounted, also when the demo is stopped by SIGTERM while it
 * installs. Needs root; the work folder of a failed run is kept in {@code target/real-node-work} (pod logs in
 * {@code node/kubelet/pods-logs/}).
 */
class RealNodeIT {

    static final Path INSTALL = Path.of(System.getProperty("npu.images.tarball", "../distribution/target/x.tar.gz"))
            .toAbsolutePath().getParent().resolve("npu-lifecycle").normalize();

    @Test
    void theDemoRunsThroughRealPodsOnARealNodeAndLeavesNothingBehind() throws Exception {
        requireImages();
        Path work = Path.of("target/real-node-work").toAbsolutePath();
        deleteTree(work);
        Path out = Files.createDirectories(work.getParent()).resolve("real-node-demo.txt");
        String text = runToExit(List.of(INSTALL.resolve("bin/npu-lifecycle").toString(), "demo", "--api", "real",
                "--kubelet", "--work", work.toString()), out, 15);
        String kept = "\n(work folder kept: " + work + "; output " + out + ")";
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

    /**
     * {@code scenario --api real --kubelet} with the files of {@code itests/scenarios/real-node/}: each on a fresh real
     * node, its steps on the real objects (a fault injected through kubectl port-forward, the node agent's container
     * SIGKILLed through containerd, a real workload pod under a PodDisruptionBudget); every file passes, and nothing of
     * the node is left running or mounted.
     */
    @Test
    void theRealNodeScenariosPassThroughRealPodsAndLeaveNothingBehind() throws Exception {
        requireImages();
        Path work = Path.of("target/real-node-scenarios").toAbsolutePath();
        deleteTree(work);
        Path out = Files.createDirectories(work.getParent()).resolve("real-node-scenarios.txt");
        Path junit = work.getParent().resolve("real-node-scenarios.xml");
        List<String> command = new java.util.ArrayList<>(List.of(INSTALL.resolve("bin/npu-lifecycle").toString(),
                "scenario", "--api", "real", "--kubelet", "--work", work.toString(), "--junit", junit.toString()));
        List<Path> files;
        try (Stream<Path> s = Files.list(Path.of("../itests/scenarios/real-node"))) {
            files = s.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
        }
        assertTrue(!files.isEmpty(), "no scenario in itests/scenarios/real-node");
        files.forEach(f -> command.add(f.toAbsolutePath().toString()));
        String text = runToExit(command, out, 10L * files.size() + 5);
        String kept = "\n(work folder kept: " + work + "; output " + out + ")";
        assertTrue(text.contains("PASS: " + files.size() + " of " + files.size() + " scenarios passed"), text + kept);
        assertEquals(files.size(), text.lines().filter(l -> l.contains("real node stopped in")
                && l.endsWith("nothing left running or mounted")).count(), text + kept);
        assertTrue(text.contains("did killAgent: {node: node-0}"), text + kept);
        for (int i = 0; i < files.size(); i++) {
            assertEquals(List.of(), RealNode.leftovers(work.resolve("scenario-" + i).resolve("node")),
                    "left behind by " + files.get(i) + kept);
        }
        assertTrue(ProcessHandle.allProcesses().noneMatch(p -> p.info().commandLine().orElse("")
                .contains(work.toString())), "a process of the run still runs" + kept);
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

    /**
     * Runs a command of the installation to its exit, its output into {@code out}, and asserts it exited 0.
     *
     * @return its output (also printed)
     */
    static String runToExit(List<String> command, Path out, long minutes) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        String text;
        try {
            assertTrue(p.waitFor(minutes, TimeUnit.MINUTES), String.join(" ", command) + " still running after "
                    + minutes + " min");
            text = Files.readString(out, StandardCharsets.UTF_8);
        } finally {
            p.destroy();
        }
        System.out.println(text);
        assertEquals(0, p.exitValue(), text + "\n(output " + out + ")");
        return text;
    }

    /** Skips when the build was told to make no images (-Dnpu.images.skip=true); fails when they could not be made. */
    static void requireImages() throws IOException {
        Path error = Path.of(System.getProperty("npu.images.dir", "../distribution/target/images")).resolve("images.error");
        if (Files.exists(error)) {
            String why = Files.readString(error);
            Assumptions.assumeFalse(why.contains("-Dnpu.images.skip=true)"), why);
            throw new AssertionError("no images to run: " + why);
        }
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
