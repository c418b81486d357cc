package io.npulifecycle.upgrade.internal.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;


/**
 * {@code podSecurityLabels} parsed or refused naming the entry, and the labels a namespace misses. The component's
 * refusal of bad driver-mode keys: {@code UpgradeOrchestratorComponentTest}.
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
}
