package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.npulifecycle.security.internal.RequestClassifier.BadRequest;
import io.npulifecycle.security.internal.RequestClassifier.Op;

class RequestClassifierTest {

    @Test
    void getPaths() {
        Op exec = RequestClassifier.fromPath("/exec/io.npulifecycle:type=Rebooter/approve/true");
        assertEquals("exec", exec.type);
        assertEquals("io.npulifecycle:type=Rebooter", exec.mbean);
        assertEquals("approve", exec.member);
        assertTrue(exec.changes());
        assertEquals("write", RequestClassifier.fromPath("WRITE/java.lang:type=Memory/Verbose/true").type);
        assertEquals("version", RequestClassifier.fromPath("").type);
        assertEquals("version", RequestClassifier.fromPath(null).type);
        assertEquals("version", RequestClassifier.fromPath("//").type);
        assertFalse(RequestClassifier.fromPath("/read/java.lang:type=Memory").changes());
        // Jolokia escaping: !/ is a slash inside a part, !! an exclamation mark
        Op escaped = RequestClassifier.fromPath("/exec/io.npulifecycle:type=A!/B,x=y!!/op");
        assertEquals("io.npulifecycle:type=A/B,x=y!", escaped.mbean);
        assertEquals("op", escaped.member);
    }

    @Test
    void postSingleAndBulk() throws Exception {
        List<Op> one = RequestClassifier.fromBody("{\"type\":\"EXEC\",\"mbean\":\"io.npulifecycle:type=Rebooter\","
                + "\"operation\":\"approve\"}");
        assertEquals(1, one.size());
        assertEquals("exec", one.get(0).type);
        assertEquals("approve", one.get(0).member);
        List<Op> bulk = RequestClassifier.fromBody("[{\"type\":\"read\",\"mbean\":\"java.lang:type=Memory\"},"
                + "{\"type\":\"write\",\"mbean\":\"java.lang:type=Memory\",\"attribute\":\"Verbose\",\"value\":true}]");
        assertEquals(2, bulk.size());
        assertFalse(bulk.get(0).changes());
        assertTrue(bulk.get(1).changes());
        assertEquals("Verbose", bulk.get(1).member);
        Op proxy = RequestClassifier.fromBody("{\"type\":\"read\",\"mbean\":\"java.lang:type=Memory\",\"target\":"
                + "{\"url\":\"service:jmx:rmi:///jndi/rmi://127.0.0.1:1099/jmxrmi\"}}").get(0);
        assertTrue(proxy.proxy);
        assertEquals(null, RequestClassifier.fromBody("{\"mbean\":\"x:y=z\"}").get(0).type);
    }

    @Test
    void badBodiesAreNamed() {
        assertTrue(assertThrows(BadRequest.class, () -> RequestClassifier.fromBody("{\"type\":"))
                .getMessage().startsWith("the request body is not valid JSON"));
        assertTrue(assertThrows(BadRequest.class, () -> RequestClassifier.fromBody(""))
                .getMessage().startsWith("the request body is not valid JSON"));
        assertEquals("the request body is neither a JSON object nor an array of objects",
                assertThrows(BadRequest.class, () -> RequestClassifier.fromBody("42")).getMessage());
        assertEquals("element 1 of the bulk request is not a JSON object",
                assertThrows(BadRequest.class, () -> RequestClassifier.fromBody("[{\"type\":\"read\"},\"exec\"]"))
                        .getMessage());
        assertEquals("the bulk request is an empty array",
                assertThrows(BadRequest.class, () -> RequestClassifier.fromBody("[]")).getMessage());
    }
    @Test
    void aBodyNestedDeeperThanTheLimitIsABadRequestBeforeAnyParserRecurses() throws Exception {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        RequestClassifier.BadRequest e = assertThrows(RequestClassifier.BadRequest.class,
                () -> RequestClassifier.parse(deep));
        assertTrue(e.getMessage().contains("100000 levels deep: at most 64"),
                e.getMessage());
        assertThrows(RequestClassifier.BadRequest.class,
                () -> RequestClassifier.parse("{\"a\":".repeat(65) + "1" + "}".repeat(65)));
        // brackets inside strings, escaped quotes included, do not count
        String inString = "{\"type\":\"read\",\"mbean\":\"io.npulifecycle:type=Runtime\",\"path\":\"\\\"" + "[".repeat(200)
                + "\"}";
        assertEquals(1, RequestClassifier.depth(inString));
        assertEquals(1, RequestClassifier.parse(inString).ops().size());
        assertEquals(64, RequestClassifier.depth("[".repeat(64) + "]".repeat(64)));
    }
}
