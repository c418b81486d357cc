package io.npulifecycle.metrics.internal;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.sun.management.UnixOperatingSystemMXBean;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;

/**
 * The process metrics of the Prometheus client's {@code ProcessMetrics}, with its names, help texts and units:
 * {@code process_cpu_seconds_total}, {@code process_start_time_seconds}, {@code process_resident_memory_bytes}
 * ({@code VmRSS} of {@code /proc/self/status}), {@code process_open_fds}, {@code process_max_fds}. Read through the
 * exported {@code com.sun.management} interfaces: the client's collector calls the getters by reflection on the JDK's
 * internal implementation class, which on Java 17 throws (and catches) an {@code IllegalAccessException} per getter
 * and scrape, and reads {@code /proc/self/status} through a new 8 KiB buffer for each of two metrics; that made a
 * third of a node agent's scrape allocation. The open descriptors are the size Linux gives {@code /proc/self/fd}
 * (since Linux 6.2: the number of open descriptors, one {@code stat}), where the interface lists that directory
 * entry by entry at each scrape (7 % of the scraping thread's time with the runtime's 100 descriptors); the interface's
 * count where the size is 0 (older kernels). A value the platform does not give (no {@code /proc}, not Unix) leaves
 * its series out.
 */
final class ProcessCollector implements MultiCollector {

    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path FDS = Path.of("/proc/self/fd");

    private final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    private final double startTimeSeconds = ManagementFactory.getRuntimeMXBean().getStartTime() / 1000.0;
    /** Whether {@code /proc/self/fd} gives its size as the open descriptors (false after it once gave none). */
    private volatile boolean fdsBySize = true;

    @Override
    public MetricSnapshots collect() {
        List<MetricSnapshot> out = Families.list();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            long ns = sun.getProcessCpuTime();
            if (ns >= 0) {
                out.add(CounterSnapshot.builder().name("process_cpu_seconds")
                        .help("Total user and system CPU time spent in seconds.").unit(Unit.SECONDS)
                        .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(ns / 1e9).build())
                        .build());
            }
        }
        out.add(gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                Unit.SECONDS, startTimeSeconds));
        long rss = residentBytes();
        if (rss >= 0) {
            out.add(gauge("process_resident_memory_bytes", "Resident memory size in bytes.", Unit.BYTES, rss));
        }
        if (os instanceof UnixOperatingSystemMXBean unix) {
            out.add(gauge("process_open_fds", "Number of open file descriptors.", null, openFds(unix)));
            out.add(gauge("process_max_fds", "Maximum number of open file descriptors.", null,
                    unix.getMaxFileDescriptorCount()));
        }
        return new MetricSnapshots(out);
    }

    private static GaugeSnapshot gauge(String name, String help, Unit unit, double value) {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
        if (unit != null) {
            b.unit(unit);
        }
        return b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(value).build()).build();
    }

    /**
     * @param unix the interface counting by listing {@code /proc/self/fd}, used where the size is not the count
     * @return the open file descriptors of this process
     */
    private long openFds(UnixOperatingSystemMXBean unix) {
        if (fdsBySize) {
            long n = openFdsBySize(FDS);
            if (n > 0) {
                return n;
            }
            fdsBySize = false;
        }
        return unix.getOpenFileDescriptorCount();
    }

    /**
     * @param fds {@code /proc/<pid>/fd}
     * @return its size (Linux 6.2 and later: the process's open file descriptors; earlier: 0), or -1 when it cannot
     *         be read
     */
    static long openFdsBySize(Path fds) {
        try {
            return Files.size(fds);
        } catch (IOException | UnsupportedOperationException e) {
            return -1;
        }
    }

    /** @return {@code VmRSS} of {@code /proc/self/status} in bytes, or -1 when there is none */
    static long residentBytes() {
        String status;
        try {
            status = new String(Files.readAllBytes(STATUS), StandardCharsets.US_ASCII);
        } catch (IOException | UnsupportedOperationException e) {
            return -1;
        }
        return vmRssBytes(status);
    }

    /**
     * @param status the text of {@code /proc/<pid>/status}
     * @return its {@code VmRSS} in bytes (the file gives kB), or -1 when absent or not a number
     */
    static long vmRssBytes(String status) {
        int at = status.indexOf("\nVmRSS:");
        if (at < 0) {
            return -1;
        }
        int i = at + "\nVmRSS:".length();
        while (i < status.length() && (status.charAt(i) == ' ' || status.charAt(i) == '\t')) {
            i++;
        }
        long kb = 0;
        int digits = 0;
        for (; i < status.length() && Character.isDigit(status.charAt(i)); i++, digits++) {
            kb = kb * 10 + (status.charAt(i) - '0');
        }
        return digits == 0 ? -1 : kb * 1024;
    }
}
