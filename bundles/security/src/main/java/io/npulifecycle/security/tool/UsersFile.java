package io.npulifecycle.security.tool;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The Jolokia users of a runtime: {@code etc/jolokia-users.properties}.
 *
 * <p>One user per line, {@code <user>=<role>:<password hash>}, e.g.
 * {@code alice=viewer:pbkdf2-sha256:210000:<salt>:<hash>} (the line {@code npu-lifecycle hash-password} prints); role
 * {@code viewer} or {@code operator} ({@link Role}), hash as {@link PasswordHash}. Blank lines and lines starting with
 * {@code #} or {@code !} are comments; spaces around {@code =} are ignored. User names are 1 to 64 of
 * {@code A-Z a-z 0-9 . _ @ -}. Parsed line by line (not with {@link java.util.Properties}) so that every error names its
 * line; a clear-text password is never accepted. The file is not a configuration: FileInstall only takes
 * {@code .cfg}, {@code .config} and {@code .jar} from {@code etc/}.
 */
public final class UsersFile {

    /** File name under {@code etc/}. */
    public static final String FILE = "jolokia-users.properties";
    /** Largest file read, bytes. */
    public static final long MAX_BYTES = 256 * 1024;
    static final Pattern USER = Pattern.compile("[A-Za-z0-9._@-]{1,64}");

    /** One user. */
    public static final class User {
        private final String name;
        private final Role role;
        private final PasswordHash hash;

        /**
         * @param name the user name
         * @param role the role
         * @param hash the password hash
         */
        public User(String name, Role role, PasswordHash hash) {
            this.name = name;
            this.role = role;
            this.hash = hash;
        }

        /** @return the user name */
        public String name() {
            return name;
        }

        /** @return the role */
        public Role role() {
            return role;
        }

        /** @return the password hash */
        public PasswordHash hash() {
            return hash;
        }

        /** @return the line of the users file for this user */
        public String line() {
            return name + "=" + role.id() + ":" + hash;
        }
    }

    /** A users file (or line) that cannot be used; the message names the file and the line. */
    public static final class UsersFileException extends Exception {
        private static final long serialVersionUID = 1L;

        /** @param message what is wrong, with file and line */
        public UsersFileException(String message) {
            super(message);
        }
    }

    private UsersFile() {
    }

    /**
     * Reads a users file.
     *
     * @param file the file
     * @return the users by name, in file order (possibly empty: a file of comments only)
     * @throws UsersFileException when the file is missing, unreadable, larger than {@value #MAX_BYTES} bytes, not
     *         UTF-8, or has a malformed line: the message names the file, the line number and what was expected
     */
    public static Map<String, User> read(Path file) throws UsersFileException {
        String text;
        try {
            if (!Files.isRegularFile(file)) {
                throw new UsersFileException(file + ": the Jolokia users file does not exist");
            }
            if (Files.size(file) > MAX_BYTES) {
                throw new UsersFileException(file + ": larger than " + MAX_BYTES + " bytes, not a users file");
            }
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(Files.readAllBytes(file))).toString();
        } catch (CharacterCodingException e) {
            throw new UsersFileException(file + ": not UTF-8 text");
        } catch (IOException e) {
            throw new UsersFileException(file + ": cannot be read: " + e);
        }
        return parse(text, file.toString());
    }

    /**
     * Parses the content of a users file.
     *
     * @param text the content
     * @param source the file name for messages
     * @return the users by name, in order
     * @throws UsersFileException naming {@code source}, the line number and what was expected
     */
    public static Map<String, User> parse(String text, String source) throws UsersFileException {
        Map<String, User> users = new LinkedHashMap<>();
        List<String> lines = new ArrayList<>(List.of(text.split("\r?\n|\r", -1)));
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith("!")) {
                continue;
            }
            User u = parseLine(line, source + ", line " + (i + 1));
            if (users.put(u.name(), u) != null) {
                throw new UsersFileException(source + ", line " + (i + 1) + ": user '" + u.name()
                        + "' is defined twice");
            }
        }
        return Collections.unmodifiableMap(users);
    }

    /**
     * Parses one entry.
     *
     * @param line {@code <user>=<role>:<hash>}
     * @param where the file and line, for messages
     * @return the user
     * @throws UsersFileException naming {@code where} and what was expected (never the hash itself)
     */
    public static User parseLine(String line, String where) throws UsersFileException {
        int eq = line.indexOf('=');
        if (eq < 0) {
            throw new UsersFileException(where + ": expected <user>=<role>:" + PasswordHash.ALGORITHM
                    + ":<iterations>:<salt>:<hash> (the line 'npu-lifecycle hash-password' prints), found no '='");
        }
        String name = line.substring(0, eq).strip();
        String value = line.substring(eq + 1).strip();
        if (!USER.matcher(name).matches()) {
            throw new UsersFileException(where + ": '" + name.replaceAll("[^\\x20-\\x7e]", "?")
                    + "' is not a user name (expected 1 to 64 of A-Z a-z 0-9 . _ @ -)");
        }
        int colon = value.indexOf(':');
        if (colon < 0) {
            throw new UsersFileException(where + ": user '" + name + "': expected <role>:<password hash> after '=' "
                    + "(a clear-text password is never accepted; use 'npu-lifecycle hash-password')");
        }
        Role role;
        PasswordHash hash;
        try {
            role = Role.parse(value.substring(0, colon));
            hash = PasswordHash.parse(value.substring(colon + 1));
        } catch (IllegalArgumentException e) {
            throw new UsersFileException(where + ": user '" + name + "': " + e.getMessage());
        }
        return new User(name, role, hash);
    }
}
