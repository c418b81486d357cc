package io.npulifecycle.itests.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.npulifecycle.itests.FakeNpuSmi;

/**
 * Homes for {@code bin/npu-lifecycle node} in a test's folder, with the node's host folders beside them: the marker
 * folder and the boot id the markers bundle reads ({@code etc/io.npulifecycle.markers.cfg}) and the npu-smi the probe
 * runs ({@code etc/io.npulifecycle.probe.cfg}, one probe a second, 0.8 s timeout). A test adds its own files to
 * {@code etc/} before it starts the runtime.
 */
public final class NodeHomes {

    private NodeHomes() {
    }

    /**
     * A node whose probe runs a {@link FakeNpuSmi}.
     *
     * @param home {@code <dir>/home}
     * @param markers the marker folder, {@code <dir>/run-npu-operator}
     * @param npuSmi the fake npu-smi, in {@code <dir>/tools}
     */
    public record FakeNpuSmiNode(Path home, Path markers, FakeNpuSmi npuSmi) {
    }

    /**
     * A node with the simulator bundle (installed by the launcher because {@code etc/io.npulifecycle.simulator.cfg}
     * exists): eight 910b chips, driver 25.2.0, a simulated reboot restarts the framework.
     *
     * @param home {@code <dir>/home}
     * @param markers the marker folder, {@code <dir>/run-npu-operator}, which the simulator clears at a reboot; the
     *        simulator keeps its state, boot id and {@code bin/npu-smi} in {@code <dir>/sim}
     */
    public record SimulatedNode(Path home, Path markers) {
    }

    /**
     * @param dir the test's folder
     * @param bootId the boot id the markers bundle reads, from {@code <dir>/boot_id}
     * @return the node; the probe strikes a chip at the third failure in a row ({@code failureThreshold=3})
     * @throws IOException when a file cannot be written
     */
    public static FakeNpuSmiNode withFakeNpuSmi(Path dir, String bootId) throws IOException {
        Path markers = Files.createDirectories(dir.resolve("run-npu-operator"));
        Path bootIdFile = Files.writeString(dir.resolve("boot_id"), bootId + "\n");
        FakeNpuSmi npuSmi = FakeNpuSmi.create(Files.createDirectories(dir.resolve("tools")));
        Path home = dir.resolve("home");
        Files.createDirectories(home.resolve("etc"));
        Files.writeString(home.resolve("etc/io.npulifecycle.markers.cfg"),
                "folder=" + markers + "\nbootIdPath=" + bootIdFile + "\n");
        Files.writeString(home.resolve("etc/io.npulifecycle.probe.cfg"),
                "interval=1\ntimeout=0.8\nfailureThreshold=3\nnpuSmiCommand=" + npuSmi.script() + "\n");
        return new FakeNpuSmiNode(home, markers, npuSmi);
    }

    /**
     * @param dir the test's folder
     * @return the node
     * @throws IOException when a file cannot be written
     */
    public static SimulatedNode withSimulator(Path dir) throws IOException {
        Path markers = Files.createDirectories(dir.resolve("run-npu-operator"));
        Path sim = dir.resolve("sim");
        Path home = dir.resolve("home");
        Files.createDirectories(home.resolve("etc"));
        Files.writeString(home.resolve("etc/io.npulifecycle.simulator.cfg"), "stateDir=" + sim + "\nmarkersFolder="
                + markers + "\nrestartMode=framework\nnpus=8\nchipType=910b\ndriverVersion=25.2.0\n");
        Files.writeString(home.resolve("etc/io.npulifecycle.markers.cfg"), "folder=" + markers + "\nbootIdPath="
                + sim.resolve("boot_id") + "\n");
        Files.writeString(home.resolve("etc/io.npulifecycle.probe.cfg"), "interval=1\ntimeout=0.8\nnpuSmiCommand="
                + sim.resolve("bin/npu-smi") + "\n");
        return new SimulatedNode(home, markers);
    }
}
