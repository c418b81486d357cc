package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RuntimeSettingsTest {

    @TempDir
    Path etc;

    @Test
    void defaultsWhenTheFileIsMissing() throws Exception {
        RuntimeSettings s = RuntimeSettings.load(etc, Map.of());
        assertEquals("127.0.0.1", s.httpHost());
        assertEquals(8778, s.httpPort());
        assertEquals("INFO", s.logLevel());
        assertEquals("operator", s.jolokiaUser());
        assertEquals(etc.resolve("jolokia-access.xml"), s.jolokiaPolicy());
        assertNull(s.envUser());
    }

    @Test
    void environmentOverridesTheFile() throws Exception {
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "http.port=9000\nlog.level=debug\n");
        RuntimeSettings s = RuntimeSettings.load(etc, Map.of("NPU_LIFECYCLE_HTTP_PORT", "9100",
                "NPU_LIFECYCLE_JOLOKIA_USER", "ops", "NPU_LIFECYCLE_JOLOKIA_PASSWORD", "pw-from-secret"));
        assertEquals(9100, s.httpPort());
        assertEquals("DEBUG", s.logLevel());
        assertEquals("ops", s.envUser());
        assertEquals("pw-from-secret", s.envPassword());
    }

    @Test
    void badPortNamesTheFileAndTheKey() throws Exception {
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "http.port=87x8\n");
        LaunchException e = assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of()));
        assertEquals(LaunchException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains(etc.resolve(RuntimeSettings.FILE).toString()), e.getMessage());
        assertTrue(e.getMessage().contains("http.port='87x8'"), e.getMessage());
    }

    @Test
    void badPortFromTheEnvironmentNamesTheVariable() {
        LaunchException e = assertThrows(LaunchException.class,
                () -> RuntimeSettings.load(etc, Map.of("NPU_LIFECYCLE_HTTP_PORT", "70000")));
        assertTrue(e.getMessage().contains("NPU_LIFECYCLE_HTTP_PORT"), e.getMessage());
    }

    @Test
    void unknownKeyAndBadLevelAreRejected() throws Exception {
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "http.prot=1\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("http.prot"));
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "log.level=LOUD\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("log.level='LOUD'"));
    }

    @Test
    void userWithoutPasswordIsRejected() {
        LaunchException e = assertThrows(LaunchException.class,
                () -> RuntimeSettings.load(etc, Map.of("NPU_LIFECYCLE_JOLOKIA_USER", "ops")));
        assertTrue(e.getMessage().contains("NPU_LIFECYCLE_JOLOKIA_PASSWORD is not"), e.getMessage());
    }

    @Test
    void usersFileDefaultsAndTlsIsOffUnlessConfigured() throws Exception {
        RuntimeSettings s = RuntimeSettings.load(etc, Map.of());
        assertEquals(etc.resolve("jolokia-users.properties"), s.jolokiaUsers());
        assertNull(s.tls());
        assertTrue(s.httpEnabled());
    }

    @Test
    void tlsSettingsAreCheckedBeforeStart() throws Exception {
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "https.keystore=x.p12\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("https.keystore is set but https.port is not"));
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "https.port=8443\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("https.port is set but https.keystore is not"));
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "https.port=8443\nhttps.keystore=missing.p12\n"
                + "https.keystore.password=pw\n");
        LaunchException e = assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of()));
        assertTrue(e.getMessage().contains("missing.p12") && e.getMessage().contains("does not exist"),
                e.getMessage());
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "http.enable=false\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("http.enable=false needs https.port"));
    }

    @Test
    void tlsWithAKeystoreMadeByKeytoolTurnsPlainHttpOff() throws Exception {
        Path ks = etc.resolve("runtime.p12");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "runtime", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=127.0.0.1", "-validity", "2", "-keystore", ks.toString(), "-storetype", "PKCS12",
                "-storepass", "store-password", "-keypass", "store-password").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor());
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "https.port=8443\nhttps.keystore=runtime.p12\n"
                + "https.keystore.password=wrong-password\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("cannot be opened"));
        RuntimeSettings s = RuntimeSettings.load(etc, Map.of("NPU_LIFECYCLE_HTTPS_KEYSTORE_PASSWORD",
                "store-password"));
        assertEquals(8443, s.tls().port());
        assertEquals(ks.toAbsolutePath(), s.tls().keystore());
        assertEquals("store-password", s.tls().keyPassword());
        assertEquals(false, s.httpEnabled());
        // a wrong key password: Jetty would stop without a connector after the start; refused before it instead
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "https.port=8443\nhttps.keystore=runtime.p12\n"
                + "https.keystore.password=store-password\nhttps.key.password=other-password\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("cannot be recovered with https.key.password"));
        // a missing keystore is named as missing, not as a wrong password
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "https.port=8443\nhttps.keystore=missing.p12\n"
                + "https.keystore.password=store-password\n");
        assertTrue(assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of())).getMessage()
                .contains("does not exist"));
    }

    @Test
    void aUsersFileUserNamedLikeTheRuntimesOperatorStopsTheStart() throws Exception {
        String line = new io.npulifecycle.security.tool.UsersFile.User("op", io.npulifecycle.security.tool.Role.VIEWER,
                io.npulifecycle.security.tool.PasswordHash.create("a-long-viewer-password".toCharArray(),
                        new java.security.SecureRandom())).line();
        Files.writeString(etc.resolve("jolokia-users.properties"), line + "\n");
        RuntimeSettings s = RuntimeSettings.load(etc, Map.of());
        Main.checkUsersFile(s, "someone-else");
        LaunchException e = assertThrows(LaunchException.class, () -> Main.checkUsersFile(s, "op"));
        assertEquals(LaunchException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("user 'op' is also the runtime's own operator user"), e.getMessage());
    }

    @Test
    void aMalformedUsersFileLineDoesNotStopTheStart() throws Exception {
        Files.writeString(etc.resolve("jolokia-users.properties"), "# users\nalice=viewer:clear-text-password\n");
        RuntimeSettings s = RuntimeSettings.load(etc, Map.of());
        // the runtime skips the line and logs it (UserStoreTest); a user file that cannot be read still stops it
        Main.checkUsersFile(s, "op");
        Files.write(etc.resolve("jolokia-users.properties"), new byte[] {'a', '=', (byte) 0xff});
        assertEquals(LaunchException.USAGE, assertThrows(LaunchException.class, () -> Main.checkUsersFile(s, "op"))
                .exitCode());
    }

    @Test
    void metricsListenOn9464LoopbackOutsideAPodAndEveryAddressInside() throws Exception {
        RuntimeSettings out = RuntimeSettings.load(etc, Map.of());
        assertEquals("127.0.0.1", out.metricsHost());
        assertEquals(9464, out.metricsPort());
        RuntimeSettings in = RuntimeSettings.load(etc, Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1"));
        assertEquals("0.0.0.0", in.metricsHost());
        assertEquals("127.0.0.1", in.httpHost(), "Jolokia stays on loopback in a pod");
        Files.writeString(etc.resolve(RuntimeSettings.FILE), "metrics.host=192.0.2.7\nmetrics.port=9100\n");
        RuntimeSettings file = RuntimeSettings.load(etc, Map.of("NPU_LIFECYCLE_METRICS_PORT", "9200"));
        assertEquals("192.0.2.7", file.metricsHost());
        assertEquals(9200, file.metricsPort(), "the environment wins");
    }

    @Test
    void badMetricsPortIsAUsageErrorNamingTheKey() throws Exception {
        for (String bad : new String[] {"ninety", "-1", "65536", "8778"}) {
            Files.writeString(etc.resolve(RuntimeSettings.FILE), "metrics.port=" + bad + "\n");
            LaunchException e = assertThrows(LaunchException.class, () -> RuntimeSettings.load(etc, Map.of()), bad);
            assertEquals(LaunchException.USAGE, e.exitCode(), bad);
            assertTrue(e.getMessage().contains("metrics.port"), e.getMessage());
        }
    }
}
