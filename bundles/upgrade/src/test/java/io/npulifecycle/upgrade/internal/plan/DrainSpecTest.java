package io.npulifecycle.upgrade.internal.plan;


import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.DrainSettings;
import io.npulifecycle.api.upgrade.spec.PodSelector;
import io.npulifecycle.api.upgrade.spec.UpgradeState;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/** {@code spec.driver.upgradePolicy.drain}: defaults, each bad field named, the CRD schema's bounds, selectors. */
class DrainSpecTest {

    static SpecReader.Result parse(Map<String, Object> drain) {
        return SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "upgradePolicy", Map.of("drain", drain))));
    }

    @Test
    void defaultsAreTheCrdsAndTheTimeoutIsTheDrainDeadline() {
        Policy p = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0"))).policy();
        assertEquals(DrainSettings.DEFAULT, p.drain());
        assertTrue(p.drain().enable());
        assertEquals(Duration.ofSeconds(300), p.deadlines().get(UpgradeState.DRAIN_REQUIRED));
        Policy q = parse(Map.of("enable", false, "scope", "npu", "podSelector", "job in (train,eval),!keep",
                "timeoutSeconds", 90, "gracePeriodSeconds", 0, "deleteEmptyDirData", true, "force", true,
                "onTimeout", "reboot")).policy();
        assertFalse(q.drain().enable());
        assertTrue(q.drain().npuOnly() && q.drain().deleteEmptyDirData() && q.drain().force()
                && q.drain().rebootOnTimeout());
        assertEquals(0, q.drain().gracePeriodSeconds());
        assertFalse(q.drain().disableEviction(), "force alone still evicts: PodDisruptionBudgets hold");
        assertFalse(DrainSettings.DEFAULT.disableEviction());
        assertTrue(parse(Map.of("disableEviction", true)).policy().drain().disableEviction());
        SpecReader.Result rec = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("drain", Map.of("force", true, "disableEviction", true)))));
        assertTrue(rec.recovery().drain().force() && rec.recovery().drain().disableEviction(), rec.problems()
                .toString());
        assertEquals(Duration.ofSeconds(90), q.deadlines().get(UpgradeState.DRAIN_REQUIRED));
        assertTrue(q.drain().podSelector().matches(Map.of("job", "train")));
        assertFalse(q.drain().podSelector().matches(Map.of("job", "train", "keep", "")));
        assertFalse(q.drain().podSelector().matches(Map.of("job", "serve")));
    }

    @Test
    void eachBadFieldIsNamedAndNothingIsHalfApplied() {
        record Case(Map<String, Object> drain, String expected) { }
        for (Case c : List.of(
                new Case(Map.of("timeoutSeconds", 0), "spec.driver.upgradePolicy.drain.timeoutSeconds: 0 is out of range"),
                new Case(Map.of("timeoutSeconds", -5), "drain.timeoutSeconds: -5 is out of range"),
                new Case(Map.of("onTimeout", "maybe"), "drain.onTimeout: 'maybe' is not an action (expected fail or reboot)"),
                new Case(Map.of("scope", "gpu"), "drain.scope: 'gpu' is not a scope"),
                new Case(Map.of("podSelector", "job in (a"), "drain.podSelector: 'job in (a' does not parse"),
                new Case(Map.of("podSelector", "=x"), "drain.podSelector: '=x' does not parse"),
                new Case(Map.of("gracePeriodSeconds", -2), "drain.gracePeriodSeconds: -2 is out of range"),
                new Case(Map.of("force", "yes"), "drain.force: 'yes' is not a boolean"),
                new Case(Map.of("disableEviction", "true"), "spec.driver.upgradePolicy.drain.disableEviction: 'true' "
                        + "is not a boolean (expected true or false)"),
                new Case(Map.of("disableEvictions", true), "spec.driver.upgradePolicy.drain.disableEvictions: "
                        + "unknown field"),
                new Case(Map.of("forse", true), "spec.driver.upgradePolicy.drain.forse: unknown field"))) {
            SpecReader.Result r = parse(c.drain());
            assertFalse(r.valid(), c.toString());
            assertTrue(String.join("; ", r.problems()).contains(c.expected()), c + " -> " + r.problems());
        }
    }

    @Test
    void selectorsParseAsKubectlDoes() {
        assertTrue(PodSelector.parse("").matches(Map.of()));
        PodSelector s = PodSelector.parse("app=train, tier!=web,gpu,!spot,zone notin (a, b)");
        assertEquals(5, s.requirements().size());
        assertTrue(s.matches(Map.of("app", "train", "gpu", "1", "zone", "c")));
        assertFalse(s.matches(Map.of("app", "train", "gpu", "1", "zone", "a")));
        assertFalse(s.matches(Map.of("app", "train", "gpu", "1", "spot", "")));
        assertFalse(s.matches(Map.of("app", "train", "tier", "web", "gpu", "1")));
        assertThrows(IllegalArgumentException.class, () -> PodSelector.parse("a b"));
    }

    @Test
    void theCrdSchemaRefusesWhatItCan() throws Exception {
        CustomResourceDefinition crd = new KubernetesSerialization().unmarshal(Files.readString(SpecAndCrdTest.CRD),
                CustomResourceDefinition.class);
        JSONSchemaProps drain = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties()
                .get("spec").getProperties().get("driver").getProperties().get("upgradePolicy").getProperties()
                .get("drain");
        assertEquals(1.0, drain.getProperties().get("timeoutSeconds").getMinimum(), "0 refused: no infinite drain");
        assertEquals(-1.0, drain.getProperties().get("gracePeriodSeconds").getMinimum());
        assertEquals(List.of("fail", "reboot"), drain.getProperties().get("onTimeout").getEnum().stream()
                .map(j -> j.asText()).toList());
        assertEquals(List.of("all", "npu"), drain.getProperties().get("scope").getEnum().stream()
                .map(j -> j.asText()).toList());
        assertTrue(crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("status")
                .getProperties().containsKey("drainingNodes"));
        JSONSchemaProps recovery = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties()
                .get("spec").getProperties().get("driver").getProperties().get("recoveryPolicy").getProperties()
                .get("drain");
        for (JSONSchemaProps d : List.of(drain, recovery)) {
            JSONSchemaProps off = d.getProperties().get("disableEviction");
            assertEquals("boolean", off.getType());
            assertEquals("false", off.getDefault().asText(), "deleting without eviction is opt-in");
            assertTrue(off.getDescription().contains("PodDisruptionBudgets are NOT consulted"), off.getDescription());
            assertTrue(d.getProperties().get("force").getDescription().contains("still evicted through the Eviction "
                    + "API"), d.getProperties().get("force").getDescription());
        }
    }

    /** A bad {@code recoveryPolicy.drain.disableEviction} is named with its own path. */
    @Test
    void aBadDisableEvictionOfTheRecoveryDrainIsNamed() {
        SpecReader.Result r = SpecReader.parse(Map.of("driver", Map.of("version", "25.5.0", "recoveryPolicy",
                Map.of("drain", Map.of("disableEviction", 1)))));
        assertFalse(r.valid());
        assertTrue(String.join("; ", r.problems()).contains("spec.driver.recoveryPolicy.drain.disableEviction: 1 is "
                + "not a boolean"), r.problems().toString());
    }
}
