package io.npulifecycle.simulator.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;

/**
 * An emulated NPU host for the probe-cost benchmark, rendered by the simulator's own {@link SimulatedNode} (the same
 * {@code bin/npu-smi}, {@code lib/dcmi.state} and {@code libdcmi.so} shim a node agent with the simulator sees), without
 * an OSGi runtime. Lives in the simulator's package only to reach its package-private renderer; benchmark code.
 */
public final class BenchHost {

    private BenchHost() {
    }

    /**
     * Creates (or re-renders) a host of healthy chips.
     *
     * @param dir the host folder ({@code bin/npu-smi}, {@code lib/libdcmi.so}, {@code lib/dcmi.state} inside)
     * @param chipType {@code 910b} (one chip per NPU id) or {@code 310p} (two)
     * @param npus NPU ids
     * @param chipsPerNpu chips per NPU id
     * @return {@code dir}
     * @throws IOException when the folder cannot be written, or the shim is not in the simulator jar (no gcc at
     *         build time)
     */
    public static Path create(Path dir, String chipType, int npus, int chipsPerNpu) throws IOException {
        Files.createDirectories(dir);
        SimulatedNode node = new SimulatedNode(dir, dir.resolve("boot_id"), dir.resolve("run"),
                () -> UUID.randomUUID().toString());
        String problem = node.open(chipType, npus, chipsPerNpu, "25.2.0");
        if (problem != null) {
            throw new IOException(problem);
        }
        try (InputStream in = SimulatedNode.class.getResourceAsStream("/native/libdcmi-sim.so")) {
            if (in == null) {
                throw new IOException("the simulator jar has no native/libdcmi-sim.so (built without gcc)");
            }
            Files.copy(in, dir.resolve("lib/libdcmi.so"), StandardCopyOption.REPLACE_EXISTING);
        }
        return dir;
    }
}
