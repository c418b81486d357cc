package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClassArchivesTest {

    @TempDir
    Path tmp;

    Path install() throws IOException {
        Path install = tmp.resolve("install");
        Files.createDirectories(install.resolve("lib"));
        Files.createDirectories(install.resolve("bundles"));
        Files.writeString(install.resolve("lib/a.jar"), "a");
        Files.writeString(install.resolve("bundles/b.jar"), "b");
        return install;
    }

    @Test
    void theFirstStartWritesTheArchiveOthersMeanwhileStartWithoutOneThenEveryStartMapsIt() throws Exception {
        Path install = install();
        ClassArchives archives = new ClassArchives(tmp.resolve("cds"), true);
        ClassArchives.Start first = archives.forStart(install, "node");
        assertTrue(first.options().contains("-XX:ArchiveClassesAtExit=" + first.dump()), first.options());
        assertTrue(first.options().contains(ClassArchives.QUIET), first.options());
        assertEquals("", archives.forStart(install, "node").options(), "one writer at a time");
        assertTrue(archives.forStart(install, "control-plane").options().contains("ArchiveClassesAtExit"),
                "each role has its own archive");

        // a real JVM writes it at its exit, and a JVM that must use it (-Xshare:on fails otherwise) starts with it
        assertEquals(0, java(first.options(), "-version"));
        first.exited();
        assertTrue(Files.size(first.archive()) > 0, "archive moved into place");
        assertFalse(Files.exists(first.dump()));
        ClassArchives.Start later = archives.forStart(install, "node");
        assertEquals(ClassArchives.QUIET + " -XX:SharedArchiveFile=" + first.archive(), later.options());
        assertEquals(0, java(later.options() + " -Xshare:on", "-version"));
    }

    @Test
    void aWriterKilledBeforeItsExitLeavesNoArchiveAndTheNextStartWritesIt() throws Exception {
        Path install = install();
        ClassArchives archives = new ClassArchives(tmp.resolve("cds"), true);
        ClassArchives.Start killed = archives.forStart(install, "node");
        killed.exited(); // no file written: as after SIGKILL
        assertFalse(Files.exists(killed.archive()));
        assertTrue(archives.forStart(install, "node").options().contains("ArchiveClassesAtExit"), "claimed again");
    }

    @Test
    void anotherBuildOfTheInstallationGetsAnotherArchive() throws Exception {
        Path install = install();
        String before = ClassArchives.key(install);
        Files.writeString(install.resolve("bundles/b.jar"), "b2");
        Files.setLastModifiedTime(install.resolve("bundles/b.jar"), FileTime.fromMillis(1_000));
        assertNotEquals(before, ClassArchives.key(install));
    }

    @Test
    void theArchivesOfOtherBuildsAreDeletedOnceOldTheOtherRolesAndRecentOnesAreKept() throws Exception {
        Path install = install();
        Path dir = Files.createDirectories(tmp.resolve("cds"));
        Path old = Files.writeString(dir.resolve("node-0123456789abcdef.jsa"), "old");
        Files.setLastModifiedTime(old, FileTime.fromMillis(System.currentTimeMillis()
                - ClassArchives.KEEP.toMillis() - 60_000));
        Path recent = Files.writeString(dir.resolve("node-fedcba9876543210.jsa"), "recent");
        Path otherRole = Files.writeString(dir.resolve("control-plane-0123456789abcdef.jsa"), "cp");
        Files.setLastModifiedTime(otherRole, Files.getLastModifiedTime(old));
        new ClassArchives(dir, true).forStart(install, "node");
        assertFalse(Files.exists(old), "another build's archive, untouched for longer than KEEP");
        assertTrue(Files.exists(recent), "another build's recent archive (a clone whose tests run now)");
        assertTrue(Files.exists(otherRole), "pruned when that role starts");
    }

    @Test
    void offOrWithoutACacheFolderNothingIsAdded() throws Exception {
        Path install = install();
        assertEquals("", new ClassArchives(tmp.resolve("cds"), false).forStart(install, "node").options());
        Path file = Files.writeString(tmp.resolve("not-a-folder"), "x");
        assertEquals("", new ClassArchives(file.resolve("cds"), true).forStart(install, "node").options());
    }

    /** Runs this JDK's java with the options and arguments; returns its exit code. */
    static int java(String options, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-XX:+UseSerialGC");
        cmd.addAll(Arrays.asList(options.trim().split("\\s+")));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("java " + cmd + " did not end in 60 s");
        }
        return p.exitValue();
    }
}
