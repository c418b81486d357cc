package io.npulifecycle.driver.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.testing.support.Configs;
import io.npulifecycle.testing.support.RecordedRefusals;

/** The driver's configuration refusals reach the Configuration MBean, every refused key of them. */
class DriverComponentConfigTest {

    /** A Config as DS builds it: the metatype defaults and some values. */
    static DriverComponent.Config config(Map<String, Object> values) {
        return Configs.of(DriverComponent.Config.class, values);
    }

    @Test
    void everyRefusedValueIsReportedAndAGoodConfigurationEndsTheRefusal() throws Exception {
        RecordedRefusals reported = new RecordedRefusals();
        DriverComponent c = new DriverComponent(null, null);
        c.bindRefusals(reported);
        assertNull(c.reported(config(Map.of("stateDir", "relative/dir", "moduleNames", new String[0],
                "checkIntervalSeconds", 0))));
        assertEquals(List.of(
                "io.npulifecycle.driver stateDir=relative/dir: 'relative/dir' must be absolute",
                "io.npulifecycle.driver moduleNames=null: is empty (the kernel modules of the driver)",
                "io.npulifecycle.driver checkIntervalSeconds=0: must be at least 1"),
                reported.lines());
        reported.clear();
        assertNotNull(c.reported(config(Map.of("stateDir", "/var/lib/npu-operator/"))));
        assertEquals(List.of("io.npulifecycle.driver accepted"), reported.lines());
    }

    @Test
    void aConfigurationRefusedAtActivationGivesWayToTheMetatypeDefaults() {
        List<ConfigurationRefusals.Refusal> refused = new java.util.ArrayList<>();
        DriverEngine.Settings defaults = DriverComponent.settings(
                io.npulifecycle.api.management.ConfigDefaults.of(DriverComponent.Config.class), refused);
        assertEquals(List.of(), refused);
        assertEquals(DriverComponent.settings(config(Map.of()), refused), defaults,
                "the defaults the component falls back on are the ones DS gives for an empty configuration");
    }

    @Test
    void theModeIsManagedOrHostAndAnythingElseIsRefusedNamingTheKey() {
        List<ConfigurationRefusals.Refusal> refused = new java.util.ArrayList<>();
        assertNull(DriverComponent.settings(config(Map.of("mode", "hosted")), refused));
        assertEquals("mode", refused.get(0).key());
        assertEquals("'hosted' (expected managed or host)", refused.get(0).reason());
        refused.clear();
        org.junit.jupiter.api.Assertions.assertTrue(DriverComponent.settings(config(Map.of("mode", "host")), refused)
                .hostDrivers());
        org.junit.jupiter.api.Assertions.assertFalse(DriverComponent.settings(config(Map.of()), refused).hostDrivers(),
                "managed by default");
        assertEquals(List.of(), refused);
    }

    @Test
    void aLoaderCommandOnOneLineIsSplitOnWhitespace() {
        assertEquals(List.of("nsenter", "-t", "1", "-m", "--", "/p/{version}/load", "{version}"),
                DriverComponent.loaderArgs(new String[] {" nsenter -t 1 -m --  /p/{version}/load {version} "}));
        assertEquals(List.of("/bin/load", "{version}"), DriverComponent.loaderArgs(new String[] {"/bin/load", "{version}"}));
        assertEquals(List.of("/bin/load"), DriverComponent.loaderArgs(new String[] {"/bin/load"}));
    }

    @Test
    void aRelativePackageFolderIsRefused() {
        List<ConfigurationRefusals.Refusal> refused = new java.util.ArrayList<>();
        assertNull(DriverComponent.settings(config(Map.of("packageDir", "driver-packages")), refused));
        assertEquals("packageDir", refused.get(0).key());
        refused.clear();
        assertEquals(java.nio.file.Path.of("/var/lib/npu-operator/driver-packages"), DriverComponent.settings(
                config(Map.of("packageDir", "/var/lib/npu-operator/driver-packages")), refused).packageDir());
        assertNull(DriverComponent.settings(config(Map.of()), refused).packageDir(), "no check by default");
    }
}
