package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BundleListTest {

    @TempDir
    Path dir;

    @Test
    void readsLevelsRolesAndDeployEntries() throws Exception {
        Files.writeString(dir.resolve("a.jar"), "");
        Files.writeString(dir.resolve("b.jar"), "");
        Files.writeString(dir.resolve("c.jar"), "");
        Path list = Files.writeString(dir.resolve("bundles.list"),
                "# comment\n1 all a.jar\n\n3 shell b.jar\ndeploy node c.jar\n");
        List<BundleList.Entry> e = BundleList.read(list, dir);
        assertEquals(3, e.size());
        assertEquals(1, e.get(0).startLevel());
        assertTrue(e.get(0).appliesTo("control-plane", false, false));
        assertFalse(e.get(1).appliesTo("node", false, false), "shell bundles only with a shell");
        assertTrue(e.get(1).appliesTo("node", true, false));
        assertTrue(e.get(2).deploy());
        assertEquals(BundleList.DEPLOY_START_LEVEL, e.get(2).startLevel());
        assertFalse(e.get(2).appliesTo("control-plane", false, false));
    }

    @Test
    void simulatorBundlesOnlyInANodeRuntimeWithASimulatorConfiguration() throws Exception {
        Files.writeString(dir.resolve("sim.jar"), "");
        Files.writeString(dir.resolve("probe.jar"), "");
        Path list = Files.writeString(dir.resolve("bundles.list"), "4 simulator sim.jar\ndeploy node probe.jar\n");
        List<BundleList.Entry> e = BundleList.read(list, dir);
        BundleList.Entry sim = e.get(0);
        assertFalse(sim.appliesTo("node", false, false), "a production node never installs the simulator");
        assertFalse(sim.appliesTo("node", true, false));
        assertTrue(sim.appliesTo("node", false, true));
        assertFalse(sim.appliesTo("control-plane", false, true), "the simulator emulates a node's host only");
        assertTrue(e.get(1).appliesTo("node", false, false), "the product bundles do not depend on it");
        assertTrue(e.get(1).appliesTo("node", false, true));
    }

    @Test
    void theDistributionsSimulatorIsASimulatorBundle() throws Exception {
        Path shipped = Path.of("src/main/dist/conf/bundles.list");
        List<String> simulatorLines = Files.readAllLines(shipped).stream()
                .filter(l -> l.contains("io.npulifecycle.simulator-")).toList();
        assertEquals(1, simulatorLines.size(), simulatorLines.toString());
        assertEquals(BundleList.SIMULATOR, simulatorLines.get(0).trim().split("\\s+")[1],
                "roles of " + simulatorLines.get(0));
    }

    @Test
    void malformedLinesAndMissingJarsNameTheLine() throws Exception {
        Files.writeString(dir.resolve("a.jar"), "");
        for (String bad : new String[] {"1 all", "x all a.jar", "9 all a.jar", "1 all missing.jar"}) {
            Path list = Files.writeString(dir.resolve("bundles.list"), "# c\n" + bad + "\n");
            LaunchException e = assertThrows(LaunchException.class, () -> BundleList.read(list, dir), bad);
            assertTrue(e.getMessage().contains("line 2"), e.getMessage());
        }
    }
}
