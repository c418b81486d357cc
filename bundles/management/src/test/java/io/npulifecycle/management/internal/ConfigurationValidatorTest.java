package io.npulifecycle.management.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.util.Dictionary;
import java.util.Hashtable;

import org.junit.jupiter.api.Test;
import org.osgi.service.metatype.AttributeDefinition;
import org.osgi.service.metatype.ObjectClassDefinition;

class ConfigurationValidatorTest {

    static final String PID = "io.npulifecycle.probe";
    static final String FILE = "file:/tmp/home/etc/io.npulifecycle.probe.cfg";

    /** An attribute definition with an optional minimum, like Felix metatype's. */
    static AttributeDefinition ad(String id, int type, Integer min, String dflt) {
        return new AttributeDefinition() {
            public String getName() { return id; }
            public String getID() { return id; }
            public String getDescription() { return ""; }
            public int getCardinality() { return 0; }
            public int getType() { return type; }
            public String[] getOptionValues() { return null; }
            public String[] getOptionLabels() { return null; }
            public String validate(String value) {
                if (min != null && Long.parseLong(value) < min) {
                    return "Value is less than the minimum " + min;
                }
                return "";
            }
            public String[] getDefaultValue() { return new String[] {dflt}; }
        };
    }

    static ObjectClassDefinition ocd(AttributeDefinition... ads) {
        return new ObjectClassDefinition() {
            public String getName() { return PID; }
            public String getID() { return PID; }
            public String getDescription() { return ""; }
            public AttributeDefinition[] getAttributeDefinitions(int filter) { return ads; }
            public InputStream getIcon(int size) { return null; }
        };
    }

    static Dictionary<String, Object> config(Object... kv) {
        Dictionary<String, Object> d = new Hashtable<>();
        d.put("service.pid", PID);
        d.put(ConfigurationValidator.FILE_PROPERTY, FILE);
        for (int i = 0; i < kv.length; i += 2) {
            d.put((String) kv[i], kv[i + 1]);
        }
        return d;
    }

    final ConfigurationValidator validator = new ConfigurationValidator(pid -> PID.equals(pid)
            ? ocd(ad("interval", AttributeDefinition.INTEGER, 1, "60"),
                    ad("autoRecover", AttributeDefinition.BOOLEAN, null, "false"))
            : null);

    @Test
    void validConfigurationPassesUnchanged() {
        Dictionary<String, Object> d = config("interval", "30", "autoRecover", "true");
        validator.modifyConfiguration(null, d);
        assertEquals("30", d.get("interval"));
        assertEquals("true", d.get("autoRecover"));
        assertTrue(validator.getProblems().isEmpty());
    }

    @Test
    void badNumberKeepsThePreviousValueAndNamesFileAndKey() {
        validator.modifyConfiguration(null, config("interval", "30"));
        Dictionary<String, Object> bad = config("interval", "abc");
        validator.modifyConfiguration(null, bad);
        assertEquals("30", bad.get("interval"), "the component must keep its previous configuration");
        String problem = validator.getProblems().get(0);
        assertTrue(problem.contains(FILE), problem);
        assertTrue(problem.contains("interval"), problem);
        assertTrue(problem.contains("Integer"), problem);
        assertEquals(1, validator.getRejectedKeys());
    }

    @Test
    void badValueWithoutHistoryFallsBackToTheDefault() {
        Dictionary<String, Object> bad = config("interval", "-5");
        validator.modifyConfiguration(null, bad);
        assertNull(bad.get("interval"), "removed, so the metatype default applies");
        assertTrue(validator.getProblems().get(0).contains("minimum"), validator.getProblems().toString());
    }

    @Test
    void booleanMustBeTrueOrFalse() {
        Dictionary<String, Object> bad = config("autoRecover", "yes");
        validator.modifyConfiguration(null, bad);
        assertNull(bad.get("autoRecover"));
        assertTrue(validator.getProblems().get(0).contains("Boolean"));
    }

    @Test
    void unknownKeyIsDroppedAndLogged() {
        Dictionary<String, Object> d = config("intervall", "30");
        validator.modifyConfiguration(null, d);
        assertNull(d.get("intervall"));
        String problem = validator.getProblems().get(0);
        assertTrue(problem.contains("unknown key intervall"), problem);
        assertTrue(problem.contains(FILE), problem);
    }

