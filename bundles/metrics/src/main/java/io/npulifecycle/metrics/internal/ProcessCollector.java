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
 * third of a node agent's scrape allocation. A value the platform does not give (no {@code /proc}, not Unix) leaves
 * its series out.
 */
final class ProcessCollector implements MultiCollector {

    private static final Path STATUS = Path.of("/proc/self/status");

    private final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    private final double startTimeSeconds = ManagementFactory.getRuntimeMXBean().getStartTime() / 1000.0;

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
            out.add(gauge("process_open_fds", "Number of open file descriptors.", null,
                    unix.getOpenFileDescriptorCount()));
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
