package io.npulifecycle.upgrade.internal.plan;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.UpgradeState;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/** The spec parser (controller-side validation) and the CRD schema reject the same bad specs. */
class SpecAndCrdTest {

    static final Path CRD = Path.of("../../charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml");

    static Map<String, Object> spec(Map<String, Object> driver) {
        return Map.of("driver", driver);
    }

    @Test
    void defaults() {
        SpecReader.Result r = SpecReader.parse(spec(Map.of("version", "25.5.0")));
        assertTrue(r.valid(), r.problems().toString());
        Policy p = r.policy();
        assertFalse(p.autoUpgrade());
        assertEquals(1, p.maxParallelUpgrades());
        assertEquals(2, p.maxUnavailableOf(5), "25% of 5 rounded up");
        assertEquals(Duration.ofSeconds(86400), p.deadlines().get(UpgradeState.REBOOT_REQUIRED));
    }

    @Test
    void eachInvalidFieldIsNamed() {
        record Case(Object driver, String expected) { }
        List<Case> cases = List.of(
                new Case(Map.of("version", ""), "spec.driver.version: ''"),
                new Case(Map.of("version", "25.5"), "spec.driver.version: '25.5'"),
                new Case(Map.of("version", 25.5), "spec.driver.version: 25.5"),
                new Case(Map.of(), "spec.driver.version: missing"),
                new Case(Map.of("version", "25.5.0", "upgradePolicy", Map.of("maxParallelUpgrades", -1)), "maxParallelUpgrades: -1 is out of range"),
                new Case(Map.of("version", "25.5.0", "upgradePolicy", Map.of("autoUpgrade", "yes")), "autoUpgrade: 'yes' is not a boolean"),
                new Case(Map.of("version", "25.5.0", "upgradePolicy", Map.of("maxUnavailable", "-3")), "maxUnavailable: '-3'"),
                new Case(Map.of("version", "25.5.0", "upgradePolicy", Map.of("maxUnavailable", "101%")), "maxUnavailable: '101%'"),
                new Case(Map.of("version", "25.5.0", "upgradePolicy", Map.of("deadlines", Map.of("validationSeconds", -5))), "deadlines.validationSeconds: -5"),
                new Case(Map.of("version", "25.5.0", "registry", "https://x"), "spec.driver.registry"),
                new Case(Map.of("version", "25.5.0", "recoveryPolicy", Map.of("maxReboots", -1)), "recoveryPolicy.maxReboots: -1"),
                new Case(Map.of("version", "25.5.0", "recoveryPolicy", Map.of("window", "1 day")), "recoveryPolicy.window: '1 day'"),
                new Case("driver", "spec.driver"));
        for (Case c : cases) {
            SpecReader.Result r = SpecReader.parse(c.driver() instanceof Map ? spec((Map<String, Object>) c.driver()) : Map.of("driver", c.driver()));
            assertFalse(r.valid(), c.toString());
            assertTrue(String.join("; ", r.problems()).contains(c.expected()), c + " -> " + r.problems());
        }
        assertFalse(SpecReader.parse(null).valid());
    }

    @Test
    void crdSchemaHasPatternsBoundsStatusAndPrinterColumns() throws Exception {
        CustomResourceDefinition crd = new KubernetesSerialization().unmarshal(Files.readString(CRD), CustomResourceDefinition.class);
        assertEquals("npuoperatorctls.npu.openfuyao.com", crd.getMetadata().getName());
        var v = crd.getSpec().getVersions().get(0);
        assertTrue(v.getSubresources().getStatus() != null, "status subresource");
        assertEquals(List.of("Target", "AutoUpgrade", "AutoRecover", "Progress", "Age"),
                v.getAdditionalPrinterColumns().stream().map(c -> c.getName()).toList());
        JSONSchemaProps driver = v.getSchema().getOpenAPIV3Schema().getProperties().get("spec").getProperties().get("driver");
        Pattern ver = Pattern.compile(driver.getProperties().get("version").getPattern());
        for (String bad : List.of("", "abc", "25.5", "25.5.0-x", "v25.5.0")) {
            assertFalse(ver.matcher(bad).find(), "schema must reject version '" + bad + "'");
            assertFalse(io.npulifecycle.api.upgrade.spec.SpecGrammar.VERSION.matcher(bad).matches());
        }
        for (String good : List.of("25.5.0", "24.1.rc3", "23.0.3.1")) {
            assertTrue(ver.matcher(good).find() && io.npulifecycle.api.upgrade.spec.SpecGrammar.VERSION.matcher(good).matches(), good);
        }
        JSONSchemaProps up = driver.getProperties().get("upgradePolicy");
        assertEquals(0.0, up.getProperties().get("maxParallelUpgrades").getMinimum().doubleValue());
        assertEquals("boolean", up.getProperties().get("autoUpgrade").getType());
        Pattern mu = Pattern.compile(up.getProperties().get("maxUnavailable").getPattern());
        assertTrue(mu.matcher("25%").matches() && mu.matcher("3").matches());
        assertFalse(mu.matcher("101%").matches() || mu.matcher("-3").matches() || mu.matcher("x").matches());
        assertEquals(0.0, up.getProperties().get("deadlines").getProperties().get("validationSeconds").getMinimum().doubleValue());
        assertEquals(0.0, driver.getProperties().get("recoveryPolicy").getProperties().get("maxReboots").getMinimum().doubleValue());
        // the chart's NPUOperatorCtl (npuOperatorCtl.create=true, rendered by module charts) is valid for the controller
        Map<?, ?> sample = new KubernetesSerialization().unmarshal(
                Files.readString(Path.of("../../charts/target/samples/80-npuoperatorctl.yaml")), Map.class);
        assertTrue(SpecReader.parse(sample.get("spec")).valid());
    }

    @Test
    void combinationFromNodeInfo() {
        assertEquals("oe2403sp3", Combination.os("openEuler 24.03 (LTS-SP3)"));
        assertEquals("oe2203", Combination.os("openEuler 22.03 (LTS)"));
        assertEquals("ubuntu2204", Combination.os("Ubuntu 22.04.4 LTS"));
        var n = new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName("a").addToLabels(NodeKeys.CHIP, "910b")
                .endMetadata().withNewStatus().withNewNodeInfo().withKernelVersion("6.6.0-145.0.4.135.oe2403sp3.aarch64")
                .withOsImage("openEuler 24.03 (LTS-SP3)").endNodeInfo().endStatus().build();
        Combination c = Combination.of(n);
        assertEquals("registry.local/mlops/ascend-driver:25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3",
                c.image(SpecReader.parse(spec(Map.of("version", "25.5.0"))).policy()), "DESIGN.md example tag");
        n.getMetadata().getLabels().remove(NodeKeys.CHIP);
        try {
            Combination.of(n);
            throw new AssertionError("expected a missing-chip error");
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("node a: label npu.openfuyao.com/chip is missing"), e.getMessage());
        }
    }
}
