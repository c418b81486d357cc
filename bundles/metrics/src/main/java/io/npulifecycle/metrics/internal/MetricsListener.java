package io.npulifecycle.metrics.internal;

import jakarta.servlet.Servlet;

import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The listener of {@code /metrics}: a Jetty 12 {@link Server} with one plain-HTTP connector on
 * {@code metrics.host}:{@code metrics.port} and one servlet context holding only the metrics servlet at
 * {@value MetricsEndpoint#PATH}. The Jetty classes are those Felix HTTP Jetty 12 exports (already loaded for Jolokia);
 * the server is this bundle's, not an HTTP whiteboard runtime, so nothing registered on the whiteboard is served here.
 *
 * <p>Threads: a pool of at most {@value #MAX_THREADS} named {@code npu-lifecycle-metrics-*} (the connector's one
 * selector, which also accepts, and the requests; idle threads end after {@value #IDLE_TIMEOUT_MS} ms down to
 * {@value #MIN_THREADS}).
 * Prometheus scrapes one request at a time per target, so more would only hold stacks. Buffers: on the heap, not
 * pooled.
 */
final class MetricsListener implements AutoCloseable {

    /** Most threads of the listener's pool: the selector and up to 3 requests at a time. */
    static final int MAX_THREADS = 4;
    /** Threads the pool keeps when idle: the connector's selector and one for the next request. */
    static final int MIN_THREADS = 2;
    /**
     * Idle time after which a pool thread above {@link #MIN_THREADS} ends, in milliseconds: below a 15 s scrape
     * interval, so threads started by a burst of requests do not hold their stacks until the next burst.
     */
    static final int IDLE_TIMEOUT_MS = 10_000;
    /** Idle time after which a connection without a request is closed, in milliseconds (above a 15 s interval). */
    static final long CONNECTION_IDLE_TIMEOUT_MS = 60_000;
    /**
     * Time the stop of the listener waits for requests in progress, in milliseconds: none. A scrape cut by a stop is
     * one failed scrape for Prometheus, which scrapes again at its next interval; a graceful stop would hold a hot
     * update of the bundle for as long as a scraper keeps an idle connection open.
     */
    static final long STOP_TIMEOUT_MS = 0;

    private final Server server;
    private final ServerConnector connector;

    private MetricsListener(Server server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /**
     * Opens the listener.
     *
     * @param host the address to bind ({@code 0.0.0.0}, {@code ::}, {@code 127.0.0.1} or a host name)
     * @param port the TCP port; 0 takes a free one (tests)
     * @param servlet what answers {@value MetricsEndpoint#PATH}
     * @return the started listener
     * @throws Exception when the port cannot be bound (an {@link java.io.IOException} naming the address) or Jetty
     *         does not start; nothing is left running then
     */
    static MetricsListener start(String host, int port, Servlet servlet) throws Exception {
        QueuedThreadPool pool = new QueuedThreadPool(MAX_THREADS, MIN_THREADS, IDLE_TIMEOUT_MS);
        pool.setName("npu-lifecycle-metrics");
        pool.setDaemon(true);
        pool.setReservedThreads(0);
        // buffers are not pooled and on the heap: at one scrape per interval a pool (and direct buffers) would only
        // keep memory between scrapes that the young generation takes back
        Server server = new Server(pool, null, new ByteBufferPool.NonPooling());
        server.setStopTimeout(STOP_TIMEOUT_MS);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        http.setUseInputDirectByteBuffers(false);
        http.setUseOutputDirectByteBuffers(false);
        // 0 acceptors: the selector accepts, one thread less
        ServerConnector connector = new ServerConnector(server, 0, 1, new HttpConnectionFactory(http));
        connector.setHost(host);
        connector.setPort(port);
        connector.setIdleTimeout(CONNECTION_IDLE_TIMEOUT_MS);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        context.setContextPath("/");
        context.addServlet(new ServletHolder("npu-lifecycle-metrics", servlet), MetricsEndpoint.PATH);
        context.addServlet(new ServletHolder("npu-lifecycle-not-found", new NotFoundServlet()), "/");
        ErrorHandler errors = new ErrorHandler();
        errors.setShowStacks(false);
        errors.setShowMessageInTitle(false);
        context.setErrorHandler(errors);
        server.setErrorHandler(errors);
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return new MetricsListener(server, connector);
    }

    /** @return the bound port */
    int port() {
        return connector.getLocalPort();
    }

    /** Stops the listener at once ({@link #STOP_TIMEOUT_MS}): the port is free when this returns. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            System.getLogger(MetricsListener.class.getName()).log(System.Logger.Level.WARNING,
                    "stopping the /metrics listener: " + e);
        }
    }
}
