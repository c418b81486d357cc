package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.npulifecycle.simulator.common.LoopbackPorts;

import org.jolokia.json.JSONArray;

/**
 * One emulated NPU node of the simulated cluster: its host folders (the simulator's state, {@code /run/npu-operator},
 * {@code /var/lib/npu-operator}) and its node-agent runtime, started as the driver pod's container would be, with
 * {@code NODE_NAME} and {@code DRIVER_VERSION} (from the pod's image) in the environment.
 */
public final class SimNode implements ScenarioNode {

    private final String name;
    private final Path root;
    private final int port;
    private final int metricsPort;
    private final Jolokia jolokia;
    private final RuntimeProcess runtime;
    /** The cluster's client for the node agent's {@code /metrics} (one per cluster: each client has threads). */
    private final java.net.http.HttpClient metricsClient;
    private volatile String podVersion;
    private final SimSettings settings;
    private long clockOffsetMillis;
    private volatile boolean tmpfs;
    /** Marker folders mounted by this JVM, unmounted by the shutdown hook if the harness is cancelled. */
    private static final java.util.Set<Path> MOUNTS = java.util.concurrent.ConcurrentHashMap.newKeySet();

    SimNode(String name, Path root, Path install, int port, String user, String password, String masterUrl,
            SimSettings settings, boolean kubeconfig, java.net.http.HttpClient metricsClient) throws IOException {
        this.name = name;
        this.metricsClient = java.util.Objects.requireNonNull(metricsClient, "metricsClient");
        this.root = root;
        this.port = port;
        this.settings = settings;
        this.clockOffsetMillis = settings.wallOffsetMillis();
        Path home = root.resolve("home");
        Path etc = Files.createDirectories(home.resolve("etc"));
        Path sim = root.resolve("simulator");
        Path run = Files.createDirectories(root.resolve("run-npu-operator"));
        Path varLib = Files.createDirectories(root.resolve("var-lib-npu-operator"));
        // the emulated host has a boot id before any node agent starts, like a real one
        Files.createDirectories(sim);
        if (!Files.exists(sim.resolve("boot_id"))) {
            write(sim.resolve("boot_id"), java.util.UUID.randomUUID() + "\n");
        }
        this.metricsPort = LoopbackPorts.shared().allocate();
        write(etc.resolve("runtime.properties"), "http.host=127.0.0.1\nhttp.port=" + port + "\nmetrics.port="
                + metricsPort + "\nlog.level=" + settings.logLevel() + "\n");
        write(etc.resolve("io.npulifecycle.time.cfg"), settings.timeConfig());
        write(etc.resolve("io.npulifecycle.simulator.cfg"), "stateDir=" + sim + "\nmarkersFolder=" + run
                + "\nchipType=" + settings.chipType() + "\nnpus=" + settings.npus() + "\nchipsPerNpu="
                + settings.chipsPerNpu() + "\ndriverVersion=" + settings.installedVersion()
                + "\nrestartMode=framework\n");
        write(etc.resolve("io.npulifecycle.markers.cfg"), "folder=" + run + "\nbootIdPath=" + sim.resolve("boot_id")
                + "\n");
        // the operator pins the node's chips, so a chip that is already dead after a reboot still counts
        StringBuilder chips = new StringBuilder();
        for (int n = 0; n < settings.npus(); n++) {
            for (int c = 0; c < settings.chipsPerNpu(); c++) {
                chips.append(chips.length() == 0 ? "" : ",").append(n).append(':').append(c);
            }
        }
        write(etc.resolve("io.npulifecycle.probe.cfg"), "npuSmiCommand=" + sim.resolve("bin/npu-smi")
                + "\nexpectedChips=" + chips + "\ndriverModulesFile=" + sim.resolve("proc-modules") + "\n");
        write(etc.resolve("io.npulifecycle.driver.cfg"), "procModules=" + sim.resolve("proc-modules")
                + "\nstateDir=" + varLib + "\n");
        write(etc.resolve("io.npulifecycle.rebooter.cfg"), "stateDir=" + varLib + "\n");
        write(etc.resolve("io.npulifecycle.kube.node.cfg"), "nodeName=" + name + "\nstateDir=" + varLib + "\n");
        // on a real API server the agent authenticates with its driver pod's token, written before each start
        String kube = RuntimeCredentials.kubeConfiguration(kubeconfig ? kubeconfig() : null);
        if (kube != null) {
            write(etc.resolve("io.npulifecycle.kube.cfg"), kube);
        }
        Map<String, String> env = new HashMap<>();
        env.put("NPU_LIFECYCLE_JOLOKIA_USER", user);
        env.put("NPU_LIFECYCLE_JOLOKIA_PASSWORD", password);
        env.put("NPU_LIFECYCLE_KUBE_MASTER", masterUrl);
        env.put("NODE_NAME", name);
        this.runtime = new RuntimeProcess(name, install, "node", home, env, CrashLoop.NODE_AGENT_EXITS);
        this.jolokia = new Jolokia(port, user, password);
    }

