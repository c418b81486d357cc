package io.npulifecycle.api.probe;

import java.time.Duration;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * One way of asking the driver how its chips are: npu-smi, DCMI, or an emulation (simulator). The health-watch calls
 * it from one thread at a time, never overlapping.
 */
@ConsumerType
public interface ChipProbe {

    /** Service property naming the method of a {@code ChipProbe} service, matched against the health-watch's {@code method}. */
    String METHOD_PROPERTY = "npu.probe.method";

    /** @return the method name, e.g. {@code npu-smi}, {@code dcmi} */
    String method();

    /**
     * Probes every chip the driver reports. Must not throw: every problem is a {@link ProbeResult} with an outcome.
     *
     * @param timeout hard limit (wall-clock) for the whole probe; on expiry the probe is abandoned (npu-smi: its
     *        process tree killed) and the result's outcome is {@link Classification#FAILED} or
     *        {@link Classification#PROBE_ERROR} per the {@code timeoutIsFailure} setting
     * @return the result, never {@code null}
     */
    ProbeResult probe(Duration timeout);
}
