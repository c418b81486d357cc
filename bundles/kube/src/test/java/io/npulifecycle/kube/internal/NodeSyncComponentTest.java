package io.npulifecycle.kube.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.management.internal.ConfigurationValidator;
import io.npulifecycle.testing.support.Configs;
import io.npulifecycle.testing.support.RecordedRefusals;

/** Node sync's configuration: every refused value reaches the Configuration MBean; the defaults are the metatype's. */
class NodeSyncComponentTest {

    private static NodeSyncComponent.Config config(Map<String, Object> values) {
        return Configs.of(NodeSyncComponent.Config.class, values);
    }

    @Test
    void everyRefusedValueIsReportedAndAGoodConfigurationEndsTheRefusal() {
        RecordedRefusals reported = new RecordedRefusals();
        NodeSyncComponent c = new NodeSyncComponent(null, null, null);
        c.bindRefusals(reported);
        assertNull(c.reported(config(Map.of("nodeName", "Node_1", "crNamespace", "NPU", "healthIntervalSeconds", 0,
                "stateDir", "relative/dir"))));
        assertEquals(List.of(
                "io.npulifecycle.kube.node nodeName=Node_1: 'Node_1' is not a Kubernetes node name (lowercase DNS "
                        + "subdomain)",
                "io.npulifecycle.kube.node crNamespace=NPU: 'NPU' is not a namespace name",
                "io.npulifecycle.kube.node healthIntervalSeconds=0: 0 must be at least 1",
                "io.npulifecycle.kube.node stateDir=relative/dir: 'relative/dir' is not an absolute path"),
                reported.lines());
        reported.clear();
        assertNotNull(c.reported(config(Map.of("nodeName", "node-1"))));
        assertEquals(List.of("io.npulifecycle.kube.node accepted"), reported.lines());
        c.unbindRefusals(reported);
        assertNull(c.reported(config(Map.of("nodeName", "node-1", "crName", "-x"))));
        assertEquals(List.of("io.npulifecycle.kube.node accepted"), reported.lines(), "without the service: logged");
    }

    @Test
    void aRefusedValueIsListedByTheConfigurationMBean() throws Exception {
        ConfigurationValidator management = new ConfigurationValidator();
        NodeSyncComponent c = new NodeSyncComponent(null, null, null);
        c.bindRefusals(management);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("io.npulifecycle:type=Configuration,test=NodeSyncComponentTest");
        server.registerMBean(management, name);
        try {
            assertNull(c.reported(config(Map.of("nodeName", "node-1", "eventNamespace", "Events!"))));
            assertEquals(List.of("Configuration io.npulifecycle.kube.node: key eventNamespace='Events!' refused by the "
                    + "component: 'Events!' is not a namespace name; keeping its previous configuration"),
                    List.of((String[]) server.getAttribute(name, "Problems")));
            assertNotNull(c.reported(config(Map.of("nodeName", "node-1"))));
            assertEquals(0, ((String[]) server.getAttribute(name, "Problems")).length, "accepted: no problem left");
        } finally {
            server.unregisterMBean(name);
        }
    }

    @Test
    void theMetatypeDefaultsAreTheBuildersDefaults() {
        List<ConfigurationRefusals.Refusal> refused = new ArrayList<>();
        NodeSync.Settings s = NodeSyncComponent.settings(config(Map.of("nodeName", "node-1")), refused);
        assertEquals(List.of(), refused);
        assertEquals(NodeSync.Settings.builder("node-1").stateDir(Path.of("/var/lib/npu-operator/")).build(), s);
        assertEquals(new NodeSync.Settings("node-1", "npu-operator", "npuoperatorctl-sample", "default",
                Duration.ofSeconds(30), Path.of("/var/lib/npu-operator/")), s);
        assertNull(NodeSync.Settings.builder("node-1").build().stateDir(), "without OSGi: in memory by default");
    }
}
