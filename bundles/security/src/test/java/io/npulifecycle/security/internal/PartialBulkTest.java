package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

class PartialBulkTest {

    static final String READ = "{\"type\":\"read\",\"mbean\":\"java.lang:type=Memory\"}";
    static final String EXEC = "{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=Simulator\",\"operation\":\"wedge\"}";
    static final String VERSION = "{\"type\":\"version\"}";

    /** @return the 403 entry of each refused item ({@code null}: served) */
    static List<java.util.Map<String, Object>> refusals(List<?> items, List<String> reasons) {
        List<java.util.Map<String, Object>> out = new java.util.ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            out.add(reasons.get(i) == null ? null : PartialBulk.refusal(reasons.get(i), items.get(i)));
        }
        return out;
    }

    /** JSON text as objects, so that key order does not matter. */
    static Object json(String text) throws Exception {
        return new org.jolokia.json.parser.JSONParser().parse(text);
    }

    @Test
    void refusedItemsGetTheirOwnEntriesInPlaceAndTheOthersAreServed() throws Exception {
        RequestClassifier.Parsed p = RequestClassifier.parse("[" + READ + "," + EXEC + "," + VERSION + "]");
        List<String> reasons = Arrays.asList(null, "role viewer may not exec", null);
        assertEquals(json("[" + READ + "," + VERSION + "]"),
                json(PartialBulk.served(p.items(), refusals(p.items(), reasons))));
        String merged = PartialBulk.merge(p.items(), refusals(p.items(), reasons),
                "[{\"status\":200,\"value\":1},{\"status\":200,\"value\":2}]");
        assertEquals(json("[{\"status\":200,\"value\":1},{\"status\":403,\"error_type\":"
                + "\"java.lang.SecurityException\",\"error\":\"role viewer may not exec\",\"request\":" + EXEC
                + "},{\"status\":200,\"value\":2}]"), json(merged));
    }

    @Test
    void everyItemRefusedNeedsNoJolokiaAndAnUnexpectedAnswerIsPassedOn() throws Exception {
        RequestClassifier.Parsed p = RequestClassifier.parse("[" + EXEC + "]");
        assertEquals(json("[{\"status\":403,\"error_type\":\"java.lang.SecurityException\",\"error\":\"no\","
                + "\"request\":" + EXEC + "}]"),
                json(PartialBulk.merge(p.items(), refusals(p.items(), List.of("no")), null)));
        RequestClassifier.Parsed two = RequestClassifier.parse("[" + READ + "," + EXEC + "]");
        assertNull(PartialBulk.merge(two.items(), refusals(two.items(), Arrays.asList(null, "no")),
                "{\"status\":500}"));
        assertNull(PartialBulk.merge(two.items(), refusals(two.items(), Arrays.asList(null, "no")), "[]"));
    }

    @Test
    void anEmptyBulkIsABulkWithoutItems() throws Exception {
        RequestClassifier.Parsed p = RequestClassifier.parse(" [ ] ");
        assertEquals(true, p.bulk());
        assertEquals(0, p.items().size());
    }
}
