package io.npulifecycle.simulator.internal;

import java.util.List;

/**
 * Management interface of {@code io.npulifecycle:type=Simulator}: the emulated node and fault injection. Every
 * operation that changes the node is logged. (Jolokia's operator role guards exec; see docs/security.md.)
 */
public interface SimulatorMXBean {

    /** @return {@code active}, or why the simulator refused to activate (real Ascend devices present) */
    String getStatus();

    /** @return {@code 910b} or {@code 310p} */
    String getChipType();

    /** @return the emulated boot id */
    String getBootId();

    /** @return the driver version loaded in the emulated kernel, empty when none */
    String getLoadedDriverVersion();

    /** @return the driver version staged for the next boot, empty when none */
    String getStagedDriverVersion();

    /** @return simulated reboots since the emulated node was created */
    int getReboots();

    /** @return recorded violations (e.g. a driver unloaded in a running kernel); a scenario fails on any */
    List<String> getViolations();

    /** @return each chip as {@code N:M state} plus {@code persistent} when its fault survives reboots */
    List<String> getChips();

    /** @return npu-smi failures still injected by {@link #failNextProbes(int, String)} */
    int getInjectedFailuresLeft();

    /** @return the generated npu-smi executable (the health-watch's {@code npuSmiCommand}) */
    String getNpuSmiPath();

    /** @return the libdcmi.so shim (the health-watch's {@code dcmiLibrary}), empty if it was not built */
    String getDcmiLibraryPath();

    /** @return the emulated {@code /proc/modules} (the driver bundle's modules file) */
    String getProcModulesPath();

    /** Wedges a chip ({@code dev_num=0}). @return the new chip line */
    String wedge(int npu, int chip);

    /** Makes a chip healthy again. @return the new chip line */
    String recover(int npu, int chip);

    /**
     * Sets a chip's state.
     *
     * @param state healthy, warning, wedged, occupied, hanging, garbled or absent
     * @return the new chip line
     */
    String setChip(int npu, int chip, String state);

    /** Makes a chip's fault survive reboots (or not). @return the new chip line */
    String persistent(int npu, int chip, boolean value);

    /**
     * Makes the next {@code count} npu-smi runs fail.
     *
     * @param kind wedged (-8005), occupied (-8020), garbled or hanging
     * @return a confirmation
     */
    String failNextProbes(int count, String kind);

    /** Makes every chip hang (or answer again). @return a confirmation */
    String hang(boolean value);

    /** Reboots the emulated node now (new boot id, markers cleared, non-persistent wedges end). @return the new boot id */
    String reboot();

    /** Unloads the driver in the running kernel: a violation; every chip dev_num=0 until the next reboot. */
    String unloadDriver();

    /** @return a multi-line report of the emulated node */
    String report();
}
