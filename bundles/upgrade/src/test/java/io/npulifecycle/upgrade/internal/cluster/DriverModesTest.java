package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * The two driver modes and the Pod Security labels on the embedded cluster: the template read from its ConfigMap at
 * run time (missing: no DaemonSet, a condition naming the ConfigMap; created: the rollout goes on; changed: written to
 * the existing DaemonSets), {@code driverManagement=host} (no DaemonSet, no upgrade, the version reported), and the
 * namespace's Pod Security labels (written by the leader, written again when removed).
 */
class DriverModesTest {

    static final Duration WAIT = Duration.ofSeconds(30);
    static final String NS = NodeAgentEmulator.NS;
    ClusterFixture c;

    @AfterEach
    void close() {
        if (c != null) {
            c.close();
        }
    }

    private UpgradeController controller(ScaledTestClock time, ControllerConfig cfg) {
        UpgradeController uc = c.own(new UpgradeController(c.client("npu-controller"), time, cfg, null));
        uc.start();
        uc.setLeader(true);
        return uc;
    }

    private DaemonSet onlyDaemonSet() {
        var l = c.admin().apps().daemonSets().inNamespace(NS).list().getItems();
        return l.size() == 1 ? l.get(0) : null;
    }

    @Test
    void aMissingTemplateWritesNoDaemonSetAndSaysSoUntilTheConfigMapExists() {
        c = ClusterFixture.startEmbedded();
        c.admin().configMaps().inNamespace(NS).withName(DriverDaemonSetTemplate.CONFIG_MAP).delete();
        ScaledTestClock time = c.own(new ScaledTestClock(200));
        NodeAgentEmulator emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(2, "24.1.0");
        emulator.start();
        controller(time, LeaderAndScaleTest.cfg(false, false, "t"));
        c.createDriver(driver("25.5.0", true, 2, "100%", null));
        Waits.until("DriverTemplateReady=False naming the ConfigMap", WAIT, () -> {
            String m = c.condition(DriverModes.CONDITION_TEMPLATE);
            return m.startsWith("False") && m.contains("ConfigMap " + NS + "/" + DriverDaemonSetTemplate.CONFIG_MAP
                    + " does not exist");
        });
        assertTrue(c.condition("Progressing").contains(DriverModes.REASON_TEMPLATE_UNAVAILABLE), c.condition("Progressing"));
        assertNull(onlyDaemonSet(), "no DaemonSet without a template");
        for (String n : new String[] {"n1", "n2"}) {
            String s = c.label(n, NodeKeys.DRIVER_UPGRADE_STATE);
            assertTrue(s == null || "upgrade-required".equals(s), n + " got a slot: " + s);
        }

        DriverDaemonSetTemplate.install(c.admin(), NS, DriverDaemonSetTemplate.locate());
        Waits.until("the rollout completes once the template exists", WAIT,
                () -> emulator.allDone("25.5.0") && c.condition("Complete").startsWith("True"));
        assertTrue(c.condition(DriverModes.CONDITION_TEMPLATE).startsWith("True"), c.condition(DriverModes.CONDITION_TEMPLATE));

        // a changed template is written to the existing DaemonSet (OnDelete: no driver pod is deleted for it)
        String before = onlyDaemonSet().getMetadata().getAnnotations().get(DriverDaemonSets.TEMPLATE_HASH);
        var cm = c.admin().configMaps().inNamespace(NS).withName(DriverDaemonSetTemplate.CONFIG_MAP).get();
        cm.getData().put(DriverDaemonSets.KEY, cm.getData().get(DriverDaemonSets.KEY).replace("cpu: 10m", "cpu: 20m"));
        c.admin().configMaps().inNamespace(NS).resource(cm).update();
        int reboots = emulator.reboots.get();
        Waits.until("the DaemonSet carries the new template", WAIT, () -> {
            DaemonSet ds = onlyDaemonSet();
            return ds != null && !before.equals(ds.getMetadata().getAnnotations().get(DriverDaemonSets.TEMPLATE_HASH))
                    && "20m".equals(ds.getSpec().getTemplate().getSpec().getContainers().get(0).getResources()
                            .getRequests().get("cpu").toString());
        });
        assertTrue(onlyDaemonSet().getSpec().getTemplate().getSpec().getContainers().get(0).getImage().contains("25.5.0"));
        assertEquals(reboots, emulator.reboots.get(), "no reboot for a template change");

        // malformed: the condition names the key and the problem; nothing else changes
        cm = c.admin().configMaps().inNamespace(NS).withName(DriverDaemonSetTemplate.CONFIG_MAP).get();
        cm.getData().put(DriverDaemonSets.KEY, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec:\n"
                + "  selector: {matchLabels: {a: b}}\n  template: {spec: {containers: []}}\n");
        c.admin().configMaps().inNamespace(NS).resource(cm).update();
        c.setDriver(driver("26.0.0", true, 2, "100%", null));
        Waits.until("DriverTemplateReady=False naming the field", WAIT, () -> {
            String m = c.condition(DriverModes.CONDITION_TEMPLATE);
            return m.startsWith("False") && m.contains("key driver-daemonset.yaml")
                    && m.contains("spec.template.spec.containers[0]");
        });
        assertTrue(onlyDaemonSet().getSpec().getTemplate().getSpec().getContainers().get(0).getImage().contains("25.5.0"),
                "the DaemonSet is not rewritten from a bad template");
    }

