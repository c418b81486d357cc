package io.npulifecycle.rebooter.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A TCP proxy in front of the mock API server that can be taken down (connections refused) and brought back. */
final class ToggleProxy implements AutoCloseable {
    private final int targetPort;
    private final int port;
    private volatile ServerSocket server;
    private final List<Socket> open = new CopyOnWriteArrayList<>();

    ToggleProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.port = s.getLocalPort();
        start(s);
    }

    int port() {
        return port;
    }

    synchronized void down() throws IOException {
        ServerSocket s = server;
        server = null;
        if (s != null) {
            s.close();
        }
        for (Socket so : open) {
            so.close();
        }
        open.clear();
    }

    synchronized void up() throws IOException {
        if (server != null) {
            return;
        }
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        start(s);
    }

    private void start(ServerSocket s) {
        server = s;
        Thread t = new Thread(() -> {
            while (!s.isClosed()) {
                try {
                    Socket c = s.accept();
                    Socket u = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                    open.add(c);
                    open.add(u);
                    pump(c, u);
                    pump(u, c);
                } catch (IOException e) {
                    return;
                }
            }
        }, "toggle-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException ignored) {
                // closed
            } finally {
                try {
                    from.close();
                    to.close();
                } catch (IOException ignored) {
                    // closed
                }
            }
        }, "toggle-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        down();
    }
}
