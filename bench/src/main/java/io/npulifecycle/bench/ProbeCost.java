package io.npulifecycle.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.probe.internal.DcmiProbe;
import io.npulifecycle.probe.internal.NpuSmiParser;
import io.npulifecycle.probe.internal.NpuSmiProbe;
import io.npulifecycle.probe.internal.ProbeOptions;

/**
 * One probe-cost measurement in its own JVM (started by {@link BenchMain} with the node agent's JVM options): runs the
 * production probe class ({@link NpuSmiProbe} or {@link DcmiProbe}) in cycles against an emulated host and prints the
 * CPU time per cycle of this process (every thread: probe, helper and reader threads, JIT, GC) plus, for npu-smi, of
 * its reaped child processes ({@code /proc/self/stat} cutime + cstime).
 *
 * <p>Usage: {@code ProbeCost npu-smi|dcmi <host folder> <warm-up cycles> <measured cycles>}. Prints
 * {@code cpu_ns_per_cycle=<n> children_cpu_ns_per_cycle=<n> wall_ns_per_cycle=<n> chips=<n>}.
 */
public final class ProbeCost {

    private ProbeCost() {
    }

    /**
     * @param args method, host folder, warm-up cycles, measured cycles
     * @throws Exception on a setup error (reported by the caller with this JVM's output)
     */
    public static void main(String[] args) throws Exception {
        String method = args[0];
        Path host = Path.of(args[1]);
        int warm = Integer.parseInt(args[2]);
        int n = Integer.parseInt(args[3]);
        ChipProbe probe = "dcmi".equals(method)
                ? new DcmiProbe(host.resolve("lib/libdcmi.so").toString(), ProbeOptions.DEFAULTS)
                : new NpuSmiProbe(List.of(host.resolve("bin/npu-smi").toString(), "info"), Map.of(),
                        NpuSmiParser.DEFAULT_MAX_BYTES, ProbeOptions.DEFAULTS);
        Duration timeout = Duration.ofSeconds(20);
        int chips = 0;
        for (int i = 0; i < warm; i++) {
            chips = check(probe.probe(timeout));
        }
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long c0 = os.getProcessCpuTime();
        long k0 = childrenCpuNs();
        long w0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            chips = check(probe.probe(timeout));
        }
        long w1 = System.nanoTime();
        long c1 = os.getProcessCpuTime();
        long k1 = childrenCpuNs();
        System.out.println("cpu_ns_per_cycle=" + (c1 - c0) / n + " children_cpu_ns_per_cycle=" + (k1 - k0) / n
                + " wall_ns_per_cycle=" + (w1 - w0) / n + " chips=" + chips);
        if (probe instanceof DcmiProbe) {
            ((DcmiProbe) probe).close();
        }
    }

    private static int check(ProbeResult r) {
        if (r.outcome() != null || r.chips().isEmpty()) {
            throw new IllegalStateException("the probe did not read the emulated chips: " + r.outcome() + " "
                    + r.error());
        }
        return r.chips().size();
    }

    /** @return CPU time of this process's reaped children (cutime + cstime of /proc/self/stat), in ns */
    static long childrenCpuNs() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // after ") ": field 3 (state) is f[0]; cutime is field 16, cstime field 17
        long ticks = Long.parseLong(f[13]) + Long.parseLong(f[14]);
        return ticks * 1_000_000_000L / 100; // USER_HZ is 100 on Linux
    }
}
