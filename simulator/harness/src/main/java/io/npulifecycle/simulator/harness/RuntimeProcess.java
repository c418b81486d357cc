package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.npulifecycle.simulator.common.ChildProcess;

/**
 * One npu-lifecycle runtime of the simulated cluster: {@code bin/npu-lifecycle <role> --no-shell --home HOME} as a
 * child process ({@link ChildProcess}), its output appended to {@code HOME/console.log}; started again after a stop
 * or a kill as a restarted pod or a rebooted node would be. Every exit it did not cause through {@link #stop()} or
 * {@link #kill()} is reported to its {@link CrashLoop}, with what that run wrote to the console log.
 */
public final class RuntimeProcess {

    /**
     * @return whether the JVM has begun its shutdown: it then refuses new shutdown hooks (seen after a SIGTERM of
     *         {@code chaos}: a control plane started by a harness thread during the shutdown was left running)
     */
    static boolean jvmShuttingDown() {
        Thread probe = new Thread(() -> { });
        try {
            Runtime.getRuntime().addShutdownHook(probe);
            Runtime.getRuntime().removeShutdownHook(probe);
            return false;
        } catch (IllegalStateException e) {
            return true;
        }
    }

    /** How long {@link #stop()} waits after SIGTERM before SIGKILL. */
    static final Duration STOP_GRACE = Duration.ofSeconds(20);
    /** The JVM options of every runtime: small heaps, so that a simulated cluster of 16 nodes fits on 2 cores. */
    static final String JAVA_OPTS = "-XX:+UseSerialGC -Xms16m -Xmx160m -XX:MaxMetaspaceSize=96m "
            + "-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+ExitOnOutOfMemoryError";

    /** One start of the process, and where its output begins and ends in the console log. */
    private static final class Run {
        final ChildProcess process;
        final long startNanos;
        final long from;
        /** Byte offset where the next run's output begins; -1 while there is none. Guarded by this run. */
        long to = -1;
        /** Whether {@link #stop()} or {@link #kill()} ended it (set before the signal). */
        volatile boolean endedByHarness;

        Run(ChildProcess process, long startNanos, long from) {
            this.process = process;
            this.startNanos = startNanos;
            this.from = from;
        }
    }

    private final String name;
    private final Path install;
    private final String role;
    private final Path home;
    private final Map<String, String> env;
    private final CrashLoop crashLoop;
    private volatile Run current;
    /** The class-data sharing archives of the runtimes' JVMs. */
    private final ClassArchives archives = ClassArchives.standard();
    private int starts;
    /** JVM options added to {@link #JAVA_OPTS} on every start (e.g. a planted bug's property), or empty. */
    private volatile String extraJavaOptions = "";

    /**
     * @param name what messages call the runtime, e.g. {@code node-0} or {@code control-plane}
     * @param install the installation (the folder holding bin/npu-lifecycle)
     * @param role {@code node} or {@code control-plane}
     * @param home the runtime home
     * @param env the environment of the process (credentials, port, NODE_NAME, DRIVER_VERSION, ...)
     * @param crashLoopExits exits in a row without reaching ready that make a crash loop ({@link
     *        CrashLoop#NODE_AGENT_EXITS} for a runtime the harness restarts, {@link CrashLoop#CONTROL_PLANE_EXITS}
     *        for one it does not)
     */
    public RuntimeProcess(String name, Path install, String role, Path home, Map<String, String> env,
            int crashLoopExits) {
        this.name = name;
        this.install = install;
        this.role = role;
        this.home = home;
        this.env = env;
        this.crashLoop = new CrashLoop(name, crashLoopExits, consoleLog());
    }

    /** @return {@code HOME/console.log} */
    Path consoleLog() {
        return home.resolve("console.log");
    }