    @Test
    void hostModeWritesNoDaemonSetReportsTheVersionAndNeverActsOnIt() {
        c = ClusterFixture.startEmbedded();
        ScaledTestClock time = c.own(new ScaledTestClock(200));
        NodeAgentEmulator emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(2, "24.1.0");
        emulator.start();
        controller(time, LeaderAndScaleTest.cfg(false, false, "t").withDriverModes(DriverModes.HOST,
                ControllerConfig.DEFAULT_DRIVER_DAEMONSET_CONFIGMAP, Map.of()));
        c.createDriver(driver("25.5.0", true, 2, "100%", null));
        Waits.until("DriverManagement=True reporting the version", WAIT, () -> {
            String m = c.condition(DriverModes.CONDITION_MANAGEMENT);
            return m.startsWith("True") && m.contains("25.5.0 is reported, never acted on") && m.contains("24.1.0 on 2");
        });
        assertTrue(c.condition("Progressing").startsWith("False"), c.condition("Progressing"));
        assertTrue(c.admin().apps().daemonSets().inNamespace(NS).list().getItems().isEmpty(), "no driver DaemonSet");
        assertNull(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
        assertEquals(0, emulator.reboots.get());
        assertEquals("24.1.0", emulator.loaded("n1"));
    }

    @Test
    void theLeaderKeepsThePodSecurityLabelsOnItsNamespace() {
        c = ClusterFixture.startEmbedded();
        if (c.admin().namespaces().withName(NS).get() == null) {
            c.admin().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
        }
        ScaledTestClock time = c.own(new ScaledTestClock(200));
        Map<String, String> want = PodSecurityLabels.parse("enforce=privileged,warn=privileged,audit=privileged");
        controller(time, LeaderAndScaleTest.cfg(false, false, "t").withDriverModes(DriverModes.MANAGED,
                ControllerConfig.DEFAULT_DRIVER_DAEMONSET_CONFIGMAP, want));
        Waits.until("the labels are on the namespace", WAIT, () -> labels().entrySet().containsAll(want.entrySet()));
        c.admin().namespaces().withName(NS).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"pod-security.kubernetes.io/enforce\":null,\"other\":\"kept\"}}}");
        Waits.until("the removed label is written again", WAIT, () -> labels().entrySet().containsAll(want.entrySet()));
        assertEquals("kept", labels().get("other"), "only our labels are written");
    }

    /**
     * On a real kube-apiserver, as the control plane's ServiceAccount: RBAC grants list, watch (by name) and patch on
     * its namespace, and list/watch of the template's ConfigMap by name, exactly what the code does.
     */
    @Test
    void onARealServerTheControlPlaneAccountMayKeepTheLabelsAndReadTheTemplate() {
        c = ClusterFixture.start(ClusterBackend.REAL);
        ScaledTestClock time = c.own(new ScaledTestClock(200));
        Map<String, String> want = PodSecurityLabels.parse("enforce=privileged,warn=privileged,audit=privileged");
        ControllerConfig cfg = LeaderAndScaleTest.cfg(false, false, "t").withDriverModes(DriverModes.MANAGED,
                ControllerConfig.DEFAULT_DRIVER_DAEMONSET_CONFIGMAP, want);
        UpgradeController uc = c.own(new UpgradeController(c.serviceAccountClient("npu-lifecycle-control-plane", null,
                k -> k.setUserAgent("npu-controller")), time, cfg, null));
        Map<String, String> before = new java.util.HashMap<>(labels());
        uc.start();
        uc.setLeader(true);
        try {
            Waits.until("the labels are on the namespace", WAIT, () -> labels().entrySet().containsAll(want.entrySet()));
            c.admin().namespaces().withName(NS).patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"metadata\":{\"labels\":{\"pod-security.kubernetes.io/warn\":\"restricted\"}}}");
            Waits.until("the changed label is written again", WAIT, () -> labels().entrySet().containsAll(want.entrySet()));
            NodeAgentEmulator emulator = NodeAgentEmulator.on(c, time);
            emulator.addNodes(1, "24.1.0");
            emulator.start();
            c.createDriver(driver("25.5.0", true, 1, "100%", null));
            Waits.until("the driver DaemonSet is written from the ConfigMap read through RBAC", WAIT,
                    () -> onlyDaemonSet() != null);
        } finally {
            uc.close(); // no rewrite after the restore
            // the pooled server keeps its namespace: its Pod Security labels back as they were installed
            Map<String, Object> back = new java.util.HashMap<>();
            want.keySet().forEach(k -> back.put(k, before.get(k)));
            c.admin().namespaces().withName(NS).patch(PatchContext.of(PatchType.JSON_MERGE),
                    c.admin().getKubernetesSerialization().asJson(Map.of("metadata", Map.of("labels", back))));
        }
    }

    private Map<String, String> labels() {
        var ns = c.admin().namespaces().withName(NS).get();
        return ns == null || ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
    }
}
