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
    void noRoleSendsConfigOrNotificationRequestsAndTheRefusalNamesTheAllowedTypes() throws Exception {
        for (Role role : Role.values()) {
            assertFalse(AccessFilter.allowed(role, "config"), role.id());
            assertFalse(AccessFilter.allowed(role, "notification"), role.id());
        }
        assertTrue(AccessFilter.allowed(Role.OPERATOR, "bogus"), "a name Jolokia does not know is Jolokia's 400");
        RequestClassifier.Parsed p = RequestClassifier.parse("[{\"type\":\"config\"},"
                + "{\"type\":\"notification\",\"command\":\"register\"}]");
        java.util.List<java.util.Map<String, Object>> e = AccessFilter.errors(new Caller("op", Role.OPERATOR), p);
        assertEquals(403, e.get(0).get("status"));
        assertEquals("java.lang.SecurityException", e.get(0).get("error_type"));
        assertEquals("role operator may not config: the request types of role operator are read, list, search,"
                + " version, exec, write", e.get(0).get("error"));
        assertEquals(403, e.get(1).get("status"));
        assertTrue(String.valueOf(e.get(1).get("error")).startsWith("role operator may not notification: "),
                e.get(1).toString());
        java.util.List<java.util.Map<String, Object>> v = AccessFilter.errors(new Caller("v", Role.VIEWER), p);
        assertEquals("role viewer may not config: the request types of role viewer are read, list, search, version",
                v.get(0).get("error"));
    }

    @Test
    void versionAnswersLoseTheAgentsConfiguration() {
        String answer = "{\"request\":{\"type\":\"version\"},\"value\":{\"agent\":\"2.6.0\",\"protocol\":\"8.2\","
                + "\"config\":{\"policyLocation\":\"file:///opt/etc/jolokia-access.xml\"}},\"status\":200}";
        String redacted = VersionAnswers.redact(answer);
        assertFalse(redacted.contains("policyLocation"), redacted);
        assertTrue(redacted.contains("\"agent\":\"2.6.0\"") && redacted.contains("\"protocol\":\"8.2\""), redacted);
        String bulk = VersionAnswers.redact("[" + answer + ",{\"request\":{\"type\":\"read\"},\"value\":"
                + "{\"config\":1},\"status\":200}]");
        assertFalse(bulk.contains("policyLocation"), bulk);
        assertTrue(bulk.contains("{\"config\":1}"), "only version answers change: " + bulk);
        assertEquals("not json", VersionAnswers.redact("not json"));
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
    void aJsonpCallbackParameterIsRecognisedInAnyPositionAndEscaping() {
        assertTrue(AccessFilter.jsonp("callback=steal"));
        assertTrue(AccessFilter.jsonp("maxDepth=2&callback=steal"));
        assertTrue(AccessFilter.jsonp("callback"));
        assertTrue(AccessFilter.jsonp("%63allback=x"));
        assertFalse(AccessFilter.jsonp(null));
        assertFalse(AccessFilter.jsonp("maxDepth=2&ignoreErrors=true"));
        assertFalse(AccessFilter.jsonp("mycallback=x&%zz=1"));
    }

    @Test
    void originOfAReferer() {
        assertEquals("http://evil.example", AccessFilter.originOf("http://evil.example/page?x=1"));
        assertEquals("https://console.example:8443", AccessFilter.originOf("https://console.example:8443/hawtio/"));
        assertEquals("garbage", AccessFilter.originOf("garbage"));
        assertNull(AccessFilter.originOf(null));
    }

    @Test
    void oneBadItemOfABulkGetsA400EntryOfItsOwnAndTheOthersAreServed() throws Exception {
        String read = "{\"type\":\"read\",\"mbean\":\"io.npulifecycle:type=Runtime\",\"attribute\":\"Role\"}";
        RequestClassifier.Parsed p = RequestClassifier.parse("[" + read + ",42,{\"type\":\"bogus\"},"
                + "{\"type\":\"read\",\"mbean\":\"bad name\"},"
                + "{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=Runtime\"},"
                + "{\"mbean\":\"io.npulifecycle:type=Runtime\"},{\"type\":\"version\"}]");
        java.util.List<java.util.Map<String, Object>> e = AccessFilter.errors(new Caller("op", Role.OPERATOR), p);
        assertNull(e.get(0));
        assertEquals(400, e.get(1).get("status"));
        assertEquals("element 1 of the bulk request is not a JSON object", e.get(1).get("error"));
        assertEquals(42L, ((Number) e.get(1).get("request")).longValue());
        assertEquals("No type with name 'bogus' exists", e.get(2).get("error"));
        assertEquals(400, e.get(3).get("status"));
        assertTrue(String.valueOf(e.get(3).get("error_type")).contains("Exception"), e.get(3).toString());
        assertTrue(String.valueOf(e.get(4).get("error")).contains("operation"), e.get(4).toString());
        assertEquals("No type given", e.get(5).get("error"));
        assertNull(e.get(6));
        assertEquals(p.items().get(2), e.get(2).get("request"), "the item is echoed as Jolokia does");

        // a viewer: the refused exec is a 403 entry, the unbuildable read a 400 entry
        RequestClassifier.Parsed v = RequestClassifier.parse("[{\"type\":\"exec\",\"mbean\":"
                + "\"io.npulifecycle:type=Runtime\",\"operation\":\"x\"},{\"type\":\"read\",\"mbean\":\"bad name\"},"
                + read + "]");
        java.util.List<java.util.Map<String, Object>> ve = AccessFilter.errors(new Caller("v", Role.VIEWER), v);
        assertEquals(403, ve.get(0).get("status"));
        assertEquals(400, ve.get(1).get("status"));
        assertNull(ve.get(2));
    }

    @Test
    void aSingleRequestJolokiaCannotBuildIsLeftToJolokia() throws Exception {
        RequestClassifier.Parsed p = RequestClassifier.parse("{\"type\":\"bogus\"}");
        assertNull(AccessFilter.errors(new Caller("op", Role.OPERATOR), p).get(0));
    }
}
