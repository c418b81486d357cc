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

/**
 * A TCP forwarder on the loopback interface in front of a server (the Kubernetes API server of the simulator and of
 * the tests), so that the server can be made <em>unreachable</em> and reachable again while it keeps running:
 * {@link #cutOff(Disconnect)} closes the listening socket (new connections are refused, {@code ECONNREFUSED}) and
 * ends every open connection (requests in flight and watches end with a connection error, not an HTTP answer);
 * {@link #restore()} listens again on the same port. Whoever must never be cut off talks to the server directly.
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

    /** How long {@link #restore()} retries binding the port while the kernel releases it. */
    public static final Duration REBIND_TIMEOUT = Duration.ofSeconds(10);

    private static final long REBIND_RETRY_MILLIS = 100;

    private final int targetPort;
    private final int port;
    private final Consumer<String> log;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private volatile boolean closed;

    /**
     * Starts forwarding from a free loopback port to {@code 127.0.0.1:targetPort}.
     *
     * @param targetPort the server's loopback port
     * @param log receives one line per cut-off and restore (e.g. {@code api: unreachable ...}); {@code s -> { }} for
     *        none
     * @throws IOException if no port can be bound
     */
    public TcpProxy(int targetPort, Consumer<String> log) throws IOException {
        this.targetPort = targetPort;
        this.log = Objects.requireNonNull(log);
        ServerSocket s = bind(0);
        this.port = s.getLocalPort();
        accept(s);
    }

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

    /** @return {@code http://127.0.0.1:<port>}, the URL clients that may be cut off are given */
    public String url() {
        return "http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + port;
    }

    private static ServerSocket bind(int port) throws IOException {
        ServerSocket s = new ServerSocket();
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
        Socket upstream;
        try {
            upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        } catch (IOException e) {
            closeQuietly(client); // the server is down: the client sees its connection closed
            return;
        }
        synchronized (this) {
            if (server != listening || closed) {
                closeQuietly(client);
                closeQuietly(upstream);
                return;
            }
            open.add(client);
            open.add(upstream);
        }
        pump(client, upstream);
        pump(upstream, client);
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
        int n = 0;
        for (Socket c : Set.copyOf(open)) {
            if (how == Disconnect.RESET) {
                try {
                    c.setSoLinger(true, 0);
                } catch (SocketException e) {
                    // closing anyway
                }
            }
            closeQuietly(c);
            n++;
        }
        open.clear();
        log.accept("api: unreachable (port " + port + " refuses connections, " + n / 2 + " connection(s) "
                + (how == Disconnect.RESET ? "reset" : "closed") + ")");
    }

    /**
     * Listens again on the same port; does nothing when not cut off or closed.
     *
     * @throws IOException if the port cannot be bound again within {@link #REBIND_TIMEOUT}
     */
    public synchronized void restore() throws IOException {
        if (server != null || closed) {
            return;
        }
        IOException last = null;
        long end = System.nanoTime() + REBIND_TIMEOUT.toNanos();
        while (System.nanoTime() - end < 0) {
            try {
                accept(bind(port));
                log.accept("api: reachable again on port " + port);
                return;
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
        for (Socket c : Set.copyOf(open)) {
            closeQuietly(c);
        }
        open.clear();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // already closed
        }
    }
}
