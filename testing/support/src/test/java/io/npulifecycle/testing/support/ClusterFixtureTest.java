package io.npulifecycle.testing.support;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

class ClusterFixtureTest {

    @Test
    void nodesAndTheNpuOperatorCtlAndRequestCounts() {
        try (ClusterFixture cluster = ClusterFixture.startEmbedded()) {
            cluster.backend().addNode(EmbeddedCluster.npuNode("n1"));
            assertEquals("true", cluster.label("n1", EmbeddedCluster.NPU_PRESENT_LABEL));
            assertNull(cluster.label("nope", EmbeddedCluster.NPU_PRESENT_LABEL));

            cluster.annotate("n1", "example.com/a", "1");
            assertEquals("1", cluster.annotation("n1", "example.com/a"));
            cluster.annotate("n1", "example.com/a", null);
            assertNull(cluster.annotation("n1", "example.com/a"));

            cluster.createDriver(Map.of("version", "25.2.0"));
            cluster.setDriver(Map.of("version", "25.5.0"));
            cluster.putDriver(Map.of("version", "25.5.1"));
            GenericKubernetesResource cr = cluster.npuOperatorCtl();
            assertEquals(Map.of("driver", Map.of("version", "25.5.1")), cr.getAdditionalProperties().get("spec"));
            assertEquals(Map.of(), cluster.status());
            assertEquals("", cluster.condition("Complete"));

            cr.setAdditionalProperty("status", Map.of("conditions",
                    List.of(Map.of("type", "Complete", "status", "True", "reason", "Done", "message", "all nodes"))));
            cluster.backend().npuOperatorCtls().resource(cr).updateStatus();
            assertEquals("True Done: all nodes", cluster.condition("Complete"));

            KubernetesClient controller = cluster.client("npu-controller");
            controller.nodes().list();
            controller.nodes().withName("n1").edit(n -> n);
            assertArrayEquals(new long[] {2, 1}, cluster.requestsOf("npu-controller"), cluster.requests().toString());
            assertTrue(cluster.requestsOf(ClusterFixture.ADMIN_USER_AGENT)[0] > 0);
        }
    }

    @Test
    void waitsFailNamingWhatWasAwaited() {
        Waits.until("something true", Duration.ofSeconds(1), () -> true);
        AssertionError e = assertThrows(AssertionError.class,
                () -> Waits.until("a miracle", Duration.ofMillis(100), () -> false, () -> "seen: nothing"));
        assertTrue(e.getMessage().startsWith("timed out after PT0.1S waiting for a miracle\nseen: nothing"),
                e.getMessage());
        AssertionError thrown = new AssertionError("the process exited");
        assertSame(thrown, assertThrows(AssertionError.class, () -> Waits.until("anything", Duration.ofSeconds(5), () -> {
            throw thrown;
        })), "a failure inside the condition ends the wait at once, unchanged");
        int[] rounds = {0};
        Waits.untilRunning("three rounds", Duration.ofSeconds(5), () -> rounds[0] == 3, () -> rounds[0]++);
        assertEquals(3, rounds[0]);
    }

    @Test
    void untilAssertedWaitsForTheAssertedValueAndFailsWithItsMessage() {
        int[] polls = {0};
        Waits.untilAsserted("the third poll", Duration.ofSeconds(5), () -> assertEquals(3, ++polls[0]));
        assertEquals(3, polls[0], "polled until the assertion passed, then no more");
        AssertionError late = assertThrows(AssertionError.class, () -> Waits.untilAsserted("seven",
                Duration.ofMillis(100), () -> assertEquals(7, 6, "the count")));
        assertTrue(late.getMessage().startsWith("timed out after PT0.1S waiting for seven: the count ==> expected: <7> "
                + "but was: <6>"), late.getMessage());
        IllegalStateException broken = new IllegalStateException("not an assertion");
        assertSame(broken, assertThrows(IllegalStateException.class, () -> Waits.untilAsserted("anything",
                Duration.ofSeconds(5), () -> {
                    throw broken;
                })), "any other exception ends the wait at once, unchanged");
    }
}
