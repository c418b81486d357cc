package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.plan.Combination;

import io.npulifecycle.api.node.NodeKeys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate;

/**
 * The driver DaemonSets the control plane writes are the ConfigMap's template with only the per-combination fields
 * replaced; a missing or malformed template is refused with a message naming the ConfigMap and the field.
 */
class DriverDaemonSetsTest {

    static final KubernetesSerialization SER = new KubernetesSerialization();
    static final Combination COMBO = new Combination("310p", "5.10.0-182.0.0.95", "oe2203sp3");
    static final String NS = "npu-operator";
    static final String CM = ControllerConfig.DEFAULT_DRIVER_DAEMONSET_CONFIGMAP;

    /** @return the ConfigMap the chart renders, from the template file of the repository */
    static ConfigMap shipped() {
        return DriverDaemonSetTemplate.configMap(NS, DriverDaemonSetTemplate.locate());
    }

    static DriverDaemonSets load() {
        return DriverDaemonSets.fromConfigMap(SER, shipped(), NS, CM);
    }

    static ConfigMap withText(String text) {
        return new ConfigMapBuilder().withNewMetadata().withName(CM).withNamespace(NS).withResourceVersion("7")
                .endMetadata().addToData(DriverDaemonSets.KEY, text).build();
    }

    static List<String> versions(Container c) {
        return c.getEnv() == null ? List.of() : c.getEnv().stream().filter(e -> "DRIVER_VERSION".equals(e.getName()))
                .map(EnvVar::getValue).toList();
    }

    @Test
    void theShippedTemplateHasTheDriverImageFirstAndTheNodeAgentBesideIt() {
        DaemonSet t = load().template();
        List<Container> cs = t.getSpec().getTemplate().getSpec().getContainers();
        assertEquals("driver", cs.get(0).getName());
        assertTrue(cs.get(0).getImage().contains("/mlops/ascend-driver:"), cs.get(0).getImage());
        assertEquals(DriverDaemonSets.NODE_AGENT_CONTAINER, cs.get(1).getName());
        assertTrue(cs.get(1).getImage().contains("npu-lifecycle/node-agent"), cs.get(1).getImage());
        assertEquals("OnDelete", t.getSpec().getUpdateStrategy().getType());
    }

    @Test
    void renderReplacesOnlyThePerCombinationFields() {
        DriverDaemonSets d = load();
        String image = "reg:5000/mlops/ascend-driver:25.5.0-310p-5.10.0-182.0.0.95-oe2203sp3";
        DaemonSet ds = d.render(COMBO, COMBO.daemonSetName(), image, "25.5.0");
        Map<String, String> sel = Map.of(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP, NodeKeys.DRIVER_COMBINATION, COMBO.key());
        assertEquals(COMBO.daemonSetName(), ds.getMetadata().getName());
        assertEquals(NodeKeys.DRIVER_NAMESPACE, ds.getMetadata().getNamespace());
        assertEquals(d.hash(), ds.getMetadata().getAnnotations().get(DriverDaemonSets.TEMPLATE_HASH));
        assertEquals(sel, ds.getSpec().getSelector().getMatchLabels());
        assertTrue(ds.getSpec().getTemplate().getMetadata().getLabels().entrySet().containsAll(sel.entrySet()));
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertEquals(COMBO.key(), pod.getNodeSelector().get(NodeKeys.DRIVER_COMBINATION));
        assertEquals(image, pod.getContainers().get(0).getImage());
        assertEquals(List.of("25.5.0"), versions(pod.getContainers().get(1)), "exactly one DRIVER_VERSION, node agent");
        assertEquals(List.of("25.5.0"), versions(pod.getContainers().get(0)), "the driver container's copy target");

        // everything else is the template's: put the template's values back and compare the whole pod spec
        PodSpec template = d.template().getSpec().getTemplate().getSpec();
        pod.setNodeSelector(template.getNodeSelector());
        pod.getContainers().get(0).setImage(template.getContainers().get(0).getImage());
        for (int i = 0; i < 2; i++) {
            pod.getContainers().get(i).setEnv(template.getContainers().get(i).getEnv());
        }
        assertEquals(SER.asJson(template), SER.asJson(pod));
    }

