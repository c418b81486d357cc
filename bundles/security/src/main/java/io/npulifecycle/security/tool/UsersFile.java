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
 * line; a clear-text password is never accepted. {@link #read} refuses a file with any malformed line;
 * {@link #load(Path)}, what the runtime uses, keeps the valid lines and reports each other one. The file is not a configuration: FileInstall only takes
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
     * Reads a users file, strictly: any malformed line is an error (the launcher's check and tools).
     *
     * @param file the file
     * @return the users by name, in file order (possibly empty: a file of comments only)
     * @throws UsersFileException when the file is missing, unreadable, larger than {@value #MAX_BYTES} bytes, not
     *         UTF-8, or has a malformed line: the message names the file, the line number and what was expected
     */
    public static Map<String, User> read(Path file) throws UsersFileException {
        return parse(text(file), file.toString());
    }

    /**
     * The users of a users file's valid lines, and what is wrong with each other line: what the runtime uses, so one
     * bad line locks out only the user it was meant to define.
     */
    public static final class Loaded {
        private final Map<String, User> users;
        private final List<String> problems;

        Loaded(Map<String, User> users, List<String> problems) {
            this.users = users;
            this.problems = problems;
        }

        /** @return the users of the valid lines, by name, in file order */
        public Map<String, User> users() {
            return users;
        }

        /**
         * @return one message per line not used, in file order: the file, the line number and what was expected
         *         (never the password hash); empty when every line is valid
         */
        public List<String> problems() {
            return problems;
        }
    }

    /**
     * Reads a users file line by line, keeping its valid lines: a malformed line is reported and skipped, and a user
     * defined on two lines is defined by neither (which one was meant is not known).
     *
     * @param file the file
     * @return the users of the valid lines and a problem per other line
     * @throws UsersFileException when the file as a whole cannot be used: missing, unreadable, larger than
     *         {@value #MAX_BYTES} bytes or not UTF-8
     */
    public static Loaded load(Path file) throws UsersFileException {
        return load(text(file), file.toString());
    }

    /**
     * @param text the content of a users file
     * @param source the file name for messages
     * @return the users of the valid lines and a problem per other line (see {@link #load(Path)})
     */
    public static Loaded load(String text, String source) {
        Map<String, User> users = new LinkedHashMap<>();
        Map<String, Integer> firstLine = new java.util.HashMap<>();
        java.util.Set<String> twice = new java.util.HashSet<>();
        List<String> problems = new ArrayList<>();
        List<String> lines = List.of(text.split("\r?\n|\r", -1));
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith("!")) {
                continue;
            }
            String where = source + ", line " + (i + 1);
            try {
                User u = parseLine(line, where);
                Integer first = firstLine.putIfAbsent(u.name(), i + 1);
                if (first == null) {
                    users.put(u.name(), u);
                } else {
                    twice.add(u.name());
                    problems.add(where + ": user '" + u.name() + "' is defined twice (first on line " + first
                            + "): neither line is used");
                }
            } catch (UsersFileException e) {
                problems.add(e.getMessage());
            }
        }
        users.keySet().removeAll(twice);
        return new Loaded(Collections.unmodifiableMap(users), List.copyOf(problems));
    }

    /** @return the file's text, checked: a regular file, at most {@value #MAX_BYTES} bytes, UTF-8 */
    private static String text(Path file) throws UsersFileException {
        try {
            if (!Files.isRegularFile(file)) {
                throw new UsersFileException(file + ": the Jolokia users file does not exist");
            }
            if (Files.size(file) > MAX_BYTES) {
                throw new UsersFileException(file + ": larger than " + MAX_BYTES + " bytes, not a users file");
            }
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(Files.readAllBytes(file))).toString();
        } catch (CharacterCodingException e) {
            throw new UsersFileException(file + ": not UTF-8 text");
        } catch (IOException e) {
            throw new UsersFileException(file + ": cannot be read: " + e);
        }
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
