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
    void aNumericProcessingParameterThatIsNoWholeNumberIsNamedWithWhatWasExpected() throws Exception {
        String expected = ": expected a whole number from 0 to 2147483647";
        String read = "\"type\":\"read\",\"mbean\":\"java.lang:type=Memory\"";
        String[][] cases = {
            {"{" + read + ",\"config\":{\"maxDepth\":\"abc\"}}",
                "processing parameter \"maxDepth\" of field \"config\" is \"abc\"" + expected},
            {"{" + read + ",\"config\":{\"maxCollectionSize\":1.5}}",
                "processing parameter \"maxCollectionSize\" of field \"config\" is a number 1.5" + expected},
            {"{" + read + ",\"config\":{\"maxObjects\":true}}",
                "processing parameter \"maxObjects\" of field \"config\" is a boolean true" + expected},
            {"{" + read + ",\"config\":{\"ifModifiedSince\":-1}}",
                "processing parameter \"ifModifiedSince\" of field \"config\" is a number -1" + expected},
            {"{" + read + ",\"config\":{\"maxDepth\":99999999999}}",
                "processing parameter \"maxDepth\" of field \"config\" is a number 99999999999" + expected},
            {"{" + read + ",\"config\":{\"ignoreErrors\":true,\"maxDepth\":[2]}}",
                "processing parameter \"maxDepth\" of field \"config\" is an array [2]" + expected},
        };
        for (String[] c : cases) {
            Map<?, ?> request = (Map<?, ?>) RequestClassifier.parse(c[0]).items().get(0);
            assertEquals(c[1], RequestShape.problem(request), c[0]);
        }
        for (String ok : new String[] {"{" + read + ",\"config\":{\"maxDepth\":2,\"maxObjects\":\"100\"}}",
            "{" + read + ",\"config\":{\"maxCollectionSize\":0,\"ifModifiedSince\":1700000000,"
                + "\"ignoreErrors\":\"yes\",\"serializeLong\":\"string\"}}"}) {
            assertNull(RequestShape.problem((Map<?, ?>) RequestClassifier.parse(ok).items().get(0)), ok);
        }
        // a single request gets a 400 entry, a bulk item a 400 entry of its own
        Caller op = new Caller("op", Role.OPERATOR);
        String bad = "{" + read + ",\"config\":{\"maxDepth\":\"abc\"}}";
        Map<String, Object> single = AccessFilter.errors(op, RequestClassifier.parse(bad)).get(0);
        assertEquals(400, single.get("status"));
        assertEquals(cases[0][1], single.get("error"));
        List<Map<String, Object>> bulk = AccessFilter.errors(op, RequestClassifier.parse("[" + bad + ","
                + "{\"type\":\"version\"}]"));
        assertEquals(cases[0][1], bulk.get(0).get("error"));
        assertNull(bulk.get(1));
    }

    @Test
    void aNumericQueryParameterThatIsNoWholeNumberIsNamed() {
        String expected = ": expected a whole number from 0 to 2147483647";
        assertEquals("query parameter \"maxDepth\" is \"abc\"" + expected,
                AccessFilter.queryParameterProblem("ignoreErrors=true&maxDepth=abc"));
        assertEquals("query parameter \"maxCollectionSize\" is \"1.5\"" + expected,
                AccessFilter.queryParameterProblem("maxCollectionSize=1.5"));
        assertEquals("query parameter \"maxObjects\" is \"\"" + expected,
                AccessFilter.queryParameterProblem("maxObjects"));
        assertEquals("query parameter \"ifModifiedSince\" is \"-5\"" + expected,
                AccessFilter.queryParameterProblem("if%4DodifiedSince=%2D5"));
        assertNull(AccessFilter.queryParameterProblem("maxDepth=2&maxCollectionSize=10&maxObjects=0&p=/read/a:b=c"));
        assertNull(AccessFilter.queryParameterProblem(null));
        assertNull(AccessFilter.queryParameterProblem("ignoreErrors=abc&x=%zz"));
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
