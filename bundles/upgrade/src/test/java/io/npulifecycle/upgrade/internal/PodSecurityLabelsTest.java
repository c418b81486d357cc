package io.npulifecycle.upgrade.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigurationRefusals.Refusal;

/**
 * The configuration keys of the driver modes: {@code podSecurityLabels} parsed or refused naming the entry,
 * {@code driverManagement} and {@code driverDaemonSetConfigMap} refused when bad.
 */
class PodSecurityLabelsTest {

    @Test
    void labelsAreParsedInOrderWithFullKeys() {
        assertEquals(Map.of(), PodSecurityLabels.parse(""));
        assertEquals(Map.of(), PodSecurityLabels.parse(null));
        Map<String, String> m = PodSecurityLabels.parse("enforce=privileged, warn=baseline,audit=restricted");
        assertEquals(List.of("pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/warn",
                "pod-security.kubernetes.io/audit"), List.copyOf(m.keySet()));
        assertEquals("baseline", m.get("pod-security.kubernetes.io/warn"));
        assertEquals(Map.of("pod-security.kubernetes.io/enforce", "privileged"),
                PodSecurityLabels.parse("pod-security.kubernetes.io/enforce=privileged"));
    }

    @Test
    void badLabelsAreRefusedNamingTheEntry() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PodSecurityLabels.parse("enforce"))
                .getMessage().contains("'enforce' is not mode=level"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PodSecurityLabels.parse("enforce=root"))
                .getMessage().contains("level 'root' is not one of privileged, baseline, restricted"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PodSecurityLabels.parse("deny=privileged"))
                .getMessage().contains("mode 'deny' is not one of enforce, warn, audit"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PodSecurityLabels.parse("warn=privileged,warn=baseline")).getMessage().contains("given twice"));
    }

    @Test
    void missingComparesValues() {
        PodSecurityLabels p = new PodSecurityLabels(null, "ns", PodSecurityLabels.parse("enforce=privileged,warn=privileged"),
                () -> true);
        assertEquals(Map.of("pod-security.kubernetes.io/enforce", "privileged", "pod-security.kubernetes.io/warn",
                "privileged"), p.missing(null));
        assertEquals(Map.of("pod-security.kubernetes.io/warn", "privileged"), p.missing(Map.of(
                "pod-security.kubernetes.io/enforce", "privileged", "pod-security.kubernetes.io/warn", "restricted")));
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
        ControllerConfig defaults = UpgradeOrchestratorComponent.validate(config("managed",
                ControllerConfig.DEFAULT_DRIVER_DAEMONSET_CONFIGMAP, ""));
        assertEquals(ControllerConfig.defaults().driverManagement(), defaults.driverManagement());
        assertEquals(ControllerConfig.defaults().driverDaemonSetConfigMap(), defaults.driverDaemonSetConfigMap());
        assertEquals(Map.of(), defaults.podSecurityLabels());
    }

    /** @return the component's configuration with its defaults and these three values */
    static UpgradeOrchestratorComponent.Config config(String management, String configMap, String labels) {
        return (UpgradeOrchestratorComponent.Config) java.lang.reflect.Proxy.newProxyInstance(
                PodSecurityLabelsTest.class.getClassLoader(), new Class<?>[] {UpgradeOrchestratorComponent.Config.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "driverManagement" -> management;
                    case "driverDaemonSetConfigMap" -> configMap;
                    case "podSecurityLabels" -> labels;
                    case "annotationType" -> (Class<? extends Annotation>) UpgradeOrchestratorComponent.Config.class;
                    default -> m.getDefaultValue();
                });
    }
}
