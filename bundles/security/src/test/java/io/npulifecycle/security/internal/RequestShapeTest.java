package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.security.tool.Role;

class RequestShapeTest {

    static final String EXEC = "\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=Simulator\",\"operation\":\"hang\"";

    @Test
    void aFieldOfTheWrongJsonTypeIsNamedWithWhatWasExpected() throws Exception {
        String[][] cases = {
            {"{" + EXEC + ",\"arguments\":{\"a\":1}}",
                "field \"arguments\" is an object: expected an array (the operation's arguments, in order)"},
            {"{" + EXEC + ",\"arguments\":\"true\"}",
                "field \"arguments\" is a string: expected an array (the operation's arguments, in order)"},
            {"{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=Simulator\",\"operation\":[\"hang\"]}",
                "field \"operation\" is an array: expected a string"},
            {"{\"type\":\"read\",\"mbean\":5,\"attribute\":\"Status\"}", "field \"mbean\" is a number: expected a string"},
            {"{\"type\":\"read\",\"mbean\":\"a:b=c\",\"attribute\":\"Chips\",\"path\":{\"a\":1}}",
                "field \"path\" is an object: expected a string"},
            {"{\"type\":\"read\",\"mbean\":\"a:b=c\",\"attribute\":[\"A\",5]}", "field \"attribute\" is an array:"
                + " expected a string or an array of strings (the attribute names to read)"},
            {"{\"type\":\"write\",\"mbean\":\"a:b=c\",\"attribute\":[\"A\"],\"value\":1}",
                "field \"attribute\" is an array: expected a string (the attribute's name)"},
            {"{\"type\":5}", "field \"type\" is a number: expected a string"},
            {"{\"type\":\"read\",\"mbean\":null,\"config\":{\"ignoreErrors\":true}}",
                "field \"mbean\" is null: expected a string"},
            {"{\"type\":null}", "field \"type\" is null: expected a string"},
            {"{" + EXEC + ",\"arguments\":[true],\"config\":[\"x\"]}",
                "field \"config\" is an array: expected an object (processing options by name)"},
        };
        for (String[] c : cases) {
            Map<?, ?> request = (Map<?, ?>) RequestClassifier.parse(c[0]).items().get(0);
            assertEquals(c[1], RequestShape.problem(request), c[0]);
        }
        for (String ok : new String[] {"{" + EXEC + ",\"arguments\":[true]}",
            "{\"type\":\"read\",\"mbean\":\"a:b=c\",\"attribute\":[\"A\",\"B\"],\"path\":\"x\"}",
            "{\"type\":\"write\",\"mbean\":\"a:b=c\",\"attribute\":\"A\",\"value\":{\"x\":[1]}}"}) {
            assertNull(RequestShape.problem((Map<?, ?>) RequestClassifier.parse(ok).items().get(0)), ok);
        }
    }

    @Test
    void aSingleMalformedRequestAndABulkItemGetA400EntryNamingTheField() throws Exception {
        Caller op = new Caller("op", Role.OPERATOR);
        String bad = "{" + EXEC + ",\"arguments\":{\"a\":1}}";
        List<Map<String, Object>> single = AccessFilter.errors(op, RequestClassifier.parse(bad));
        assertEquals(400, single.get(0).get("status"));
        assertEquals("java.lang.IllegalArgumentException", single.get(0).get("error_type"));
        assertEquals("field \"arguments\" is an object: expected an array (the operation's arguments, in order)",
                single.get(0).get("error"));
        List<Map<String, Object>> bulk = AccessFilter.errors(op, RequestClassifier.parse("[" + bad + ","
                + "{\"type\":\"version\"}]"));
        assertEquals(single.get(0).get("error"), bulk.get(0).get("error"));
        assertNull(bulk.get(1));
    }

    @Test
    void classLoaderDetailsAreTakenOutOfAMessage() {
        String cce = "class org.jolokia.json.JSONObject cannot be cast to class java.util.List (org.jolokia.json."
                + "JSONObject is in unnamed module of loader org.apache.felix.framework.BundleWiringImpl$BundleClass"
                + "Loader @ae5418a; java.util.List is in module java.base of loader 'bootstrap')";
        String clean = RequestShape.withoutLoaders(cce);
        assertEquals("class org.jolokia.json.JSONObject cannot be cast to class java.util.List", clean);
        assertFalse(RequestShape.withoutLoaders("loader X@1a2b3c4d").contains("@1a2b"));
        assertEquals("chip state 'x' is not one of healthy (or wedged)",
                RequestShape.withoutLoaders("chip state 'x' is not one of healthy (or wedged)"));
        assertNull(RequestShape.withoutLoaders(null));
    }
}
