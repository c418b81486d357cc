package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

import org.jolokia.json.JSONObject;

/**
 * One node of the cluster a scenario runs on, as its steps and expectations reach it: the node agent's Jolokia (fault
 * injection through the simulator's MBean), the emulated host's files (its state, markers, reboot count), and the
 * faults done to the node itself. {@link SimNode} is a node-agent runtime the harness starts; {@link RealNodeAgent} is
 * the node agent's pod on a real kubelet ({@code scenario --kubelet}).
 *
 * <p>The folder {@link #root()} is laid out alike for both: {@code simulator/} (the emulated host's state,
 * {@code state.properties}), {@code run-npu-operator/} (the markers) and {@code var-lib-npu-operator/}.
 */
public interface ScenarioNode {

    /** MBean of the simulator inside the node agent. */
    String SIMULATOR = "io.npulifecycle:type=Simulator";

    /** @return the node name */
    String name();

    /** @return the node's folder (simulator state, markers, state that outlives a reboot) */
    Path root();

    /**
     * @return the node agent's Jolokia client
     * @throws IllegalStateException when the node agent cannot be reached at all (e.g. no pod)
     */
    Jolokia jolokia();

    /** @return where the node agent's Jolokia answers, for a person: its URL */
    default String jolokiaAddress() {
        return jolokia().url();
    }

    /**
     * SIGKILLs the node agent; it is started again as a kubelet restarts a container.
     *
     * @throws IOException when the node agent cannot be signalled
     */
    void killAgent() throws IOException;

    /**
     * Moves the node's wall clock by {@code delta} (PID {@code io.npulifecycle.time} key {@code wallOffsetMillis}).
     *
     * @throws IOException when the configuration cannot be written
     */
    void jumpClock(Duration delta) throws IOException;

    /**
     * Makes the marker folder read-only (or writable again).
     *
     * @throws IOException when the folder cannot be remounted
     */
    void markersReadOnly(boolean on) throws IOException;

    /**
     * Fills the marker folder (or frees it again).
     *
     * @throws IOException when the folder cannot be filled
     */
    void markersFull(boolean on) throws IOException;

    /**
     * Reads a marker of the emulated node.
     *
     * @param marker {@code driver-ready} or {@code reboot-required}
     * @return its content, or {@code null} when absent or unreadable
     */
    default Properties marker(String marker) {
        Path f = root().resolve("run-npu-operator").resolve(marker);
        Properties p = new Properties();
        try (var r = Files.newBufferedReader(f)) {
            p.load(r);
            return p;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Reads the emulated host's state directly (it outlives agent restarts).
     *
     * @return state.properties of the simulator, empty when not created yet
     */
    default Properties hostState() {
        Properties p = new Properties();
        try (var r = Files.newBufferedReader(root().resolve("simulator/state.properties"))) {
            p.load(r);
        } catch (IOException e) {
            // not created yet
        }
        return p;
    }

    /** @return simulated reboots of this node */
    default int reboots() {
        return Integer.parseInt(hostState().getProperty("reboots", "0"));
    }

    /** @return violations recorded by the simulator (a driver unloaded in a running kernel) */
    default int violations() {
        return Integer.parseInt(hostState().getProperty("violations", "0"));
    }

    /**
     * The node agent's JVM as this machine's {@code /proc} shows it, for the invariant
     * {@value Invariants#MEMORY}.
     *
     * @param pid its process id, -1 when unknown (not running, or not a process of this machine's harness)
     * @param boot the emulated host's boot the reading belongs to (its reboot count, 0 before the first reboot): a
     *        simulated reboot restarts the agent's OSGi framework inside the same JVM, as a host's reboot restarts
     *        the agent; -1 when unknown
     * @param rssKiB its resident memory, {@code VmRSS} of {@code /proc/<pid>/status}, in KiB; -1 when unknown
     * @param probed whether the agent completed its first health-watch probe in this process and boot (false when
     *        unknown); read before {@code rssKiB}, so a reading with {@code probed} true was taken after that probe
     * @param stopping whether the agent was going down at the reading: the harness had signalled the process to end
     *        (a driver pod replaced, a node deleted, the run's end, {@code killAgent}), or a simulated reboot was
     *        restarting its framework; what it holds then is its shutdown's and start's, not a running agent's
     */
    record AgentProcess(long pid, int boot, long rssKiB, boolean probed, boolean stopping) {
        /** Nothing known: no process, no reading. */
        public static final AgentProcess UNKNOWN = new AgentProcess(-1, -1, -1, false, false);
    }

    /**
     * @return the node agent's process and its resident memory now; {@link AgentProcess#UNKNOWN} where the harness
     *         does not run the node agent as a process of its own (the real node's pod, {@link RealNodeAgent})
     */
    default AgentProcess agentProcess() {
        return AgentProcess.UNKNOWN;
    }

    /**
     * A fault injection through Jolokia, as a CI pipeline would do it.
     *
     * @param operation an operation of {@link #SIMULATOR}, e.g. {@code wedge}
     * @param args its arguments
     * @return the operation's answer
     * @throws IllegalStateException with the Jolokia error when the operation failed or nobody answered
     */
    default String simulator(String operation, Object... args) {
        Jolokia j = jolokia();
        JSONObject r = j.exec(SIMULATOR, operation, args);
        if (r == null) {
            throw new IllegalStateException(name() + ": the node agent does not answer on " + j.url());
        }
        Object status = r.get("status");
        if (!(status instanceof Number) || ((Number) status).intValue() != 200) {
            throw new IllegalStateException(name() + ": " + operation + " failed: " + r.get("error"));
        }
        return String.valueOf(r.get("value"));
    }
}
