package io.npulifecycle.simulator.internal;

import java.util.List;

import io.npulifecycle.api.management.Description;

/**
 * Management interface of {@code io.npulifecycle:type=Simulator}: the emulated node and fault injection. Every
 * operation that changes the node is logged. (Jolokia's operator role guards exec; see docs/security.md.)
 */
@Description("The emulated NPU node (io.npulifecycle:type=Simulator): chips, driver, boot id, and fault injection for "
        + "tests and demos.")
public interface SimulatorMXBean {

    /** @return {@code active}, or why the simulator refused to activate (real Ascend devices present) */
    @Description("active, or why the simulator refused to activate (real Ascend devices present).")
    String getStatus();

    /** @return {@code 910b} or {@code 310p} */
    @Description("The emulated Ascend chip type: 910b or 310p.")
    String getChipType();

    /** @return the emulated boot id */
    @Description("The emulated boot id.")
    String getBootId();

    /** @return the driver version loaded in the emulated kernel, empty when none */
    @Description("The driver version loaded in the emulated kernel, empty when none.")
    String getLoadedDriverVersion();

    /** @return the driver version staged for the next boot, empty when none */
    @Description("The driver version staged for the next boot, empty when none.")
    String getStagedDriverVersion();

    /** @return simulated reboots since the emulated node was created */
    @Description("Simulated reboots since the emulated node was created (a count).")
    int getReboots();

    /** @return recorded violations (e.g. a driver unloaded in a running kernel); a scenario fails on any */
    @Description("Recorded violations (e.g. a driver unloaded in a running kernel); a scenario fails on any.")
    List<String> getViolations();

    /** @return each chip as {@code N:M state} plus {@code persistent} when its fault survives reboots */
    @Description("Each chip as N:M state plus persistent when its fault survives reboots.")
    List<String> getChips();

    /** @return npu-smi failures still injected by {@link #failNextProbes(int, String)} */
    @Description("npu-smi runs still to fail, as injected by failNextProbes (a count).")
    int getInjectedFailuresLeft();

    /** @return the generated npu-smi executable (the health-watch's {@code npuSmiCommand}) */
    @Description("The generated npu-smi executable (the health-watch's npuSmiCommand).")
    String getNpuSmiPath();

    /** @return the libdcmi.so shim (the health-watch's {@code dcmiLibrary}), empty if it was not built */
    @Description("The libdcmi.so shim (the health-watch's dcmiLibrary), empty if it was not built.")
    String getDcmiLibraryPath();

    /** @return the emulated {@code /proc/modules} (the driver bundle's modules file) */
    @Description("The emulated /proc/modules (the driver bundle's modules file).")
    String getProcModulesPath();

    /** Wedges a chip ({@code dev_num=0}). @return the new chip line */
    @Description("Wedges a chip (dev_num=0). Returns the new chip line.")
    String wedge(@Description("NPU id, as npu-smi numbers it (0 to the emulated node's npus - 1).") int npu,
            @Description("Chip id on that NPU, as npu-smi numbers it (0 for a single-chip NPU).") int chip);

    /** Makes a chip healthy again. @return the new chip line */
    @Description("Makes a chip healthy again. Returns the new chip line.")
    String recover(@Description("NPU id, as npu-smi numbers it (0 to the emulated node's npus - 1).") int npu,
            @Description("Chip id on that NPU, as npu-smi numbers it (0 for a single-chip NPU).") int chip);

    /**
     * Sets a chip's state.
     *
     * @param state healthy, warning, wedged, occupied, hanging, garbled or absent
     * @return the new chip line
     */
    @Description("Sets a chip's state. Returns the new chip line.")
    String setChip(@Description("NPU id, as npu-smi numbers it (0 to the emulated node's npus - 1).") int npu,
            @Description("Chip id on that NPU, as npu-smi numbers it (0 for a single-chip NPU).") int chip,
            @Description("The new state: healthy, warning, wedged, occupied, hanging, garbled or absent.") String state);

    /** Makes a chip's fault survive reboots (or not). @return the new chip line */
    @Description("Makes a chip's fault survive reboots (or not). Returns the new chip line.")
    String persistent(@Description("NPU id, as npu-smi numbers it (0 to the emulated node's npus - 1).") int npu,
            @Description("Chip id on that NPU, as npu-smi numbers it (0 for a single-chip NPU).") int chip,
            @Description("true: the chip's fault survives simulated reboots; false: a reboot ends it.") boolean value);

    /**
     * Makes the next {@code count} npu-smi runs fail.
     *
     * @param kind wedged (-8005), occupied (-8020), garbled or hanging
     * @return a confirmation
     */
    @Description("Makes the next count npu-smi runs fail. Returns a confirmation.")
    String failNextProbes(@Description("How many of the next npu-smi runs fail (at least 1).") int count,
            @Description("How they fail: wedged (-8005), occupied (-8020), garbled or hanging.") String kind);

    /** Makes every chip hang (or answer again). @return a confirmation */
    @Description("Makes every chip hang (or answer again). Returns a confirmation.")
    String hang(
            @Description("true: every chip hangs (npu-smi never answers); false: they answer again.") boolean value);

    /** Reboots the emulated node now (new boot id, markers cleared, non-persistent wedges end). @return the new boot id */
    @Description("Reboots the emulated node now (new boot id, markers cleared, non-persistent wedges end). Returns the new "
            + "boot id.")
    String reboot();

    /** Unloads the driver in the running kernel: a violation; every chip dev_num=0 until the next reboot. */
    @Description("Unloads the driver in the running kernel: a violation; every chip dev_num=0 until the next reboot. "
            + "Returns a confirmation.")
    String unloadDriver();

    /** @return a multi-line report of the emulated node */
    @Description("Returns a multi-line report of the emulated node.")
    String report();
}
