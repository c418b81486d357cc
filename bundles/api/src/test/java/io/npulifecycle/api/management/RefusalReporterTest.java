package io.npulifecycle.api.management;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** A component's hold on the ConfigurationRefusals service: bound, unbound, one check reported. */
class RefusalReporterTest {

    private final List<String> reported = new ArrayList<>();
    private final ConfigurationRefusals service = new ConfigurationRefusals() {
        @Override
        public void refused(String pid, Object file, List<Refusal> refused) {
            refused.forEach(r -> reported.add(pid + " " + r.key() + "=" + r.value() + ": " + r.reason()));
        }

        @Override
        public void accepted(String pid) {
            reported.add(pid + " accepted");
        }
    };
    private final System.Logger log = System.getLogger(RefusalReporterTest.class.getName());

    @Test
    void aCheckReportsEveryRefusedValueOrTheAcceptance() {
        RefusalReporter r = new RefusalReporter();
        r.bind(service);
        assertNull(r.check("p", refused -> {
            refused.add(new ConfigurationRefusals.Refusal("a", 1, "too small"));
            refused.add(new ConfigurationRefusals.Refusal("b", "x", "not a number"));
            return "partly built";
        }, log), "a refused configuration gives no result");
        assertEquals("built", r.check("p", refused -> "built", log));
        assertEquals(List.of("p a=1: too small", "p b=x: not a number", "p accepted"), reported);
    }

    @Test
    void withoutTheServiceNothingIsReportedAndAnotherServiceBoundSinceIsKept() {
        RefusalReporter r = new RefusalReporter();
        r.refused("p", "a", 1, "too small");
        r.accepted("p");
        ConfigurationRefusals other = new ConfigurationRefusals() {
            @Override
            public void refused(String pid, Object file, List<Refusal> refused) {
            }

            @Override
            public void accepted(String pid) {
            }
        };
        r.bind(service);
        r.bind(other);
        r.unbind(service);
        assertEquals(other, r.service());
        r.unbind(other);
        assertNull(r.service());
        assertEquals(List.of(), reported);
    }
}
