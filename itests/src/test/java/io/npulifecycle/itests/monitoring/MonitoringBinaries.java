package io.npulifecycle.itests.monitoring;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Assumptions;

/**
 * Finds the Debian packages' binaries ({@code prometheus}: {@code prometheus}; {@code prometheus-alertmanager}:
 * {@code prometheus-alertmanager}), installed by .ci/run. On CI (environment {@code CI=true}) a missing one fails the
 * test; elsewhere the test is skipped and says so on standard error.
 */
final class MonitoringBinaries {

    private MonitoringBinaries() {
    }

    /**
     * @param name the executable's name
     * @param debianPackage the Debian package that ships it
     * @return the first executable of that name on {@code PATH}
     */
    static Path require(String name, String debianPackage) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        String message = name + " not found on PATH: install the Debian package " + debianPackage
                + " (`apt-get install -y --no-install-recommends prometheus prometheus-alertmanager`, as .ci/run does)";
        if ("true".equals(System.getenv("CI"))) {
            fail(message + "; on CI it is required");
        }
        System.err.println("SKIPPED (local run): " + message);
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }
}
