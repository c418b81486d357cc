package io.npulifecycle.driver.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.npulifecycle.files.internal.DurableFiles;

/**
 * The driver version staged for the next boot, in the persistent state folder: {@value #STAGED} while it waits for the
 * reboot, renamed to {@value #CURRENT} by the first round of the next boot. Both are {@code key=value} lines with at
 * least {@code version} and {@code fromBootId} (the boot that staged it); a file without them counts as absent
 * (logged). Every change is atomic (a written and synced temporary file renamed over the old one, a rename for the
 * switch), so a power cut leaves the old file or the new one, never a torn one.
 */
final class DriverStaging {

    private static final System.Logger LOG = System.getLogger(DriverStaging.class.getName());
    /** The file of the version waiting for the next boot. */
    static final String STAGED = "driver-staged";
    /** The file of the version switched to at the last fresh boot. */
    static final String CURRENT = "driver-current";

    private final Path stateDir;

    /** @param stateDir the persistent host folder (PID {@value DriverComponent#PID} key {@code stateDir}) */
    DriverStaging(Path stateDir) {
        this.stateDir = Objects.requireNonNull(stateDir, "stateDir");
    }

    /**
     * @return the staged version's entries ({@code version}, {@code fromBootId}, ...), empty when nothing is staged
     * @throws IOException when the file exists but cannot be read (the message names it)
     */
    Map<String, String> staged() throws IOException {
        return read(stateDir.resolve(STAGED));
    }

    /**
     * Stages a version, replacing what was staged.
     *
     * @param entries at least {@code version} and {@code fromBootId}
     * @throws IOException when the folder or the file cannot be written (the message names the file and the key)
     */
    void stage(Map<String, String> entries) throws IOException {
        Path p = stateDir.resolve(STAGED);
        StringBuilder sb = new StringBuilder();
        entries.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        try {
            DurableFiles.writeAtomically(p, sb.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IOException("cannot write staging file " + p + " (PID " + DriverComponent.PID
                    + " key stateDir, a persistent host folder): " + e, e);
        }
    }

    /**
     * The switch at a fresh boot: {@value #STAGED} becomes {@value #CURRENT}.
     *
     * @throws IOException when the rename fails (the message names both files)
     */
    void switchToCurrent() throws IOException {
        try {
            Files.move(stateDir.resolve(STAGED), stateDir.resolve(CURRENT), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new IOException("cannot switch " + stateDir.resolve(STAGED) + " to " + CURRENT + ": " + e, e);
        }
    }

    private static Map<String, String> read(Path p) throws IOException {
        Map<String, String> kv = new LinkedHashMap<>();
        if (!Files.exists(p)) {
            return kv;
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IOException("cannot read staging file " + p + ": " + e, e);
        }
        for (String line : lines) {
            int eq = line.indexOf('=');
            if (eq > 0 && !line.startsWith("#")) {
                kv.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
            }
        }
        if (!kv.containsKey("version") || !kv.containsKey("fromBootId")) {
            LOG.log(Level.WARNING, "staging file " + p + " has no version or fromBootId: ignored");
            return new LinkedHashMap<>();
        }
        return kv;
    }
}
