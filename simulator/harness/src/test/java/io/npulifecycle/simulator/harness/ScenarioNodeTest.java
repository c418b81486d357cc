package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

/**
 * {@link ScenarioNode#simulator}: a fault injection into a node agent whose framework is starting (the simulator's
 * MBean not registered yet: Jolokia's 404) is asked again until it answers, as a chaos schedule at a high time scale
 * meets right after killing the agent; an operation the simulator refuses fails at once, with its error.
 */
class ScenarioNodeTest {

    HttpServer server;
    final AtomicInteger requests = new AtomicInteger();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    /** A Jolokia that answers the given bodies in order, then the last one again. */
    ScenarioNode node(String... answers) throws IOException {
        Deque<String> queue = new ArrayDeque<>(List.of(answers));
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/jolokia", exchange -> {
            requests.incrementAndGet();
            String body = queue.size() > 1 ? queue.poll() : queue.peek();
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, b.length);
            exchange.getResponseBody().write(b);
            exchange.close();
        });
        server.start();
        Jolokia j = new Jolokia(server.getAddress().getPort(), "u", "p");
        return new ScenarioNode() {
            @Override
            public String name() {
                return "node-0";
            }

            @Override
            public Path root() {
                return Path.of("/nonexistent");
            }

            @Override
            public Jolokia jolokia() {
                return j;
            }

            @Override
            public void killAgent() {
                throw new UnsupportedOperationException();
            }

            @Override
            public void jumpClock(java.time.Duration delta) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void markersReadOnly(boolean on) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void markersFull(boolean on) {
                throw new UnsupportedOperationException();
            }
        };
    }

    @Test
    void anAgentWhoseFrameworkIsStartingIsAskedAgainUntilItAnswers() throws IOException {
        String notYet = "{\"status\":404,\"error_type\":\"javax.management.InstanceNotFoundException\","
                + "\"error\":\"javax.management.InstanceNotFoundException : io.npulifecycle:type=Simulator\"}";
        ScenarioNode n = node(notYet, notYet, "{\"status\":200,\"value\":\"chip 0:0 now wedged\"}");
        assertEquals("chip 0:0 now wedged", n.simulator("wedge", 0, 0));
        assertEquals(3, requests.get());
    }

    /** Jolokia up, the framework starting or stopping around it: a service it needs is missing; asked again. */
    @Test
    void anAgentWhoseJolokiaMissesAServiceIsAskedAgain() throws IOException {
        String transition = "{\"status\":500,\"error_type\":\"java.lang.IllegalStateException\",\"error\":"
                + "\"java.lang.IllegalStateException : No service of type interface "
                + "org.jolokia.server.core.service.serializer.Serializer found\"}";
        ScenarioNode n = node(transition, "{\"status\":200,\"value\":\"chip 2:0 now wedged\"}");
        assertEquals("chip 2:0 now wedged", n.simulator("wedge", 2, 0));
        assertEquals(2, requests.get());
    }

    @Test
    void anOperationTheSimulatorRefusesFailsAtOnceWithItsError() throws IOException {
        ScenarioNode n = node("{\"status\":500,\"error\":\"npu 9 is outside 0..7\"}");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> n.simulator("wedge", 9, 0));
        assertTrue(e.getMessage().equals("node-0: wedge failed: npu 9 is outside 0..7"), e.getMessage());
        assertEquals(1, requests.get());
    }
}
