package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RuntimeHomeTest {

    @TempDir
    Path tmp;

    static Path bundle(Path file, String bsn, String version) throws IOException {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().putValue("Bundle-ManifestVersion", "2");
        m.getMainAttributes().putValue("Bundle-SymbolicName", bsn + ";singleton:=true");
        m.getMainAttributes().putValue("Bundle-Version", version);
        try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, m)) {
            jar.flush();
        }
        return file;
    }

    @Test
    void aSimulatorConfigurationInEtcIsWhatMakesTheHomeASimulatedNode() throws Exception {
        RuntimeHome home = new RuntimeHome(tmp.resolve("home"));
        home.prepare(tmp.resolve("no-defaults"));
        assertFalse(home.simulatorConfigured(), "a fresh home runs a production node");
        Files.writeString(home.etc().resolve("io.npulifecycle.simulator.cfg.part"), "npus=8\n");
        Files.createDirectories(home.etc().resolve("io.npulifecycle.simulator.config"));
        Files.writeString(home.etc().resolve("io.npulifecycle.probe.cfg"), "interval=1\n");
        assertFalse(home.simulatorConfigured(), "only a simulator configuration file FileInstall reads counts");
        Files.writeString(home.etc().resolve("io.npulifecycle.simulator.cfg"), "npus=8\n");
        assertTrue(home.simulatorConfigured());
        Files.delete(home.etc().resolve("io.npulifecycle.simulator.cfg"));
        Files.delete(home.etc().resolve("io.npulifecycle.simulator.config"));
        Files.writeString(home.etc().resolve("io.npulifecycle.simulator.config"), "npus=I\"8\"\n");
        assertTrue(home.simulatorConfigured(), "the .config format too");
    }

    @Test
    void prepareCreatesTheLayoutAndKeepsOperatorEdits() throws Exception {
        Path defaults = Files.createDirectories(tmp.resolve("defaults"));
        Files.writeString(defaults.resolve("runtime.properties"), "http.port=8778\n");
        Files.writeString(defaults.resolve("jolokia-access.xml"), "<restrict/>");
        RuntimeHome home = new RuntimeHome(tmp.resolve("home"));
        Files.createDirectories(home.etc());
        Files.writeString(home.etc().resolve("runtime.properties"), "http.port=9999\n");
        home.prepare(defaults);
        for (Path d : new Path[] {home.etc(), home.deploy(), home.cache(), home.logs(), home.run()}) {
            assertTrue(Files.isDirectory(d), d.toString());
        }
        assertEquals("http.port=9999\n", Files.readString(home.etc().resolve("runtime.properties")));
        assertEquals("<restrict/>", Files.readString(home.etc().resolve("jolokia-access.xml")));
    }

    @Test
    void theUsersFileIsCopiedOwnerOnly() throws Exception {
        Path defaults = Files.createDirectories(tmp.resolve("defaults"));
        Files.writeString(defaults.resolve("jolokia-users.properties"), "# users\n");
        RuntimeHome home = new RuntimeHome(tmp.resolve("home"));
        home.prepare(defaults);
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(home.etc().resolve("jolokia-users.properties"))));
    }

    @Test
    void aHomeThatCannotBeCreatedIsAClearError() throws Exception {
        Path file = Files.writeString(tmp.resolve("plain-file"), "x");
        RuntimeHome home = new RuntimeHome(file.resolve("home"));
        LaunchException e = assertThrows(LaunchException.class, () -> home.prepare(tmp.resolve("none")));
        assertEquals(LaunchException.HOME, e.exitCode());
        assertTrue(e.getMessage().contains(file.resolve("home").toString()), e.getMessage());
        assertTrue(e.getMessage().contains("--home"), e.getMessage());
    }

    @Test
    void deployKeepsAnEqualOrNewerHotUpdateAndTakesANewerProductBundle() throws Exception {
        RuntimeHome home = new RuntimeHome(tmp.resolve("home"));
        home.prepare(tmp.resolve("none"));
        Path v1 = bundle(tmp.resolve("io.npulifecycle.probe-1.0.0.jar"), "io.npulifecycle.probe", "1.0.0");
        assertTrue(home.placeInDeploy(v1));
        Path placed = home.deploy().resolve("io.npulifecycle.probe.jar");
        assertEquals(placed, home.deployedFile(v1), "the file the launcher names in its log");
        assertEquals("1.0.0", RuntimeHome.version(placed));

        bundle(placed, "io.npulifecycle.probe", "1.1.0"); // an operator's hot update
        assertFalse(home.placeInDeploy(v1), "a restart must not undo a newer hot update");
        assertEquals("1.1.0", RuntimeHome.version(placed));

        Path v2 = bundle(tmp.resolve("io.npulifecycle.probe-2.0.0.jar"), "io.npulifecycle.probe", "2.0.0");
        assertTrue(home.placeInDeploy(v2), "a product upgrade replaces an older copy");
        assertEquals("2.0.0", RuntimeHome.version(placed));
        assertFalse(Files.exists(home.deploy().resolve("io.npulifecycle.probe.jar.part")));
    }

    @Test
    void versionsCompareNumericallyThenByQualifier() {
        assertTrue(RuntimeHome.compare("1.10.0", "1.9.0") > 0);
        assertTrue(RuntimeHome.compare("1.0.0.SNAPSHOT", "1.0.0") > 0);
        assertEquals(0, RuntimeHome.compare("1.0", "1.0.0"));
    }
}
