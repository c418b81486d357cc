package io.npulifecycle.probe.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/**
 * Runs {@code npu-smi info} (default {@code /var/lib/Ascend/driver/tools/npu-smi info} with
 * {@code LD_LIBRARY_PATH=/var/lib/Ascend/driver/lib64/driver:/var/lib/Ascend/driver/lib64/common}, DESIGN.md) with
 * stdin closed, stderr merged into stdout, the output read up to a cap, and a hard wall-clock timeout after which the
 * whole process tree is killed (DESIGN.md trap: npu-smi can hang or prompt). The output goes to {@link NpuSmiParser}.
 *
 * <p>Outcomes: start failure or exit 126/127 (binary missing or not executable) = probe error; time-out = strike or
 * probe error per {@link ProbeOptions#timeoutIsFailure()}; output over the cap = probe error; else the parser decides.
 */
public final class NpuSmiProbe implements ChipProbe {

    private static final System.Logger LOG = System.getLogger(NpuSmiProbe.class.getName());
    /** How long to wait for the output pipe to drain after the process ended (grandchildren may hold it). */
    private static final long DRAIN_MS = 2000;

    private final List<String> command;
    private final Map<String, String> environment;
    private final int maxBytes;
    private final ProbeOptions options;

    /**
     * @param command the command and its arguments, e.g. {@code [/var/lib/Ascend/driver/tools/npu-smi, info]}
     * @param environment variables added to the runtime's environment
     * @param maxBytes output cap in bytes (default {@link NpuSmiParser#DEFAULT_MAX_BYTES}); more is a probe error
     * @param options classification switches
     */
    public NpuSmiProbe(List<String> command, Map<String, String> environment, int maxBytes, ProbeOptions options) {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("empty npu-smi command");
        }
        this.command = List.copyOf(command);
        this.environment = Map.copyOf(environment);
        this.maxBytes = maxBytes;
        this.options = options;
    }

    @Override
    public String method() {
        return "npu-smi";
    }

    @Override
    public ProbeResult probe(Duration timeout) {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(environment);
        Process p;
        try {
            p = pb.start();
        } catch (IOException | RuntimeException e) {
            return ProbeResult.whole(Classification.PROBE_ERROR,
                    "cannot run npu-smi " + String.join(" ", command) + ": " + e.getMessage(), null);
        }
        try {
            p.getOutputStream().close(); // stdin closed: a prompt reads EOF
        } catch (IOException ignored) {
            // nothing to close
        }
        Capture capture = new Capture(p.getInputStream(), maxBytes);
        Thread reader = new Thread(capture, "npu-smi-output-" + p.pid());
        reader.setDaemon(true);
        reader.start();
        boolean exited;
        try {
            exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            killTree(p);
            return ProbeResult.whole(Classification.PROBE_ERROR, "interrupted while waiting for npu-smi", null);
        }
        if (!exited) {
            killTree(p);
            join(reader);
            String msg = "npu-smi did not answer within " + timeout.toMillis() + " ms; process tree killed";
            LOG.log(Level.WARNING, msg);
            return ProbeResult.whole(options.timeoutIsFailure() ? Classification.FAILED : Classification.PROBE_ERROR,
                    msg, NpuSmiParser.cut(capture.text()));
        }
        join(reader);
        if (reader.isAlive()) {
            killTree(p); // a grandchild keeps the pipe open
            join(reader);
        }
        int exit = p.exitValue();
        String text = capture.text();
        if (exit == 126 || exit == 127) {
            return ProbeResult.whole(Classification.PROBE_ERROR, "npu-smi binary " + command.get(0)
                    + " missing or not executable (exit " + exit + ")", NpuSmiParser.cut(text));
        }
        if (capture.overflow) {
            return ProbeResult.whole(Classification.PROBE_ERROR,
                    "npu-smi output exceeds " + maxBytes + " bytes", NpuSmiParser.cut(text));
        }
        return NpuSmiParser.parse(text, exit, options);
    }

    private static void killTree(Process p) {
        List<ProcessHandle> tree = p.descendants().toList(); // before the parent dies and they are re-parented
        p.destroyForcibly();
        for (ProcessHandle h : tree) {
            h.destroyForcibly();
        }
    }

    private static void join(Thread t) {
        try {
            t.join(DRAIN_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reads the output up to a cap, then drains and discards the rest so the process never blocks on a full pipe. */
    private static final class Capture implements Runnable {
        private final InputStream in;
        private final int max;
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        private volatile boolean overflow;

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
                        if (n > room) {
                            overflow = true;
                        }
                        if (room > 0) {
                            buf.write(chunk, 0, Math.min(room, n));
                        }
                    }
                }
            } catch (IOException e) {
                // stream closed by the kill
            }
        }

        String text() {
            synchronized (buf) {
                return buf.toString(java.nio.charset.StandardCharsets.UTF_8);
            }
        }
    }
}
