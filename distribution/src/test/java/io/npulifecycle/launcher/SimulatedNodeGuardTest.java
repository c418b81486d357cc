package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #26: a node runtime configured for the simulator refuses a real reboot executor (exit 2, naming the file, the
 * key, the value and why), and refuses an executor file it cannot read; without the simulator (production) or with
 * {@code type=none} it starts as before.
 */
class SimulatedNodeGuardTest {

    static final String SIMULATOR = "io.npulifecycle.simulator.cfg";
    static final String EXECUTOR = "io.npulifecycle.rebooter.executor.cfg";

    @TempDir
    Path tmp;

    RuntimeHome home;

    @BeforeEach
    void home() throws Exception {
        home = new RuntimeHome(tmp.resolve("home"));
        home.prepare(tmp.resolve("no-defaults"));
    }

    Path simulator() throws Exception {
        return Files.writeString(home.etc().resolve(SIMULATOR), "stateDir=/tmp/sim\nrestartMode=exit\n");
    }

    Path executor(String name, String text) throws Exception {
        return Files.writeString(home.etc().resolve(name), text);
    }

    LaunchException refused() {
        LaunchException e = assertThrows(LaunchException.class, () -> SimulatedNodeGuard.check(home));
        assertEquals(LaunchException.USAGE, e.exitCode(), e.getMessage());
        return e;
    }

    static void assertContains(String message, String... parts) {
        for (String p : parts) {
            assertTrue(message.contains(p), "'" + p + "' missing from: " + message);
        }
    }

    @Test
    void simulatorWithTypeCommandIsRefusedNamingFileKeyValueAndWhy() throws Exception {
        Path sim = simulator();
        Path exec = executor(EXECUTOR, "type=command\ncommandTimeoutSeconds=60\n");
        assertContains(refused().getMessage(), exec.toString(), "key type=command", "selects a real reboot executor",
                "the simulator is configured in " + sim + ": a simulated node must never reboot its host; set type=none");
    }

    @Test
    void anExecutorInDeployOrUnderATargetedPidIsRefusedToo() throws Exception {
        simulator();
        // FileInstall watches deploy/ too, and ConfigAdmin gives a targeted PID's file to the same component
        Files.createDirectories(home.deploy());
        Path deployed = Files.writeString(home.deploy().resolve(EXECUTOR), "type=command\n");
        assertContains(refused().getMessage(), deployed.toString(), "key type=command");
        Files.delete(deployed);
        Path targeted = executor("io.npulifecycle.rebooter.executor|io.npulifecycle.rebooter.cfg", "type=libc\n");
        assertContains(refused().getMessage(), targeted.toString(), "key type=libc");
        Files.delete(targeted);
        executor("io.npulifecycle.rebooter.executorX.cfg", "type=command\n"); // another PID: not the executor's
        SimulatedNodeGuard.check(home);
    }

    @Test
    void simulatorWithTypeLibcIsRefused() throws Exception {
        Path sim = simulator();
        Path exec = executor(EXECUTOR, "type = libc \n");
        assertContains(refused().getMessage(), exec.toString(), "key type=libc", "the simulator is configured in " + sim);
    }

