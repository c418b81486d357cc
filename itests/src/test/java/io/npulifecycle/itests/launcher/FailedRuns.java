package io.npulifecycle.itests.launcher;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Keeps the work folder of a failed demo or scenario run of an itest (the runtime homes with every node agent's and
 * the control plane's {@code home/console.log}) under {@link #root()}, {@code itests/target/failed-runs/<name>/},
 * and says where in the failure message. A test runs in a JUnit temporary folder, which is deleted when the test
 * ends, passed or failed: the work folder of a passed run goes with it; a failed one is moved out before.
 *
 * <p>The {@code scenario} command runs its files in order, the i-th in {@code <work>/scenario-<i>}, and prints per
 * file a header {@code == scenario NAME (FILE): ...} and then one verdict line {@code "   PASS NAME (..."} or
 * {@code "   FAIL NAME (...)"} ({@link #verdicts}); only the folders of the files that did not pass are kept.
 */
public final class FailedRuns {

    /** System property: the folder the failed runs are kept in; default {@code target/failed-runs}. */
    public static final String PROPERTY = "itests.failedRuns.dir";

    private FailedRuns() {
    }

    /** @return the folder failed runs are kept in ({@value #PROPERTY}), absolute */
    public static Path root() {
        return Path.of(System.getProperty(PROPERTY, "target/failed-runs")).toAbsolutePath().normalize();
    }

    /** Where the runtimes' logs are in the work folder of one demo or one scenario. */
    public static final String LOGS = "*/home/console.log";
    /** Where they are in the work folder of a {@code scenario} command that ran several files. */
    public static final String SUITE_LOGS = "scenario-*/*/home/console.log";

    /**
     * What a kept run's failure message says about its folder.
     *
     * @param kept the kept folder
     * @param logs where the runtime logs are in it, {@link #LOGS} or {@link #SUITE_LOGS}
     * @return {@code work folder of the failed run kept in DIR (runtime logs: DIR/LOGS)}
     */
    static String where(Path kept, String logs) {
        return "work folder of the failed run kept in " + kept + " (runtime logs: " + kept + "/" + logs + ")";
    }

    /**
     * Moves {@code folder} to {@code root/name}, or {@code root/name-2}, {@code -3}... when a run of an earlier build
     * is kept under that name; across file systems it is copied (the original is left to its temporary folder).
     *
     * @param root where runs are kept (created when missing)
     * @param name the run's name: letters, digits, {@code . _ -} only
     * @param folder the work folder, a directory
     * @return the kept folder
     * @throws IllegalArgumentException when {@code name} has another character or {@code folder} is not a directory
     * @throws IOException when it can be neither moved nor copied
     */
    public static Path keep(Path root, String name, Path folder) throws IOException {
        if (!name.matches("[A-Za-z0-9._-]+")) {
            throw new IllegalArgumentException("run name '" + name + "': expected letters, digits, '.', '_' or '-'");
        }
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalArgumentException("work folder " + folder + " of run " + name + ": not a directory");
        }
        Files.createDirectories(root);
        Path target = root.resolve(name);
        for (int n = 2; Files.exists(target, LinkOption.NOFOLLOW_LINKS); n++) {
            target = root.resolve(name + "-" + n);
        }
        try {
            Files.move(folder, target);
        } catch (DirectoryNotEmptyException | java.nio.file.AtomicMoveNotSupportedException e) {
            copyTree(folder, target);
        }
        return target;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES,
                        LinkOption.NOFOLLOW_LINKS);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                // a socket or a file that vanished: the logs are what matters
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * Keeps the whole work folder of a failed run (and a copy of its output, as {@code output.txt}) and gives the
     * failure back with the kept folder's path first in its message.
     *
     * @param failure why the run failed (an assertion, a timeout, an exception)
     * @param root where runs are kept
     * @param name the run's name ({@link #keep})
     * @param work the run's work folder; when it does not exist (the run failed before it made one) nothing is kept
     * @param output the file the run printed to, or {@code null}
     * @param logs where the runtime logs are in the work folder, {@link #LOGS} or {@link #SUITE_LOGS}
     * @return an AssertionError naming the kept folder, with {@code failure} as its cause and its message after
     */
    public static AssertionError failed(Throwable failure, Path root, String name, Path work, Path output,
            String logs) {
        String kept;
        if (!Files.isDirectory(work)) {
            kept = "no work folder to keep: " + work + " does not exist";
        } else {
            try {
                Path dir = keep(root, name, work);
                copyOutput(output, dir);
                kept = where(dir, logs);
            } catch (IOException | RuntimeException e) {
                kept = "could not keep the work folder " + work + " of the failed run: " + e;
            }
        }
        System.out.println(name + ": " + kept);
        return new AssertionError(kept + "\n" + failure.getMessage(), failure);
    }

    private static void copyOutput(Path output, Path dir) throws IOException {
        if (output != null && Files.isRegularFile(output)) {
            Files.copy(output, dir.resolve("output.txt"), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * The verdict of each scenario of a {@code scenario} command's output, in the order run.
     *
     * @param output what the command printed
     * @return per scenario started (by its {@code == scenario} header), {@code true} when it printed
     *         {@code "   PASS "}, {@code false} when it printed {@code "   FAIL "}, {@code null} when it printed no
     *         verdict (the run was cut short)
     */
    static List<Boolean> verdicts(String output) {
        List<Boolean> out = new ArrayList<>();
        for (String line : output.split("\n", -1)) {
            if (line.startsWith("== scenario ")) {
                out.add(null);
            } else if (!out.isEmpty() && out.get(out.size() - 1) == null) {
                if (line.startsWith("   PASS ")) {
                    out.set(out.size() - 1, true);
                } else if (line.startsWith("   FAIL ")) {
                    out.set(out.size() - 1, false);
                }
            }
        }
        return out;
    }

    /**
     * After {@code scenario FILES... --work WORK} (passed or not): keeps {@code WORK/scenario-<i>} of every file that
     * did not pass, as {@code root/<test>-<file name without .yaml>}, with a copy of the output; the folders of the
     * files that passed are left where they are (deleted with the test's temporary folder).
     *
     * @param root where runs are kept
     * @param test names the test (the kept folders' prefix)
     * @param files the files in the order given to the command
     * @param work the command's {@code --work} folder
     * @param output what the command printed
     * @param outputFile the file it printed to, copied into each kept folder as {@code output.txt}, or {@code null}
     * @return the kept folder by file name (empty when every file that started passed), in run order
     */
    public static Map<String, Path> keepFailedScenarios(Path root, String test, List<Path> files, Path work,
            String output, Path outputFile) {
        List<Boolean> verdicts = verdicts(output);
        Map<String, Path> kept = new LinkedHashMap<>();
        for (int i = 0; i < files.size(); i++) {
            Path dir = work.resolve("scenario-" + i);
            boolean passed = i < verdicts.size() && Boolean.TRUE.equals(verdicts.get(i));
            if (passed || !Files.isDirectory(dir)) {
                continue;
            }
            String file = files.get(i).getFileName().toString();
            try {
                Path k = keep(root, test + "-" + file.replaceFirst("\\.ya?ml$", ""), dir);
                copyOutput(outputFile, k);
                kept.put(file, k);
            } catch (IOException | RuntimeException e) {
                System.out.println(test + ": could not keep the work folder " + dir + " of " + file + ": " + e);
            }
        }
        return kept;
    }

    /**
     * @param kept what {@link #keepFailedScenarios} returned
     * @return one line per kept scenario, {@code FILE: work folder of the failed run kept in DIR (...)}, or "" when
     *         none was kept
     */
    public static String describe(Map<String, Path> kept) {
        StringBuilder b = new StringBuilder();
        kept.forEach((file, dir) -> b.append(file).append(": ").append(where(dir, LOGS)).append('\n'));
        return b.toString();
    }
}
