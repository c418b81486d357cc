package io.npulifecycle.simulator.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rules of {@link LoopbackPorts}: distinct, outside the ephemeral range, skips what is bound or locked. */
class LoopbackPortsTest {

    @TempDir
    Path dir;

    /** An allocator of its own, on the kernel's real ephemeral range, with the test's lock folder. */
    private LoopbackPorts allocator() {
        return new LoopbackPorts(dir.resolve("locks"), LoopbackPorts.IP_LOCAL_PORT_RANGE, LoopbackPorts.LOWEST,
                LoopbackPorts.EXCLUDED, new Random());
    }

    /**
     * An allocator that may hand out only {@code first..last}: an ephemeral range stand-in from {@code last + 1} to
     * 65535, nothing excluded.
     */
    private LoopbackPorts window(int first, int last) throws Exception {
        Path range = Files.writeString(dir.resolve("range-" + first), (last + 1) + "\t65535\n");
        LoopbackPorts p = new LoopbackPorts(dir.resolve("locks"), range, first, Set.of(), new Random());
        assertEquals(List.of(new LoopbackPorts.Range(first, last)), p.candidates());
        return p;
    }

    /** Allocates until the allocator has nothing left; @return what it handed out */
    private static List<Integer> drain(LoopbackPorts p, int atMost) {
        List<Integer> got = new ArrayList<>();
        IllegalStateException end = assertThrows(IllegalStateException.class, () -> {
            for (int i = 0; i <= atMost; i++) {
                got.add(p.allocate());
            }
        });
        assertTrue(end.getMessage().startsWith("no free loopback port in " + p.candidates()), end.getMessage());
        return got;
    }

    /**
     * A lock file is writable by every user, whatever the umask: another user's JVM can lock that port once nobody
     * holds it (a file only its creator could open kept the port from every other user for good).
     */
    @Test
    void theLockFileOfAPortIsWritableByEveryUser() throws Exception {
        int port = allocator().allocate();
        Path file = dir.resolve("locks").resolve(port + ".lock");
        assertEquals(java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"),
                Files.getPosixFilePermissions(file));
        assertEquals(java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"),
                Files.getPosixFilePermissions(dir.resolve("locks")));
    }