    @Test
    void everyKeyIsCheckedEvenWhenOthersAreRemoved() {
        validator.modifyConfiguration(null, config("interval", "30", "autoRecover", "true"));
        Dictionary<String, Object> d = config("bogus1", "1", "interval", "abc", "bogus2", "2", "autoRecover", "maybe",
                "bogus3", "3");
        validator.modifyConfiguration(null, d);
        assertEquals("30", d.get("interval"));
        assertEquals("true", d.get("autoRecover"));
        assertNull(d.get("bogus1"));
        assertNull(d.get("bogus2"));
        assertNull(d.get("bogus3"));
        assertEquals(5, validator.getRejectedKeys());
    }

    @Test
    void otherProductsConfigurationsAreLeftAlone() {
        Dictionary<String, Object> d = new Hashtable<>();
        d.put("service.pid", "org.jolokia.osgi");
        d.put("whatever", "x");
        validator.modifyConfiguration(null, d);
        assertEquals("x", d.get("whatever"));
        assertFalse(validator.getRejectedKeys() > 0);
    }

    @Test
    void problemsReflectTheCurrentFileAndAFixedOrDeletedOneHasNone() {
        validator.modifyConfiguration(null, config("interval", "abc"));
        assertEquals(1, validator.getProblems().size(), validator.getProblems().toString());
        validator.modifyConfiguration(null, config("interval", "abc", "intervall", "5"));
        assertEquals(2, validator.getProblems().size(), "the same file delivered again: its problems, not twice");
        validator.modifyConfiguration(null, config("interval", "30"));
        assertTrue(validator.getProblems().isEmpty(), "fixed: " + validator.getProblems());
        assertEquals(3, validator.getRejectedKeys(), "the count since start is kept");

        validator.modifyConfiguration(null, config("interval", "-1"));
        assertFalse(validator.getProblems().isEmpty());
        @SuppressWarnings("unchecked")
        org.osgi.framework.ServiceReference<org.osgi.service.cm.ConfigurationAdmin> admin =
                (org.osgi.framework.ServiceReference<org.osgi.service.cm.ConfigurationAdmin>) java.lang.reflect.Proxy
                        .newProxyInstance(getClass().getClassLoader(),
                                new Class<?>[] {org.osgi.framework.ServiceReference.class}, (p, m, a) -> null);
        validator.configurationEvent(new org.osgi.service.cm.ConfigurationEvent(admin,
                org.osgi.service.cm.ConfigurationEvent.CM_DELETED, null, PID));
        assertTrue(validator.getProblems().isEmpty(), "deleted: " + validator.getProblems());
    }

    @Test
    void aValueTheComponentRefusedIsListedWithKeyAndValueUntilItAcceptsOne() {
        validator.modifyConfiguration(null, config("interval", "60"));
        validator.refused(PID, FILE, "timeout", "100", "must be below interval (60 s), got 100");
        assertEquals(java.util.List.of("Configuration " + PID + " (" + FILE + "): key timeout='100' refused by the "
                + "component: must be below interval (60 s), got 100; keeping its previous configuration"),
                validator.getProblems());
        validator.modifyConfiguration(null, config("interval", "abc"));
        assertEquals(2, validator.getProblems().size(), validator.getProblems().toString());
        validator.accepted(PID);
        assertEquals(1, validator.getProblems().size(), validator.getProblems().toString());
        assertTrue(validator.getProblems().get(0).contains("interval='abc'"));
    }

    @Test
    void everyValueTheComponentRefusedIsListedInItsOrder() {
        validator.refused(PID, FILE, java.util.List.of(
                new io.npulifecycle.api.management.ConfigurationRefusals.Refusal("interval", "0",
                        "must be > 0 and at most 86400 seconds, got 0"),
                new io.npulifecycle.api.management.ConfigurationRefusals.Refusal("failureThreshold", "0",
                        "must be >= 1, got 0")));
        assertEquals(java.util.List.of(
                "Configuration " + PID + " (" + FILE + "): key interval='0' refused by the component: must be > 0 and "
                        + "at most 86400 seconds, got 0; keeping its previous configuration",
                "Configuration " + PID + " (" + FILE + "): key failureThreshold='0' refused by the component: must be "
                        + ">= 1, got 0; keeping its previous configuration"),
                validator.getProblems());
        assertEquals(2, validator.getRejectedKeys());
        // a new refusal replaces the previous ones of the PID
        validator.refused(PID, FILE, "failureThreshold", "0", "must be >= 1, got 0");
        assertEquals(1, validator.getProblems().size(), validator.getProblems().toString());
        assertThrows(IllegalArgumentException.class, () -> validator.refused(PID, FILE, java.util.List.of()));
    }
}
