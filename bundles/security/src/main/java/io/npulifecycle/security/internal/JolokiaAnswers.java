package io.npulifecycle.security.internal;

import java.util.List;
import java.util.function.Predicate;
import org.jolokia.json.parser.JSONParser;

/** Rewrites the responses of a Jolokia answer in place, for the filters that adjust what Jolokia sends. */
final class JolokiaAnswers {

    private JolokiaAnswers() {
    }

    /**
     * @param jolokiaAnswer Jolokia's answer (one response object, or an array of them for a bulk), as text
     * @param change applied to each parsed response (a {@code Map}, or whatever a bulk element is); changes it in
     *        place and says whether it did
     * @return the answer as JSON text with the changes, or {@code jolokiaAnswer} itself when no response changed or
     *         it is not JSON
     */
    static String eachResponse(String jolokiaAnswer, Predicate<Object> change) {
        Object parsed;
        try {
            parsed = new JSONParser().parse(jolokiaAnswer);
        } catch (Exception notJson) {
            return jolokiaAnswer;
        }
        boolean changed = false;
        if (parsed instanceof List<?> bulk) {
            for (Object r : bulk) {
                changed |= change.test(r);
            }
        } else {
            changed = change.test(parsed);
        }
        return changed ? PartialBulk.json(parsed) : jolokiaAnswer;
    }
}
