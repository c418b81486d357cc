package io.npulifecycle.api.management;

import java.util.List;

/**
 * Management interface of {@code io.npulifecycle:type=Runtime}: what this Felix runtime is and what runs in it.
 */
@Description("The npu-lifecycle runtime (io.npulifecycle:type=Runtime): role, version, home, uptime, bundles.")
public interface NpuRuntimeMXBean {

    /** @return {@code node} or {@code control-plane} (framework property {@code npu.lifecycle.role}) */
    @Description("Node or control-plane (framework property npu.lifecycle.role).")
    String getRole();

    /** @return the npu-lifecycle product version (framework property {@code npu.lifecycle.version}) */
    @Description("The npu-lifecycle product version (framework property npu.lifecycle.version).")
    String getProductVersion();

    /** @return the runtime's home folder, as given to the launcher */
    @Description("The runtime's home folder, as given to the launcher.")
    String getHome();

    /** @return wall-clock seconds since the JVM started (from the platform RuntimeMXBean) */
    @Description("Wall-clock seconds since the JVM started (from the platform RuntimeMXBean).")
    long getUptimeSeconds();

    /** @return every installed bundle with its id, symbolic name, version, state and start level */
    @Description("Every installed bundle with its id, symbolic name, version, state and start level.")
    List<BundleInfo> getBundles();
}
