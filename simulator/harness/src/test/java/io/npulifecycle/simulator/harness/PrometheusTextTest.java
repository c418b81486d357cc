package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PrometheusTextTest {

    @Test
    void samplesWithLabelsEscapesAndSpecialValues() {
        List<PrometheusText.Sample> s = PrometheusText.parse(String.join("\n",
                "# HELP npu_lifecycle_reboots_total Reboots by reason.",
                "# TYPE npu_lifecycle_reboots_total counter",
                "npu_lifecycle_reboots_total{reason=\"recovery\",node=\"node-0\"} 2.0",
                "npu_lifecycle_reboots_total{reason=\"upgrade\"} 1 1733400000000",
                "up 1",
                "odd{msg=\"a \\\"quoted\\\" \\\\ back, slash\\nline\",} +Inf",
                "nan NaN",
                ""));
        assertEquals(5, s.size());
        assertEquals(new PrometheusText.Sample("npu_lifecycle_reboots_total",
                Map.of("reason", "recovery", "node", "node-0"), 2.0), s.get(0));
        assertEquals(1.0, s.get(1).value());
        assertEquals(Map.of(), s.get(2).labels());
        assertEquals("a \"quoted\" \\ back, slash\nline", s.get(3).labels().get("msg"));
        assertEquals(Double.POSITIVE_INFINITY, s.get(3).value());
        assertTrue(Double.isNaN(s.get(4).value()));
    }

    @Test
    void aLineThatIsNotASampleIsNamedWithItsNumber() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PrometheusText.parse("up 1\nbroken{a=\"x\" 1\n"));
        assertTrue(e.getMessage().startsWith("line 2 is not a sample"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PrometheusText.parse("up one"));
        assertTrue(e.getMessage().startsWith("line 1 is not a sample"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PrometheusText.parse("9up 1"));
        assertTrue(e.getMessage().contains("bad metric name '9up'"), e.getMessage());
    }

    /** expect.metrics: the sum of the samples whose labels include the check's; equals and atLeast need a sample. */
    @Test
    void aMetricCheckSumsTheMatchingSamplesAndCanFail() {
        String page = String.join("\n",
                "# TYPE npu_lifecycle_reboots counter",
                "# TYPE npu_lifecycle_leaderless gauge",
                "npu_lifecycle_reboots_total{reason=\"recovery\",via=\"policy\"} 1.0",
                "npu_lifecycle_reboots_total{reason=\"recovery\",via=\"approval\"} 2.0",
                "npu_lifecycle_reboots_total{reason=\"upgrade\",via=\"policy\"} 0.0");
        List<PrometheusText.Sample> s = PrometheusText.parse(page);
        java.util.Set<String> families = PrometheusText.families(page);
        java.util.function.BiFunction<Map<String, String>, Double[], String> check = (labels, t) -> Expectations
                .metricFailure(s, families, new Action.MetricCheck("npu_lifecycle_reboots_total", labels, t[0], t[1],
                        t[2]));
        assertEquals(null, check.apply(Map.of("reason", "recovery"), new Double[] {3.0, null, null}));
        assertEquals("saw 2 sample(s) summing to 3.0",
                check.apply(Map.of("reason", "recovery"), new Double[] {1.0, null, null}));
        assertEquals(null, check.apply(Map.of(), new Double[] {null, 3.0, null}));
        assertEquals("saw 1 sample(s) summing to 0.0",
                check.apply(Map.of("reason", "upgrade"), new Double[] {null, 1.0, null}));
        assertEquals("saw no such sample", check.apply(Map.of("reason", "other"), new Double[] {0.0, null, null}),
                "equals needs a sample");
        assertEquals(null, check.apply(Map.of("reason", "other"), new Double[] {null, null, 0.0}), "atMost of none");
        assertEquals("saw 1 sample(s) summing to 2.0",
                check.apply(Map.of("via", "approval"), new Double[] {null, null, 1.0}));
        // a family the page does not declare: a typo, or the control plane's, fails even atMost
        String typo = Expectations.metricFailure(s, families, new Action.MetricCheck("npu_lifecycle_reboot_total",
                Map.of(), null, null, 0.0));
        assertTrue(typo != null && typo.contains("has no family of npu_lifecycle_reboot_total"), typo);
        assertEquals(null, Expectations.metricFailure(s, families, new Action.MetricCheck("npu_lifecycle_leaderless",
                Map.of(), null, null, 0.0)), "a declared family without samples");
    }
}
