package io.npulifecycle.api.upgrade.spec;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * {@link PodSelector#of}: a Kubernetes LabelSelector (matchLabels and matchExpressions, as a PodDisruptionBudget's)
 * matched as the drain and the chaos invariants read a budget.
 */
class PodSelectorTest {

    static final Map<String, String> TRAIN = Map.of("app", "train", "tier", "gpu");

    @Test
    void matchLabelsAndEveryOperatorOfMatchExpressions() {
        assertTrue(PodSelector.of(Map.of("app", "train"), null).matches(TRAIN));
        assertFalse(PodSelector.of(Map.of("app", "serve"), null).matches(TRAIN));
        assertTrue(PodSelector.of(null, List.of(PodSelector.Requirement.expression("tier", "In", List.of("gpu", "npu"))))
                .matches(TRAIN));
        assertFalse(PodSelector.of(null, List.of(PodSelector.Requirement.expression("tier", "NotIn", List.of("gpu"))))
                .matches(TRAIN));
        assertTrue(PodSelector.of(null, List.of(PodSelector.Requirement.expression("app", "Exists", null)))
                .matches(TRAIN));
        assertTrue(PodSelector.of(null, List.of(PodSelector.Requirement.expression("debug", "DoesNotExist", null)))
                .matches(TRAIN));
        assertFalse(PodSelector.of(Map.of("app", "train"),
                List.of(PodSelector.Requirement.expression("app", "DoesNotExist", null))).matches(TRAIN),
                "every requirement must hold");
        assertFalse(PodSelector.of(null, List.of(PodSelector.Requirement.expression("app", "Matches", List.of("t.*"))))
                .matches(TRAIN), "an operator the API server refuses selects nothing");
        assertTrue(PodSelector.of(null, null).matches(TRAIN), "no requirement: every pod (the caller rules on empty)");
        assertFalse(PodSelector.of(Map.of("app", "train"), null).matches(null), "a pod without labels");
    }
}
