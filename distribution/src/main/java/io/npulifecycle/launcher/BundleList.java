package io.npulifecycle.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The bundles of a runtime, read from {@code conf/bundles.list} of the installation.
 *
 * <p>One line per bundle: {@code <start> <roles> <file>}. {@code start} is a start level (1 to 6) for bundles the
 * launcher installs itself, or {@code deploy} for the product's implementation bundles, which the launcher places in
 * the home's {@code deploy/} folder so that FileInstall manages them and they can be hot-updated by replacing the
 * file. {@code roles} is a comma list of {@code node}, {@code control-plane}, {@code shell} (only with the Gogo
 * shell), {@code simulator} (only in a node runtime whose home configures the simulator,
 * {@link RuntimeHome#simulatorConfigured()}: test tooling never runs in a production node), or {@code all}.
 * {@code #} starts a comment.
 */
public final class BundleList {

    /** One line of the list. */
    public static final class Entry {
        private final int startLevel;
        private final boolean deploy;
        private final Set<String> roles;
        private final Path file;

        Entry(int startLevel, boolean deploy, Set<String> roles, Path file) {
            this.startLevel = startLevel;
            this.deploy = deploy;
            this.roles = roles;
            this.file = file;
        }

        /** @return the start level (for deploy entries, FileInstall's start level) */
        public int startLevel() {
            return startLevel;
        }

        /** @return {@code true} when the bundle is delivered through {@code deploy/} */
        public boolean deploy() {
            return deploy;
        }

        /** @return the roles the bundle belongs to */
        public Set<String> roles() {
            return roles;
        }

        /** @return the bundle file in the installation */
        public Path file() {
            return file;
        }

        /**
         * @param role {@code node} or {@code control-plane}
         * @param shell whether the Gogo shell runs
         * @param simulator whether the runtime home configures the simulator
         *        ({@link RuntimeHome#simulatorConfigured()})
         * @return whether this bundle is part of that runtime
         */
        public boolean appliesTo(String role, boolean shell, boolean simulator) {
            if (roles.contains("shell") && !shell) {
                return false;
            }
            if (roles.contains(SIMULATOR)) {
                return simulator && LaunchOptions.Role.NODE.id().equals(role);
            }
            return roles.contains("all") || roles.contains(role) || roles.equals(Set.of("shell"));
        }
    }

    /** The roles value of bundles that only a node runtime with a simulator configuration installs. */
    public static final String SIMULATOR = "simulator";
    /** Start level of the bundles delivered through {@code deploy/}. */
    public static final int DEPLOY_START_LEVEL = 5;
    /** The framework's beginning start level (one above the highest level of {@code conf/bundles.list}). */
    public static final int FRAMEWORK_START_LEVEL = 7;

    private BundleList() {
    }

    /**
     * @param listFile {@code conf/bundles.list}
     * @param bundlesDir the folder the file names are relative to
     * @return the entries in file order
     * @throws LaunchException ({@link LaunchException#FAILED}) naming the file and line when the list is unreadable,
     *         malformed or names a missing jar: the installation is broken
     */
    public static List<Entry> read(Path listFile, Path bundlesDir) throws LaunchException {
        List<String> lines;
        try {
            lines = Files.readAllLines(listFile, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: cannot read " + listFile + ": " + e,
                    e);
        }
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            String where = listFile + " line " + (i + 1);
            if (f.length != 3) {
                throw new LaunchException(LaunchException.FAILED, where + ": expected '<start> <roles> <file>', got '"
                        + line + "'");
            }
            boolean deploy = "deploy".equals(f[0]);
            int level;
            try {
                level = deploy ? DEPLOY_START_LEVEL : Integer.parseInt(f[0]);
            } catch (NumberFormatException e) {
                throw new LaunchException(LaunchException.FAILED, where + ": start '" + f[0]
                        + "' is neither a start level nor 'deploy'");
            }
            if (level < 1 || level >= FRAMEWORK_START_LEVEL) {
                throw new LaunchException(LaunchException.FAILED, where + ": start level " + level
                        + " is outside 1.." + (FRAMEWORK_START_LEVEL - 1));
            }
            Path file = bundlesDir.resolve(f[2]);
            if (!Files.isRegularFile(file)) {
                throw new LaunchException(LaunchException.FAILED, where + ": bundle " + file + " is missing");
            }
            out.add(new Entry(level, deploy, Set.of(f[1].split(",")), file));
        }
        return out;
    }
}
