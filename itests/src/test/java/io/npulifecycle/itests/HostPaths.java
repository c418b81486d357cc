package io.npulifecycle.itests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Keeps a test runtime off the host: the node agent's defaults are host paths ({@code /run/npu-operator},
 * {@code /var/lib/npu-operator}, {@code /proc/modules}, the kernel's boot id), which every runtime of a machine would
 * share. These {@code etc/} files point them into a test folder.
 */
public final class HostPaths {

    private HostPaths() {
    }

    /**
     * @param dir a test folder for the emulated host
     * @return {@code etc/} file name to content: markers, rebooter and driver configuration
     */
    public static Map<String, String> etcFiles(Path dir) {
        try {
            Path run = Files.createDirectories(dir.resolve("run-npu-operator"));
            Path varLib = Files.createDirectories(dir.resolve("var-lib-npu-operator"));
            Path bootId = dir.resolve("boot_id");
            if (!Files.exists(bootId)) {
                Files.writeString(bootId, java.util.UUID.randomUUID() + "\n");
            }
            Path modules = dir.resolve("proc-modules");
            if (!Files.exists(modules)) {
                Files.writeString(modules, "");
            }
            Map<String, String> m = new LinkedHashMap<>();
            m.put("io.npulifecycle.markers.cfg", "folder=" + run + "\nbootIdPath=" + bootId + "\n");
            m.put("io.npulifecycle.rebooter.cfg", "stateDir=" + varLib + "\n");
            m.put("io.npulifecycle.driver.cfg", "stateDir=" + varLib + "\nprocModules=" + modules + "\n");
            return m;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Writes {@link #etcFiles(Path)} into {@code home/etc/} (files already there are kept).
     *
     * @return the folder of the emulated host's markers
     */
    public static Path isolate(Path home, Path dir) {
        try {
            Path etc = Files.createDirectories(home.resolve("etc"));
            for (Map.Entry<String, String> e : etcFiles(dir).entrySet()) {
                if (!Files.exists(etc.resolve(e.getKey()))) {
                    Files.writeString(etc.resolve(e.getKey()), e.getValue());
                }
            }
            return dir.resolve("run-npu-operator");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