    @Test
    void aSingleContainerTemplateGetsTheVersionOnContainerZero() {
        DriverDaemonSets d = DriverDaemonSets.of(SER, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\n"
                + "spec:\n  selector:\n    matchLabels: {a: b}\n  template:\n    spec:\n      containers:\n"
                + "        - name: driver\n          image: i\n", "test");
        DaemonSet ds = d.render(COMBO, "n", "img", "26.0.0");
        assertEquals(List.of("26.0.0"), versions(ds.getSpec().getTemplate().getSpec().getContainers().get(0)));
    }

    @Test
    void thePatchReplacesTheWholePodTemplateAndSetsTheTemplateDigest() {
        DriverDaemonSets d = load();
        String json = d.templatePatch(COMBO, "r/mlops/ascend-driver:26.0.0-310p-k-os", "26.0.0");
        List<?> ops = SER.unmarshal(json, List.class);
        assertEquals(2, ops.size());
        Map<?, ?> op = (Map<?, ?>) ops.get(0);
        assertEquals("replace", op.get("op"));
        assertEquals("/spec/template", op.get("path"));
        assertTrue(json.contains("\"DRIVER_VERSION\"") && json.contains("26.0.0") && json.contains("hostPID"), json);
        Map<?, ?> ann = (Map<?, ?>) ops.get(1);
        assertEquals("/metadata/annotations/npu.openfuyao.com~1driver-template-hash", ann.get("path"));
        assertEquals(d.hash(), ann.get("value"));
    }

    @Test
    void aMissingConfigMapIsNamedWithItsConfigurationKey() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DriverDaemonSets.fromConfigMap(SER, null, NS, CM));
        assertTrue(e.getMessage().contains("ConfigMap " + NS + "/" + CM + " does not exist")
                && e.getMessage().contains("driverDaemonSetConfigMap"), e.getMessage());
    }

    @Test
    void aConfigMapWithoutTheKeyIsNamed() {
        ConfigMap cm = new ConfigMapBuilder().withNewMetadata().withName(CM).endMetadata().addToData("other", "x").build();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DriverDaemonSets.fromConfigMap(SER, cm, NS, CM));
        assertTrue(e.getMessage().contains("has no key data.driver-daemonset.yaml"), e.getMessage());
    }

    @Test
    void malformedYamlIsRefusedNamingTheConfigMapAndKey() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DriverDaemonSets.fromConfigMap(SER, withText("apiVersion: apps/v1\nkind: DaemonSet\nspec: [\n"), NS, CM));
        assertTrue(e.getMessage().startsWith("ConfigMap " + NS + "/" + CM + " key driver-daemonset.yaml"), e.getMessage());
    }

    @Test
    void aTemplateWithoutContainersIsRefusedNamingTheField() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> DriverDaemonSets.fromConfigMap(SER,
                withText("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\nspec:\n  selector:\n"
                        + "    matchLabels: {a: b}\n  template:\n    spec:\n      containers: []\n"), NS, CM));
        assertTrue(e.getMessage().contains("ConfigMap " + NS + "/" + CM) && e.getMessage().contains("spec.template.spec.containers[0]"),
                e.getMessage());
        IllegalStateException noSelector = assertThrows(IllegalStateException.class, () -> DriverDaemonSets.of(SER,
                "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
                        + "      containers: [{name: a, image: b}]\n", "t"));
        assertTrue(noSelector.getMessage().contains("spec.selector"), noSelector.getMessage());
        IllegalStateException notDs = assertThrows(IllegalStateException.class,
                () -> DriverDaemonSets.of(SER, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "t"));
        assertTrue(notDs.getMessage().contains("expected kind DaemonSet"), notDs.getMessage());
    }

    @Test
    void theTemplateIsParsedOncePerResourceVersionAndAFixIsSeen() {
        DriverModes.Templates t = new DriverModes.Templates(SER, NS, CM);
        DriverModes.Current missing = t.current(null);
        assertNull(missing.renderer());
        assertTrue(missing.problem().contains("does not exist"), missing.problem());
        assertSame(missing, t.current(null), "same state, not parsed again");
        ConfigMap good = shipped();
        good.getMetadata().setResourceVersion("8");
        DriverModes.Current ok = t.current(good);
        assertNull(ok.problem());
        assertSame(ok, t.current(good));
        ConfigMap changed = withText(good.getData().get(DriverDaemonSets.KEY).replace("cpu: 10m", "cpu: 20m"));
        changed.getMetadata().setResourceVersion("9");
        DriverModes.Current next = t.current(changed);
        assertNotEquals(ok.renderer().hash(), next.renderer().hash(), "a changed template has another digest");
    }
}
