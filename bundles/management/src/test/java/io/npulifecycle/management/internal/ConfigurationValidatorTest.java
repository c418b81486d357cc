package io.npulifecycle.management.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
