package io.npulifecycle.kube.internal;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.clock.testing.ManualTimeSource;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.testing.support.ClusterFixture;

/**
 * The tests' API server: a {@link ClusterFixture} on the embedded mock (CRUD mode: optimistic concurrency answers 409
 * on a stale resourceVersion) with one NPU Node, {@value #NODE}. The code under test gets its own client that does
 * not retry, so an injected fault reaches it; the test reads and edits as "the person" through the fixture. Register
 * it as a field with {@code @RegisterExtension}: it is closed after each test (after the test's own
 * {@code @AfterEach}).
 */
final class MockNode implements AfterEachCallback {

    static final String NODE = "node-0";
    static final String NODE_PATH = "/api/v1/nodes/" + NODE;
    static final String EVENTS_PATH = "/api/v1/namespaces/default/events";

    final ClusterFixture fixture = ClusterFixture.startEmbedded();
    final EmbeddedCluster cluster = fixture.embedded();
    final KubernetesClient agent = fixture.client(c -> {
        c.setUserAgent("npu-node-agent");
        c.setRequestRetryBackoffLimit(0);
    });
    final ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-12-01T10:00:00Z"));
    final ApiHealth health = new ApiHealth();

    MockNode() {
        cluster.addNode(EmbeddedCluster.npuNode(NODE));
        cluster.requestLog().clearRequests();
    }

    /** @return a {@link NodeApi} on {@value #NODE} with the agent's client, this clock and {@link #health} */
    NodeApi api() {
        return new NodeApi(agent, NODE, time, health);
    }

    /** What the informer does: {@code api} remembers the Node as the API server has it now. */
    void informerDelivers(NodeApi api) {
        api.remember(node());
    }

    /** @return the Node as the API server has it now */
    Node node() {
        return fixture.node(NODE);
    }

    /** @return an annotation of the Node as the API server has it now, or {@code null} */
    String annotation(String key) {
        return fixture.annotation(NODE, key);
    }

    /** @return a label of the Node as the API server has it now, or {@code null} */
    String label(String key) {
        return fixture.label(NODE, key);
    }

    /** The person edits the Node ({@code kubectl annotate}): sets an annotation, or removes it with {@code null}. */
    void annotate(String key, String value) {
        fixture.annotate(NODE, key, value);
    }

    /**
     * @return how many requests with this method went to a path starting with {@code pathPrefix} since the start or
     *         the last {@code cluster.requestLog().clearRequests()} (the person's count too)
     */
    long requests(String method, String pathPrefix) {
        return cluster.requestLog().requests().stream().filter(r -> r.startsWith(method + " " + pathPrefix)).count();
    }

    /**
     * Answers {@code status} instead of serving the next {@code count} requests with this method whose path starts
     * with {@code pathPrefix} ({@code count < 0}: all of them).
     */
    void fail(String method, String pathPrefix, int status, int count) {
        AtomicInteger left = new AtomicInteger(count);
        cluster.faults().injectFault((m, p) -> method.equals(m) && p.startsWith(pathPrefix)
                && (count < 0 || left.getAndDecrement() > 0) ? status : 0);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        fixture.close();
    }
}
