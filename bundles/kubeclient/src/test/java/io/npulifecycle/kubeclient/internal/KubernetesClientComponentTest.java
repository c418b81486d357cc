package io.npulifecycle.kubeclient.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.jupiter.api.Test;

import io.npulifecycle.management.internal.ConfigurationValidator;
import io.npulifecycle.testing.support.Configs;
import io.npulifecycle.testing.support.RecordedRefusals;

/** The client's refused configuration values reach the ConfigurationRefusals service (the Configuration MBean). */
class KubernetesClientComponentTest {

    private final RecordedRefusals refusals = new RecordedRefusals();

    private ClientSettings resolved(KubernetesClientComponent c, Map<String, ?> cfg) throws ClientSettings.Invalid {
        return c.resolved(Configs.of(KubernetesClientComponent.Config.class, cfg), k -> null, k -> null, null);
    }

    @Test
    void aRefusedValueIsReportedWithItsKeyValueAndReason() throws Exception {
        KubernetesClientComponent c = new KubernetesClientComponent();
        c.bindRefusals(refusals);
        ClientSettings.Invalid e = assertThrows(ClientSettings.Invalid.class,
                () -> resolved(c, Map.of("requestTimeoutSeconds", 0)));
        assertEquals("PID io.npulifecycle.kube key requestTimeoutSeconds='0' is out of range (expected 1..3600)",
                e.getMessage(), "the log line is unchanged");
        assertThrows(ClientSettings.Invalid.class, () -> resolved(c, Map.of("namespace", "Not_A_Name")));
        assertThrows(ClientSettings.Invalid.class, () -> resolved(c, Map.of("masterUrl", "ftp://x")));
        assertEquals(List.of(
                "io.npulifecycle.kube requestTimeoutSeconds=0: is out of range (expected 1..3600)",
                "io.npulifecycle.kube namespace=Not_A_Name: is not a Kubernetes namespace name (a DNS-1123 label: "
                        + "lower-case letters, digits and '-', at most 63 characters)",
                "io.npulifecycle.kube masterUrl=ftp://x: is not an http(s) URL of a Kubernetes API server (expected "
                        + "e.g. https://10.0.0.1:6443 or http://127.0.0.1:8080, or empty for automatic configuration)"),
                refusals.lines());
    }

    @Test
    void aRefusedValueIsListedByTheConfigurationMBean() throws Exception {
        ConfigurationValidator management = new ConfigurationValidator();
        KubernetesClientComponent c = new KubernetesClientComponent();
        c.bindRefusals(management);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("io.npulifecycle:type=Configuration,test=KubernetesClientComponentTest");
        server.registerMBean(management, name);
        try {
            assertThrows(ClientSettings.Invalid.class, () -> resolved(c, Map.of("watchReconnectIntervalMs", 5)));
            assertEquals(List.of("Configuration io.npulifecycle.kube: key watchReconnectIntervalMs='5' refused by the "
                    + "component: is out of range (expected 100..600000); keeping its previous configuration"),
                    List.of((String[]) server.getAttribute(name, "Problems")));
        } finally {
            server.unregisterMBean(name);
        }
    }

    @Test
    void aUrlFromTheEnvironmentIsRefusedAsTheMasterUrlNamingItsSource() {
        KubernetesClientComponent c = new KubernetesClientComponent();
        c.bindRefusals(refusals);
        assertThrows(ClientSettings.Invalid.class, () -> c.resolved(Configs.defaults(
                KubernetesClientComponent.Config.class), Map.of(ClientSettings.ENV_MASTER, "nope")::get, k -> null,
                null));
        assertEquals("masterUrl", refusals.refusals().get(0).key());
        assertEquals("nope", refusals.refusals().get(0).value());
        assertEquals(true, refusals.refusals().get(0).reason().startsWith("(from the environment variable "
                + ClientSettings.ENV_MASTER + ", which overrides it) is not an http(s) URL"),
                refusals.refusals().get(0).reason());
    }

    @Test
    void theMetatypeDefaultsAreAcceptedAndWithoutTheServiceARefusalIsOnlyThrown() throws Exception {
        KubernetesClientComponent c = new KubernetesClientComponent();
        ClientSettings s = resolved(c, Map.of());
        assertEquals(ClientSettings.Mode.NONE, s.mode());
        assertEquals("npu-operator", s.namespace());
        assertEquals(10_000, s.requestTimeoutMs());
        assertThrows(ClientSettings.Invalid.class, () -> resolved(c, Map.of("connectTimeoutSeconds", 601)));
        c.bindRefusals(refusals);
        c.unbindRefusals(refusals);
        assertThrows(ClientSettings.Invalid.class, () -> resolved(c, Map.of("connectTimeoutSeconds", 601)));
        assertEquals(List.of(), refusals.lines());
    }
}
