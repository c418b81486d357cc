package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.npulifecycle.simulator.common.ChildProcess;

/**
 * One npu-lifecycle runtime of the simulated cluster: {@code bin/npu-lifecycle <role> --no-shell --home HOME} as a
 * child process ({@link ChildProcess}), its output appended to {@code HOME/console.log}; started again after a stop
 * or a kill as a restarted pod or a rebooted node would be.
 */
public final class RuntimeProcess {

    /** How long {@link #stop()} waits after SIGTERM before SIGKILL. */
    static final Duration STOP_GRACE = Duration.ofSeconds(20);
    /** The JVM options of every runtime: small heaps, so that a simulated cluster of 16 nodes fits on 2 cores. */
    static final String JAVA_OPTS = "-XX:+UseSerialGC -Xms16m -Xmx160m -XX:MaxMetaspaceSize=96m "
            + "-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+ExitOnOutOfMemoryError";

    private final Path install;
    private final String role;
    private final Path home;
    private final Map<String, String> env;
    private volatile ChildProcess process;
    private int starts;

    /**
     * @param install the installation (the folder holding bin/npu-lifecycle)
     * @param role {@code node} or {@code control-plane}
     * @param home the runtime home
     * @param env the environment of the process (credentials, port, NODE_NAME, DRIVER_VERSION, ...)
     */
    public RuntimeProcess(Path install, String role, Path home, Map<String, String> env) {
        this.install = install;
        this.role = role;
        this.home = home;
        this.env = env;
    }

    /**
     * Starts the runtime (again). The harness's own {@code NPU_LIFECYCLE_*}, {@code NODE_NAME} and
     * {@code DRIVER_VERSION} are not inherited.
     *
     * @param extraEnv environment variables for this start only (e.g. DRIVER_VERSION of a new pod)
     * @throws IOException if the process cannot be started
     */
    public synchronized void start(Map<String, String> extraEnv) throws IOException {
        Map<String, String> all = new HashMap<>();
        all.put("JAVA_OPTS", JAVA_OPTS);
        all.putAll(env);
        all.putAll(extraEnv);
        process = ChildProcess.builder(List.of(install.resolve("bin/npu-lifecycle").toString(), role, "--no-shell",
                "--home", home.toString()))
                .removeEnv(k -> k.startsWith("NPU_LIFECYCLE_") || k.equals("NODE_NAME") || k.equals("DRIVER_VERSION"))
                .env(all).output(home.resolve("console.log"), true).stopGrace(STOP_GRACE).start();
        starts++;
    }

    /** Stops the runtime (SIGTERM, then SIGKILL after 20 s). */
    public synchronized void stop() {
        ChildProcess p = process;
        if (p != null) {
            p.stop(STOP_GRACE);
        }
    }

    /** Kills the runtime at once (SIGKILL), as a crash would. */
    public synchronized void kill() {
        ChildProcess p = process;
        if (p != null) {
            p.kill();
        }
    }

    /** @return whether the process runs */
    public boolean alive() {
        ChildProcess p = process;
        return p != null && p.alive();
    }

    /** @return how many times it was started */
    public synchronized int starts() {
        return starts;
    }

    /** @return the runtime home */
    public Path home() {
        return home;
    }
}