    @Test
    void tenThousandAllocationsAreDistinctAndNoneIsEphemeralOrExcluded() {
        LoopbackPorts p = allocator();
        LoopbackPorts.Range ephemeral = LoopbackPorts.ephemeralRange(LoopbackPorts.IP_LOCAL_PORT_RANGE);
        assertEquals(ephemeral, p.ephemeral());
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            int port = p.allocate();
            assertTrue(seen.add(port), "port " + port + " handed out twice (allocation " + i + ")");
            assertFalse(ephemeral.contains(port), port + " is in the ephemeral range " + ephemeral);
            assertFalse(LoopbackPorts.EXCLUDED.contains(port), port + " is excluded");
            assertTrue(port >= LoopbackPorts.LOWEST && port <= LoopbackPorts.HIGHEST, String.valueOf(port));
            assertTrue(p.holds(port));
            p.release(port); // 10,000 open lock files would be 10,000 file descriptors
            assertFalse(p.holds(port));
        }
        // spread over the candidates, not counted up from one end: a second JVM starts elsewhere
        assertTrue(seen.stream().anyMatch(x -> x > 20_000) && seen.stream().anyMatch(x -> x < 15_000),
                "not spread out: " + seen.stream().sorted().limit(5).toList());
    }

    @Test
    void aReleasedPortIsNotHandedOutAgainByTheSameAllocator() throws Exception {
        int first = 62_000 + new Random().nextInt(3000);
        LoopbackPorts p = window(first, first + 4);
        List<Integer> got = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            int port = p.allocate();
            p.release(port);
            got.add(port);
        }
        got.addAll(drain(p, 5));
        assertEquals(got.size(), new HashSet<>(got).size(), "handed out twice: " + got);
    }

    @Test
    void aPortBoundByAnotherSocketIsSkipped() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int q = taken.getLocalPort();
            LoopbackPorts p = window(q - 5, q + 5);
            List<Integer> got = drain(p, 11);
            assertFalse(got.contains(q), q + " is bound, yet handed out: " + got);
            assertFalse(got.isEmpty(), "nothing of " + p.candidates() + " handed out");
        }
    }

    @Test
    void aPortLockedByAnotherProcessIsSkipped() throws Exception {
        int first = 62_000 + new Random().nextInt(3000);
        LoopbackPorts p = window(first, first + 9);
        Files.createDirectories(p.lockFolder());
        try (ChildProcess holder = otherJvm("hold", p.lockFolder(), first)) {
            holder.awaitLine(("locked " + first)::equals, 0, Duration.ofSeconds(60), "the other JVM's lock");
            List<Integer> got = drain(p, 10);
            assertFalse(got.contains(first), first + " is locked by pid " + holder.pid() + ", yet handed out: " + got);
            assertFalse(got.isEmpty(), "nothing of " + p.candidates() + " handed out");
        }
    }

    @Test
    void anotherProcessSeesTheLockUntilReleased() throws Exception {
        int first = 62_000 + new Random().nextInt(3000);
        LoopbackPorts p = window(first, first + 9);
        int port = p.allocate();
        assertEquals("held", probe(p.lockFolder(), port));
        p.release(port);
        assertEquals("free", probe(p.lockFolder(), port));
    }

    @Test
    void twoAllocatorsOfOneJvmDoNotShareAPortWhileTheFirstHoldsIt() throws Exception {
        int first = 62_000 + new Random().nextInt(3000);
        LoopbackPorts a = window(first, first + 3);
        LoopbackPorts b = window(first, first + 3);
        List<Integer> fromA = drain(a, 4);
        // the same folder: b's lock attempts meet a's locks (OverlappingFileLockException in one JVM)
        assertThrows(IllegalStateException.class, b::allocate, "a holds every port of the window: " + fromA);
        a.release(fromA.get(0));
        assertEquals(fromA.get(0), b.allocate());
    }

    @Test
    void nothingLeftIsAnIllegalStateExceptionNamingTheRange() throws Exception {
        int first = 62_000 + new Random().nextInt(3000);
        LoopbackPorts p = window(first, first);
        drain(p, 1);
        IllegalStateException e = assertThrows(IllegalStateException.class, p::allocate);
        assertTrue(e.getMessage().contains("[" + first + "-" + first + "]"), e.getMessage());
        assertTrue(e.getMessage().contains(p.lockFolder().toString()), e.getMessage());
    }

    @Test
    void anUnreadableOrMalformedRangeFileFallsBackToLinuxDefaults() throws Exception {
        LoopbackPorts.Range fallback = new LoopbackPorts.Range(LoopbackPorts.FALLBACK_EPHEMERAL_FIRST,
                LoopbackPorts.FALLBACK_EPHEMERAL_LAST);
        assertEquals(fallback, LoopbackPorts.ephemeralRange(dir.resolve("absent")));
        assertEquals(fallback, LoopbackPorts.ephemeralRange(Files.writeString(dir.resolve("bad"), "many ports\n")));
        assertEquals(fallback, LoopbackPorts.ephemeralRange(Files.writeString(dir.resolve("reversed"), "40000 30000")));
        assertEquals(fallback, LoopbackPorts.ephemeralRange(Files.createDirectories(dir.resolve("a-folder"))));
        assertEquals(new LoopbackPorts.Range(20000, 40000),
                LoopbackPorts.ephemeralRange(Files.writeString(dir.resolve("ok"), "20000\t40000\n")));

        LoopbackPorts p = new LoopbackPorts(dir.resolve("locks"), dir.resolve("absent"), LoopbackPorts.LOWEST,
                LoopbackPorts.EXCLUDED, new Random());
        assertEquals(fallback, p.ephemeral());
        assertEquals(List.of(new LoopbackPorts.Range(LoopbackPorts.LOWEST, LoopbackPorts.FALLBACK_EPHEMERAL_FIRST - 1),
                new LoopbackPorts.Range(LoopbackPorts.FALLBACK_EPHEMERAL_LAST + 1, LoopbackPorts.HIGHEST)),
                p.candidates());
        for (int i = 0; i < 200; i++) {
            int port = p.allocate();
            assertFalse(fallback.contains(port), String.valueOf(port));
            p.release(port);
        }
    }

    @Test
    void aRangeFileGivingAnotherRangeMovesTheCandidates() throws Exception {
        Path range = Files.writeString(dir.resolve("range"), "20000 40000\n");
        LoopbackPorts p = new LoopbackPorts(dir.resolve("locks"), range, LoopbackPorts.LOWEST, LoopbackPorts.EXCLUDED,
                new Random());
        for (int i = 0; i < 500; i++) {
            int port = p.allocate();
            assertTrue(port < 20000 || port > 40000, String.valueOf(port));
            p.release(port);
        }
    }

    @Test
    void theSharedAllocatorIsOneInstanceWithItsFolderInTheTemporaryFolder() {
        assertSame(LoopbackPorts.shared(), LoopbackPorts.shared());
        assertEquals(Path.of(System.getProperty("java.io.tmpdir"), "npu-lifecycle-ports"),
                LoopbackPorts.shared().lockFolder());
        int port = LoopbackPorts.shared().allocate();
        assertTrue(LoopbackPorts.shared().holds(port));
        assertTrue(Files.exists(LoopbackPorts.shared().lockFolder().resolve(port + ".lock")));
        LoopbackPorts.shared().release(port);
    }

    private static ChildProcess otherJvm(String mode, Path folder, int port) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return ChildProcess.builder(List.of(java.toString(), "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), PortLockProbe.class.getName(), mode, folder.toString(),
                String.valueOf(port))).recordLines(folder.resolveSibling(mode + "-" + port + ".log"))
                .stopGrace(Duration.ofSeconds(5)).start();
    }

    private static String probe(Path folder, int port) throws Exception {
        try (ChildProcess p = otherJvm("probe", folder, port)) {
            return p.awaitLine(s -> s.equals("held") || s.equals("free"), 0, Duration.ofSeconds(60), "the probe")
                    .text();
        }
    }
}
