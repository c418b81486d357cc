package io.npulifecycle.simulator.internal;

/**
 * Gogo commands {@code sim:*} over the simulator MBean, for a person at the node agent's shell:
 * {@code sim:status}, {@code sim:wedge 4 0}, {@code sim:recover 4 0}, {@code sim:set 4 0 warning},
 * {@code sim:persistent 4 0 true}, {@code sim:fail 3 wedged}, {@code sim:hang true}, {@code sim:reboot},
 * {@code sim:unload}.
 */
public final class SimCommands {

    private final SimulatorMXBean sim;

    SimCommands(SimulatorMXBean sim) {
        this.sim = sim;
    }

    /** @return the emulated node's report */
    public String status() {
        return sim.report();
    }

    /** Wedges chip (npu, chip). */
    public String wedge(int npu, int chip) {
        return sim.wedge(npu, chip);
    }

    /** Recovers chip (npu, chip). */
    public String recover(int npu, int chip) {
        return sim.recover(npu, chip);
    }

    /** Sets the state of chip (npu, chip). */
    public String set(int npu, int chip, String state) {
        return sim.setChip(npu, chip, state);
    }

    /** Makes the fault of chip (npu, chip) persistent across reboots, or not. */
    public String persistent(int npu, int chip, boolean value) {
        return sim.persistent(npu, chip, value);
    }

    /** The next {@code count} npu-smi runs fail in the given way. */
    public String fail(int count, String kind) {
        return sim.failNextProbes(count, kind);
    }

    /** Every chip hangs (true) or answers again (false). */
    public String hang(boolean value) {
        return sim.hang(value);
    }

    /** Reboots the emulated node. */
    public String reboot() {
        return sim.reboot();
    }

    /** Unloads the driver in the running kernel (a violation). */
    public String unload() {
        return sim.unloadDriver();
    }
}
