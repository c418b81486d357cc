package io.npulifecycle.upgrade.internal.drain;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirementBuilder;

/** {@link Drainer#selects}: which pods a PodDisruptionBudget's selector counts, as policy/v1 reads it. */
class BudgetSelectorTest {

    @Test
    void aNullSelectorSelectsNoPod() {
        assertFalse(Drainer.selects(null, Map.of("app", "train")));
    }

    @Test
    void anEmptySelectorSelectsEveryPodOfTheNamespace() {
        assertTrue(Drainer.selects(new LabelSelector(), Map.of("app", "train")));
        assertTrue(Drainer.selects(new LabelSelectorBuilder().withMatchLabels(Map.of()).withMatchExpressions(List.of())
                .build(), null));
    }

    @Test
    void matchLabelsAndExpressionsMustAllHold() {
        LabelSelector s = new LabelSelectorBuilder().withMatchLabels(Map.of("app", "train"))
                .withMatchExpressions(new LabelSelectorRequirementBuilder().withKey("tier").withOperator("In")
                        .withValues("npu").build()).build();
        assertTrue(Drainer.selects(s, Map.of("app", "train", "tier", "npu")));
        assertFalse(Drainer.selects(s, Map.of("app", "train", "tier", "cpu")));
        assertFalse(Drainer.selects(s, Map.of("app", "train")));
        assertFalse(Drainer.selects(s, null));
    }
}
