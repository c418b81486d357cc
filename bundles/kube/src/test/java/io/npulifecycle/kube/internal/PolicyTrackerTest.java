package io.npulifecycle.kube.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;

/** The policy as the informer delivers the NPUOperatorCtl: a change is announced, a new resourceVersion alone is not. */
class PolicyTrackerTest {

    final List<String> changes = new ArrayList<>();
    final PolicyTracker tracker = new PolicyTracker("npu-operator/npuoperatorctl-sample", changes::add);

    static GenericKubernetesResource cr(String version, boolean autoRecover, String resourceVersion) {
        return new GenericKubernetesResourceBuilder().withNewMetadata().withName("npuoperatorctl-sample")
                .withResourceVersion(resourceVersion).endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of("driver", Map.of("version", version,
                        "recoveryPolicy", Map.of("autoRecover", autoRecover)))))
                .build();
    }

    @Test
    void unknownUntilRead() {
        assertFalse(tracker.policy().known());
        assertTrue(tracker.policy().problem().contains("has not been read yet"));
    }

    @Test
    void aChangeIsAnnouncedOnce() {
        tracker.update(cr("25.5.0", true, "1"));
        assertTrue(tracker.policy().known());
        assertEquals("1", tracker.policy().resourceVersion());
        assertEquals(List.of("policy"), changes);

        tracker.update(cr("25.5.0", true, "2"));
        assertEquals("2", tracker.policy().resourceVersion());
        assertEquals(1, changes.size(), "a new resourceVersion alone is no change of policy");

        tracker.update(cr("25.5.0", false, "3"));
        assertFalse(tracker.policy().autoRecover());
        assertEquals(2, changes.size());
    }

    @Test
    void aDeletedResourceMakesThePolicyUnknown() {
        tracker.update(cr("25.5.0", true, "1"));

        tracker.update(null);

        assertFalse(tracker.policy().known());
        assertEquals("unknown (NPUOperatorCtl npu-operator/npuoperatorctl-sample does not exist)",
                PolicyTracker.describe(tracker.policy()));
        assertEquals(2, changes.size());
    }
}
