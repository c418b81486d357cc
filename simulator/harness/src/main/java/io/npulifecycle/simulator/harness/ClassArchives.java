package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Class-data sharing (CDS) archives of the simulated runtimes: the JVM of a node agent or a control plane maps the
 * classes an earlier run of the same role loaded (JDK, Felix, the bundles' fabric8, Jackson, Jetty) instead of parsing
 * and verifying them again, which takes a fifth of a runtime's start CPU. A simulated cluster starts dozens of
 * runtimes (every pod restart, every scenario), all on the same two cores.
 *
 * <p>One dynamic archive (JDK 13+, {@code -XX:ArchiveClassesAtExit}) per role, installation and JDK, in
 * {@code ${XDG_CACHE_HOME:-~/.cache}/npu-lifecycle/cds/<role>-<key>.jsa}; the key is a digest of the JDK
 * ({@code java.home}, {@code java.vm.version}) and of the name, size and modification time of every file under the
 * installation's {@code lib/} and {@code bundles/}, so a rebuilt distribution or another JDK gets a new archive. The
 * first start of a role without an archive writes it when that JVM exits (one writer: a claim file created
 * atomically; the archive is written under a temporary name and moved into place after the exit); every later start
 * maps it ({@code -XX:SharedArchiveFile}). The archives of other keys are deleted {@link #KEEP} after they were
 * written. A JVM that cannot use an archive (another JDK, a damaged file) runs without
 * one: the JVM validates the archive's header against itself and its class path and otherwise loads classes as usual
 * ({@code -Xshare:auto}, the default). Off with the system property {@value #PROPERTY}{@code =false}.
 */
final class ClassArchives {

    /** System property: {@code false} turns the archives off. */
    static final String PROPERTY = "npu.sim.classArchives";
    /** How long the archives of other builds are kept after their last write. */
    static final java.time.Duration KEEP = java.time.Duration.ofDays(2);

    /**
     * The JVM's CDS messages off: writing an archive lists every class it skips on standard output (hundreds of lines
     * in the runtime's console log), and an archive of another JDK is dropped silently rather than with a warning.
     */
    static final String QUIET = "-Xlog:cds*=off";

    private final Path dir;
    private final boolean enabled;

    /**
     * @param dir where the archives are kept
     * @param enabled false: {@link #forStart} never adds an option
     */
    ClassArchives(Path dir, boolean enabled) {
        this.dir = dir;
        this.enabled = enabled;
    }

    /** @return the archives of {@code ${XDG_CACHE_HOME:-~/.cache}/npu-lifecycle/cds}, on unless {@value #PROPERTY}=false */
    static ClassArchives standard() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return new ClassArchives(cache.resolve("npu-lifecycle").resolve("cds"),
                !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true")));
    }

    /**
     * What one start of a runtime adds to its JVM options, and what to do once that JVM has exited.
     *
     * @param options JVM options to append (empty: none)
     * @param dump the archive being written by this JVM, moved to {@code archive} by {@link #exited()}; null when none
     * @param archive the final archive path; null when none
     * @param claim the claim file of the writer; null when none
     */
    record Start(String options, Path dump, Path archive, Path claim) {

        /** Moves a written archive into place, or releases the claim so that a later start writes it. */
        void exited() {
            if (dump == null) {
                return;
            }
            try {
                if (Files.isRegularFile(dump) && Files.size(dump) > 0) {
                    try {
                        Files.move(dump, archive, StandardCopyOption.ATOMIC_MOVE);
                    } catch (AtomicMoveNotSupportedException e) {
                        Files.move(dump, archive, StandardCopyOption.REPLACE_EXISTING);
                    }
                } else {
                    Files.deleteIfExists(claim); // killed before it wrote the archive: the next start tries again
                }
            } catch (IOException e) {
                // no archive: the runtimes start as without one
            } finally {
                try {
                    Files.deleteIfExists(dump);
                } catch (IOException ignored) {
                    // a temporary file left in the cache folder
                }
            }
        }
    }

    /**
     * @param install the installation (holding {@code lib/} and {@code bundles/})
     * @param role {@code node} or {@code control-plane}
     * @return the options of one start: map the archive when it exists, else write it (when no other start does)
     */
    Start forStart(Path install, String role) {
        if (!enabled) {
            return new Start("", null, null, null);
        }
        try {
            Files.createDirectories(dir);
            String key = key(install);
            Path archive = dir.resolve(role + "-" + key + ".jsa");
            if (Files.isRegularFile(archive)) {
                return new Start(QUIET + " -XX:SharedArchiveFile=" + archive, null, null, null);
            }
            Path claim = dir.resolve(role + "-" + key + ".claim");
            try {
                Files.createFile(claim);
            } catch (FileAlreadyExistsException e) {
                return new Start("", null, null, null); // another start writes it
            }
            prune(role, key);
            Path dump = dir.resolve(role + "-" + key + "." + ProcessHandle.current().pid() + "-"
                    + System.nanoTime() + ".tmp");
            return new Start(QUIET + " -XX:ArchiveClassesAtExit=" + dump, dump, archive, claim);
        } catch (IOException | RuntimeException e) {
            return new Start("", null, null, null); // no cache folder: start as without archives
        }
    }

    /**
     * Deletes this role's files of other keys (other builds, clones or JDKs) untouched for {@link #KEEP}: every
     * rebuilt distribution makes a new archive of 40 to 70 MB per role. A JVM that still maps a deleted archive keeps
     * its pages (Linux).
     */
    private void prune(String role, String key) {
        long oldest = System.currentTimeMillis() - KEEP.toMillis();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.startsWith(role + "-") && !name.startsWith(role + "-" + key + ".")
                        && Files.getLastModifiedTime(f).toMillis() < oldest) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException | RuntimeException e) {
            // a file another build deletes at the same time, or no permission: left for the next start
        }
    }

    /** @return a digest of the JDK and of the installation's class files (names, sizes, modification times) */
    static String key(Path install) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(System.getProperty("java.home"));
        lines.add(System.getProperty("java.vm.version"));
        lines.add(install.toAbsolutePath().normalize().toString());
        for (String sub : List.of("lib", "bundles")) {
            Path d = install.resolve(sub);
            if (!Files.isDirectory(d)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(d)) {
                for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                    lines.add(install.relativize(f) + " " + Files.size(f) + " " + Files.getLastModifiedTime(f).toMillis());
                }
            }
        }
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(md.digest(String.join("\n", lines).getBytes(StandardCharsets.UTF_8)), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
