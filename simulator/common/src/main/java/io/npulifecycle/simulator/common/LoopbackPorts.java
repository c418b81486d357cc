package io.npulifecycle.simulator.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Hands out TCP ports on the loopback interface for servers that <em>another process</em> (or a later step) will
 * listen on: a runtime's Jolokia and {@code /metrics} ports, etcd's and kube-apiserver's ports, Prometheus's, a
 * forwarder's port that must be bound again after a cut-off. Binding port 0, closing the socket and passing the
 * number on is a race (DESIGN.md, known traps: two picks returned the same port, and a node runtime given one port
 * for Jolokia and metrics refused to start, forever). A server that binds port 0 itself and keeps its socket needs
 * none of this.
 *
 * <p>Every port this allocator returns:
 * <ul>
 * <li>was never returned before by an allocator of this JVM sharing its lock folder (a set of issued ports that
 * never shrinks, not even on {@link #release(int)});</li>
 * <li>lies outside the kernel's ephemeral range ({@code /proc/sys/net/ipv4/ip_local_port_range}, read once when the
 * allocator is made; {@value #FALLBACK_EPHEMERAL_FIRST}-{@value #FALLBACK_EPHEMERAL_LAST} when that file cannot be
 * read), so that no outgoing connection of any process (a client's connection to the API server, say) is given it
 * as its local port before the server binds it: it is chosen at random from {@value #LOWEST} up to the range's
 * start and from the range's end up to 65535, leaving out {@link #EXCLUDED} (ports of services seen on these
 * machines);</li>
 * <li>is reserved against every other JVM on this machine that uses this class with the same lock folder
 * ({@code ${java.io.tmpdir}/npu-lifecycle-ports} for {@link #shared()}): an exclusive {@link FileChannel#tryLock()}
 * on {@code <folder>/<port>.lock}, held until {@link #release(int)} or until this JVM exits (the operating system
 * releases it then, a crash included); a port whose file another process has locked is skipped. Lock files are
 * never deleted (deleting a file another process is about to lock would let two processes lock two files of one
 * name);</li>
 * <li>could be bound on 127.0.0.1 (with {@code SO_REUSEADDR}, then closed) right before it was returned, so a port
 * some other program listens on is skipped.</li>
 * </ul>
 * A process that does not use this class can still take the port before the server binds it (it is only unlikely
 * outside the ephemeral range): a server that cannot bind should still be retried on another port where that is
 * cheap.
 *
 * <p>Thread-safe.
 */
public final class LoopbackPorts {

    /** The lowest port handed out (below it: the ports of well-known services). */
    public static final int LOWEST = 10000;

    /** The highest TCP port. */
    public static final int HIGHEST = 65535;

    /** The ephemeral range assumed when {@code ip_local_port_range} cannot be read: Linux's default, first port. */
    public static final int FALLBACK_EPHEMERAL_FIRST = 32768;

    /** The ephemeral range assumed when {@code ip_local_port_range} cannot be read: Linux's default, last port. */
    public static final int FALLBACK_EPHEMERAL_LAST = 60999;

    /** Where Linux keeps its ephemeral port range: two numbers, the first and the last port. */
    public static final Path IP_LOCAL_PORT_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    /**
     * Ports never handed out, whichever range applies: etcd (2379, 2380), a registry (5000), kube-apiserver (6443),
     * kubectl proxy (8001), HTTP alternatives (8080, 8443), Jolokia's default (8778), Prometheus (9090), Alertmanager
     * (9093), node exporter (9100), the runtimes' default {@code metrics.port} (9464), the kubelet, kube-proxy,
     * kube-controller-manager and kube-scheduler (10248, 10249, 10250, 10255, 10256, 10257, 10259; a real kubelet runs
     * on these machines), and the Kubernetes NodePort range (30000-32767).
     */
    public static final Set<Integer> EXCLUDED = excluded();

    private static Set<Integer> excluded() {
        Set<Integer> s = new HashSet<>(List.of(2379, 2380, 5000, 6443, 8001, 8080, 8443, 8778, 9090, 9093, 9100, 9464,
                10248, 10249, 10250, 10255, 10256, 10257, 10259));
        for (int p = 30000; p <= 32767; p++) {
            s.add(p);
        }
        return Set.copyOf(s);
    }

    /**
     * The allocator of this JVM. One instance for the whole JVM is what makes the no-port-twice guarantee hold across
     * every user in it (the harness, the cluster backends and the tests in one JVM must not each keep their own set);
     * it is final and its state is guarded by its own lock. Made on first use.
     */
    private static final class Shared {
        static final LoopbackPorts INSTANCE = new LoopbackPorts(
                Path.of(System.getProperty("java.io.tmpdir"), "npu-lifecycle-ports"), IP_LOCAL_PORT_RANGE, LOWEST,
                EXCLUDED, new Random());
    }

    /** A closed range of ports. */
    public record Range(int first, int last) {

        /**
         * @param first the first port
         * @param last the last port (inclusive; below {@code first} for an empty range)
         */
        public Range {
        }

        /** @return how many ports it holds (0 when empty) */
        public int size() {
            return Math.max(0, last - first + 1);
        }

        /**
         * @param port a port
         * @return whether the range holds it
         */
        public boolean contains(int port) {
            return port >= first && port <= last;
        }

        @Override
        public String toString() {
            return first + "-" + last;
        }
    }

    private final Path lockFolder;
    private final int lowest;
    private final Range ephemeral;
    private final List<Range> candidates;
    private final Set<Integer> excludedPorts;
    private final RandomGenerator random;
    /** Every port returned by this allocator, released or not. */
    private final Set<Integer> issued = new HashSet<>();
    /** The lock of each issued port not released yet, with its channel. */
    private final Map<Integer, FileLock> held = new HashMap<>();

    /**
     * An allocator of its own (tests); everything else uses {@link #shared()}. Two allocators of one JVM with the
     * same lock folder never return the same port while both hold it (the second one's lock attempt fails), but only
     * a single allocator guarantees that a port is never returned twice.
     *
     * @param lockFolder where the lock files are (created when missing, writable by everyone, as {@code /tmp} is)
     * @param ipLocalPortRange the kernel's ephemeral range file ({@link #IP_LOCAL_PORT_RANGE}); when it cannot be
     *        read or parsed, {@value #FALLBACK_EPHEMERAL_FIRST}-{@value #FALLBACK_EPHEMERAL_LAST} applies
     * @param lowest the lowest port to hand out (1 to 65535; {@link #LOWEST})
     * @param excluded ports never handed out ({@link #EXCLUDED})
     * @param random chooses among the candidates (not shared with other threads)
     * @throws IllegalArgumentException when {@code lowest} is not a port
     */
    public LoopbackPorts(Path lockFolder, Path ipLocalPortRange, int lowest, Set<Integer> excluded,
            RandomGenerator random) {
        if (lowest < 1 || lowest > HIGHEST) {
            throw new IllegalArgumentException("lowest port " + lowest + " is not a TCP port (1-65535)");
        }
        this.lockFolder = Objects.requireNonNull(lockFolder, "lockFolder");
        this.lowest = lowest;
        this.excludedPorts = Set.copyOf(excluded);
        this.random = Objects.requireNonNull(random, "random");
        this.ephemeral = ephemeralRange(ipLocalPortRange);
        Range below = new Range(lowest, Math.min(HIGHEST, ephemeral.first() - 1));
        Range above = new Range(Math.max(lowest, ephemeral.last() + 1), HIGHEST);
        this.candidates = List.of(below, above).stream().filter(r -> r.size() > 0).toList();
    }

    /**
     * @return the allocator of this JVM: lock folder {@code ${java.io.tmpdir}/npu-lifecycle-ports} (JVMs that must
     *         not hand out the same port have to share {@code java.io.tmpdir}), the kernel's range, ports from
     *         {@value #LOWEST}, {@link #EXCLUDED} left out
     */
    public static LoopbackPorts shared() {
        return Shared.INSTANCE;
    }

    /**
     * Reads the kernel's ephemeral port range.
     *
     * @param file {@link #IP_LOCAL_PORT_RANGE} or a stand-in: two integers separated by white space
     * @return the range it gives, or {@value #FALLBACK_EPHEMERAL_FIRST}-{@value #FALLBACK_EPHEMERAL_LAST} when it
     *         cannot be read or does not hold two ports in order
     */
    public static Range ephemeralRange(Path file) {
        try {
            String[] parts = Files.readString(file, StandardCharsets.US_ASCII).trim().split("\\s+");
            if (parts.length == 2) {
                int first = Integer.parseInt(parts[0]);
                int last = Integer.parseInt(parts[1]);
                if (first >= 1 && first <= last && last <= HIGHEST) {
                    return new Range(first, last);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable (not Linux, no /proc) or malformed: the default range
        }
        return new Range(FALLBACK_EPHEMERAL_FIRST, FALLBACK_EPHEMERAL_LAST);
    }

    /** @return the ephemeral range this allocator keeps out of (read when it was made) */
    public Range ephemeral() {
        return ephemeral;
    }

    /** @return the ranges ports are chosen from (below the ephemeral range, then above it), before exclusions */
    public List<Range> candidates() {
        return candidates;
    }

    /** @return the folder of the lock files */
    public Path lockFolder() {
        return lockFolder;
    }

    /**
     * Chooses a port at random among the candidates, reserves it and returns it. Typically a few hundred
     * microseconds (a file lock and a bind); when the ports are nearly exhausted, a scan of every candidate.
     *
     * @return a port on 127.0.0.1, never returned before by this allocator, not in the ephemeral range, locked in
     *         {@link #lockFolder()} until {@link #release(int)} or this JVM's exit, bindable a moment ago
     * @throws IllegalStateException when no candidate can be had: the message names the ranges tried, how many
     *         ports this allocator issued and the lock folder
     * @throws UncheckedIOException when the lock folder cannot be created
     */
    public synchronized int allocate() {
        createLockFolder();
        int total = 0;
        for (Range r : candidates) {
            total += r.size();
        }
        if (total > 0) {
            // a random starting point, then every candidate once (wrapping around): random while ports are plenty,
            // complete when they are scarce
            int start = random.nextInt(total);
            for (int i = 0; i < total; i++) {
                int port = nth((start + i) % total);
                if (excludedPorts.contains(port) || issued.contains(port)) {
                    continue;
                }
                FileLock lock = tryLock(port);
                if (lock == null) {
                    continue; // another process (or another allocator of this JVM) holds it
                }
                if (!bindable(port)) {
                    closeQuietly(lock);
                    continue;
                }
                issued.add(port);
                held.put(port, lock);
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port in " + candidates + " (the ports from " + lowest
                + " outside the kernel's ephemeral range " + ephemeral + ", without " + excludedPorts.size()
                + " excluded ones): " + issued.size() + " issued by this JVM, the others excluded, locked by other "
                + "processes in " + lockFolder + " or in use");
    }

    /** @return the {@code index}-th candidate port, counting through the ranges in order */
    private int nth(int index) {
        for (Range r : candidates) {
            if (index < r.size()) {
                return r.first() + index;
            }
            index -= r.size();
        }
        throw new IndexOutOfBoundsException(index);
    }

    /**
     * Lets other processes have a port again (closes its lock file); this allocator never returns it again. Does
     * nothing for a port it does not hold.
     *
     * @param port a port {@link #allocate()} returned
     */
    public synchronized void release(int port) {
        FileLock lock = held.remove(port);
        if (lock != null) {
            closeQuietly(lock);
        }
    }

    /**
     * @param port a port
     * @return whether this allocator returned it and has not released it
     */
    public synchronized boolean holds(int port) {
        return held.containsKey(port);
    }

    private void createLockFolder() {
        if (Files.isDirectory(lockFolder)) {
            return;
        }
        try {
            Files.createDirectories(lockFolder);
            try {
                // every user's JVMs share the folder (a lock file another user made, this user cannot open for
                // writing: that port is skipped, as a locked one)
                Files.setPosixFilePermissions(lockFolder, PosixFilePermissions.fromString("rwxrwxrwx"));
            } catch (IOException | UnsupportedOperationException e) {
                // created by another user meanwhile, or not POSIX: usable by this user anyway
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the port lock folder " + lockFolder, e);
        }
    }

    /** @return the held lock of {@code port}'s file, or null when another holder has it or it cannot be opened */
    private FileLock tryLock(int port) {
        Path file = lockFolder.resolve(port + ".lock");
        FileChannel ch = null;
        try {
            // never through a link: the folder is writable by everyone
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
            shareWithEveryUser(file);
            FileLock lock = ch.tryLock();
            if (lock != null) {
                return lock;
            }
        } catch (OverlappingFileLockException e) {
            // another allocator of this JVM holds it (the JVM's locks are per process, not per channel)
        } catch (IOException e) {
            // not ours to open (another user's file) or not lockable: someone else's
        }
        if (ch != null) {
            closeQuietly(ch);
        }
        return null;
    }

    /**
     * Makes a lock file this user created writable by every user (the umask took the bits away), so that another
     * user's JVM can lock that port once nobody holds it; a file of another user is left as it is.
     */
    private static void shareWithEveryUser(Path file) {
        try {
            if (Files.getOwner(file, LinkOption.NOFOLLOW_LINKS).getName().equals(System.getProperty("user.name"))) {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
            }
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            // not POSIX, or not ours after all: the port stays usable by this user
        }
    }

    /** @return whether a server socket can be bound to 127.0.0.1:port now (SO_REUSEADDR, as servers bind) */
    static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void closeQuietly(FileLock lock) {
        closeQuietly(lock.acquiredBy());
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close(); // closing the channel releases its lock
        } catch (Exception e) {
            // already closed
        }
    }
}
