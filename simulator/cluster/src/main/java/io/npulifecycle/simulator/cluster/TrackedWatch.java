package io.npulifecycle.simulator.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Set;

import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A watch of the CRUD mock (a WebSocket) wrapped by the {@link EmbeddedCluster}: it is known while open (so an outage
 * can drop it and {@link EmbeddedFaults#expireWatches()} can end it with a {@code 410 Expired} ERROR event, as an
 * API server does when a watch's resourceVersion is compacted), and its events pass a field selector, which the mock
 * cannot evaluate on non-metadata fields. An object that stops matching is not turned into a DELETED event.
 */
final class TrackedWatch extends WebSocketListener {

    private final WebSocketListener delegate;
    private final FieldSelector fields;
    private final Set<TrackedWatch> open;
    private volatile WebSocket raw;
    private volatile WebSocket filtered;

    TrackedWatch(WebSocketListener delegate, FieldSelector fields, Set<TrackedWatch> open) {
        this.delegate = delegate;
        this.fields = fields;
        this.open = open;
    }

    private WebSocket wrap(WebSocket ws) {
        if (raw != ws || filtered == null) {
            raw = ws;
            filtered = new WebSocket() {
                @Override
                public RecordedRequest request() {
                    return ws.request();
                }

                @Override
                public boolean send(String text) {
                    return !passes(text) || ws.send(text);
                }

                @Override
                public boolean send(byte[] bytes) {
                    return !passes(new String(bytes, StandardCharsets.UTF_8)) || ws.send(bytes);
                }

                @Override
                public boolean send(ByteString bytes) {
                    return !passes(bytes.utf8()) || ws.send(bytes);
                }

                @Override
                public boolean close(int code, String reason) {
                    return ws.close(code, reason);
                }
            };
        }
        return filtered;
    }

    private boolean passes(String event) {
        if (fields == null) {
            return true;
        }
        try {
            JsonNode e = KubectlDispatcher.JSON.readTree(event);
            JsonNode object = e.get("object");
            String type = e.path("type").asString("");
            return object == null || "ERROR".equals(type) || "BOOKMARK".equals(type) || fields.matches(object);
        } catch (RuntimeException notJson) {
            return true;
        }
    }

    /** Sends an ERROR event with a {@code Status} of {@code code} / {@code reason}, then closes the WebSocket. */
    void fail(int code, String reason, String message) {
        WebSocket ws = raw;
        if (ws == null) {
            return;
        }
        ObjectNode status = KubectlDispatcher.JSON.createObjectNode().put("kind", "Status").put("apiVersion", "v1");
        status.putObject("metadata");
        status.put("status", "Failure").put("message", message).put("reason", reason).put("code", code);
        ObjectNode event = KubectlDispatcher.JSON.createObjectNode().put("type", "ERROR");
        event.set("object", status);
        ws.send(KubectlDispatcher.JSON.writeValueAsString(event));
        ws.close(1000, reason);
        open.remove(this);
    }

    /** Drops the connection without a word (an API server going away). */
    void drop() {
        WebSocket ws = raw;
        if (ws != null) {
            ws.close(1001, "API server going away (simulated outage)");
        }
        open.remove(this);
    }

    /** @return the watch request's path and query */
    String path() {
        WebSocket ws = raw;
        return ws == null || ws.request() == null ? "?" : ws.request().getPath();
    }

    @Override
    public void onBeforeAccept(WebSocket webSocket, Response response) {
        delegate.onBeforeAccept(wrap(webSocket), response);
    }

    @Override
    public void onOpen(WebSocket webSocket, Response response) {
        open.add(this);
        delegate.onOpen(wrap(webSocket), response);
    }

    @Override
    public void onMessage(WebSocket webSocket, String text) {
        delegate.onMessage(wrap(webSocket), text);
    }

    @Override
    public void onMessage(WebSocket webSocket, ByteString bytes) {
        delegate.onMessage(wrap(webSocket), bytes);
    }

    @Override
    public void onMessage(WebSocket webSocket, byte[] bytes) {
        delegate.onMessage(wrap(webSocket), bytes);
    }

    @Override
    public void onPing(WebSocket webSocket, byte[] bytes) {
        delegate.onPing(wrap(webSocket), bytes);
    }

    @Override
    public void onClosing(WebSocket webSocket, int code, String reason) {
        open.remove(this);
        delegate.onClosing(wrap(webSocket), code, reason);
    }

    /**
     * The mock's listener waits for its event executor to terminate in onClosed/onFailure; on the server's single
     * event-loop thread that would stall the whole API server for many seconds whenever a client vanished (several node
     * agents SIGKILLed at once). The close is handed to another thread.
     */
    private static final java.util.concurrent.Executor CLOSER = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "embedded-cluster-watch-closer");
        t.setDaemon(true);
        return t;
    });

    @Override
    public void onClosed(WebSocket webSocket, int code, String reason) {
        open.remove(this);
        WebSocket w = wrap(webSocket);
        CLOSER.execute(() -> delegate.onClosed(w, code, reason));
    }

    @Override
    public void onFailure(WebSocket webSocket, Throwable t, Response response) {
        open.remove(this);
        WebSocket w = wrap(webSocket);
        CLOSER.execute(() -> delegate.onFailure(w, t, response));
    }
}
