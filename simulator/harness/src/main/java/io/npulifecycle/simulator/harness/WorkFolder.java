package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.FileVisitResult;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.stream.Stream;

/**
 * The {@code --work} folder of {@code demo} and {@code scenario}: new, empty, or one a previous run of these
 * commands used (it holds {@value #MARKER}), which is reused. Any other folder is refused, so a mistyped
 * {@code --work} never mixes runtime homes, markers and logs into someone's files.
 *
 * <p>Without {@code --work} the run gets a new temporary folder ({@code npu-lifecycle-demo-*} or
 * {@code npu-lifecycle-scenario-*} under {@code java.io.tmpdir}), which holds a few hundred MiB of runtime homes and
 * logs: {@link #finish} deletes it after a run that passed unless {@code --keep} was given, and keeps it, printing
 * its path, after a run that failed (its logs say why). A folder given with {@code --work} is never deleted.
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

    /**
     * After a run: deletes a temporary work folder of a run that passed (or ran nothing: a malformed scenario file),
     * unless {@code keep}; otherwise says where the folder is.
     *
     * @param dir the folder {@link #prepare} returned
     * @param temporary whether {@link #prepare} created it (no {@code --work} given)
     * @param keep {@code --keep}: keep a temporary folder of a passed run too
     * @param exitCode the run's exit code: 0 passed, 2 nothing was run, anything else failed
     * @param out where the outcome is printed: {@code work folder <dir> deleted ...} or {@code work folder kept: <dir>}
     * @return whether the folder was deleted
     */
    static boolean finish(Path dir, boolean temporary, boolean keep, int exitCode, PrintStream out) {
        boolean failed = exitCode != 0 && exitCode != 2;
        if (!temporary || keep || failed || !Files.exists(dir.resolve(MARKER))) {
            out.println("work folder kept: " + dir + (failed ? " (runtime homes and logs of the failed run)" : ""));
            return false;
        }
        try {
            deleteTree(dir);
            out.println("work folder " + dir + " deleted (" + (exitCode == 0 ? "the run passed" : "nothing was run")
                    + "; --keep or --work DIR keeps it)");
            return true;
        } catch (IOException e) {
            out.println("work folder kept: " + dir + " (it could not be deleted: " + e + ")");
            return false;
        }
    }

    /**
     * A run stopped by a signal keeps its work folder (nothing deletes it on the way out): it says where it is, as
     * {@link #finish} does after a failed run.
     *
     * @param interruption the run's shutdown hook
     * @param dir the folder {@link #prepare} returned
     * @param out where {@code work folder kept: <dir> (...)} is printed
     */
    static void keptOnInterrupt(Interruption interruption, Path dir, PrintStream out) {
        interruption.onInterrupt(() -> {
            out.println("work folder kept: " + dir + " (runtime homes and logs of the interrupted run)");
            out.flush();
        });
    }

    /** Deletes a folder and everything in it; symbolic links are deleted, never followed. */
    static void deleteTree(Path dir) throws IOException {
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
