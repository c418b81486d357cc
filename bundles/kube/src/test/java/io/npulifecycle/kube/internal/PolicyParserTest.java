package io.npulifecycle.kube.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.node.NodePolicy;

class PolicyParserTest {

    static Map<String, Object> spec(Object version, Object autoUpgrade, Object autoRecover, Object max, Object window) {
        Map<String, Object> rp = new java.util.HashMap<>();
        rp.put("autoRecover", autoRecover);
        rp.put("maxReboots", max);
        rp.put("window", window);
        Map<String, Object> d = new java.util.HashMap<>();
        d.put("version", version);
        d.put("upgradePolicy", Map.of("autoUpgrade", autoUpgrade));
        d.put("recoveryPolicy", rp);
        return Map.of("driver", d);
    }

    @Test
    void validPolicy() {
        NodePolicy p = PolicyParser.parse("ns/cr", spec("25.5.0", true, false, 2, "1h30m"), "7");
        assertTrue(p.known());
        assertEquals("25.5.0", p.desiredVersion());
        assertTrue(p.allowsAutoUpgrade());
        assertFalse(p.allowsAutoRecover());
        assertEquals(2, p.maxReboots());
        assertEquals(Duration.ofMinutes(90), p.window());
    }

    @Test
    void malformedFieldsGiveAnUnknownPolicyThatAuthorisesNothing() {
        Object[][] bad = {
            {"25.5.0", "true", true, 1, "24h", "spec.driver.upgradePolicy.autoUpgrade"},
            {"25.5.0", true, "yes", 1, "24h", "spec.driver.recoveryPolicy.autoRecover"},
            {"latest", true, true, 1, "24h", "spec.driver.version"},
            {25.5, true, true, 1, "24h", "spec.driver.version"},
            {"25.5.0", true, true, -1, "24h", "maxReboots"},
            {"25.5.0", true, true, 1.5, "24h", "maxReboots"},
            {"25.5.0", true, true, 1, "1 day", "window"},
            {"25.5.0", true, true, 1, 0, "window"},
        };
        for (Object[] b : bad) {
            NodePolicy p = PolicyParser.parse("npu-operator/npuoperatorctl-sample", spec(b[0], b[1], b[2], b[3], b[4]), "1");
            assertFalse(p.known(), b[5].toString());
            assertFalse(p.allowsAutoRecover());
            assertFalse(p.allowsAutoUpgrade());
            assertTrue(p.problem().contains((String) b[5]) && p.problem().contains("npu-operator/npuoperatorctl-sample"), p.problem());
        }
        assertFalse(PolicyParser.parse("x", "not an object", "1").known());
    }

    /** The CRD's grammar, as the control plane reads it (issue #27: the node agent refused what the CRD accepts). */
    @Test
    void theNodeAgentAcceptsWhatTheCrdAndTheControlPlaneAccept() {
        NodePolicy anyOrder = PolicyParser.parse("ns/cr", spec("25.5.0", false, true, 2, "30m1h"), "1");
        assertTrue(anyOrder.known(), String.valueOf(anyOrder.problem()));
        assertEquals(Duration.ofMinutes(90), anyOrder.window(), "30m1h is 90 minutes, as Go and the CRD read it");
        assertTrue(anyOrder.allowsAutoRecover());
        assertTrue(PolicyParser.parse("ns/cr", spec("1.2.3.4.5.6", false, true, 2, "24h"), "1").known(),
                "a six-part version is a version of the CRD's pattern");
        String longest = "25.5.0." + "1".repeat(25);
        assertEquals(32, longest.length());
        assertTrue(PolicyParser.parse("ns/cr", spec(longest, false, true, 2, "24h"), "1").known());
        assertFalse(PolicyParser.parse("ns/cr", spec(longest + "1", false, true, 2, "24h"), "1").known(),
                "33 characters: above the CRD's maxLength");
        for (String bad : new String[] {"0s", "0h0m", "8761h", "1.5h", "1d", "", "h"}) {
            NodePolicy p = PolicyParser.parse("ns/cr", spec("25.5.0", false, true, 2, bad), "1");
            assertFalse(p.known(), "window '" + bad + "'");
            assertTrue(p.problem().contains("spec.driver.recoveryPolicy.window"), p.problem());
        }
        assertTrue(PolicyParser.parse("ns/cr", spec("25.5.0", false, true, 2, "8760h"), "1").known());
        Map<String, Object> badRegistry = spec("25.5.0", false, true, 2, "24h");
        @SuppressWarnings("unchecked")
        Map<String, Object> driver = (Map<String, Object>) badRegistry.get("driver");
        driver.put("registry", "https://registry.local");
        NodePolicy p = PolicyParser.parse("ns/cr", badRegistry, "1");
        assertFalse(p.known(), "the control plane refuses this resource: so does the node agent");
        assertTrue(p.problem().contains("spec.driver.registry"), p.problem());
    }

    @Test
    void maxRebootsAndWindowLeftOutAreNullSoTheRebootersOwnConfigurationApplies() {
        NodePolicy p = PolicyParser.parse("ns/cr", Map.of("driver", Map.of("version", "25.5.0")), "1");
        assertTrue(p.known(), String.valueOf(p.problem()));
        assertEquals(null, p.maxReboots());
        assertEquals(null, p.window());
        assertTrue(p.recoveryNeedsGrant());
    }

    @Test
    void theRecoveryDrainIsOnUnlessTheResourceTurnsItOff() {
        assertTrue(PolicyParser.parse("ns/cr", spec("25.5.0", true, true, 2, "24h"), "1").recoveryNeedsGrant(),
                "recoveryPolicy.drain absent: enabled");
        Map<String, Object> off = spec("25.5.0", true, true, 2, "24h");
        @SuppressWarnings("unchecked")
        Map<String, Object> rp = (Map<String, Object>) ((Map<String, Object>) off.get("driver")).get("recoveryPolicy");
        rp.put("drain", Map.of("enable", false, "scope", "npu"));
        assertFalse(PolicyParser.parse("ns/cr", off, "1").recoveryNeedsGrant());
        rp.put("drain", Map.of("enable", "no"));
        NodePolicy bad = PolicyParser.parse("ns/cr", off, "1");
        assertFalse(bad.known());
        assertTrue(bad.problem().contains("spec.driver.recoveryPolicy.drain.enable"), bad.problem());
    }
}
