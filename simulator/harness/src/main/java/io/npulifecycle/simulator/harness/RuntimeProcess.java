package io.npulifecycle.simulator.harness;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One npu-lifecycle runtime of the simulated cluster: {@code bin/npu-lifecycle <role> --no-shell --home HOME} as a
 * child process, its output appended to {@code HOME/console.log}.
 */
public final class RuntimeProcess {

    private final Path install;
    private final String role;
    private final Path home;
    private final Map<String, String> env;
    private volatile Process process;
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
     * Starts the runtime (again).
     *
     * @param extraEnv environment variables for this start only (e.g. DRIVER_VERSION of a new pod)
     * @throws IOException if the process cannot be started
     */
    public synchronized void start(Map<String, String> extraEnv) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(install.resolve("bin/npu-lifecycle").toString(), role,
                "--no-shell", "--home", home.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("console.log").toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("NPU_LIFECYCLE_") || k.equals("NODE_NAME")
                || k.equals("DRIVER_VERSION"));
        pb.environment().put("JAVA_OPTS", "-XX:+UseSerialGC -Xms16m -Xmx160m -XX:MaxMetaspaceSize=96m "
                + "-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+ExitOnOutOfMemoryError");
        pb.environment().putAll(env);
        pb.environment().putAll(extraEnv);
        java.nio.file.Files.createDirectories(home);
        process = pb.start();
        starts++;
    }

    /** Stops the runtime (SIGTERM, then SIGKILL after 20 s). */
    public synchronized void stop() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
    }

    /** Kills the runtime at once (SIGKILL), as a crash would. */
    public synchronized void kill() {
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroyForcibly();
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return whether the process runs */
    public boolean alive() {
        Process p = process;
        return p != null && p.isAlive();
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
