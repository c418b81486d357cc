package io.npulifecycle.simulator.host;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;

import io.npulifecycle.simulator.internal.SimulatedNode;

/**
 * Renders an emulated NPU host into a folder without an OSGi runtime, with the simulator's own emulated node: the
 * same {@code bin/npu-smi}, {@code lib/dcmi.state} and {@code lib/libdcmi.so} shim that a node agent with the
 * simulator reads. Runs on a plain class path (this jar and the API jar), e.g. for the probe-cost benchmark, which
 * runs the production npu-smi and DCMI probes against it.
 */
public final class EmulatedHosts {

    /** Driver version of a newly created host. */
    public static final String DRIVER_VERSION = "25.2.0";

    private EmulatedHosts() {
    }

    /**
     * Creates a host of healthy chips with driver {@value #DRIVER_VERSION} loaded, or re-renders the host already in
     * {@code dir} as it is (the chip type, chips and states of a stored host win over the arguments).
     *
     * @param dir the host folder; afterwards it holds {@code bin/npu-smi}, {@code lib/libdcmi.so},
     *        {@code lib/dcmi.state}, {@code proc-modules}, {@code boot_id} and {@code state.properties}
     * @param chipType {@code 910b} (one chip per NPU id) or {@code 310p} (two chips per NPU id)
     * @param npus number of NPU ids, from 1
     * @param chipsPerNpu chips per NPU id, from 1
     * @return {@code dir}
     * @throws IllegalArgumentException if {@code chipType} is neither {@code 910b} nor {@code 310p}, or a count is
     *         below 1
     * @throws IOException when the folder cannot be written, when a stored state in {@code dir} cannot be read, or
     *         when this jar has no {@code native/libdcmi-sim.so} (it was built without gcc)
     */
    public static Path create(Path dir, String chipType, int npus, int chipsPerNpu) throws IOException {
        if (!"910b".equals(chipType) && !"310p".equals(chipType)) {
            throw new IllegalArgumentException("chipType '" + chipType + "': expected 910b or 310p");
        }
        if (npus < 1 || chipsPerNpu < 1) {
            throw new IllegalArgumentException("npus " + npus + ", chipsPerNpu " + chipsPerNpu
                    + ": expected at least 1 each");
        }
        Files.createDirectories(dir);
        SimulatedNode node = new SimulatedNode(dir, dir.resolve("boot_id"), dir.resolve("run"),
                () -> UUID.randomUUID().toString());
        String problem = node.open(chipType, npus, chipsPerNpu, DRIVER_VERSION);
        if (problem != null) {
            throw new IOException(problem);
        }
        try (InputStream in = EmulatedHosts.class.getResourceAsStream("/native/libdcmi-sim.so")) {
            if (in == null) {
                throw new IOException("the simulator jar has no native/libdcmi-sim.so (built without gcc)");
            }
            Files.copy(in, dir.resolve("lib/libdcmi.so"), StandardCopyOption.REPLACE_EXISTING);
        }
        return dir;
    }
}
