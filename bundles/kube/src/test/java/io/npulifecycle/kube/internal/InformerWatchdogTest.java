package io.npulifecycle.kube.internal;

import static io.npulifecycle.kube.internal.MockNode.NODE;
import static io.npulifecycle.testing.support.Waits.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.EmbeddedFaults;

/**
 * The watchdog over the two informers, against the mock API server: a stopped informer, or one not watching for two
 * ticks, is re-created with its partner, which delivers both objects again; healthy informers, and informers whose
 * first list is still in progress, are left alone.
 */
class InformerWatchdogTest {

    static final Duration TICK = Duration.ofSeconds(30);
    /** The mock API server can stall for seconds when a watch closes (its event loop waits for the watch's executor). */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    @RegisterExtension
    final MockNode mock = new MockNode();
    final List<Node> nodes = new CopyOnWriteArrayList<>();
    final List<GenericKubernetesResource> policies = new CopyOnWriteArrayList<>();
    final AtomicInteger afterChecks = new AtomicInteger();
    NodeInformers informers;
    InformerWatchdog watchdog;

    @BeforeEach
    void start() {
        mock.fixture.createDriver(Map.of("version", "25.5.0"));
        NodeSync.Settings settings = NodeSync.Settings.builder(NODE).crNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .crName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).healthInterval(TICK).build();
        informers = new NodeInformers(mock.agent, settings, mock.time, mock.health, new NodeInformers.Listener() {
            @Override
            public void onNode(Node node) {
                nodes.add(node);
            }

            @Override
            public void onNodeDeleted() {
                nodes.add(null);
            }

            @Override
            public void onPolicy(GenericKubernetesResource cr) {
                policies.add(cr);
            }

            @Override
            public void onSynced() {
            }
        });
        watchdog = new InformerWatchdog(informers, mock.time, TICK, afterChecks::incrementAndGet);
        informers.start();
        watchdog.start();
        awaitWatching();
        await("both objects delivered").atMost(PATIENCE).until(() -> nodes.size() == 1 && policies.size() == 1);
    }

    @AfterEach
    void stop() {
        watchdog.stop();
        informers.stop();
    }

    void awaitWatching() {
        await("both informers watching").atMost(PATIENCE)
                .until(() -> informers.nodeWatching() && informers.policyWatching());
    }

    void tick() {
        mock.time.advance(TICK);
    }

    @Test
    void healthyInformersAreLeftAlone() {
        SharedIndexInformer<Node> ni = informers.nodeInformer();
        for (int i = 0; i < 3; i++) {
            tick();
        }

        assertEquals(0, watchdog.relists());
        assertSame(ni, informers.nodeInformer());
        assertEquals(3, afterChecks.get(), "every tick ends with the sync");
        assertEquals(1, watchdog.reconnects(), "the first tick that finds them watching");
    }

    @Test
    void aStoppedInformerIsRecreatedAndTheStateRebuilt() {
        SharedIndexInformer<Node> stopped = informers.nodeInformer();
        SharedIndexInformer<GenericKubernetesResource> partner = informers.policyInformer();
        stopped.stop();

        tick();

        assertEquals(1, watchdog.relists());
        assertNotSame(stopped, informers.nodeInformer());
        assertNotSame(partner, informers.policyInformer(), "both are re-created");
        awaitWatching();
        await("the Node delivered again").atMost(PATIENCE).until(() -> nodes.size() == 2);
        await("the NPUOperatorCtl delivered again").atMost(PATIENCE).until(() -> policies.size() == 2);
        assertEquals(1, afterChecks.get());
    }

    @Test
    void anInformerNotWatchingForTwoTicksIsRecreated() {
        mock.cluster.faults().startOutage(EmbeddedFaults.OutageMode.SERVICE_UNAVAILABLE);
        await("watches dropped").atMost(PATIENCE).until(() -> !informers.nodeWatching());
        SharedIndexInformer<Node> first = informers.nodeInformer();
        assertTrue(first.isRunning(), "fabric8 keeps the informer running and retries the watch");

        tick();
        assertEquals(0, watchdog.relists(), "one tick without a watch is tolerated");
        assertSame(first, informers.nodeInformer());

        tick();
        assertEquals(1, watchdog.relists());
        assertNotSame(first, informers.nodeInformer());

        mock.cluster.faults().endOutage();
        long reconnects = watchdog.reconnects();
        await("watching again").atMost(PATIENCE).pollInterval(Duration.ofSeconds(1)).until(() -> {
            tick(); // a start that failed during the outage is retried at the next tick
            return informers.nodeWatching() && informers.policyWatching();
        });
        tick();
        assertTrue(watchdog.reconnects() > reconnects);
    }

    /**
     * The API server holds the answer to the Node informer's list (as a loaded node, or a real API server on a busy
     * machine under the demo's x60 clock, where a tick is half a wall second): the informer is not watching yet, but
     * its list is in progress. Re-creating it at the second tick would cancel that list and start one that needs as
     * long, again and again, and the node sync, which writes only once it has seen the Node, would write nothing.
     *
     * @param answer released to let the API server answer the held lists
     */
    private void holdNodeLists(CountDownLatch answer) {
        mock.cluster.faults().injectFault((method, path) -> {
            if ("GET".equals(method) && path.startsWith("/api/v1/nodes?") && !path.contains("watch=")) {
                try {
                    answer.await(PATIENCE.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return 0;
        });
    }

    @Test
    void anInformerWhoseFirstListIsInProgressIsLeftToFinishIt() {
        CountDownLatch answer = new CountDownLatch(1);
        holdNodeLists(answer);
        mock.cluster.requestLog().clearRequests();
        try {
            watchdog.relist();
            SharedIndexInformer<Node> listing = informers.nodeInformer();
            await("the Node informer's list reached the API server").atMost(PATIENCE)
                    .until(() -> mock.requests("GET", "/api/v1/nodes?") > 0);
            assertTrue(informers.nodeStarting());
            assertTrue(listing.isRunning() && !listing.isWatching());

            for (int i = 0; i < 3; i++) {
                tick();
            }

            assertEquals(1, watchdog.relists(), "only the relist asked for: a list in progress is not re-created");
            assertSame(listing, informers.nodeInformer());
        } finally {
            answer.countDown();
        }
        await("the Node delivered by the list that was left to finish").atMost(PATIENCE)
                .until(() -> nodes.size() == 2);
        awaitWatching();
        tick();
        tick();
        assertEquals(1, watchdog.relists());
    }

    @Test
    void aFirstListStillInProgressAfterTheStartingTicksIsRecreated() {
        CountDownLatch answer = new CountDownLatch(1);
        holdNodeLists(answer);
        mock.cluster.requestLog().clearRequests();
        try {
            watchdog.relist();
            await("the Node informer's list reached the API server").atMost(PATIENCE)
                    .until(() -> mock.requests("GET", "/api/v1/nodes?") > 0);
            SharedIndexInformer<Node> listing = informers.nodeInformer();
            for (int i = 1; i < InformerWatchdog.STARTING_TICKS; i++) {
                tick();
            }
            assertEquals(1, watchdog.relists());
            assertSame(listing, informers.nodeInformer());

            tick();

            assertEquals(2, watchdog.relists(), "a start still in progress after " + InformerWatchdog.STARTING_TICKS
                    + " ticks is re-created");
            assertNotSame(listing, informers.nodeInformer());
        } finally {
            answer.countDown();
        }
        awaitWatching();
    }

    @Test
    void aRelistRecreatesBothAndDeliversTheObjectsAgain() {
        SharedIndexInformer<Node> before = informers.nodeInformer();

        assertEquals("informers re-created", watchdog.relist());

        assertEquals(1, watchdog.relists());
        assertNotSame(before, informers.nodeInformer());
        await("the Node delivered again").atMost(PATIENCE).until(() -> nodes.size() == 2);
    }

    @Test
    void afterStopNoTickRunsAndNothingIsRecreated() {
        watchdog.stop();
        informers.stop();

        tick();
        informers.restart();

        assertEquals(0, afterChecks.get());
        assertEquals(0, mock.time.pending(), "the next tick was cancelled");
        assertNull(informers.nodeInformer());
        assertNull(informers.policyInformer());
    }
}
