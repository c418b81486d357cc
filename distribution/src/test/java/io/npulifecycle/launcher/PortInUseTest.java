package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A port in use stops the launch with exit 2 naming the key, whichever port it is. */
class PortInUseTest {

    @TempDir
    Path etc;

    @Test
    void httpPortInUseIsExit2NamingHttpPort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            RuntimeSettings s = RuntimeSettings.load(etc, Map.of("NPU_LIFECYCLE_HTTP_PORT",
                    String.valueOf(taken.getLocalPort()), "NPU_LIFECYCLE_METRICS_PORT", "0"));
            LaunchException e = assertThrows(LaunchException.class, () -> Main.checkPortFree(s));
            assertEquals(LaunchException.USAGE, e.exitCode());
            assertTrue(e.getMessage().startsWith("http.port: cannot listen on 127.0.0.1:" + taken.getLocalPort()
                    + " for Jolokia and the health endpoints: "), e.getMessage());
        }
    }

    @Test
    void metricsPortInUseIsExit2NamingMetricsPort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            RuntimeSettings s = RuntimeSettings.load(etc, Map.of("NPU_LIFECYCLE_METRICS_HOST", "127.0.0.1",
                    "NPU_LIFECYCLE_METRICS_PORT", String.valueOf(taken.getLocalPort())));
            LaunchException e = assertThrows(LaunchException.class, () -> Main.checkMetricsPort(s));
            assertEquals(LaunchException.USAGE, e.exitCode());
            assertTrue(e.getMessage().startsWith("metrics.port: cannot listen on 127.0.0.1:" + taken.getLocalPort()),
                    e.getMessage());
        }
    }
}
