package io.npulifecycle.kubeclient.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.testing.support.Configs;

class ClientSettingsTest {

    @TempDir
    Path home;

    static Function<String, String> map(Map<String, String> m) {
        return m::get;
    }

    /** The metatype defaults of the keys these tests do not vary. */
    static final KubernetesClientComponent.Config DEFAULTS = Configs.defaults(KubernetesClientComponent.Config.class);

    ClientSettings resolve(String masterUrl, String kubeconfig, Map<String, String> env, Map<String, String> props)
            throws ClientSettings.Invalid {
        return ClientSettings.resolve(masterUrl, kubeconfig, DEFAULTS.namespace(), DEFAULTS.requestTimeoutSeconds(),
                DEFAULTS.connectTimeoutSeconds(), DEFAULTS.watchReconnectIntervalMs(), map(env), map(props), home);
    }

    @Test
    void nothingConfiguredAndNothingFoundMeansNoCluster() throws Exception {
        ClientSettings s = resolve("", "", Map.of(), Map.of());
        assertEquals(ClientSettings.Mode.NONE, s.mode());
        assertNull(s.masterUrl());
    }

    @Test
    void aKubeconfigInTheHomeFolderMeansAutomatic() throws Exception {
        Files.createDirectories(home.resolve(".kube"));
        Files.writeString(home.resolve(".kube/config"), "apiVersion: v1\n");
        ClientSettings s = resolve("", "", Map.of(), Map.of());
        assertEquals(ClientSettings.Mode.AUTO, s.mode());
        assertTrue(s.autoSource().endsWith(".kube/config"), s.autoSource());
    }

    @Test
    void kubeconfigEnvironmentVariableMeansAutomatic() throws Exception {
        Path kc = Files.writeString(home.resolve("kc"), "apiVersion: v1\n");
        ClientSettings s = resolve("", "", Map.of("KUBECONFIG", "/nonexistent:" + kc), Map.of());
        assertEquals(ClientSettings.Mode.AUTO, s.mode());
        assertTrue(s.autoSource().contains("$KUBECONFIG"), s.autoSource());
    }

    @Test
    void environmentOverridesTheFrameworkPropertyWhichOverridesTheKey() throws Exception {
        ClientSettings key = resolve("https://10.0.0.1:6443", "", Map.of(), Map.of());
        assertEquals(ClientSettings.Mode.MASTER_URL, key.mode());
        assertEquals("https://10.0.0.1:6443", key.masterUrl());
        assertTrue(key.masterUrlSource().contains("key masterUrl"));

        ClientSettings prop = resolve("https://10.0.0.1:6443", "", Map.of(),
                Map.of(ClientSettings.PROP_MASTER, "http://127.0.0.1:8001"));
        assertEquals("http://127.0.0.1:8001", prop.masterUrl());
        assertTrue(prop.masterUrlSource().contains(ClientSettings.PROP_MASTER));

        ClientSettings env = resolve("https://10.0.0.1:6443", "", Map.of(ClientSettings.ENV_MASTER, " http://127.0.0.1:9 "),
                Map.of(ClientSettings.PROP_MASTER, "http://127.0.0.1:8001"));
        assertEquals("http://127.0.0.1:9", env.masterUrl());
        assertTrue(env.masterUrlSource().contains(ClientSettings.ENV_MASTER));
    }

    @Test
    void aBadMasterUrlNamesThePidTheKeyAndTheValue() {
        for (String bad : new String[] {"ftp://example.org", "kubernetes", "https://", "http://a b", "http://h:1/?x=1"}) {
            ClientSettings.Invalid e = assertThrows(ClientSettings.Invalid.class, () -> resolve(bad, "", Map.of(), Map.of()));
            assertTrue(e.getMessage().contains("PID io.npulifecycle.kube key masterUrl='" + bad + "'"), e.getMessage());
            assertTrue(e.getMessage().contains("expected"), e.getMessage());
        }
    }

    @Test
    void aBadMasterUrlFromTheEnvironmentNamesTheVariable() {
        ClientSettings.Invalid e = assertThrows(ClientSettings.Invalid.class,
                () -> resolve("", "", Map.of(ClientSettings.ENV_MASTER, "localhost:8080"), Map.of()));
        assertTrue(e.getMessage().contains("environment variable NPU_LIFECYCLE_KUBE_MASTER='localhost:8080'"),
                e.getMessage());
    }

    @Test
    void anUnreadableKubeconfigNamesTheKeyAndThePath() {
        ClientSettings.Invalid e = assertThrows(ClientSettings.Invalid.class,
                () -> resolve("", home.resolve("missing").toString(), Map.of(), Map.of()));
        assertTrue(e.getMessage().contains("key kubeconfig='" + home.resolve("missing") + "' cannot be read: no such file"),
                e.getMessage());
        ClientSettings.Invalid dir = assertThrows(ClientSettings.Invalid.class,
                () -> resolve("", home.toString(), Map.of(), Map.of()));
        assertTrue(dir.getMessage().contains("not a readable file"), dir.getMessage());
    }

    @Test
    void aKubeconfigWithAMasterUrlKeepsTheUrl() throws Exception {
        Path kc = Files.writeString(home.resolve("kc"), "apiVersion: v1\n");
        ClientSettings s = resolve("http://127.0.0.1:1", kc.toString(), Map.of(), Map.of());
        assertEquals(ClientSettings.Mode.MASTER_URL, s.mode());
        assertEquals(kc, s.kubeconfig());
        ClientSettings k = resolve("", kc.toString(), Map.of(), Map.of());
        assertEquals(ClientSettings.Mode.KUBECONFIG, k.mode());
    }

    @Test
    void badNamespacesAndNumbersAreRejected() {
        for (String ns : new String[] {"", "NPU", "npu_operator", "-x", "a".repeat(64)}) {
            ClientSettings.Invalid e = assertThrows(ClientSettings.Invalid.class, () -> ClientSettings.resolve("", "", ns,
                    10, 5, 1000, map(Map.of()), map(Map.of()), home));
            assertTrue(e.getMessage().contains("key namespace='" + ns + "'"), e.getMessage());
        }
        ClientSettings.Invalid t = assertThrows(ClientSettings.Invalid.class, () -> ClientSettings.resolve("", "",
                "npu-operator", 0, 5, 1000, map(Map.of()), map(Map.of()), home));
        assertTrue(t.getMessage().contains("key requestTimeoutSeconds='0' is out of range (expected 1..3600)"),
                t.getMessage());
        assertThrows(ClientSettings.Invalid.class, () -> ClientSettings.resolve("", "", "npu-operator", 10, 601, 1000,
                map(Map.of()), map(Map.of()), home));
        assertThrows(ClientSettings.Invalid.class, () -> ClientSettings.resolve("", "", "npu-operator", 10, 5, 10,
                map(Map.of()), map(Map.of()), home));
    }

    @Test
    void timeoutsAreConvertedToMilliseconds() throws Exception {
        ClientSettings s = ClientSettings.resolve("http://127.0.0.1:1", "", "default", 7, 3, 250, map(Map.of()),
                map(Map.of()), home);
        assertEquals(7000, s.requestTimeoutMs());
        assertEquals(3000, s.connectTimeoutMs());
        assertEquals(250, s.watchReconnectIntervalMs());
        assertEquals("default", s.namespace());
    }
}
