package io.npulifecycle.api.reboot;

import java.io.IOException;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Loads the NPU driver kernel modules of one version into a kernel that has none loaded (an OSGi service; the driver
 * bundle uses the one with the highest ranking). There is deliberately no unload: a loaded driver is never unloaded.
 * The simulator and tests register their own.
 */
@ConsumerType
public interface DriverLoader {

    /** @return a short description for logs and the MBean */
    String describe();

    /**
     * Loads the modules of {@code version}. Called only when {@code /proc/modules} shows no NPU module.
     *
     * @param version the driver version, e.g. {@code 25.5.0}
     * @throws IOException if loading failed (the message says why)
     */
    void load(String version) throws IOException;
}
