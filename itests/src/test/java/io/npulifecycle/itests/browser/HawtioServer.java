package io.npulifecycle.itests.browser;

import java.nio.file.Files;
import java.nio.file.Path;

import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Hawtio's war on Jetty 12 (EE 10) at {@code http://127.0.0.1:PORT/hawtio}, loopback only, with Hawtio's own login
 * off ({@code hawtio.authenticationEnabled=false}: the agent authenticates every request). Run in its own JVM by
 * {@link HawtioBrowserIT}, so Hawtio's MBeans, threads and logging never reach the JVM of the other tests. Prints
 * {@value #STARTED} when it serves; stops when its standard input closes (or it is killed).
 *
 * <p>Usage: {@code HawtioServer PORT WAR}
 */
public final class HawtioServer {

    /** The line printed once Hawtio is served. */
    public static final String STARTED = "HAWTIO STARTED";

    private HawtioServer() {
    }

    /**
     * @param args the port and the war file
     * @throws Exception when Jetty cannot start (the port is taken, the war is unreadable)
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: HawtioServer PORT WAR");
        }
        System.setProperty("hawtio.authenticationEnabled", "false");
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(Integer.parseInt(args[0]));
        server.addConnector(connector);
        WebAppContext hawtio = new WebAppContext(args[1], "/hawtio");
        hawtio.setTempDirectory(Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")),
                "hawtio-jetty").toFile());
        server.setHandler(hawtio);
        server.start();
        System.out.println(STARTED);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the test closes our standard input
        }
        server.stop();
    }
}
