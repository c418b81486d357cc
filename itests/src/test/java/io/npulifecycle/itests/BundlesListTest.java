package io.npulifecycle.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.itests.FelixTestSupport.BundleSpec;

/** Plain unit test (surefire, no framework) of the driver-side helpers of {@link FelixTestSupport}. */
class BundlesListTest {

    @TempDir
    Path dir;

    @Test
    void readsStartLevelsRolesAndDeployLines() throws Exception {
        for (String f : new String[] {"a.jar", "b.jar", "c.jar", "d.jar", "e.jar"}) {
            Files.writeString(dir.resolve(f), "x");
        }
        Path list = Files.writeString(dir.resolve("bundles.list"), String.join("\n",
                "# comment", "", "1 all a.jar", "3 node,control-plane b.jar", "4 shell c.jar",
                "deploy node d.jar", "  deploy control-plane   e.jar  ", ""));
        List<BundleSpec> node = FelixTestSupport.readBundlesList(list, dir, "node");
        assertEquals(List.of("1 a.jar", "3 b.jar", "deploy d.jar"), node.stream()
                .map(b -> b.toString().replace(dir.toUri().toString(), "")).collect(Collectors.toList()));
        assertTrue(node.get(2).deploy);
        assertEquals(FelixTestSupport.DEPLOY_START_LEVEL, node.get(2).startLevel);
        assertFalse(node.get(0).deploy);
        assertEquals(5, FelixTestSupport.readBundlesList(list, dir, null).size());
        assertEquals(3, FelixTestSupport.readBundlesList(list, dir, "control-plane").size());
    }

    @Test
    void splitsPackageListsOutsideQuotes() {
        assertEquals(List.of("org.slf4j;version=2.0.17", "a.b;version=\"[1,2)\"", "c"),
                FelixTestSupport.splitPackageList(" org.slf4j;version=2.0.17, a.b;version=\"[1,2)\" ,c,"));
        assertTrue(FelixTestSupport.splitPackageList(null).isEmpty());
    }
}
