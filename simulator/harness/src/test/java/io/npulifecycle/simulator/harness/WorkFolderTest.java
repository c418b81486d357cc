package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What is left of a work folder after a run: a passed run's temporary folder goes, everything else stays. */
class WorkFolderTest {

    @TempDir
    Path tmp;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    private PrintStream print() {
        return new PrintStream(out, true, StandardCharsets.UTF_8);
    }

    /** A temporary work folder as a run leaves it: runtime homes, logs, a link to a file outside. */
    private Path usedTemporaryFolder() throws Exception {
        Path dir = WorkFolder.prepare(null, "scenario");
        Files.createDirectories(dir.resolve("scenario-0/node-0/home/logs"));
        Files.writeString(dir.resolve("scenario-0/node-0/home/logs/npu-lifecycle.0.log"), "log\n");
        Files.createSymbolicLink(dir.resolve("scenario-0/outside"), Files.writeString(tmp.resolve("keep-me"), "x"));
        return dir;
    }

    @Test
    void aPassedRunsTemporaryFolderIsDeletedAndNothingOutsideIt() throws Exception {
        Path dir = usedTemporaryFolder();
        assertTrue(dir.getFileName().toString().startsWith("npu-lifecycle-scenario-"), dir.toString());
        assertTrue(WorkFolder.finish(dir, true, false, 0, print()));
        assertFalse(Files.exists(dir));
        assertTrue(Files.exists(tmp.resolve("keep-me")), "a link is deleted, not followed");
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("work folder " + dir + " deleted"), out.toString());
    }

    @Test
    void aFailedRunsFolderIsKeptAndItsPathPrinted() throws Exception {
        Path dir = usedTemporaryFolder();
        try {
            assertFalse(WorkFolder.finish(dir, true, false, 1, print()));
            assertTrue(Files.exists(dir.resolve("scenario-0/node-0/home/logs/npu-lifecycle.0.log")));
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("work folder kept: " + dir
                    + " (runtime homes and logs of the failed run)"), out.toString());
        } finally {
            WorkFolder.deleteTree(dir);
        }
    }

    @Test
    void keepAndAGivenWorkFolderAreNeverDeleted() throws Exception {
        Path dir = usedTemporaryFolder();
        try {
            assertFalse(WorkFolder.finish(dir, true, true, 0, print()), "--keep");
            assertTrue(Files.isDirectory(dir));
        } finally {
            WorkFolder.deleteTree(dir);
        }
        Path given = WorkFolder.prepare(tmp.resolve("work"), "demo");
        assertFalse(WorkFolder.finish(given, false, false, 0, print()), "--work DIR");
        assertTrue(Files.exists(given.resolve(WorkFolder.MARKER)));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("work folder kept: " + given), out.toString());
    }

    @Test
    void aRunThatRanNothingLeavesNoTemporaryFolder() throws Exception {
        Path dir = WorkFolder.prepare(null, "scenario");
        assertTrue(WorkFolder.finish(dir, true, false, 2, print()), "a malformed scenario file: exit 2");
        assertFalse(Files.exists(dir));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("deleted (nothing was run;"), out.toString());
    }
}
