package io.npulifecycle.management.internal;

import java.net.URI;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * At most one copy of a bundle: a jar in a FileInstall folder whose {@code Bundle-SymbolicName} is already installed
 * from another location is refused, never installed beside it (two copies of a bundle that writes markers or
 * reboots would act twice).
 *
 * <p>The rule, in order:
 * <ol>
 * <li>A bundle with that symbolic name is installed (any state but UNINSTALLED) from another location: refused. The
 * installed bundle keeps running; updating it means replacing the file it was installed from.</li>
 * <li>None is installed (the first scan after a start, where the bundle cache is empty, or the installed copy was
 * removed): among the valid jars of the folders that carry the name and are not already held as refused, the file
 * named {@code <symbolic name>.jar} wins, else the first by path; the others are refused. So the outcome of a start
 * does not depend on the order in which FileInstall offers the files.</li>
 * </ol>
 * Pure function of its arguments, for {@link DeployFolderGuard}.
 */
final class SingleCopyRule {

    /**
     * A bundle of the framework.
     *
     * @param symbolicName its {@code Bundle-SymbolicName} without directives
     * @param location its install location (FileInstall uses the file's {@code file:} URI)
     * @param id its bundle id
     */
    record Installed(String symbolicName, String location, long id) {
    }

    private SingleCopyRule() {
    }

    /**
     * @param jar a valid bundle file in a watched folder
     * @param symbolicName its symbolic name (no directives)
     * @param installed the framework's bundles, UNINSTALLED ones left out
     * @param candidates the other valid, not refused jars of the watched folders and their symbolic names (may contain
     *        {@code jar} itself)
     * @return {@code null} when {@code jar} may be installed, else the reason naming the file or bundle that holds
     *         the name
     */
    static String refusal(Path jar, String symbolicName, List<Installed> installed, Map<Path, String> candidates) {
        Path self = jar.toAbsolutePath().normalize();
        for (Installed b : installed) {
            if (!symbolicName.equals(b.symbolicName())) {
                continue;
            }
            Optional<Path> from = file(b.location());
            if (from.isPresent() && from.get().equals(self)) {
                return null;
            }
            return "Bundle-SymbolicName " + symbolicName + " is already installed from "
                    + from.map(Path::toString).orElse(b.location()) + " (bundle id " + b.id()
                    + "): a second copy is never installed. To update that bundle, replace "
                    + from.map(p -> p.getFileName().toString()).orElse("its file")
                    + " (copy to a .part name, then rename over it), and remove this file";
        }
        Path winner = candidates.entrySet().stream()
                .filter(e -> symbolicName.equals(e.getValue()))
                .map(e -> e.getKey().toAbsolutePath().normalize())
                .min(order(symbolicName))
                .orElse(self);
        if (order(symbolicName).compare(self, winner) <= 0) {
            return null;
        }
        return "Bundle-SymbolicName " + symbolicName + " is also in " + winner
                + ", which is installed instead (of several files with one symbolic name, " + symbolicName
                + ".jar wins, else the first by name): a second copy is never installed; remove this file";
    }

    /** The file named {@code <symbolicName>.jar} first, then by path. */
    private static Comparator<Path> order(String symbolicName) {
        String canonical = symbolicName + ".jar";
        return Comparator.comparing((Path p) -> !p.getFileName().toString().equals(canonical))
                .thenComparing(Comparator.naturalOrder());
    }

    /** @return the file of a {@code file:} location, normalised; empty for any other location */
    static Optional<Path> file(String location) {
        if (location == null || !location.startsWith("file:")) {
            return Optional.empty();
        }
        try {
            return Optional.of(Path.of(URI.create(location)).toAbsolutePath().normalize());
        } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
            return Optional.empty();
        }
    }
}
