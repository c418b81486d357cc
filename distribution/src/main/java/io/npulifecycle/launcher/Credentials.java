package io.npulifecycle.launcher;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Properties;
import java.util.Set;

import io.npulifecycle.security.tool.PasswordHash;
import io.npulifecycle.security.tool.Role;
import io.npulifecycle.security.tool.UsersFile;

/**
 * The Jolokia user and password of a runtime.
 *
 * <p>From the environment ({@code NPU_LIFECYCLE_JOLOKIA_USER}/{@code _PASSWORD}, as a Kubernetes Secret provides
 * them) when set; otherwise from {@code secrets/jolokia-credentials} under the runtime home, generated at first start
 * with 144 random bits and written atomically with mode 0600 in a 0700 folder. There is no built-in default
 * password. The password is never logged, and the runtime receives only its PBKDF2 hash ({@link #operatorLine()}):
 * this is the single {@code operator} user of the runtime, next to the users of {@code etc/jolokia-users.properties}.
 */
public final class Credentials {

    /** File name under {@code secrets/}. */
    public static final String FILE = "jolokia-credentials";

    private final String user;
    private final String password;
    private final String source;
    private String operatorLine;

    private Credentials(String user, String password, String source) {
        this.user = user;
        this.password = password;
        this.source = source;
    }

    /**
     * Resolves the credentials, generating and storing them on first start.
     *
     * @param settings the runtime settings (environment user/password, configured user name)
     * @param secrets the {@code secrets/} folder of the home
     * @param random the source of randomness for a generated password
     * @return the credentials and where they came from
     * @throws LaunchException ({@link LaunchException#USAGE}) when the stored file exists but is unreadable or
     *         malformed: it is left untouched (nothing is lost) and the message says how to fix it;
     *         ({@link LaunchException#HOME}) when it cannot be written
     */
    public static Credentials resolve(RuntimeSettings settings, Path secrets, SecureRandom random)
            throws LaunchException {
        if (settings.envUser() != null) {
            return new Credentials(settings.envUser(), settings.envPassword(),
                    "environment variables NPU_LIFECYCLE_JOLOKIA_USER/NPU_LIFECYCLE_JOLOKIA_PASSWORD");
        }
        Path file = secrets.resolve(FILE);
        if (Files.exists(file)) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IOException | IllegalArgumentException e) {
                throw new LaunchException(LaunchException.USAGE, file + ": cannot be read (" + e.getMessage()
                        + "); fix or delete it to generate new credentials", e);
            }
            String user = p.getProperty("user", "").trim();
            String password = p.getProperty("password", "");
            if (user.isEmpty() || password.length() < 12) {
                throw new LaunchException(LaunchException.USAGE, file + ": expected the keys user (non-empty) and "
                        + "password (at least 12 characters); fix or delete it to generate new credentials");
            }
            return new Credentials(user, password, file.toString());
        }
        byte[] bytes = new byte[18];
        random.nextBytes(bytes);
        String password = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        String content = "# Jolokia credentials of this npu-lifecycle runtime, generated at first start.\n"
                + "user=" + settings.jolokiaUser() + "\npassword=" + password + "\n";
        try {
            writeOwnerOnly(secrets, file, content);
        } catch (IOException e) {
            throw new LaunchException(LaunchException.HOME, "cannot store generated Jolokia credentials in " + file
                    + ": " + e, e);
        }
        return new Credentials(settings.jolokiaUser(), password, file + " (generated now)");
    }

    static void writeOwnerOnly(Path dir, Path file, String content) throws IOException {
        Set<PosixFilePermission> dirPerms = PosixFilePermissions.fromString("rwx------");
        Set<PosixFilePermission> filePerms = PosixFilePermissions.fromString("rw-------");
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, dirPerms);
        Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp",
                PosixFilePermissions.asFileAttribute(filePerms));
        try {
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** @return the user name */
    public String user() {
        return user;
    }

    /** @return the password (never log it) */
    public String password() {
        return password;
    }

    /**
     * The runtime's operator user as a line of {@code etc/jolokia-users.properties}: {@code <user>=operator:<PBKDF2
     * hash>} ({@link PasswordHash}). This, never the clear password, is what the runtime receives (framework property
     * {@code npu.lifecycle.jolokia.operator}). Computed once (about 0.2 s of CPU), with a fresh random salt.
     *
     * @return the line
     */
    public synchronized String operatorLine() {
        if (operatorLine == null) {
            char[] pw = password.toCharArray();
            try {
                operatorLine = new UsersFile.User(user, Role.OPERATOR, PasswordHash.create(pw, new SecureRandom()))
                        .line();
            } finally {
                java.util.Arrays.fill(pw, '\0');
            }
        }
        return operatorLine;
    }

    /**
     * Starts computing {@link #operatorLine()} on a daemon thread, so that the rest of the launcher's preparation
     * (access policy, users file, bundle list, ports, {@code deploy/}) runs beside its PBKDF2 iterations: on a
     * JVM limited to C1 ({@code -XX:TieredStopAtLevel=1}, the node agent's) SHA-256 has no compiler intrinsic and the
     * 210,000 iterations take about 0.6 s of CPU, on the way to the first probe. {@link #operatorLine()} waits for
     * that thread (it holds the lock while it computes) or computes the line itself if the thread has not begun; a
     * failure there is reported by the caller's own {@link #operatorLine()}, which tries again.
     *
     * @return these credentials
     */
    public Credentials hashInBackground() {
        Thread t = new Thread(() -> {
            try {
                operatorLine();
            } catch (RuntimeException e) {
                // the launcher's own call computes it again and reports the failure
            }
        }, "npu-lifecycle-operator-hash");
        t.setDaemon(true);
        t.start();
        return this;
    }

    /** @return where the credentials came from, for the log (a file path or the environment variable names) */
    public String source() {
        return source;
    }
}
