package io.npulifecycle.simulator.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TcpProxyTest {

    private ServerSocket echo;
    private final List<String> log = new ArrayList<>();

    @BeforeEach
    void echoServer() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    Thread e = new Thread(() -> {
                        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                            in.transferTo(out);
                        } catch (IOException ignored) {
                            // peer gone
                        }
                    });
                    e.setDaemon(true);
                    e.start();
                } catch (IOException closed) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
    }

    @AfterEach
    void stop() throws IOException {
        echo.close();
    }

    /**
     * Whether a new connection to {@code port} reaches the echo server. Refused: false. Linux may join a connection to
     * a free port in the ephemeral range to itself (TCP simultaneous open, local port == remote port) instead of
     * refusing it; such a socket reaches nobody and counts as refused, as does one that echoes nothing within 1 s.
     */
    private static boolean reachesEcho(int port) throws IOException {
        Socket s;
        try {
            s = new Socket(InetAddress.getLoopbackAddress(), port);
        } catch (ConnectException refused) {
            return false;
        }
        try (s) {
            if (s.getLocalPort() == port) {
                return false;
            }
            s.setSoTimeout(1_000);
            s.getOutputStream().write('z');
            s.getOutputStream().flush();
            return s.getInputStream().read() == 'z';
        } catch (java.net.SocketTimeoutException | java.net.SocketException e) {
            return false;
        }
    }

    private static String roundTrip(int port, String text) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(text.getBytes());
            s.getOutputStream().flush();
            byte[] buf = s.getInputStream().readNBytes(text.length());
            return new String(buf);
        }
    }

    @Test
    void forwardsThenRefusesThenForwardsAgainOnTheSamePort() throws Exception {
        try (TcpProxy proxy = new TcpProxy(echo.getLocalPort(), log::add)) {
            assertEquals("hello", roundTrip(proxy.port(), "hello"));
            assertEquals("http://127.0.0.1:" + proxy.port(), proxy.url());
            // its port is reserved, outside the ephemeral range: nothing else takes it while the proxy is cut off
            assertTrue(LoopbackPorts.shared().holds(proxy.port()), String.valueOf(proxy.port()));
            assertFalse(LoopbackPorts.shared().ephemeral().contains(proxy.port()), String.valueOf(proxy.port()));

            Socket open = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
            open.setSoTimeout(10_000);
            open.getOutputStream().write('x');
            assertEquals('x', open.getInputStream().read());
            proxy.cutOff();
            assertTrue(proxy.isCutOff());
            assertFalse(reachesEcho(proxy.port()), "a new connection is refused while cut off");
            assertThrows(IOException.class, () -> {
                int r = open.getInputStream().read();
                if (r < 0) {
                    throw new IOException("ended");
                }
            }, "an open connection ends with the cut-off");
            open.close();

            int port = proxy.port();
            proxy.restore();
            assertFalse(proxy.isCutOff());
            assertEquals(port, proxy.port());
            assertEquals("again", roundTrip(proxy.port(), "again"));
            assertTrue(log.get(0).startsWith("api: unreachable (port " + port), log.toString());
            assertTrue(log.get(1).startsWith("api: reachable again"), log.toString());
        }
    }

    @Test
    void anOrderlyCutOffClosesOpenConnections() throws Exception {
        try (TcpProxy proxy = new TcpProxy(echo.getLocalPort())) {
            try (Socket open = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
                open.setSoTimeout(10_000);
                open.getOutputStream().write('y');
                assertEquals('y', open.getInputStream().read());
                proxy.cutOff(TcpProxy.Disconnect.CLOSE);
                assertEquals(-1, open.getInputStream().read(), "end of stream, not a reset");
            }
        }
    }
}
