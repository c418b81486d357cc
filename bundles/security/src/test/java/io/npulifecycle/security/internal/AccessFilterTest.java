package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.npulifecycle.security.tool.Role;

class AccessFilterTest {

    @Test
    void roleTypes() {
        for (String t : new String[] {"read", "list", "search", "version"}) {
            assertTrue(AccessFilter.allowed(Role.VIEWER, t));
        }
        assertFalse(AccessFilter.allowed(Role.VIEWER, "exec"));
        assertFalse(AccessFilter.allowed(Role.VIEWER, "write"));
        assertFalse(AccessFilter.allowed(Role.VIEWER, "notification"));
        assertTrue(AccessFilter.allowed(Role.OPERATOR, "exec"));
    }

    @Test
    void mbeanScopes() {
        assertTrue(AccessFilter.productMBean("io.npulifecycle:type=Rebooter"));
        assertFalse(AccessFilter.productMBean("io.npulifecycle:*"));
        assertFalse(AccessFilter.productMBean("java.lang:type=Memory"));
        assertFalse(AccessFilter.productMBean("not a name"));
        assertFalse(AccessFilter.productMBean(null));
        assertTrue(AccessFilter.forbiddenMBean("com.sun.management:type=DiagnosticCommand"));
        assertTrue(AccessFilter.forbiddenMBean("jdk.management.jfr:type=FlightRecorder"));
        assertFalse(AccessFilter.forbiddenMBean("java.lang:type=Memory"));
        assertFalse(AccessFilter.forbiddenMBean(null));
    }

    @Test
    void originOfAReferer() {
        assertEquals("http://evil.example", AccessFilter.originOf("http://evil.example/page?x=1"));
        assertEquals("https://console.example:8443", AccessFilter.originOf("https://console.example:8443/hawtio/"));
        assertEquals("garbage", AccessFilter.originOf("garbage"));
        assertNull(AccessFilter.originOf(null));
    }
}
