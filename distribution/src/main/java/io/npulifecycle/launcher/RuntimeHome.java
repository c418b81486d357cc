package io.npulifecycle.launcher;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * The runtime home folder: {@code etc/} (configuration, watched by FileInstall and fed to ConfigAdmin),
 * {@code deploy/} (bundles, watched by FileInstall), {@code cache/} (the framework's bundle cache, cleaned at each
 * start), {@code logs/}, {@code secrets/} (mode 0700) and {@code run/} (files the launcher writes each start).
 */
public final class RuntimeHome {

    /** File that marks a folder as an npu-lifecycle runtime home. */
    public static final String MARKER = ".npu-lifecycle-home";
    /** Lock file held while a runtime uses the home. */
    public static final String LOCK = ".lock";
    /**
     * The files in {@code etc/} that configure the simulator (PID {@code io.npulifecycle.simulator}, in either of
     * the two formats FileInstall reads).
     */
    public static final java.util.List<String> SIMULATOR_CONFIGURATIONS = java.util.List.of(
            "io.npulifecycle.simulator.cfg", "io.npulifecycle.simulator.config");
    /**
     * The files in {@code etc/} that configure the reboot executor (PID {@code io.npulifecycle.rebooter.executor},
     * key {@code type}: {@code none}, {@code libc} or {@code command}), in either of the two formats FileInstall
     * reads. {@link SimulatedNodeGuard} reads them when the simulator is configured.
     */
    public static final java.util.List<String> REBOOT_EXECUTOR_CONFIGURATIONS = java.util.List.of(
            "io.npulifecycle.rebooter.executor.cfg", "io.npulifecycle.rebooter.executor.config");

    private final Path root;
    private java.nio.channels.FileChannel lockChannel;
    private java.nio.channels.FileLock lock;

    /**
     * @param root the absolute home folder
     */
    public RuntimeHome(Path root) {
        this.root = root;
    }

