package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A TCP forwarder between the runtimes of a simulated cluster and the embedded API server, so the API server can be
 * made <em>unreachable</em> (issue #7: "API server unreachable for 60 s"): {@link #cutOff()} closes the listening
 * socket (new connections are refused, {@code ECONNREFUSED}) and resets every open connection (requests in flight and
 * watches end with a connection error, not an HTTP answer); {@link #restore()} listens again on the same port. The
 * harness's own client talks to the API server directly and is never cut off.
 */
final class ApiProxy implements AutoCloseable {

    private final int targetPort;
    private final int port;
    private final Consumer<String> log;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private volatile boolean closed;

    /**
     * Starts forwarding from a free loopback port to {@code targetPort}.
     *
     * @param targetPort the API server's loopback port
     * @param log where cut-offs are reported
     * @throws IOException if no port can be bound
     */
    ApiProxy(int targetPort, Consumer<String> log) throws IOException {
        this.targetPort = targetPort;
        this.log = log;
        ServerSocket s = bind(0);
        this.port = s.getLocalPort();
        accept(s);
    }

    /** @return {@code http://127.0.0.1:<port>}, the master URL the runtimes are given */
    String url() {
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
                    Socket client = s.accept();
                    connect(client);
                } catch (IOException e) {
                    // closed by cutOff() or close()
                }
            }
        }, "api-proxy-accept-" + port);
        t.setDaemon(true);
        t.start();
    }

    private void connect(Socket client) {
        Socket upstream;
        try {
            upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        } catch (IOException e) {
            closeQuietly(client);
            return;
        }
        open.add(client);
        open.add(upstream);
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
                // connection ended (or reset by cutOff())
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "api-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Makes the API server unreachable: refuses new connections and resets every open one. */
    synchronized void cutOff() {
        ServerSocket s = server;
        if (s != null) {
            closeQuietly(s);
            server = null;
        }
        int n = 0;
        for (Socket c : Set.copyOf(open)) {
            try {
                c.setSoLinger(true, 0); // RST, as a vanished peer or a firewall reject looks
            } catch (SocketException e) {
                // closing anyway
            }
            closeQuietly(c);
            n++;
        }
        open.clear();
        log.accept("api: unreachable (port " + port + " refuses connections, " + n / 2 + " connection(s) reset)");
    }

    /**
     * Listens again on the same port.
     *
     * @throws IOException if the port cannot be bound again (retried for 10 s)
     */
    synchronized void restore() throws IOException {
        if (server != null || closed) {
            return;
        }
        IOException last = null;
        long end = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < end) {
            try {
                accept(bind(port));
                log.accept("api: reachable again on port " + port);
                return;
            } catch (IOException e) {
                last = e;
                try {
                    Thread.sleep(100); // the port is being released by the kernel; retry until the deadline
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while re-binding port " + port, ie);
                }
            }
        }
        throw new IOException("cannot listen on port " + port + " again", last);
    }

    /** @return whether connections are refused now */
    boolean isCutOff() {
        return server == null;
    }

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
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // already closed
        }
    }
}
