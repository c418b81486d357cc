package io.npulifecycle.launcher;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The launcher's guard of a simulated node (issue #26): a node runtime whose home configures the simulator
 * ({@link RuntimeHome#simulatorConfiguration()}) emulates its host, and a simulated node must never reboot the real
 * machine it runs on. So when the simulator is configured and the reboot executor's configuration
 * ({@link RuntimeHome#REBOOT_EXECUTOR_CONFIGURATIONS}, PID {@code io.npulifecycle.rebooter.executor}) sets key
 * {@code type} to anything but {@code none} ({@code libc}: sync and reboot(2); {@code command}: systemctl reboot in
 * the host's namespaces), the launcher refuses to start, exit code {@link LaunchException#USAGE}.
 *
 * <p>Rules:
 * <ul>
 * <li>no simulator configuration: nothing is checked (a production node reboots with {@code libc} or
 * {@code command});</li>
 * <li>no executor file, or no key {@code type} in it (the component's default {@code none}), or {@code type=none}:
 * accepted;</li>
 * <li>any other value, {@code libc} and {@code command} included, is refused, and so is a file that cannot be read or
 * parsed, a {@code ${...}} substitution (FileInstall would resolve it, the launcher cannot), a list where one value is
 * expected, a typed value that is not a string, or two spellings of the key with different values: the guard never
 * guesses towards a real executor.</li>
 * </ul>
 * The check runs once, at start. A file changed while the runtime runs cannot take the reboot away from the
 * simulator either: the simulator's own {@code RebootExecutor} service has ranking 1000, above the product's.
 */
final class SimulatedNodeGuard {

    /** The configuration key of the reboot method. */
    static final String KEY = "type";
    /** The only value accepted on a simulated node. */
    static final String NONE = "none";
    /**
     * A value in the Felix ConfigurationHandler format FileInstall also reads: an optional type letter, then a
     * quoted string ({@code "command"}, {@code T"command"}).
     */
    private static final Pattern TYPED = Pattern.compile("^([A-Za-z]?)\"(.*)\"$", Pattern.DOTALL);

    private SimulatedNodeGuard() {
    }

    /**
     * Refuses a node runtime whose home configures the simulator together with a reboot executor other than
     * {@code none}. Call it for the node role, after {@link RuntimeHome#prepare} and before anything starts.
     *
     * @param home the node runtime's home
     * @throws LaunchException ({@link LaunchException#USAGE}) naming the executor file, the key, its value and the
     *         simulator file, when the simulator is configured and the executor file sets a value other than
     *         {@code none} or cannot be read or parsed
     */
    static void check(RuntimeHome home) throws LaunchException {
        Path simulator = home.simulatorConfiguration();
        if (simulator == null) {
            return;
        }
        String why = "the simulator is configured in " + simulator + ": a simulated node must never reboot its host; "
                + "set " + KEY + "=" + NONE;
        for (Path file : executorFiles(home)) {
            String type;
            try {
                if (!Files.isRegularFile(file)) {
                    throw new Malformed("it is not a regular file");
                }
                type = type(file);
            } catch (IOException | Malformed e) {
                throw new LaunchException(LaunchException.USAGE, "npu-lifecycle: " + file + " cannot be read as the "
                        + "reboot executor's configuration (" + e.getMessage() + "), and " + why + " in that file "
                        + "(the launcher does not start a simulated node without knowing its reboot executor)", e);
            }
            if (type == null || NONE.equals(type)) {
                continue;
            }
            String what = "libc".equals(type) || "command".equals(type)
                    ? KEY + "=" + type + " selects a real reboot executor"
                    : KEY + "='" + type + "' is not " + NONE;
            throw new LaunchException(LaunchException.USAGE, "npu-lifecycle: " + file + ": key " + what + ", but "
                    + why);
        }
    }

    /**
     * Every file FileInstall would read as the reboot executor's configuration: in {@code etc/} and in
     * {@code deploy/} (FileInstall watches both), under the PID's own name or a targeted PID
     * ({@code io.npulifecycle.rebooter.executor|<bundle>...}, which ConfigAdmin gives the same component).
     *
     * @param home the runtime home
     * @return the files that exist, in name order per folder
     * @throws LaunchException when a folder cannot be listed
     */
    static java.util.List<Path> executorFiles(RuntimeHome home) throws LaunchException {
        java.util.List<Path> out = new java.util.ArrayList<>();
        String pid = "io.npulifecycle.rebooter.executor";
        for (Path dir : java.util.List.of(home.etc(), home.deploy())) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (java.util.stream.Stream<Path> files = Files.list(dir)) {
                files.filter(f -> {
                    String n = f.getFileName().toString();
                    return (n.endsWith(".cfg") || n.endsWith(".config"))
                            && (n.startsWith(pid + ".") || n.startsWith(pid + "|"));
                }).sorted().forEach(out::add);
            } catch (IOException e) {
                throw new LaunchException(LaunchException.USAGE, "npu-lifecycle: cannot list " + dir + " (" + e
                        + "), and a simulated node starts only when no file there selects a real reboot executor", e);
            }
        }
        return out;
    }

    /**
     * Reads key {@code type} of a reboot executor configuration file the way FileInstall does as far as this guard
     * needs: Java properties lines ({@code .cfg}, and {@code .config} whose values are quoted and may carry a type
     * letter), or the XML properties format when the file starts with {@code <}. The key is matched ignoring case
     * (Configuration Admin keys are case-insensitive).
     *
     * @param file a regular file
     * @return the value of key {@code type}, trimmed and unquoted, or {@code null} when the file has no such key
     * @throws IOException when the file cannot be read or its XML is not a properties document
     * @throws Malformed when the value cannot be known without guessing (see the class comment)
     */
    static String type(Path file) throws IOException, Malformed {
        byte[] bytes = Files.readAllBytes(file);
        // ISO-8859-1 decodes every byte: the values this guard accepts are ASCII in any encoding
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        Properties p = new Properties();
        String head = text.startsWith("\u00ef\u00bb\u00bf") ? text.substring(3) : text;
        if (head.stripLeading().startsWith("<")) {
            p.loadFromXML(new ByteArrayInputStream(bytes));
        } else {
            try {
                p.load(new StringReader(head));
            } catch (IllegalArgumentException e) {
                throw new Malformed("not a properties file: " + e.getMessage());
            }
        }
        List<String> raw = new ArrayList<>();
        for (String k : p.stringPropertyNames()) {
            if (KEY.equalsIgnoreCase(k.trim())) {
                raw.add(p.getProperty(k));
            }
        }
        if (raw.isEmpty()) {
            return null;
        }
        Set<String> values = new LinkedHashSet<>();
        for (String v : raw) {
            values.add(value(v));
        }
        if (values.size() > 1) {
            throw new Malformed("key " + KEY + " is given more than once, spelled differently, with the values "
                    + values);
        }
        return values.iterator().next();
    }

    /** @return a raw property value, trimmed and unquoted; refuses what FileInstall could read otherwise */
    private static String value(String raw) throws Malformed {
        String v = raw.trim();
        if (v.contains("${")) {
            throw new Malformed("key " + KEY + "='" + v + "' holds a ${...} substitution, which only FileInstall "
                    + "resolves");
        }
        if (v.startsWith("[") || v.startsWith("(")) {
            throw new Malformed("key " + KEY + "='" + v + "' is a list; one value is expected");
        }
        Matcher m = TYPED.matcher(v);
        if (m.matches()) {
            if (!m.group(1).isEmpty() && !"T".equals(m.group(1))) {
                throw new Malformed("key " + KEY + "='" + v + "' is typed " + m.group(1) + ", not a string (T)");
            }
            v = m.group(2).trim();
        }
        return v;
    }

    /** A reboot executor configuration whose value of {@code type} cannot be known without guessing. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }
}