    static void write(Path file, String content) throws IOException {
        Files.writeString(file, content, StandardCharsets.UTF_8);
    }

    /** Writes a file FileInstall watches: a temporary name it ignores, then an atomic rename. */
    static void writeAtomically(Path file, String content) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /** @return the node agent's kubeconfig on a real API server ({@link RuntimeCredentials#writeNodeAgent}) */
    public Path kubeconfig() {
        return root.resolve("home/kubeconfig");
    }

    /** @return the emulated {@code /run/npu-operator} */
    public Path markersFolder() {
        return root.resolve("run-npu-operator");
    }

    /**
     * Moves this node's wall clock by {@code delta} (NTP step, an operator fixing the clock): PID
     * {@code io.npulifecycle.time} key {@code wallOffsetMillis}, applied in place by the running clock; monotonic time
     * is not affected. The offset stays for later agent restarts, as a host's clock would.
     *
     * @param delta simulated time, negative = back
     * @throws IOException if the configuration cannot be written
     */
    @Override
    public synchronized void jumpClock(java.time.Duration delta) throws IOException {
        clockOffsetMillis += delta.toMillis();
        writeAtomically(root.resolve("home/etc/io.npulifecycle.time.cfg"), settings.timeConfig(clockOffsetMillis));
    }

    /**
     * Mounts a 1 MiB tmpfs on the marker folder (as {@code /run/npu-operator} is on a host) before the agent starts.
     *
     * @throws IOException when it cannot be mounted (needs root / CAP_SYS_ADMIN), with mount's message
     */
    void mountMarkersTmpfs() throws IOException {
        run("mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "npu-sim-markers", markersFolder().toString());
        MOUNTS.add(markersFolder());
        tmpfs = true;
    }

    /** Unmounts the marker folder's tmpfs (lazily, even if busy). */
    void unmountMarkers() {
        if (tmpfs && MOUNTS.remove(markersFolder())) {
            try {
                run("umount", "-l", markersFolder().toString());
            } catch (IOException e) {
                // best effort at shutdown
            }
        }
    }

    /** Unmounts every marker tmpfs this JVM mounted (shutdown hook). */
    static void unmountAll() {
        for (Path p : java.util.List.copyOf(MOUNTS)) {
            try {
                run("umount", "-l", p.toString());
            } catch (IOException e) {
                // best effort
            }
            MOUNTS.remove(p);
        }
    }

    /**
     * Makes the marker folder read-only ({@code EROFS}) or writable again: a remount of its tmpfs.
     *
     * @param on read-only
     * @throws IOException if the folder is not on the harness's tmpfs or the remount fails
     */
    @Override
    public void markersReadOnly(boolean on) throws IOException {
        requireTmpfs();
        run("mount", "-o", "remount," + (on ? "ro" : "rw"), markersFolder().toString());
    }

    /**
     * Fills the marker folder's tmpfs to the last byte with a hidden ballast file (readers ignore names starting with
     * a dot), so every marker write fails with {@code ENOSPC}; {@code false} deletes the ballast.
     *
     * @param on full
     * @throws IOException if the folder is not on the harness's tmpfs
     */
    @Override
    public void markersFull(boolean on) throws IOException {
        requireTmpfs();
        Path ballast = markersFolder().resolve(".sim-ballast");
        if (!on) {
            Files.deleteIfExists(ballast);
            return;
        }
        byte[] block = new byte[4096];
        try (var out = Files.newOutputStream(ballast, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND)) {
            for (int i = 0; i < 1024; i++) { // at most 4 MiB; the tmpfs holds 1 MiB
                out.write(block);
                out.flush();
            }
        } catch (IOException full) {
            if (!String.valueOf(full.getMessage()).contains("No space left")) {
                throw full;
            }
            return; // full
        }
        throw new IOException("the marker folder " + markersFolder() + " did not fill up (is it on the 1 MiB tmpfs?)");
    }

    private void requireTmpfs() throws IOException {
        if (!tmpfs) {
            throw new IOException("the marker folder of " + name + " is not on a harness tmpfs (the scenario runner "
                    + "mounts one when a scenario uses markersReadOnly or markersFull)");
        }
    }

    private static void run(String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        try {
            if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no answer in 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", cmd), e);
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + out
                    + " (needs root / CAP_SYS_ADMIN)");
        }
    }