    @Test
    void simulatorWithTypeNoneNoKeyOrNoFileIsAccepted() throws Exception {
        simulator();
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home), "no executor file: the default none");
        executor(EXECUTOR, "type=none\ncommandTimeoutSeconds=60\n");
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home), "type=none, as the chart writes it");
        executor(EXECUTOR, "# no type: the component's default none\ncommandTimeoutSeconds=60\n");
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home));
        executor(EXECUTOR, "");
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home), "an empty file");
        executor("io.npulifecycle.rebooter.executor.config", "type=T\"none\"\n");
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home), "the typed .config format");
    }

    @Test
    void withoutTheSimulatorARealExecutorIsAcceptedAsInProduction() throws Exception {
        executor(EXECUTOR, "type=command\n");
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home));
        executor(EXECUTOR, "type=libc\n");
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home));
        executor(EXECUTOR, "type=\\u00zz broken\n");
        assertDoesNotThrow(() -> SimulatedNodeGuard.check(home), "not the launcher's business on a production node");
    }

    @Test
    void everySpellingFileInstallReadsAsARealExecutorIsRefused() throws Exception {
        simulator();
        // the .config format (quoted, optionally typed), the XML properties form, the key in other case
        // (Configuration Admin keys ignore case), and both files at once
        Path config = home.etc().resolve("io.npulifecycle.rebooter.executor.config");
        Files.writeString(config, "type=\"command\"\n");
        assertContains(refused().getMessage(), config.toString(), "key type=command");
        Files.writeString(config, "type=T\"libc\"\n");
        assertContains(refused().getMessage(), "key type=libc");
        Files.delete(config);
        executor(EXECUTOR, "<?xml version=\"1.0\"?>\n<!DOCTYPE properties SYSTEM \"http://java.sun.com/dtd/properties.dtd\">\n"
                + "<properties><entry key=\"type\">command</entry></properties>\n");
        assertContains(refused().getMessage(), "key type=command");
        executor(EXECUTOR, "TYPE=command\n");
        assertContains(refused().getMessage(), "key type=command");
        executor(EXECUTOR, "type=none\n");
        Files.writeString(config, "type=\"command\"\n");
        assertContains(refused().getMessage(), config.toString(), "key type=command");
    }

    @Test
    void anUnknownValueIsRefusedToo() throws Exception {
        simulator();
        Path exec = executor(EXECUTOR, "type=reboot-now\n");
        assertContains(refused().getMessage(), exec.toString(), "key type='reboot-now' is not none", "set type=none");
        executor(EXECUTOR, "type=\n");
        assertContains(refused().getMessage(), "key type='' is not none");
    }

    @Test
    void aMalformedOrUnreadableExecutorFileIsRefusedNamingIt() throws Exception {
        Path sim = simulator();
        Path exec = executor(EXECUTOR, "type=\\u00zz\n");
        assertContains(refused().getMessage(), exec.toString(), "cannot be read as the reboot executor's configuration",
                "not a properties file", "the simulator is configured in " + sim);
        executor(EXECUTOR, "type=${env:REBOOT_TYPE}\n");
        assertContains(refused().getMessage(), exec.toString(), "substitution");
        executor(EXECUTOR, "type=[\"none\",\"command\"]\n");
        assertContains(refused().getMessage(), exec.toString(), "is a list");
        executor(EXECUTOR, "type=I\"1\"\n");
        assertContains(refused().getMessage(), exec.toString(), "not a string");
        executor(EXECUTOR, "type=none\nTYPE=command\n");
        assertContains(refused().getMessage(), exec.toString(), "more than once");
        executor(EXECUTOR, "<properties><entry key=\"type\">none</entry>\n");
        assertContains(refused().getMessage(), exec.toString(), "cannot be read");
        Files.delete(exec);
        Files.createDirectories(exec);
        assertContains(refused().getMessage(), exec.toString(), "not a regular file");
    }

    @Test
    void theNodeLauncherExitsWith2BeforeAnythingStarts() throws Exception {
        Path sim = simulator();
        Path exec = executor(EXECUTOR, "type=command\n");
        Path install = Files.createDirectories(tmp.resolve("install"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String before = System.getProperty("npu.lifecycle.install");
        System.setProperty("npu.lifecycle.install", install.toString());
        int rc;
        try {
            rc = new Main(Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8))
                    .run(new String[] {"node", "--home", home.root().toString(), "--no-shell"});
        } finally {
            if (before == null) {
                System.clearProperty("npu.lifecycle.install");
            } else {
                System.setProperty("npu.lifecycle.install", before);
            }
        }
        String said = err.toString(StandardCharsets.UTF_8);
        assertEquals(LaunchException.USAGE, rc, said);
        assertContains(said, exec.toString(), "key type=command",
                "the simulator is configured in " + sim + ": a simulated node must never reboot its host; set type=none");
        assertEquals("", out.toString(StandardCharsets.UTF_8), "nothing started");
        assertTrue(!Files.exists(home.root().resolve(RuntimeHome.LOCK)), "refused before the home is even locked");
    }
}