    /**
     * Starts the runtime (again). The harness's own {@code NPU_LIFECYCLE_*}, {@code NODE_NAME} and
     * {@code DRIVER_VERSION} are not inherited.
     *
     * @param extraEnv environment variables for this start only (e.g. DRIVER_VERSION of a new pod)
     * @throws IOException if the process cannot be started
     * @throws IllegalStateException when the JVM is shutting down (a signal stopped the command): a runtime started
     *         then would outlive it, as the shutdown hooks stop only the processes that exist when they look
     */
    public synchronized void start(Map<String, String> extraEnv) throws IOException {
        if (jvmShuttingDown()) {
            throw new IllegalStateException(name + ": not started: the harness is shutting down");
        }
        Map<String, String> all = new HashMap<>();
        ClassArchives.Start archive = archives.forStart(install, role);
        String opts = JAVA_OPTS + (extraJavaOptions.isEmpty() ? "" : " " + extraJavaOptions);
        all.put("JAVA_OPTS", archive.options().isEmpty() ? opts : opts + " " + archive.options());
        all.putAll(env);
        all.putAll(extraEnv);
        Path log = consoleLog();
        long from = Files.exists(log) ? Files.size(log) : 0;
        Run previous = current;
        if (previous != null) {
            synchronized (previous) {
                previous.to = from; // what follows is this run's
            }
        }
        long t0 = System.nanoTime();
        ChildProcess p = ChildProcess.builder(List.of(install.resolve("bin/npu-lifecycle").toString(), role,
                "--no-shell", "--home", home.toString()))
                .removeEnv(k -> k.startsWith("NPU_LIFECYCLE_") || k.equals("NODE_NAME") || k.equals("DRIVER_VERSION"))
                .env(all).output(log, true).stopGrace(STOP_GRACE).start();
        Run run = new Run(p, t0, from);
        current = run;
        starts++;
        p.process().onExit().thenRun(() -> {
            archive.exited();
            exited(run);
        });
    }

    /** Reports an ended run to the crash-loop count (on the thread that saw the process end). */
    private void exited(Run run) {
        if (run.endedByHarness) {
            crashLoop.endedByHarness();
            return;
        }
        long to;
        synchronized (run) {
            // the next run has not started yet (then the file ends with this run's output), or its start recorded
            // where this run's output ends
            to = run.to >= 0 ? run.to : sizeOf(consoleLog());
        }
        ConsoleLog.Run output = ConsoleLog.read(consoleLog(), run.from, to);
        crashLoop.exitedOnItsOwn(new CrashLoop.Exit(run.startNanos, System.nanoTime(), run.process.exitValue(),
                output));
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return -1; // read to the end
        }
    }

    /**
     * @param options JVM options added to {@link #JAVA_OPTS} from the next start on, e.g.
     *        {@code -Dnpu.lifecycle.plantedBug=memory-leak} (no spaces inside one option)
     */
    void extraJavaOptions(String options) {
        this.extraJavaOptions = options == null ? "" : options.trim();
    }

    /** @return the JVM options added to {@link #JAVA_OPTS}, empty when none */
    String extraJavaOptions() {
        return extraJavaOptions;
    }

    /** Stops the runtime (SIGTERM, then SIGKILL after 20 s). */
    public synchronized void stop() {
        Run r = current;
        if (r != null) {
            if (r.process.alive()) {
                r.endedByHarness = true;
            }
            r.process.stop(STOP_GRACE);
        }
    }

    /** Kills the runtime at once (SIGKILL), as a crash would. */
    public synchronized void kill() {
        Run r = current;
        if (r != null) {
            if (r.process.alive()) {
                r.endedByHarness = true;
            }
            r.process.kill();
        }
    }

    /** @return whether the process runs */
    public boolean alive() {
        Run r = current;
        return r != null && r.process.alive();
    }

    /**
     * @return the failure when the runtime keeps exiting on its own without reaching ready ({@link CrashLoop}),
     *         else null
     */
    CrashLoopException crashLoop() {
        return crashLoop.failure();
    }

    /** @return how many exits in a row, on its own and without reaching ready, count towards a crash loop now */
    int exitsInARow() {
        return crashLoop.exitsInARow();
    }

    /** @return the process id of the running JVM (the launcher execs java), or -1 when none runs */
    public long pid() {
        Run r = current;
        return r != null && r.process.alive() ? r.process.pid() : -1;
    }

    /** @return whether {@link #stop()} or {@link #kill()} was called on the running JVM, which has not exited yet */
    public boolean stopping() {
        Run r = current;
        return r != null && r.endedByHarness && r.process.alive();
    }

    /**
     * @param pid a process id
     * @return its resident memory, {@code VmRSS} of {@code /proc/<pid>/status}, in KiB; -1 when the process is gone,
     *         has no such line (a kernel thread, a zombie) or {@code /proc} cannot be read
     */
    static long residentKiB(long pid) {
        if (pid <= 0) {
            return -1;
        }
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    // "VmRSS:\t  123456 kB"
                    String v = line.substring("VmRSS:".length()).trim();
                    int sp = v.indexOf(' ');
                    return Long.parseLong(sp < 0 ? v : v.substring(0, sp));
                }
            }
            return -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** @return how many times it was started */
    public synchronized int starts() {
        return starts;
    }

    /** @return what messages call it, e.g. {@code node-0} */
    public String name() {
        return name;
    }

    /** @return the runtime home */
    public Path home() {
        return home;
    }
}
