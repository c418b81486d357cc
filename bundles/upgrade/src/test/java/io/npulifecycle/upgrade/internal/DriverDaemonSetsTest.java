package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.node.NodeKeys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The driver DaemonSets the control plane writes are the manifest template with only the per-combination fields
 * replaced.
 */
class DriverDaemonSetsTest {

    static final KubernetesSerialization SER = new KubernetesSerialization();
    static final Combination COMBO = new Combination("310p", "5.10.0-182.0.0.95", "oe2203sp3");

    @Test
    void theEmbeddedTemplateIsTheManifest() throws Exception {
        Path manifest = Path.of("../../charts/target/driver-template/driver-daemonset.yaml");
        try (var in = DriverDaemonSets.class.getResourceAsStream(DriverDaemonSets.RESOURCE)) {
            assertEquals(Files.readString(manifest), new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    @Test
    void renderReplacesOnlyThePerCombinationFields() {
        DriverDaemonSets d = DriverDaemonSets.load(SER);
        String image = "reg:5000/mlops/ascend-driver:25.5.0-310p-5.10.0-182.0.0.95-oe2203sp3";
        DaemonSet ds = d.render(COMBO, COMBO.daemonSetName(), image, "25.5.0");
        Map<String, String> sel = Map.of(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP, NodeKeys.DRIVER_COMBINATION, COMBO.key());
        assertEquals(COMBO.daemonSetName(), ds.getMetadata().getName());
        assertEquals(NodeKeys.DRIVER_NAMESPACE, ds.getMetadata().getNamespace());
        assertEquals(sel, ds.getSpec().getSelector().getMatchLabels());
        assertTrue(ds.getSpec().getTemplate().getMetadata().getLabels().entrySet().containsAll(sel.entrySet()));
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertEquals(COMBO.key(), pod.getNodeSelector().get(NodeKeys.DRIVER_COMBINATION));
        assertEquals(image, pod.getContainers().get(0).getImage());
        assertEquals(List.of("25.5.0"), pod.getContainers().get(0).getEnv().stream()
                .filter(e -> "DRIVER_VERSION".equals(e.getName())).map(EnvVar::getValue).toList(), "exactly one DRIVER_VERSION");

        // everything else is the template's: put the template's values back and compare the whole pod spec
        PodSpec template = d.template().getSpec().getTemplate().getSpec();
        pod.setNodeSelector(template.getNodeSelector());
        pod.getContainers().get(0).setImage(template.getContainers().get(0).getImage());
        pod.getContainers().get(0).setEnv(template.getContainers().get(0).getEnv());
        assertEquals(SER.asJson(template), SER.asJson(pod));
    }

    @Test
    void thePatchReplacesTheWholePodTemplate() {
        DriverDaemonSets d = DriverDaemonSets.load(SER);
        String json = d.templatePatch(COMBO, "r/mlops/ascend-driver:26.0.0-310p-k-os", "26.0.0");
        List<?> ops = SER.unmarshal(json, List.class);
        assertEquals(1, ops.size());
        Map<?, ?> op = (Map<?, ?>) ops.get(0);
        assertEquals("replace", op.get("op"));
        assertEquals("/spec/template", op.get("path"));
        assertTrue(json.contains("\"DRIVER_VERSION\"") && json.contains("26.0.0") && json.contains("hostPID"), json);
    }

    @Test
    void aTemplateWithoutContainersIsRefusedNamingTheResource() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> DriverDaemonSets.of(SER,
                "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers: []\n"));
        assertTrue(e.getMessage().contains(DriverDaemonSets.RESOURCE) && e.getMessage().contains("containers[0]"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> DriverDaemonSets.of(SER, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"));
    }
}
