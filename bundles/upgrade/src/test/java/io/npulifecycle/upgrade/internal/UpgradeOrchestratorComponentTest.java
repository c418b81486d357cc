package io.npulifecycle.upgrade.internal;

import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;
import io.npulifecycle.upgrade.internal.preflight.RegistrySettings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigurationRefusals.Refusal;

/**
 * The component's validation of the registry and driver-mode keys of PID {@code io.npulifecycle.upgrade}: each bad
 * value refused with its key named (the previous configuration is kept), good ones taken. The ImageWhiteList keys:
 * {@link ImageWhiteListConfigTest}.
 */
class UpgradeOrchestratorComponentTest {

    @Test
    void theConfigurationKeysAreValidated() {
        assertEquals(RegistrySettings.DEFAULT, ImageWhiteListConfigTest.validate(
                ImageWhiteListConfigTest.config(Map.of())).registry());
        ControllerConfig c = ImageWhiteListConfigTest.validate(ImageWhiteListConfigTest.config(Map.of(
                "registryCaBundle", "/etc/npu-lifecycle/registry-ca/ca.crt", "registryMirror", "mirror.local:5000/ascend",
                "registryInsecure", true)));
        assertEquals(new RegistrySettings("/etc/npu-lifecycle/registry-ca/ca.crt", "mirror.local:5000/ascend", true),
                c.registry());
        List<io.npulifecycle.api.management.ConfigurationRefusals.Refusal> why = new java.util.ArrayList<>();
        assertNull(UpgradeOrchestratorComponent.validate(ImageWhiteListConfigTest.config(Map.of(
                "registryCaBundle", "ca.crt")), why));
        assertEquals("registryCaBundle", why.get(0).key());
        assertTrue(why.get(0).reason().contains("not an absolute path"), why.get(0).reason());
        why.clear();
        assertNull(UpgradeOrchestratorComponent.validate(ImageWhiteListConfigTest.config(Map.of(
                "registryMirror", "https://mirror.local")), why));
        assertEquals("registryMirror", why.get(0).key());
        assertTrue(why.get(0).reason().contains("expected host[:port][/path]"), why.get(0).reason());
    }

    @Test
    void theComponentRefusesBadDriverModeValuesAndKeepsGoodOnes() {
        List<Refusal> refused = new ArrayList<>();
        assertNull(UpgradeOrchestratorComponent.validate(config("hosted", "npu-lifecycle-driver-daemonset", ""), refused));
        assertEquals("driverManagement", refused.get(0).key());
        assertTrue(refused.get(0).reason().contains("expected managed or host"), refused.get(0).reason());
        refused.clear();
        assertNull(UpgradeOrchestratorComponent.validate(config("managed", "Bad_Name", ""), refused));
        assertEquals("driverDaemonSetConfigMap", refused.get(0).key());
        refused.clear();
        assertNull(UpgradeOrchestratorComponent.validate(config("managed", "cm", "enforce=everything"), refused));
        assertEquals("podSecurityLabels", refused.get(0).key());
        assertTrue(refused.get(0).reason().contains("level 'everything'"), refused.get(0).reason());
        ControllerConfig ok = UpgradeOrchestratorComponent.validate(config("host", "cm", "enforce=privileged"), refused);
        assertTrue(ok.hostDrivers());
        assertEquals("cm", ok.driverDaemonSetConfigMap());
        assertEquals(Map.of("pod-security.kubernetes.io/enforce", "privileged"), ok.podSecurityLabels());
        ControllerConfig defaults = ImageWhiteListConfigTest.validate(config("managed",
                ControllerConfig.DEFAULT_DRIVER_DAEMONSET_CONFIGMAP, ""));
        assertEquals(ControllerConfig.defaults().driverManagement(), defaults.driverManagement());
        assertEquals(ControllerConfig.defaults().driverDaemonSetConfigMap(), defaults.driverDaemonSetConfigMap());
        assertEquals(Map.of(), defaults.podSecurityLabels());
    }

    /** @return the component's configuration with its defaults and these three driver-mode values */
    static UpgradeOrchestratorComponent.Config config(String management, String configMap, String labels) {
        return ImageWhiteListConfigTest.config(Map.of("driverManagement", management, "driverDaemonSetConfigMap",
                configMap, "podSecurityLabels", labels));
    }
}
