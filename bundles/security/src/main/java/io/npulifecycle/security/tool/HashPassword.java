package io.npulifecycle.security.tool;

import java.io.ByteArrayOutputStream;
import java.io.Console;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;

/**
 * {@code npu-lifecycle hash-password [--role viewer|operator] USER}: reads a password and prints the line to add to
 * {@code etc/jolokia-users.properties}.
 *
 * <p>The password is read from the console without echo (asked twice) when there is one, else the first line of
 * standard input (for scripts: {@code printf '%s\n' "$PW" | npu-lifecycle hash-password alice}). A password shorter than
 * {@value PasswordHash#MIN_PASSWORD_LENGTH} characters is refused. The role defaults to {@code viewer}.
 */
public final class HashPassword {

    /** Usage line. */
    public static final String USAGE = "usage: npu-lifecycle hash-password [--role viewer|operator] USER";

    private HashPassword() {
    }

    /**
     * Runs the command.
     *
     * @param args the arguments after {@code hash-password}
     * @param console the terminal, or {@code null} to read standard input
     * @param in standard input
     * @param out where the users-file line goes
     * @param err messages
     * @return 0 on success, 2 on a usage error, a short or unreadable password, or two different passwords
     */
    public static int run(List<String> args, Console console, InputStream in, PrintStream out, PrintStream err) {
        Role role = Role.VIEWER;
        String user = null;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if ("--role".equals(a) || a.startsWith("--role=")) {
                String v = a.startsWith("--role=") ? a.substring(7) : (i + 1 < args.size() ? args.get(++i) : "");
                try {
                    role = Role.parse(v);
                } catch (IllegalArgumentException e) {
                    err.println("npu-lifecycle hash-password: " + e.getMessage() + "\n" + USAGE);
                    return 2;
                }
            } else if (a.startsWith("-") || user != null) {
                err.println("npu-lifecycle hash-password: unexpected argument '" + a + "'\n" + USAGE);
                return 2;
            } else {
                user = a;
            }
        }
        if (user == null) {
            err.println("npu-lifecycle hash-password: no user name given\n" + USAGE);
            return 2;
        }
        if (!UsersFile.USER.matcher(user).matches()) {
            err.println("npu-lifecycle hash-password: '" + user + "' is not a user name (expected 1 to 64 of "
                    + "A-Z a-z 0-9 . _ @ -)");
            return 2;
        }
        char[] password = null;
        try {
            if (console != null) {
                password = console.readPassword("Password for %s (%s): ", user, role.id());
                char[] again = console.readPassword("Same password again: ");
                boolean same = password != null && again != null && Arrays.equals(password, again);
                if (again != null) {
                    Arrays.fill(again, '\0');
                }
                if (!same) {
                    err.println("npu-lifecycle hash-password: the two passwords differ (or none was typed)");
                    return 2;
                }
            } else {
                password = firstLine(in);
            }
            if (password == null || password.length < PasswordHash.MIN_PASSWORD_LENGTH) {
                err.println("npu-lifecycle hash-password: the password must have at least "
                        + PasswordHash.MIN_PASSWORD_LENGTH + " characters");
                return 2;
            }
            PasswordHash hash = PasswordHash.create(password, new SecureRandom());
            out.println(new UsersFile.User(user, role, hash).line());
            out.flush();
            return 0;
        } catch (IOException e) {
            err.println("npu-lifecycle hash-password: cannot read the password from standard input: " + e);
            return 2;
        } finally {
            if (password != null) {
                Arrays.fill(password, '\0');
            }
        }
    }

    /** Reads the first line of {@code in} (at most 4 KiB) as UTF-8, without its line end. */
    static char[] firstLine(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (buf.size() >= 4096) {
                throw new IOException("the first line is longer than 4096 bytes");
            }
            buf.write(b);
        }
        byte[] bytes = buf.toByteArray();
        int len = bytes.length;
        if (len > 0 && bytes[len - 1] == '\r') {
            len--;
        }
        CharBuffer cb = StandardCharsets.UTF_8.decode(ByteBuffer.wrap(bytes, 0, len));
        char[] chars = new char[cb.remaining()];
        cb.get(chars);
        Arrays.fill(bytes, (byte) 0);
        if (cb.hasArray()) {
            Arrays.fill(cb.array(), '\0');
        }
        return chars;
    }
}