    /**
     * Drivers installed on this host: the node agent runs with {@code mode=host} (never stages nor loads) and the
     * emulated host loads its installed driver at every boot by itself ({@code loadAtBoot=true}); before the first
     * {@link #startAgent(String)}.
     *
     * @throws IOException when the configuration cannot be written
     */
    public void hostDrivers() throws IOException {
        Path etc = root.resolve("home/etc");
        write(etc.resolve("io.npulifecycle.driver.cfg"), Files.readString(etc.resolve("io.npulifecycle.driver.cfg"))
                + "mode=host\n");
        write(etc.resolve("io.npulifecycle.simulator.cfg"), Files.readString(etc.resolve("io.npulifecycle.simulator.cfg"))
                + "loadAtBoot=true\n");
    }

    /**
     * Starts (or restarts) the node agent as the container of a driver pod carrying {@code version}.
     *
     * @param version the driver version of the pod (its {@code DRIVER_VERSION})
     *
     * @throws IOException if the process cannot start
     */
    public synchronized void startAgent(String version) throws IOException {
        runtime.stop();
        podVersion = version;
        runtime.start(Map.of("DRIVER_VERSION", version));
    }

    /** Stops the node agent (the pod is gone). */
    public synchronized void stopAgent() {
        runtime.stop();
    }

    /** SIGKILLs the node agent; the harness restarts it as kubelet would. */
    @Override
    public void killAgent() {
        runtime.kill();
    }

    /** @return the version of the driver pod the agent was started from, or {@code null} */
    public String podVersion() {
        return podVersion;
    }

    /** @return the node name */
    @Override
    public String name() {
        return name;
    }

    /** @return the node's Jolokia client */
    @Override
    public Jolokia jolokia() {
        return jolokia;
    }

    /** @return the node agent's {@code /metrics} URL (its own listener, {@code metrics.port}) */
    public String metricsUrl() {
        return "http://127.0.0.1:" + metricsPort + "/metrics";
    }

    /** @return the loopback port of the node agent's {@code /metrics} */
    public int metricsPort() {
        return metricsPort;
    }

    /** @return the node's HTTP port */
    public int port() {
        return port;
    }

    /** @return the agent process */
    public RuntimeProcess runtime() {
        return runtime;
    }

