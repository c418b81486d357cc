package io.npulifecycle.probe.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/**
 * Runs {@code npu-smi info} (default {@code /var/lib/Ascend/driver/tools/npu-smi info} with
 * {@code LD_LIBRARY_PATH=/var/lib/Ascend/driver/lib64/driver:/var/lib/Ascend/driver/lib64/common}, DESIGN.md) with
 * stdin closed, stderr merged into stdout, the output read up to a cap, and a hard wall-clock timeout after which the
 * whole process tree is killed (DESIGN.md trap: npu-smi can hang or prompt). The output goes to {@link NpuSmiParser}.
 *
 * <p>Environment: npu-smi never inherits the runtime's environment, which holds secrets such as
 * {@code NPU_LIFECYCLE_JOLOKIA_PASSWORD} that a child process must not see; it gets exactly {@value #MINIMAL_PATH} as
 * {@code PATH}, {@code LANG=C}, and the configured {@code npuSmiEnvironment} entries (which may override those two).
 *
 * <p>Process tree: when {@code setsid} exists ({@code /usr/bin/setsid} or {@code /bin/setsid}), npu-smi is started as
 * {@code setsid -w npu-smi ...} in a new session whose id is the pid of the started process; at the end of every probe
 * (normal exit, time-out, output over the cap, interrupt) every process of that session and every descendant seen
 * while the parent was alive (polled every {@value #SNAPSHOT_MS} ms) is killed. A background child that keeps stdout
 * open is killed as soon as npu-smi itself has exited, which closes the pipe: otherwise it would hold the probe past
 * its timeout and be left behind, reparented to pid 1; a descendant that leaves the session itself ({@code setsid}
 * of its own) after the last snapshot cannot be found.
 *
 * <p>Outcomes: start failure or exit 126/127 (binary missing or not executable) = probe error; time-out = strike or
 * probe error per {@link ProbeOptions#timeoutIsFailure()}; output over the cap = probe error
 * ({@code npu-smi printed more than N bytes}, the process tree killed at once, never a strike even when the endless
 * output would have lasted past the timeout); else the parser decides.
 *
 * <p>Time: the deadline is a real-process wall-clock limit held by {@link CompletableFuture#completeOnTimeout}, not
 * simulated {@code TimeSource} time (a scaled clock must not shorten the time a real binary gets).
 */
public final class NpuSmiProbe implements ChipProbe {

    /** {@code PATH} given to npu-smi. */
    public static final String MINIMAL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** How often the descendants of a running npu-smi are recorded, ms. */
    static final long SNAPSHOT_MS = 20;

    private static final System.Logger LOG = System.getLogger(NpuSmiProbe.class.getName());

    private final List<String> command;
    private final Map<String, String> environment;
    private final int maxBytes;
    private final ProbeOptions options;
    private final Path setsid;

    /**
     * @param command the command and its arguments, e.g. {@code [/var/lib/Ascend/driver/tools/npu-smi, info]}
     * @param environment the configured {@code npuSmiEnvironment} entries, added to the minimal environment
     * @param maxBytes output cap in bytes ({@code maxOutputBytes}, default {@link NpuSmiParser#DEFAULT_MAX_BYTES});
     *        more is a probe error
     * @param options classification switches
     * @throws IllegalArgumentException if {@code command} is empty or {@code maxBytes < 1}
     */
    public NpuSmiProbe(List<String> command, Map<String, String> environment, int maxBytes, ProbeOptions options) {
        this(command, environment, maxBytes, options, findSetsid());
    }

