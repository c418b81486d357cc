package io.npulifecycle.driver.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import io.npulifecycle.files.internal.DurableFiles;

/**
 * Which driver version was validated in which boot, in the persistent state folder: {@value #FILE}, {@code key=value}
 * lines {@code version}, {@code bootId} and {@code validatedAt}, written atomically (a synced temporary file renamed
 * over the old one) when a validation passes. A node agent restarted in the same boot (its pod replaced, its JVM
 * killed) reads it, so a problem it finds at once (a chip wedged since before the restart) is the health-watch's
 * runtime fault of a validated driver, not a failed validation: no {@code DriverValidationFailed} Event, the
 * {@code driver-validated} annotation kept. A file that cannot be read or lacks {@code version} or {@code bootId}
 * counts as no record (logged): the driver is then validated again, as after a fresh boot.
 */
final class BootValidation {

    private static final System.Logger LOG = System.getLogger(BootValidation.class.getName());
    /** The file's name in the state folder. */
    static final String FILE = "driver-validated";

    private final Path file;

    /** @param stateDir the persistent host folder (PID {@value DriverComponent#PID} key {@code stateDir}) */
    BootValidation(Path stateDir) {
        this.file = Objects.requireNonNull(stateDir, "stateDir").resolve(FILE);
    }

    /**
     * @param version the driver version
     * @param bootId the boot
     * @return whether {@code version} was validated in boot {@code bootId}; false when there is no usable record
     */
    boolean validated(String version, String bootId) {
        Map<String, String> kv = read();
        return version.equals(kv.get("version")) && bootId.equals(kv.get("bootId"));
    }

    /**
     * Records a validation, unless the same one is recorded already.
     *
     * @param version the validated version
     * @param bootId the boot it was validated in
     * @param validatedAt when (ISO-8601, TimeSource time), for a person reading the file
     * @throws IOException when the file cannot be written (the message names it)
     */
    void record(String version, String bootId, String validatedAt) throws IOException {
        if (validated(version, bootId)) {
            return;
        }
        String text = "version=" + version + "\nbootId=" + bootId + "\nvalidatedAt=" + validatedAt + "\n";
        try {
            DurableFiles.writeAtomically(file, text.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IOException("cannot write " + file + " (PID " + DriverComponent.PID
                    + " key stateDir, a persistent host folder): " + e, e);
        }
    }

    /** @return the file's entries; empty when it is absent, unreadable or lacks version or bootId (logged) */
    private Map<String, String> read() {
        Map<String, String> kv = new LinkedHashMap<>();
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return kv;
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "cannot read " + file + ": " + e + " (the driver is validated again)");
            return kv;
        }
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0 && !line.startsWith("#")) {
                kv.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
            }
        }
        if (!kv.containsKey("version") || !kv.containsKey("bootId")) {
            LOG.log(Level.WARNING, file + " has no version or bootId, expected version=<driver version> and "
                    + "bootId=<boot id> lines: ignored (the driver is validated again)");
            return new LinkedHashMap<>();
        }
        return kv;
    }
}
