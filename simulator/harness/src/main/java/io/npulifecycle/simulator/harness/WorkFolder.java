package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The {@code --work} folder of {@code demo} and {@code scenario}: new, empty, or one a previous run of these
 * commands used (it holds {@value #MARKER}), which is reused. Any other folder is refused, so a mistyped
 * {@code --work} never mixes runtime homes, markers and logs into someone's files.
 */
final class WorkFolder {

    /** The file that marks a folder as a work folder of {@code demo} or {@code scenario}. */
    static final String MARKER = ".npu-lifecycle-work";

    private WorkFolder() {
    }

    /**
     * Creates or checks the folder and marks it.
     *
     * @param work the folder given, or null for a new temporary one
     * @param command {@code demo} or {@code scenario}, for the temporary folder's name and the mark
     * @return the folder, absolute
     * @throws IllegalArgumentException when {@code work} is a file, or a non-empty folder without the mark (the
     *         message names it, some of its entries, and what is accepted)
     * @throws IOException when the folder cannot be created or marked
     */
    static Path prepare(Path work, String command) throws IOException {
        Path dir = work == null ? Files.createTempDirectory("npu-lifecycle-" + command + "-") : work.toAbsolutePath();
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--work " + work + " is not a folder");
        }
        if (Files.isDirectory(dir) && !Files.exists(dir.resolve(MARKER))) {
            List<String> entries;
            try (Stream<Path> s = Files.list(dir)) {
                entries = s.map(p -> p.getFileName().toString()).sorted().limit(4).toList();
            }
            if (!entries.isEmpty()) {
                throw new IllegalArgumentException("--work " + work + " is a folder with other files in it ("
                        + String.join(", ", entries) + (entries.size() == 4 ? ", ..." : "") + ") and is not a work "
                        + "folder of an earlier demo or scenario (no " + MARKER + "): give a new or empty folder");
            }
        }
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(MARKER), "npu-lifecycle " + command + " work folder: runtime homes, markers and "
                + "logs of simulated clusters; a later demo or scenario may reuse it\n", StandardCharsets.UTF_8);
        return dir;
    }
}