    /**
     * @param setsid path of {@code setsid}, or {@code null} to start npu-smi directly (then only descendants seen
     *        while npu-smi was alive are killed)
     */
    NpuSmiProbe(List<String> command, Map<String, String> environment, int maxBytes, ProbeOptions options, Path setsid) {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("empty npu-smi command");
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be >= 1, got " + maxBytes);
        }
        this.command = List.copyOf(command);
        this.environment = Map.copyOf(environment);
        this.maxBytes = maxBytes;
        this.options = options;
        this.setsid = setsid;
    }

    private static Path findSetsid() {
        for (String s : new String[] {"/usr/bin/setsid", "/bin/setsid"}) {
            Path p = Path.of(s);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    @Override
    public String method() {
        return "npu-smi";
    }

    /** @return the output cap, bytes */
    public int maxBytes() {
        return maxBytes;
    }

    /**
     * The exact environment npu-smi runs with.
     *
     * @param configured the {@code npuSmiEnvironment} entries
     * @return {@code PATH}, {@code LANG=C}, then the configured entries (overriding)
     */
    static Map<String, String> environment(Map<String, String> configured) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", MINIMAL_PATH);
        env.put("LANG", "C");
        env.putAll(configured);
        return env;
    }

    @Override
    public ProbeResult probe(Duration timeout) {
        List<String> cmd = new ArrayList<>();
        if (setsid != null) {
            cmd.add(setsid.toString());
            cmd.add("-w"); // wait and pass the exit code on if setsid had to fork
        }
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(environment(environment));
        Process p;
        try {
            p = pb.start();
        } catch (IOException | RuntimeException e) {
            return ProbeResult.whole(Classification.PROBE_ERROR,
                    "cannot run npu-smi " + String.join(" ", command) + ": " + e.getMessage(), null);
        }
        Set<ProcessHandle> seen = ConcurrentHashMap.newKeySet();
        try {
            return run(p, timeout, seen);
        } finally {
            killTree(p, seen);
        }
    }

    private ProbeResult run(Process p, Duration timeout, Set<ProcessHandle> seen) {
        try {
            p.getOutputStream().close(); // stdin closed: a prompt reads EOF
        } catch (IOException ignored) {
            // nothing to close
        }
        Capture capture = new Capture(p.getInputStream(), maxBytes);
        Thread reader = new Thread(capture, "npu-smi-output-" + p.pid());
        reader.setDaemon(true);
        reader.start();
        CompletableFuture<String> end = new CompletableFuture<>();
        capture.overflow.thenRun(() -> end.complete("overflow"));
        p.onExit().thenCombine(capture.eof, (a, b) -> end.complete("exit"));
        end.completeOnTimeout("timeout", Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        boolean exitKilled = false;
        String why;
        try {
            while (true) {
                if (p.isAlive()) {
                    p.descendants().forEach(seen::add);
                } else if (!exitKilled) {
                    exitKilled = true; // npu-smi is done: whatever still holds the pipe is a leftover child
                    killLeftovers(p, seen);
                }
                try {
                    why = end.get(SNAPSHOT_MS, TimeUnit.MILLISECONDS);
                    break;
                } catch (TimeoutException notYet) {
                    // poll again
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ProbeResult.whole(Classification.PROBE_ERROR, "interrupted while waiting for npu-smi", null);
        } catch (ExecutionException e) {
            why = "exit";
        }
        if ("overflow".equals(why)) {
            killTree(p, seen);
            String msg = "npu-smi printed more than " + maxBytes + " bytes; process tree killed";
            LOG.log(Level.WARNING, msg);
            return ProbeResult.whole(Classification.PROBE_ERROR, msg, NpuSmiParser.cut(capture.text()));
        }
        if ("timeout".equals(why)) {
            killTree(p, seen);
            String msg = "npu-smi did not answer within " + timeout.toMillis() + " ms; process tree killed";
            LOG.log(Level.WARNING, msg);
            return ProbeResult.whole(options.timeoutIsFailure() ? Classification.FAILED : Classification.PROBE_ERROR,
                    msg, NpuSmiParser.cut(capture.text()));
        }
        int exit = p.exitValue();
        String text = capture.text();
        if (exit == 126 || exit == 127) {
            return ProbeResult.whole(Classification.PROBE_ERROR, "npu-smi binary " + command.get(0)
                    + " missing or not executable (exit " + exit + ")", NpuSmiParser.cut(text));
        }
        return NpuSmiParser.parse(text, exit, options);
    }

    /**
     * Kills npu-smi, every descendant recorded while it was alive, its current descendants and (with setsid) every
     * process of its session.
     */
    private void killTree(Process p, Set<ProcessHandle> seen) {
        List<ProcessHandle> tree = new ArrayList<>();
        if (p.isAlive()) {
            p.descendants().forEach(tree::add); // before the parent dies and they are re-parented
        }
        tree.addAll(seen);
        if (setsid != null) {
            tree.addAll(sessionMembers(p.pid()));
        }
        p.destroyForcibly();
        kill(tree);
    }

    /**
     * Kills what npu-smi left behind once it has exited (its recorded descendants and, with setsid, the rest of its
     * session), but not npu-smi's {@link Process} itself: {@code Process.destroyForcibly()} also closes the output
     * stream, and right after the exit the JDK may not have handed the remaining output to the reader yet, which then
     * saw an empty output ("npu-smi printed nothing", a probe error) on a loaded machine (docs/benchmarks.md).
     */
    void killLeftovers(Process p, Set<ProcessHandle> seen) {
        List<ProcessHandle> tree = new ArrayList<>(seen);
        if (p.isAlive()) {
            p.descendants().forEach(tree::add);
        }
        if (setsid != null) {
            tree.addAll(sessionMembers(p.pid()));
        }
        tree.removeIf(h -> h.pid() == p.pid());
        kill(tree);
    }

    private static void kill(List<ProcessHandle> tree) {
        for (ProcessHandle h : tree) {
            if (h.pid() != ProcessHandle.current().pid()) {
                h.destroyForcibly();
            }
        }
    }

    /**
     * @param sid a session id
     * @return the live processes of that session, read from {@code /proc/<pid>/stat} (empty where there is no /proc)
     */
    static List<ProcessHandle> sessionMembers(long sid) {
        List<ProcessHandle> out = new ArrayList<>();
        ProcessHandle.allProcesses().forEach(h -> {
            try {
                String stat = Files.readString(Path.of("/proc", String.valueOf(h.pid()), "stat"),
                        StandardCharsets.ISO_8859_1);
                // pid (comm) state ppid pgrp session ... ; comm may hold spaces and parentheses
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                if (f.length > 3 && Long.parseLong(f[3]) == sid) {
                    out.add(h);
                }
            } catch (IOException | RuntimeException gone) {
                // exited meanwhile, or no /proc
            }
        });
        return out;
    }

    /** Reads the output up to the cap; past the cap it stops reading and reports the overflow at once. */
    private static final class Capture implements Runnable {
        private final InputStream in;
        private final int max;
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final CompletableFuture<Void> overflow = new CompletableFuture<>();
        final CompletableFuture<Void> eof = new CompletableFuture<>();

        Capture(InputStream in, int max) {
            this.in = in;
            this.max = max;
        }

        @Override
        public void run() {
            byte[] chunk = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(chunk)) >= 0) {
                    synchronized (buf) {
                        int room = max - buf.size();
                        buf.write(chunk, 0, Math.min(room, n));
                        if (n > room) {
                            overflow.complete(null);
                            return; // stop reading: the caller kills the tree
                        }
                    }
                }
                eof.complete(null);
            } catch (IOException e) {
                eof.complete(null); // stream closed by the kill
            }
        }

        String text() {
            synchronized (buf) {
                return buf.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
