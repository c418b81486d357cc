package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.npulifecycle.simulator.cluster.internal.KubeBinaries;

/** {@link ClusterBackends}: a backend by name; any other name is refused naming it and the two choices. */
class ClusterBackendsTest {

    @Test
    void unknownKindsAreRefusedNamingTheValueAndTheChoices() {
        AtomicInteger asked = new AtomicInteger();
        for (String bad : new String[] {"Real", "mock", "", " embedded"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ClusterBackends.start(bad, () -> {
                        asked.incrementAndGet();
                        return null;
                    }));
            assertEquals("unknown API server kind '" + bad + "': expected embedded or real", e.getMessage());
        }
        assertEquals("unknown API server kind null: expected embedded or real",
                assertThrows(IllegalArgumentException.class, () -> ClusterBackends.checkKind(null)).getMessage());
        assertEquals(0, asked.get(), "no binaries looked for");
        assertSame("real", ClusterBackends.checkKind("real"));
    }

    @Test
    void embeddedStartsTheMockWithoutLookingForBinaries() {
        try (ClusterBackend b = ClusterBackends.start("embedded", () -> {
            throw new AssertionError("the embedded backend needs no binaries");
        })) {
            assertInstanceOf(EmbeddedCluster.class, b);
            assertEquals(ClusterBackend.EMBEDDED, b.kind());
            assertTrue(b.masterUrl().startsWith("http://127.0.0.1:"), b.masterUrl());
            b.addNode(EmbeddedCluster.npuNode("node-0"));
            assertEquals(1, b.client().nodes().list().getItems().size());
        }
    }

    @Test
    void realTakesItsBinariesFromTheSupplierAndPassesItsErrorOn() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ClusterBackends.start("real",
                () -> KubeBinaries.in(java.nio.file.Path.of("/nonexistent-kube-bin"))));
        assertTrue(e.getMessage().contains("/nonexistent-kube-bin/kube-apiserver is missing"), e.getMessage());
    }
}
