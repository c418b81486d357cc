package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

class LaunchOptionsTest {

    static final Map<String, String> ENV = Map.of("HOME", "/home/op");

    @Test
    void nodeWithHomeAndNoShell() throws Exception {
        LaunchOptions o = LaunchOptions.parse(new String[] {"node", "--no-shell", "--home", "/tmp/h"}, ENV);
        assertEquals(LaunchOptions.Role.NODE, o.role());
        assertEquals(Path.of("/tmp/h"), o.home());
        assertTrue(o.noShell());
    }

    @Test
    void controlPlaneDefaultsItsHomeFromTheEnvironment() throws Exception {
        assertEquals(Path.of("/home/op/.npu-lifecycle/control-plane"),
                LaunchOptions.parse(new String[] {"control-plane"}, ENV).home());
        assertEquals(Path.of("/srv/npu"),
                LaunchOptions.parse(new String[] {"control-plane"}, Map.of("NPU_LIFECYCLE_HOME", "/srv/npu")).home());
    }

    @Test
    void unknownCommandIsAUsageError() {
        LaunchException e = assertThrows(LaunchException.class,
                () -> LaunchOptions.parse(new String[] {"nod"}, ENV));
        assertEquals(LaunchException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("unknown command 'nod'"), e.getMessage());
        assertTrue(e.getMessage().contains("Usage: npu-lifecycle"), e.getMessage());
    }

    @Test
    void noCommandUnknownOptionAndMissingValueAreUsageErrors() {
        for (String[] args : new String[][] {{}, {"node", "--shell"}, {"node", "--home"}, {"node", "--home", " "}}) {
            LaunchException e = assertThrows(LaunchException.class, () -> LaunchOptions.parse(args, ENV),
                    String.join(" ", args));
            assertEquals(LaunchException.USAGE, e.exitCode());
        }
    }

    @Test
    void helpAndCheckNpuSmiPassTheirArguments() throws Exception {
        assertEquals("help", LaunchOptions.parse(new String[] {"--help"}, ENV).command());
        LaunchOptions o = LaunchOptions.parse(new String[] {"check-npu-smi", "f.txt", "--exit-code", "1"}, ENV);
        assertEquals("check-npu-smi", o.command());
        assertEquals(java.util.List.of("f.txt", "--exit-code", "1"), o.rest());
    }

    @Test
    void clusterPassesItsWholeCommandLineToTheHarness() throws Exception {
        LaunchOptions o = LaunchOptions.parse(new String[] {"cluster", "--api", "real", "--nodes", "2"}, ENV);
        assertEquals("cluster", o.command());
        assertEquals(java.util.List.of("cluster", "--api", "real", "--nodes", "2"), o.rest());
        assertTrue(LaunchOptions.USAGE.contains("cluster         [--api real|embedded] [--nodes N] [--kubeconfig FILE]"),
                LaunchOptions.USAGE);
    }

    @Test
    void theUsageNamesEveryOptionOfDemoAndScenario() {
        assertTrue(LaunchOptions.USAGE.contains("demo            [--api embedded|real] [--nodes N] [--chips N] "
                + "[--scale X] [--work DIR]"), LaunchOptions.USAGE);
        assertTrue(LaunchOptions.USAGE.contains("scenario        FILE... [--api embedded|real] [--work DIR] "
                + "[--junit FILE]"), LaunchOptions.USAGE);
        assertTrue(LaunchOptions.USAGE.contains("--list FILE..."), LaunchOptions.USAGE);
    }
}
