package io.npulifecycle.simulator.cluster.internal;

import io.npulifecycle.simulator.common.ChildProcess;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One record file per running real API server in a well-known folder (system property {@value #FOLDER_PROPERTY},
 * default {@code <java.io.tmpdir>/npu-lifecycle-kube-runs}), so that servers whose JVM died without closing them
 * (SIGKILL, a crash) are stopped by the next start: {@link #reapLeftovers()} kills the recorded child processes of
 * every record whose JVM is gone and removes their data folders.
 *
 * <p>A record holds the JVM's pid and start instant, the data folder, and each child's pid and start instant. A pid
 * is killed only when the process with that pid started at the recorded instant, so a reused pid is never hit.
 */
public final class RunRecords {

    /** System property: the folder of the records. */
    public static final String FOLDER_PROPERTY = "npu.kube.runs";

    private static final String SUFFIX = ".run";

    private final Path folder;

    /**
     * @param folder the folder of the records (created when needed)
     */
    public RunRecords(Path folder) {
        this.folder = folder;
    }

    /** @return the records of {@value #FOLDER_PROPERTY}, default {@code <java.io.tmpdir>/npu-lifecycle-kube-runs} */
    public static RunRecords standard() {
        String p = System.getProperty(FOLDER_PROPERTY);
        return new RunRecords(p != null && !p.isBlank() ? Paths.get(p)
                : Paths.get(System.getProperty("java.io.tmpdir"), "npu-lifecycle-kube-runs"));
    }

    /** @return the folder */
    public Path folder() {
        return folder;
    }

    /**
     * Opens the record of a new server of this JVM.
     *
     * @param dataFolder the server's data folder (removed by a later reaper when this JVM is gone)
     * @return the record; {@link Record#add(ChildProcess)} each child as it starts
     * @throws UncheckedIOException when the folder cannot be written
     */
    public Record open(Path dataFolder) {
        ProcessHandle self = ProcessHandle.current();
        Properties p = new Properties();
        p.setProperty("jvm.pid", Long.toString(self.pid()));
        p.setProperty("jvm.start", self.info().startInstant().orElse(Instant.EPOCH).toString());
        p.setProperty("data", dataFolder.toAbsolutePath().toString());
        Record r = new Record(folder.resolve(UUID.randomUUID() + SUFFIX), p);
        r.write();
        return r;
    }

    /**
     * Stops what dead JVMs left running: for every record whose JVM no longer runs, kills (SIGKILL) each recorded
     * child that still runs, removes its data folder and the record.
     *
     * @return the pids killed
     */
    public List<Long> reapLeftovers() {
        List<Long> killed = new ArrayList<>();
        if (!Files.isDirectory(folder)) {
            return killed;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(folder, "*" + SUFFIX)) {
            for (Path f : files) {
                Properties p = read(f);
                if (p == null || alive(p, "jvm")) {
                    continue;
                }
                for (String key : p.stringPropertyNames()) {
                    if (key.endsWith(".pid") && !key.equals("jvm.pid")) {
                        String child = key.substring(0, key.length() - ".pid".length());
                        handle(p, child).ifPresent(h -> {
                            h.destroyForcibly();
                            awaitExit(h);
                            killed.add(h.pid());
                        });
                    }
                }
                String data = p.getProperty("data");
                if (data != null) {
                    deleteTree(Paths.get(data));
                }
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clean up leftover API servers recorded in " + folder, e);
        }
        return killed;
    }

    private static void awaitExit(ProcessHandle h) {
        try {
            h.onExit().get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            // reported by the caller's next start failing to bind, if ever
        }
    }

    private static boolean alive(Properties p, String who) {
        return handle(p, who).isPresent();
    }

    /** The process of a record entry, when one with that pid still runs and started at the recorded instant. */
    private static Optional<ProcessHandle> handle(Properties p, String who) {
        try {
            long pid = Long.parseLong(p.getProperty(who + ".pid", "-1"));
            String start = p.getProperty(who + ".start", "");
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                    .filter(h -> h.info().startInstant().map(Instant::toString).orElse("").equals(start));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static Properties read(Path f) {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(f)) {
            p.load(in);
            return p;
        } catch (IOException e) {
            return null; // being written or removed by its owner right now
        }
    }

    /**
     * Deletes a folder and everything in it; nothing when it does not exist.
     *
     * @param dir the folder
     * @throws UncheckedIOException when something cannot be deleted
     */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    /** The record of one server of this JVM. */
    public static final class Record {
        private final Path file;
        private final Properties properties;

        Record(Path file, Properties properties) {
            this.file = file;
            this.properties = properties;
        }

        /** @return the record file */
        public Path file() {
            return file;
        }

        /**
         * Adds a child process (key {@code <name>.pid}, {@code <name>.start}) and rewrites the file.
         *
         * @param child the process just started
         */
        public synchronized void add(ChildProcess child) {
            properties.setProperty(child.name() + ".pid", Long.toString(child.pid()));
            properties.setProperty(child.name() + ".start", child.startInstant().toString());
            write();
        }

        /** Removes the record (the server was closed). */
        public void remove() {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove " + file, e);
            }
        }

        private synchronized void write() {
            try {
                Files.createDirectories(file.getParent());
                Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
                try (OutputStream out = Files.newOutputStream(tmp)) {
                    properties.store(out, "a real API server of simulator/cluster (RealApiServer)");
                }
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + file, e);
            }
        }
    }
}
