package io.npulifecycle.simulator.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A TCP forwarder on the loopback interface in front of a server (the Kubernetes API server of the simulator and of
 * the tests), so that the server can be made <em>unreachable</em> and reachable again while it keeps running:
 * {@link #cutOff(Disconnect)} closes the listening socket (new connections are refused, {@code ECONNREFUSED}) and
 * ends every open connection (requests in flight and watches end with a connection error, not an HTTP answer);
 * {@link #restore()} listens again on the same port. Whoever must never be cut off talks to the server directly.
 *
 * <p>With {@link Tls} the proxy terminates TLS itself (a serving certificate the clients trust, no ALPN, so clients
 * speak HTTP/1.1) and relays the HTTP bytes to the server over a TLS connection of its own; it can then also make the
 * server <em>unavailable</em>: {@link #serviceUnavailable(Duration)} closes every open connection and answers each
 * request of a new one with a real {@code 503 Service Unavailable} (a Kubernetes {@code Status} body and
 * {@code Retry-After}, see {@link ServiceUnavailableAnswer}) until {@link #restore()}. {@link #dropConnections()}
 * ends every open connection while new ones get through, as a server closing its connections does. Without
 * {@link Tls} the bytes pass through unchanged (TLS included).
 *
 * <p>Each connection uses two daemon threads (one per direction). Thread-safe.
 */
public final class TcpProxy implements AutoCloseable {

    /** How {@link #cutOff(Disconnect)} ends the open connections. */
    public enum Disconnect {
        /** a TCP reset (linger 0), as a vanished peer or a firewall reject looks */
        RESET,
        /** an orderly close (FIN), as a server that closes its connections looks */
        CLOSE
    }

    /**
     * TLS termination: {@code listen} makes the client-facing server sockets (its certificate must be one the clients
     * trust for {@code 127.0.0.1}), {@code upstream} the connections to the server (verified as {@code https} to
     * 127.0.0.1).
     *
     * @param listen e.g. {@code SSLContext.getServerSocketFactory()} of a context holding the serving key
     * @param upstream e.g. {@code SSLContext.getSocketFactory()} of a context trusting the server's CA
     */
    public record Tls(SSLServerSocketFactory listen, SSLSocketFactory upstream) {
        public Tls {
            Objects.requireNonNull(listen, "listen");
            Objects.requireNonNull(upstream, "upstream");
        }
    }

    /** How long {@link #restore()} retries binding the port while the kernel releases it. */
    public static final Duration REBIND_TIMEOUT = Duration.ofSeconds(10);

    private static final long REBIND_RETRY_MILLIS = 100;

    private final int targetPort;
    private final Tls tls;
    private final int port;
    private final Consumer<String> log;
    /** Both sockets of every forwarded connection. */
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    /** The client sockets being answered 503. */
    private final Set<Socket> answering = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicLong answered503 = new java.util.concurrent.atomic.AtomicLong();
    /** While not null: every new connection is answered 503 with this {@code Retry-After}. */
    private volatile Duration unavailableRetryAfter;

    /**
     * Starts forwarding from a free loopback port ({@link LoopbackPorts#shared()}) to {@code 127.0.0.1:targetPort}.
     *
     * @param targetPort the server's loopback port
     * @param log receives one line per cut-off and restore (e.g. {@code api: unreachable ...}); {@code s -> { }} for
     *        none
     * @throws IOException if no port can be bound
     */
    public TcpProxy(int targetPort, Consumer<String> log) throws IOException {
        this(targetPort, null, log);
    }

    /**
     * Starts forwarding from a free loopback port ({@link LoopbackPorts#shared()}) to {@code 127.0.0.1:targetPort},
     * terminating TLS when {@code tls} is given.
     *
     * @param targetPort the server's loopback port
     * @param tls how to terminate TLS and reach the server over TLS, or null to pass bytes through unchanged
     * @param log receives one line per cut-off, outage, drop and restore; {@code s -> { }} for none
     * @throws IOException if none of three allocated ports can be bound (the last bind's error)
     * @throws IllegalStateException when {@link LoopbackPorts} has no port left
     */
    public TcpProxy(int targetPort, Tls tls, Consumer<String> log) throws IOException {
        this.targetPort = targetPort;
        this.tls = tls;
        this.log = Objects.requireNonNull(log);
        // a port of LoopbackPorts, not one the kernel picks: restore() binds it again after a cut-off, and while cut
        // off nothing else may take it (a port of the ephemeral range can become an outgoing connection's local port)
        ServerSocket s = null;
        IOException failed = null;
        for (int attempt = 0; s == null && attempt < BIND_ATTEMPTS; attempt++) {
            int candidate = LoopbackPorts.shared().allocate();
            try {
                s = bind(candidate);
            } catch (IOException e) {
                failed = e; // taken since it was allocated, by a process that does not use LoopbackPorts
            }
        }
        if (s == null) {
            throw failed;
        }
        this.port = s.getLocalPort();
        accept(s);
    }

    /** How many ports of {@link LoopbackPorts} the constructor tries to bind. */
    private static final int BIND_ATTEMPTS = 3;

    /**
     * Starts forwarding without logging.
     *
     * @param targetPort the server's loopback port
     * @throws IOException if no port can be bound
     */
    public TcpProxy(int targetPort) throws IOException {
        this(targetPort, line -> { });
    }

    /** @return the proxy's loopback port (the same after {@link #restore()}) */
    public int port() {
        return port;
    }

    /**
     * @return {@code http://127.0.0.1:<port>} ({@code https} with {@link Tls}), the URL clients that may be cut off
     *         are given
     */
    public String url() {
        return (tls != null ? "https" : "http") + "://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + port;
    }

    private ServerSocket bind(int port) throws IOException {
        ServerSocket s = tls != null ? tls.listen().createServerSocket() : new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
        return s;
    }

    private void accept(ServerSocket s) {
        server = s;
        Thread t = new Thread(() -> {
            while (!s.isClosed()) {
                try {
                    connect(s, s.accept());
                } catch (IOException e) {
                    // the listening socket was closed by cutOff() or close()
                }
            }
        }, "tcp-proxy-accept-" + port);
        t.setDaemon(true);
        t.start();
    }

    /**
     * Joins an accepted connection to a new one to the server, unless the proxy was cut off (or closed) since
     * {@code listening} accepted it: a connection accepted while {@link #cutOff} runs never gets through.
     */
    private void connect(ServerSocket listening, Socket client) {
        Duration retryAfter = unavailableRetryAfter;
        if (retryAfter != null) {
            answerUnavailable(listening, client, retryAfter);
            return;
        }
        Socket upstream;
        try {
            upstream = upstream();
        } catch (IOException e) {
            closeQuietly(client); // the server is down: the client sees its connection closed
            return;
        }
        synchronized (this) {
            if (server != listening || closed || unavailableRetryAfter != null) {
                closeQuietly(client); // cut off or made unavailable since it was accepted: a retry gets the new answer
                closeQuietly(upstream);
                return;
            }
            open.add(client);
            open.add(upstream);
        }
        pump(client, upstream);
        pump(upstream, client);
    }

    private Socket upstream() throws IOException {
        if (tls == null) {
            return new Socket(InetAddress.getLoopbackAddress(), targetPort);
        }
        // by address literal: the certificate is checked for 127.0.0.1 (an InetAddress would be checked as localhost)
        SSLSocket s = (SSLSocket) tls.upstream().createSocket(InetAddress.getLoopbackAddress().getHostAddress(),
                targetPort);
        SSLParameters p = s.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS"); // the server's certificate must name 127.0.0.1
        s.setSSLParameters(p);
        return s;
    }

    private void answerUnavailable(ServerSocket listening, Socket client, Duration retryAfter) {
        synchronized (this) {
            if (server != listening || closed) {
                closeQuietly(client);
                return;
            }
            answering.add(client);
        }
        Thread t = new Thread(() -> {
            try {
                if (ServiceUnavailableAnswer.answer(client, retryAfter)) {
                    answered503.incrementAndGet();
                }
            } finally {
                closeQuietly(client);
                answering.remove(client);
            }
        }, "tcp-proxy-503-" + port);
        t.setDaemon(true);
        t.start();
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // the connection ended, or was ended by cutOff()
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "tcp-proxy-pump-" + port);
        t.setDaemon(true);
        t.start();
    }

    /** Makes the server unreachable: refuses new connections and resets every open one ({@link Disconnect#RESET}). */
    public void cutOff() {
        cutOff(Disconnect.RESET);
    }

    /**
     * Makes the server unreachable: refuses new connections and ends every open one. Does nothing more when already
     * cut off.
     *
     * @param how how the open connections end
     */
    public synchronized void cutOff(Disconnect how) {
        ServerSocket s = server;
        if (s != null) {
            closeQuietly(s);
            server = null;
        }
        int n = closeOpen(how);
        log.accept("api: unreachable (port " + port + " refuses connections, " + n + " connection(s) "
                + (how == Disconnect.RESET ? "reset" : "closed") + ")");
    }

    /**
     * Makes the server unavailable: ends every open connection (an orderly close) and answers every request of each
     * new connection with {@code 503 Service Unavailable} until {@link #restore()}; listens again first when cut off.
     *
     * @param retryAfter the {@code Retry-After} of each answer (whole seconds, at least 1)
     * @throws IllegalStateException without {@link Tls}: the proxy sees only encrypted bytes, it cannot answer HTTP
     * @throws IOException if the port must be bound again and cannot be within {@link #REBIND_TIMEOUT}
     */
    public synchronized void serviceUnavailable(Duration retryAfter) throws IOException {
        if (tls == null) {
            throw new IllegalStateException("a proxy that passes TLS through cannot answer 503: construct it with Tls");
        }
        unavailableRetryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
        if (server == null && !closed) {
            accept(rebind());
        }
        int n = closeOpen(Disconnect.CLOSE);
        log.accept("api: unavailable (port " + port + " answers every request 503 Service Unavailable, Retry-After "
                + ServiceUnavailableAnswer.seconds(retryAfter) + " s; " + n + " connection(s) closed)");
    }

    /**
     * Ends every open connection (an orderly close), as a server that closes its connections does; new connections
     * get through as before.
     *
     * @return how many client connections were ended
     */
    public synchronized int dropConnections() {
        int n = closeOpen(Disconnect.CLOSE);
        log.accept("api: " + n + " connection(s) on port " + port + " closed");
        return n;
    }

    /** @return how many requests were answered 503 since the proxy started */
    public long answered503() {
        return answered503.get();
    }

    /** @return whether requests are answered 503 now ({@link #serviceUnavailable(Duration)}) */
    public boolean isUnavailable() {
        return unavailableRetryAfter != null;
    }

    /** Closes every open connection; @return how many client connections were ended */
    private int closeOpen(Disconnect how) {
        int clients = answering.size();
        for (Socket c : Set.copyOf(answering)) {
            closeQuietly(c);
        }
        answering.clear();
        int sockets = 0;
        for (Socket c : Set.copyOf(open)) {
            if (how == Disconnect.RESET) {
                try {
                    c.setSoLinger(true, 0);
                } catch (SocketException e) {
                    // closing anyway
                }
            }
            closeQuietly(c);
            sockets++;
        }
        open.clear();
        return clients + sockets / 2;
    }

    /**
     * Forwards again: listens again on the same port when cut off, stops answering 503 when unavailable; does
     * nothing when neither, or closed.
     *
     * @throws IOException if the port cannot be bound again within {@link #REBIND_TIMEOUT}
     */
    public synchronized void restore() throws IOException {
        if (closed) {
            return;
        }
        if (unavailableRetryAfter != null) {
            unavailableRetryAfter = null;
            closeOpen(Disconnect.CLOSE); // connections still being answered 503
            log.accept("api: available again on port " + port);
        }
        if (server != null) {
            return;
        }
        accept(rebind());
        log.accept("api: reachable again on port " + port);
    }

    private ServerSocket rebind() throws IOException {
        IOException last = null;
        long end = System.nanoTime() + REBIND_TIMEOUT.toNanos();
        while (System.nanoTime() - end < 0) {
            try {
                return bind(port);
            } catch (IOException e) {
                last = e;
                try {
                    Thread.sleep(REBIND_RETRY_MILLIS); // the kernel is releasing the port; retry until the deadline
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while re-binding port " + port, ie);
                }
            }
        }
        throw new IOException("cannot listen on port " + port + " again within " + REBIND_TIMEOUT.toSeconds() + " s",
                last);
    }

    /** @return whether connections are refused now */
    public boolean isCutOff() {
        return server == null;
    }

    /** Stops listening and closes every open connection; idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        ServerSocket s = server;
        if (s != null) {
            closeQuietly(s);
        }
        closeOpen(Disconnect.CLOSE);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // already closed
        }
    }
}
