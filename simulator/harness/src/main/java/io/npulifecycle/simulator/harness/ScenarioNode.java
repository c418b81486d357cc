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
     * How long, in seconds of wall clock, a fault injection waits for a node agent that does not answer (killed and
     * restarted by its DaemonSet, rebooting, its framework starting): a restart takes 3 to 20 s on a loaded 2-core
     * machine. At a high time scale a schedule's step can fall within that restart (a chaos schedule wedging a chip
     * seconds of simulated time after killing its agent); failing the step then would be the harness's failure, not the
     * product's.
     */
    long AGENT_ANSWER_WAIT_SECONDS = 90;

    /**
     * @param answer a Jolokia answer
     * @return whether it says the agent's framework is starting or stopping (a simulated reboot in the same JVM):
     *         Jolokia answers, but an OSGi service it needs to read the request is not registered yet or any more
     *         ({@code No service of type ... found}, e.g. its serializer, which converts the operation's arguments
     *         before the operation is called). Seen in two chaos runs at x240 on a loaded machine (2026-12-06): the
     *         step failed with "wedge failed: No service of type interface
     *         org.jolokia.server.core.service.serializer.Serializer found".
     */
    static boolean frameworkInTransition(JSONObject answer) {
        Object status = answer.get("status");
        Object error = answer.get("error");
        return !(status instanceof Number n && n.intValue() == 200) && error != null
                && String.valueOf(error).contains("No service of type");
    }

    /**
     * A fault injection through Jolokia, as a CI pipeline would do it. While the node agent does not answer, or
     * answers without the simulator's MBean yet (404: its framework is starting), or without a service Jolokia needs
     * ({@link #frameworkInTransition}), it is asked again every 200 ms for up to {@value #AGENT_ANSWER_WAIT_SECONDS} s.
     *
     * @param operation an operation of {@link #SIMULATOR}, e.g. {@code wedge}
     * @param args its arguments
     * @return the operation's answer
     * @throws IllegalStateException with the Jolokia error when the operation failed, or when nobody answered within
     *         {@value #AGENT_ANSWER_WAIT_SECONDS} s
     */
    default String simulator(String operation, Object... args) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(AGENT_ANSWER_WAIT_SECONDS);
        while (true) {
            Jolokia j = jolokia();
            JSONObject r = j.exec(SIMULATOR, operation, args);
            Object status = r == null ? null : r.get("status");
            boolean starting = r == null || status instanceof Number n && n.intValue() == 404
                    || frameworkInTransition(r);
            if (!starting) {
                if (!(status instanceof Number) || ((Number) status).intValue() != 200) {
                    throw new IllegalStateException(name() + ": " + operation + " failed: " + r.get("error"));
                }
                return String.valueOf(r.get("value"));
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(name() + ": the node agent does not answer on " + j.url()
                        + (r == null ? "" : " with the simulator's MBean (" + r.get("error") + ")") + " within "
                        + AGENT_ANSWER_WAIT_SECONDS + " s (stopped, or not back from a restart)");
            }
            try {
                Thread.sleep(200); // polling a restarting runtime's Jolokia, not a test's wait
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(name() + ": interrupted while waiting for the node agent on "
                        + j.url(), e);
            }
        }
    }
}
