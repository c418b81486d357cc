package io.npulifecycle.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads a process's memory from {@code /proc/<pid>/status} (VmRSS, VmHWM) and the machine's description. */
final class Proc {

    private Proc() {
    }

    /** @return {@code VmRSS} of the process in KiB, or -1 when it is gone */
    static long rssKib(long pid) {
        return statusKib(pid, "VmRSS:");
    }

    /** @return {@code RssAnon} (private anonymous memory) of the process in KiB, or -1 when it is gone */
    static long anonKib(long pid) {
        return statusKib(pid, "RssAnon:");
    }

    /** @return {@code VmHWM} (peak RSS) of the process in KiB, or -1 when it is gone */
    static long hwmKib(long pid) {
        return statusKib(pid, "VmHWM:");
    }

    private static long statusKib(long pid, String key) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith(key)) {
                    return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** @return {@code Threads} of the process, or -1 */
    static long threads(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("Threads:")) {
                    return Long.parseLong(line.substring(8).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** @return e.g. "2 cores (Intel(R) Xeon(R) ...), 23.5 GiB RAM" */
    static String machine() {
        String model = "unknown CPU";
        long memKib = -1;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    model = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    memKib = Long.parseLong(line.substring(9).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // keep what we have
        }
        return Runtime.getRuntime().availableProcessors() + " cores (" + model + "), "
                + String.format(java.util.Locale.ROOT, "%.1f GiB RAM", memKib / 1048576.0);
    }

    /** @return the 1, 5 and 15 minute load averages */
    static String load() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " / " + f[1] + " / " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
