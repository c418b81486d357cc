package io.npulifecycle.simulator.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChildProcessTest {

    @TempDir
    Path dir;

    @Test
    void recordsLinesWithTheirArrivalAndCopiesThem() throws Exception {
        Path log = dir.resolve("logs/out.log");
        try (ChildProcess p = ChildProcess.builder(List.of("/bin/sh", "-c", "echo one; echo \"$GREETING\" >&2; exec sleep 30"))
                .env(Map.of("GREETING", "two")).recordLines(log).stopGrace(Duration.ofSeconds(5)).start()) {
            ChildProcess.Line two = p.awaitLine(s -> s.equals("two"), 0, Duration.ofSeconds(20), "the second line");
            assertTrue(two.arrivedNanos() - p.startNanos() >= 0);
            assertEquals(2, p.lineCount());
            assertEquals("one", p.linesFrom(0).get(0).text());
            assertTrue(p.alive());
            IllegalStateException none = assertThrows(IllegalStateException.class,
                    () -> p.awaitLine(s -> s.equals("three"), 0, Duration.ofMillis(200), "a third line"));
            assertTrue(none.getMessage().startsWith("no a third line within 200 ms (process alive)"), none.getMessage());
            p.close();
            assertFalse(p.alive());
        }
        assertEquals("one\ntwo\n", Files.readString(log));
    }

    @Test
    void writesToAFileAndAppendsOnTheNextStart() throws Exception {
        Path log = dir.resolve("console.log");
        for (int i = 0; i < 2; i++) {
            ChildProcess p = ChildProcess.builder(List.of("/bin/sh", "-c", "echo run")).output(log, true).start();
            assertTrue(p.waitFor(Duration.ofSeconds(20)));
            assertEquals(0, p.exitValue());
        }
        assertEquals("run\nrun\n", Files.readString(log));
        ChildProcess p = ChildProcess.builder(List.of("/bin/true")).output(log, true).start();
        assertThrows(IllegalStateException.class, p::lineCount, "lines are not recorded in file mode");
    }

    @Test
    void killEndsAProcessThatIgnoresSigterm() throws Exception {
        ChildProcess p = ChildProcess.builder(List.of("/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"))
                .recordLines(dir.resolve("k.log")).start();
        p.awaitLine("ready"::equals, 0, Duration.ofSeconds(20), "ready");
        p.kill();
        assertFalse(p.alive());
    }

    @Test
    void aServerBinaryIsNamedAndItsLogTailIsReadable() throws Exception {
        Path log = dir.resolve("etcd.log");
        assertEquals("true", ChildProcess.builder(List.of("/bin/true")).output(dir.resolve("later/x.log"), true)
                .start().name(), "the default name is the program's file name");
        ChildProcess p = ChildProcess.builder(List.of("/bin/sh", "-c", "echo 1; echo 2; echo 3; exit 4")).name("etcd")
                .output(log, true).start();
        assertTrue(p.waitFor(Duration.ofSeconds(20)));
        assertEquals("etcd", p.name());
        assertEquals("etcd (pid " + p.pid() + ")", p.toString());
        assertEquals(4, p.exitValue());
        assertEquals("2\n3", p.outputTail(2));
        assertEquals("1\n2\n3", p.outputTail(10));
        ChildProcess running = ChildProcess.builder(List.of("/bin/sleep", "30")).output(log, true).start();
        try {
            assertTrue(running.startInstant().isAfter(java.time.Instant.EPOCH), "the operating system's start time");
        } finally {
            running.kill();
        }
        assertEquals("", ChildProcess.builder(List.of("/bin/true")).output(dir.resolve("none.log"), true).start()
                .outputTail(0));
    }
}
