package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import java.util.Map;

import org.jolokia.json.parser.JSONParser;
import org.junit.jupiter.api.Test;

import io.npulifecycle.security.tool.Role;

class ListHintsTest {

    static final String INFO = "{\"desc\":\"d\",\"attr\":{\"A\":{\"rw\":false}},"
            + "\"op\":{\"wedge\":{\"args\":[],\"ret\":\"java.lang.String\"},\"add\":[{\"args\":[]},{\"args\":[]}]}}";
    static final String FULL = "{\"request\":{\"type\":\"list\"},\"status\":200,\"value\":{"
            + "\"io.npulifecycle\":{\"type=Simulator\":" + INFO + "},\"java.lang\":{\"type=Memory\":" + INFO + "}}}";

    @Test
    void aViewerInvokesNothingAnOperatorOnlyProductMBeans() throws Exception {
        Map<?, ?> viewer = value(ListHints.decorate(FULL, Role.VIEWER));
        assertEquals(List.of(false, false, false, false), hints(mbean(viewer, "io.npulifecycle", "type=Simulator")));
        assertEquals(List.of(false, false, false, false), hints(mbean(viewer, "java.lang", "type=Memory")));
        Map<?, ?> operator = value(ListHints.decorate(FULL, Role.OPERATOR));
        assertEquals(List.of(true, true, true, true), hints(mbean(operator, "io.npulifecycle", "type=Simulator")));
        assertEquals(List.of(false, false, false, false), hints(mbean(operator, "java.lang", "type=Memory")));
    }

    @Test
    void listsWithAPathInABulkAndAnswersThatAreNoListAreHandled() throws Exception {
        String bulk = "[{\"request\":{\"type\":\"list\",\"path\":\"io.npulifecycle\"},\"status\":200,\"value\":{"
                + "\"type=Simulator\":" + INFO + "}},"
                + "{\"request\":{\"type\":\"list\",\"path\":\"io.npulifecycle/type=Simulator\"},\"status\":200,"
                + "\"value\":" + INFO + "},"
                + "{\"request\":{\"type\":\"read\",\"mbean\":\"io.npulifecycle:type=Health\"},\"status\":200,"
                + "\"value\":{\"op\":{}}},"
                + "{\"status\":403,\"error\":\"role viewer may not exec\",\"request\":{\"type\":\"exec\"}}]";
        List<?> out = (List<?>) new JSONParser().parse(ListHints.decorate(bulk, Role.OPERATOR));
        Map<?, ?> byDomain = (Map<?, ?>) ((Map<?, ?>) out.get(0)).get("value");
        assertEquals(List.of(true, true, true, true), hints((Map<?, ?>) byDomain.get("type=Simulator")));
        assertEquals(List.of(true, true, true, true), hints((Map<?, ?>) ((Map<?, ?>) out.get(1)).get("value")));
        assertEquals(Map.of("op", Map.of()), ((Map<?, ?>) out.get(2)).get("value"), "a read is left alone");
        assertEquals(403L, ((Number) ((Map<?, ?>) out.get(3)).get("status")).longValue());

        String notJson = "<html>oops</html>";
        assertSame(notJson, ListHints.decorate(notJson, Role.VIEWER));
        String read = "{\"request\":{\"type\":\"read\"},\"status\":200,\"value\":1}";
        assertSame(read, ListHints.decorate(read, Role.VIEWER));
        assertEquals(List.of("a/b", "c"), ListHints.path("a!/b/c"));
    }

    static Map<?, ?> value(String json) throws Exception {
        return (Map<?, ?>) ((Map<?, ?>) new JSONParser().parse(json)).get("value");
    }

    static Map<?, ?> mbean(Map<?, ?> value, String domain, String props) {
        return (Map<?, ?>) ((Map<?, ?>) value.get(domain)).get(props);
    }

    /** @return the MBean's canInvoke, then each operation signature's: wedge, add, add */
    static List<Object> hints(Map<?, ?> info) {
        Map<?, ?> ops = (Map<?, ?>) info.get("op");
        List<?> add = (List<?>) ops.get("add");
        return List.of(info.get("canInvoke"), ((Map<?, ?>) ops.get("wedge")).get("canInvoke"),
                ((Map<?, ?>) add.get(0)).get("canInvoke"), ((Map<?, ?>) add.get(1)).get("canInvoke"));
    }
}