    /**
     * Creates the folders, checks that the home is writable, and copies the default configuration files that are
     * missing from {@code etc/}. Existing files are never overwritten: the operator's edits are kept.
     *
     * @param defaults the installation's {@code conf/defaults/} folder
     * @throws LaunchException ({@link LaunchException#HOME}) naming the folder and the reason when the home cannot
     *         be created or written
     */
    public void prepare(Path defaults) throws LaunchException {
        refuseForeignFolder();
        try {
            for (Path d : new Path[] {root, etc(), deploy(), cache(), logs(), run()}) {
                Files.createDirectories(d);
            }
            Path probe = Files.createTempFile(root, ".write-check", ".tmp");
            Files.delete(probe);
            if (!Files.exists(root.resolve(MARKER))) {
                Files.writeString(root.resolve(MARKER), "This folder is an npu-lifecycle runtime home.\n");
            }
        } catch (IOException | SecurityException e) {
            throw new LaunchException(LaunchException.HOME, "npu-lifecycle: the runtime home " + root
                    + " cannot be used: " + describe(e) + ". Give a writable folder with --home DIR.", e);
        }
        if (Files.isDirectory(defaults)) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(defaults)) {
                for (Path src : ds) {
                    Path dst = etc().resolve(src.getFileName().toString());
                    if (Files.isRegularFile(src) && !Files.exists(dst)) {
                        copyAtomically(src, dst);
                    }
                }
            } catch (IOException e) {
                throw new LaunchException(LaunchException.HOME, "cannot copy default configuration from " + defaults
                        + " to " + etc() + ": " + e, e);
            }
        }
    }

    /**
     * Refuses a folder that exists, is not empty and is not a runtime home: the runtime cleans its bundle cache and
     * writes etc/, deploy/, logs/ there, which must never touch an operator's unrelated files (for example
     * {@code --home /var} or the current folder).
     */
    private void refuseForeignFolder() throws LaunchException {
        if (!Files.isDirectory(root) || Files.exists(root.resolve(MARKER)) || Files.isDirectory(etc())) {
            return;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(root)) {
            if (ds.iterator().hasNext()) {
                throw new LaunchException(LaunchException.HOME, "npu-lifecycle: " + root + " is not empty and is "
                        + "not an npu-lifecycle runtime home (no " + MARKER + "): give a new or empty folder with "
                        + "--home DIR");
            }
        } catch (IOException e) {
            throw new LaunchException(LaunchException.HOME, "npu-lifecycle: the runtime home " + root
                    + " cannot be used: " + describe(e) + ". Give a writable folder with --home DIR.", e);
        }
    }

    /**
     * Takes the home's lock for the life of this process, so two runtimes never share a home (bundle cache, state,
     * logs). The lock file records the pid and role of the holder.
     *
     * @param role the runtime's role, recorded in the lock file
     * @throws LaunchException ({@link LaunchException#HOME}) naming the holder when another runtime uses the home
     */
    public void lock(String role) throws LaunchException {
        Path file = root.resolve(LOCK);
        try {
            lockChannel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.READ);
            lock = lockChannel.tryLock();
            if (lock == null) {
                String holder = new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.UTF_8).trim();
                lockChannel.close();
                throw new LaunchException(LaunchException.HOME, "npu-lifecycle: the runtime home " + root
                        + " is in use by another runtime (" + (holder.isEmpty() ? "unknown" : holder)
                        + "); give each runtime its own --home");
            }
            lockChannel.truncate(0);
            lockChannel.write(java.nio.ByteBuffer.wrap(("pid=" + ProcessHandle.current().pid() + " role=" + role
                    + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0);
            lockChannel.force(true);
        } catch (IOException e) {
            throw new LaunchException(LaunchException.HOME, "npu-lifecycle: cannot lock the runtime home " + root
                    + ": " + describe(e), e);
        }
    }

    /**
     * Removes {@code deploy/<symbolic name>.jar} when the installation now starts that bundle itself (an older
     * installation delivered it through deploy/), so it never runs twice.
     *
     * @param bundle a bundle the launcher installs
     * @return {@code true} when a copy was removed
     */
    public boolean removeFromDeploy(Path bundle) throws LaunchException {
        try {
            String bsn = symbolicName(bundle);
            if (!bsn.startsWith("io.npulifecycle.")) {
                return false;
            }
            return Files.deleteIfExists(deploy().resolve(bsn + ".jar"));
        } catch (IOException e) {
            throw new LaunchException(LaunchException.HOME, "cannot clean " + deploy() + ": " + e, e);
        }
    }

    private static String describe(Exception e) {
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied on " + e.getMessage();
        }
        if (e instanceof java.nio.file.FileSystemException) {
            java.nio.file.FileSystemException f = (java.nio.file.FileSystemException) e;
            return f.getFile() + (f.getReason() != null ? ": " + f.getReason() : ": " + e.getClass().getSimpleName());
        }
        return String.valueOf(e.getMessage());
    }

    /**
     * Places a product implementation bundle in {@code deploy/} under its symbolic name, e.g.
     * {@code deploy/io.npulifecycle.probe.jar}, unless a copy with the same or a higher Bundle-Version is already
     * there (an operator's hot update is kept across restarts; a product upgrade with newer bundles replaces it).
     *
     * @param bundle the product bundle in the installation
     * @return {@code true} when the file in {@code deploy/} was written
     * @throws LaunchException ({@link LaunchException#HOME}) when it cannot be written
     */
    public boolean placeInDeploy(Path bundle) throws LaunchException {
        try {
            Path dst = deployedFile(bundle);
            if (Files.exists(dst)) {
                String have = versionOrNull(dst);
                String offered = version(bundle);
                if (have != null && compare(have, offered) >= 0) {
                    return false;
                }
            }
            copyAtomically(bundle, dst);
            return true;
        } catch (IOException e) {
            throw new LaunchException(LaunchException.HOME, "cannot place " + bundle + " in " + deploy() + ": " + e, e);
        }
    }

    /**
     * @param bundle a product bundle of the installation
     * @return the file {@link #placeInDeploy} writes for it: {@code deploy/<Bundle-SymbolicName>.jar}
     * @throws LaunchException ({@link LaunchException#HOME}) when the bundle's manifest cannot be read
     */
    public Path deployedFile(Path bundle) throws LaunchException {
        try {
            return deploy().resolve(symbolicName(bundle) + ".jar");
        } catch (IOException e) {
            throw new LaunchException(LaunchException.HOME, "cannot read the manifest of " + bundle + ": " + e, e);
        }
    }

    static void copyAtomically(Path src, Path dst) throws IOException {
        // FileInstall ignores names that do not match its filter (.jar/.cfg/.config), so it never sees a half copy.
        Path tmp = dst.resolveSibling(dst.getFileName() + ".part");
        Files.copy(src, tmp, StandardCopyOption.REPLACE_EXISTING);
        if (tmp.getFileName().toString().startsWith("jolokia-users.")) {
            // password hashes: owner only (docs/security.md)
            try {
                Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system
            }
        }
        try {
            Files.move(tmp, dst, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, dst, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    static String symbolicName(Path jar) throws IOException {
        String bsn = header(jar, "Bundle-SymbolicName");
        if (bsn == null) {
            throw new IOException(jar + " is not an OSGi bundle (no Bundle-SymbolicName)");
        }
        int semi = bsn.indexOf(';');
        return (semi < 0 ? bsn : bsn.substring(0, semi)).trim();
    }

    static String version(Path jar) throws IOException {
        String v = header(jar, "Bundle-Version");
        return v == null ? "0.0.0" : v.trim();
    }

    private static String versionOrNull(Path jar) {
        try {
            return version(jar);
        } catch (IOException e) {
            return null; // a broken copy in deploy/ is replaced
        }
    }

    private static String header(Path jar, String name) throws IOException {
        try (JarFile jf = new JarFile(jar.toFile())) {
            Manifest m = jf.getManifest();
            return m == null ? null : m.getMainAttributes().getValue(name);
        }
    }

    /**
     * Compares OSGi versions {@code major.minor.micro.qualifier}; the qualifier compares as a string.
     *
     * @return negative, zero or positive as {@code a} is lower than, equal to or higher than {@code b}
     */
    static int compare(String a, String b) {
        String[] x = a.split("\\.", 4);
        String[] y = b.split("\\.", 4);
        for (int i = 0; i < 3; i++) {
            int c = Integer.compare(num(x, i), num(y, i));
            if (c != 0) {
                return c;
            }
        }
        return (x.length > 3 ? x[3] : "").compareTo(y.length > 3 ? y[3] : "");
    }

    private static int num(String[] parts, int i) {
        if (i >= parts.length) {
            return 0;
        }
        try {
            return Integer.parseInt(parts[i]);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Whether this home's node runtime emulates its host: a simulator configuration
     * ({@link #SIMULATOR_CONFIGURATIONS}) is in {@code etc/}. The launcher reads it at start and installs the
     * simulator bundle only then; one added while the runtime runs takes effect at the next start.
     *
     * @return {@code true} when {@code etc/} holds a simulator configuration file
     */
    public boolean simulatorConfigured() {
        return simulatorConfiguration() != null;
    }

    /**
     * The simulator configuration file that makes this home's node runtime emulate its host, as
     * {@link #simulatorConfigured()} decides.
     *
     * @return the first of {@link #SIMULATOR_CONFIGURATIONS} that is a regular file in {@code etc/}, or {@code null}
     *         when there is none (a production node)
     */
    public Path simulatorConfiguration() {
        for (String name : SIMULATOR_CONFIGURATIONS) {
            Path file = etc().resolve(name);
            if (Files.isRegularFile(file)) {
                return file;
            }
        }
        return null;
    }

    /** @return the home folder */
    public Path root() {
        return root;
    }

    /** @return {@code etc/} */
    public Path etc() {
        return root.resolve("etc");
    }

    /** @return {@code deploy/} */
    public Path deploy() {
        return root.resolve("deploy");
    }

    /** @return {@code cache/}; the framework storage is {@code cache/osgi}, cleaned at every start */
    public Path cache() {
        return root.resolve("cache");
    }

    /** @return {@code logs/} */
    public Path logs() {
        return root.resolve("logs");
    }

    /** @return {@code secrets/} */
    public Path secrets() {
        return root.resolve("secrets");
    }

    /** @return {@code run/} */
    public Path run() {
        return root.resolve("run");
    }
}