    /**
     * The node agent's JVM and its resident memory. Whether it has probed in this process and boot is asked of its
     * {@code /metrics} (a sample {@value #PROBE_COUNT} above 0; the framework restarted by a simulated reboot counts
     * again from 0) until the answer is yes, then remembered; the runtimes log at WARN in scenarios, so the log's
     * {@code health-watch first probe completed} line is not there to read. The boot is the emulated host's reboot
     * count, read before and after the reading: a reboot pending (the framework going down), or one that took effect
     * in between, makes the reading a {@code stopping} one.
     */
    @Override
    public AgentProcess agentProcess() {
        long pid = runtime.pid();
        if (pid < 0) {
            return AgentProcess.UNKNOWN;
        }
        Properties before = hostState();
        int boot = Integer.parseInt(before.getProperty("reboots", "0"));
        String run = pid + "/" + boot;
        if (!run.equals(probedRun) && probedOnce() && runtime.pid() == pid) {
            probedRun = run;
        }
        long rss = RuntimeProcess.residentKiB(pid);
        Properties after = hostState();
        // asked after the reading: a reading not marked stopping was taken before the harness signalled the process
        boolean stopping = runtime.stopping() || "true".equals(before.getProperty("rebootPending"))
                || "true".equals(after.getProperty("rebootPending"))
                || !before.getProperty("reboots", "0").equals(after.getProperty("reboots", "0"));
        return new AgentProcess(pid, boot, rss, run.equals(probedRun), stopping);
    }

    /** The histogram of the health-watch's probe runs, its count sample: one per probe. */
    static final String PROBE_COUNT = "npu_lifecycle_probe_duration_seconds_count";

    /** {@code <pid>/<boot>} of the node agent seen to have probed ({@link #agentProcess}), or null. */
    private volatile String probedRun;


    /** @return whether the agent's {@code /metrics} answers with a probe count above 0; false when it does not answer */
    private boolean probedOnce() {
        try {
            var r = metricsClient.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(metricsUrl()))
                    .timeout(java.time.Duration.ofSeconds(2)).GET().build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return false;
            }
            for (PrometheusText.Sample x : PrometheusText.parse(r.body())) {
                if (x.name().equals(PROBE_COUNT) && x.value() > 0) {
                    return true;
                }
            }
            return false;
        } catch (IOException | IllegalArgumentException e) {
            return false; // not listening yet (starting), or a page cut short
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** @return the node's folder (home, simulator, markers, state) */
    @Override
    public Path root() {
        return root;
    }

    /** @return the simulator's generated npu-smi */
    public Path npuSmi() {
        return root.resolve("simulator/bin/npu-smi");
    }

    /** @return the driver version loaded in the emulated kernel, or {@code null} */
    public String loadedVersion() {
        String v = hostState().getProperty("loadedVersion", "");
        return v.isBlank() ? null : v;
    }

    /**
     * Runs the node's npu-smi like the runbook's verification ({@code npu-smi info | head -2}).
     *
     * @return its first two lines
     */
    public String npuSmiHead() {
        try {
            Process p = new ProcessBuilder(npuSmi().toString(), "info").redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            String[] lines = out.split("\n", 3);
            return lines.length >= 2 ? lines[0] + "\n" + lines[1] : out;
        } catch (IOException e) {
            return "npu-smi: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** @return the chips the health-watch expects, e.g. {@code 0:0,1:0}, or empty */
    public String expectedChips() {
        Object v = jolokia.read("io.npulifecycle:type=HealthWatch", "ExpectedChips");
        return v == null ? "" : String.valueOf(v);
    }

    /** @return the wedged chips per the health-watch, or empty */
    public String wedgedChips() {
        Object v = jolokia.read("io.npulifecycle:type=HealthWatch", "WedgedChips");
        return v == null ? "" : String.valueOf(v);
    }

    /** @return the simulator's chips list ({@code N:M state}) */
    @SuppressWarnings("unchecked")
    public List<String> simChips() {
        Object v = jolokia.read(SIMULATOR, "Chips");
        return v instanceof JSONArray ? (List<String>) (List<?>) v : List.of();
    }
}
