package io.npulifecycle.upgrade.internal.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/** Status writes that only move the counts wait 5 status intervals; anything a person acts on goes out at once. */
class StatusIntervalTest {

    private static final Duration I = Duration.ofSeconds(2);

    private static NpuOperatorCtlStatus status(int upgraded, String reason, List<String> awaiting) {
        NpuOperatorCtlStatus s = new NpuOperatorCtlStatus();
        s.setTargetVersion("25.5.0");
        s.setProgress(upgraded + "/10");
        s.setNodeCounts(Map.of("upgraded", upgraded));
        s.setAwaitingApproval(awaiting);
        Condition c = new Condition();
        c.setType("Progressing");
        c.setStatus("True");
        c.setReason(reason);
        c.setMessage(upgraded + "/10 upgraded");
        c.setLastTransitionTime("2026-11-30T00:00:00Z");
        s.setConditions(List.of(c));
        return s;
    }

    @Test
    void countsOnlyWaitLongerEverythingElseAtOnce() {
        NpuOperatorCtlStatus last = status(3, "RollingOut", List.of());
        assertEquals(I.multipliedBy(5), PlanWriter.statusWriteInterval(last, status(4, "RollingOut", List.of()), I),
                "counts, progress and the condition message moved: progress-only");
        assertEquals(I, PlanWriter.statusWriteInterval(last, status(4, "Paused", List.of()), I), "a reason changed");
        assertEquals(I, PlanWriter.statusWriteInterval(last, status(3, "RollingOut", List.of("n4")), I),
                "a node awaits approval");
        assertEquals(I, PlanWriter.statusWriteInterval(null, status(3, "RollingOut", List.of()), I), "first write");
    }
}
