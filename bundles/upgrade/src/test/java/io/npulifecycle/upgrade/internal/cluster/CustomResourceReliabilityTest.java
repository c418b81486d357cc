package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.rollout.Reconciler;

import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * Reliability matrix (docs/reliability.md), category {@code custom resource}: invalid {@code NPUOperatorCtl} specs reach the real
 * control-plane path (informer, {@link SpecReader}, {@link Reconciler}, status writer) of a leading
 * {@link UpgradeController} over the embedded API server with two emulated NPU nodes on {@value #OLD}. Each bad spec
 * asks for {@value #NEW} with {@code autoUpgrade: true}, so accepting it would start a rollout at once; instead the
 * status condition {@code InvalidSpec=True} must name the field and what was expected, and no node may get a rollout
 * step (no {@code driver-upgrade-state} label, still on {@value #OLD}, no driver DaemonSet for {@value #NEW}).
 */
@Timeout(300)
class CustomResourceReliabilityTest {

    static final String OLD = "24.1.0";
    static final String NEW = "25.5.0";
    static final Duration WAIT = Duration.ofSeconds(30);
    static ClusterFixture c;
    static ScaledTestClock time;
    static NodeAgentEmulator emulator;

    @BeforeAll
    static void start() {
        c = ClusterFixture.startEmbedded();
        time = c.own(new ScaledTestClock(200));
        emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(2, OLD);
        emulator.start();
        ControllerConfig d = ControllerConfig.defaults();
        ControllerConfig cfg = new ControllerConfig(d.namespace(), d.resourceName(), false, "http", "", d.reconcileDelay(),
                d.resync(), d.statusInterval(), false, d.leaseName(), d.leaseDuration(), d.renewDeadline(), d.retryPeriod(), "t");
        UpgradeController uc = c.own(new UpgradeController(c.client("npu-controller"), time, cfg, null));
        uc.start();
        uc.setLeader(true);
        c.createDriver(driver(OLD, false, 1, null, null));
        Waits.until("a valid spec on " + OLD + ": InvalidSpec=False", WAIT, () -> c.condition("InvalidSpec").startsWith("False"));
    }

    @AfterAll
    static void stop() {
        c.close();
    }

    /** The driver map of a spec that would roll {@value #NEW} out at once, with {@code key} set to {@code value}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> with(String path, Object value) {
        Map<String, Object> d = new LinkedHashMap<>(driver(NEW, true, 2, "100%", null));
        Map<String, Object> target = d;
        String[] keys = path.split("\\.");
        for (int i = 0; i < keys.length - 1; i++) {
            Map<String, Object> next = new LinkedHashMap<>((Map<String, Object>) target.getOrDefault(keys[i], Map.of()));
            target.put(keys[i], next);
            target = next;
        }
        if (value == REMOVE) {
            target.remove(keys[keys.length - 1]);
        } else {
            target.put(keys[keys.length - 1], value);
        }
        return d;
    }

    static final Object REMOVE = new Object();

    static void assertRejected(Map<String, Object> driver, String named) {
        c.setDriver(driver);
        try {
            Waits.until("InvalidSpec=True naming " + named, WAIT, () -> {
                String m = c.condition("InvalidSpec");
                return m.startsWith("True") && m.contains(named);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; condition now: " + c.condition("InvalidSpec"), e);
        }
        assertNothingRolled();
    }

    static void assertNothingRolled() {
        for (Node n : c.admin().nodes().list().getItems()) {
            String name = n.getMetadata().getName();
            assertNull(c.label(name, NodeKeys.DRIVER_UPGRADE_STATE), name + " got a rollout step");
            assertEquals(OLD, c.label(name, "npu.openfuyao.com/driver-version"), name + " driver changed");
        }
        assertTrue(c.admin().apps().daemonSets().inNamespace(NodeAgentEmulator.NS).list().getItems().stream()
                .noneMatch(ds -> String.valueOf(ds.getSpec()).contains(NEW)), "a driver DaemonSet for " + NEW);
        assertTrue(c.condition("Progressing").contains("nothing is touched") || !c.condition("Progressing").startsWith("True"),
                c.condition("Progressing"));
    }

    static DynamicTest test(String input, String named, Map<String, Object> driver) {
        return DynamicTest.dynamicTest("custom resource | " + input + " | InvalidSpec=True naming '" + named
                + "', no rollout step", () -> assertRejected(driver, named));
    }

    @TestFactory
    Stream<DynamicTest> cases() {
        List<DynamicTest> l = new ArrayList<>();
        l.add(test("version '25.5' (two parts)", "spec.driver.version: '25.5' is not a driver version", with("version", "25.5")));
        l.add(test("version 'v25.5.0'", "spec.driver.version: 'v25.5.0'", with("version", "v25.5.0")));
        l.add(test("version 25.5 (a number)", "spec.driver.version: 25.5 is not a driver version", with("version", 25.5)));
        l.add(test("version missing", "spec.driver.version: missing", with("version", REMOVE)));
        l.add(test("version of 100,000 characters", "spec.driver.version: '2555555555", with("version", "2" + "5".repeat(99_999))));
        l.add(test("version with a newline and shell characters", "spec.driver.version: '25.5.0\n;rm -rf /'", with("version", "25.5.0\n;rm -rf /")));
        l.add(test("maxParallelUpgrades -1", "spec.driver.upgradePolicy.maxParallelUpgrades: -1 is out of range",
                with("upgradePolicy.maxParallelUpgrades", -1)));
        l.add(test("maxParallelUpgrades 1.5", "spec.driver.upgradePolicy.maxParallelUpgrades: 1.5 is not an integer",
                with("upgradePolicy.maxParallelUpgrades", 1.5)));
        l.add(test("maxParallelUpgrades '3' (a string)", "spec.driver.upgradePolicy.maxParallelUpgrades: '3' is not an integer",
                with("upgradePolicy.maxParallelUpgrades", "3")));
        l.add(test("maxParallelUpgrades 10^12", "spec.driver.upgradePolicy.maxParallelUpgrades: 1000000000000 is out of range",
                with("upgradePolicy.maxParallelUpgrades", 1_000_000_000_000L)));
        l.add(test("autoUpgrade 'yes'", "spec.driver.upgradePolicy.autoUpgrade: 'yes' is not a boolean",
                with("upgradePolicy.autoUpgrade", "yes")));
        l.add(test("misspelt field upgradePolicy.autoUpgrad", "spec.driver.upgradePolicy.autoUpgrad: unknown field",
                with("upgradePolicy.autoUpgrad", true)));
        l.add(test("unknown field spec.driver.versoin (typo, version missing)", "spec.driver.versoin: unknown field",
                with("versoin", NEW)));
        l.add(test("upgradePolicy is a string", "spec.driver.upgradePolicy: 'fast' is not an object", with("upgradePolicy", "fast")));
        l.add(test("maxUnavailable '200%'", "spec.driver.upgradePolicy.maxUnavailable: '200%'", with("upgradePolicy.maxUnavailable", "200%")));
        l.add(test("deadlines.validationSeconds -5", "spec.driver.upgradePolicy.deadlines.validationSeconds: -5 is out of range",
                with("upgradePolicy.deadlines.validationSeconds", -5)));
        l.add(test("registry 'https://registry.local' (scheme)", "spec.driver.registry: 'https://registry.local'",
                with("registry", "https://registry.local")));
        l.add(test("recoveryPolicy.maxReboots true (wrong type)", "spec.driver.recoveryPolicy.maxReboots: true is not an integer",
                with("recoveryPolicy.maxReboots", true)));
        l.add(DynamicTest.dynamicTest("custom resource | a second NPUOperatorCtl 'npuoperatorctl-other' asking for " + NEW
                + " with autoUpgrade | ignored (only npuoperatorctl-sample is read), no rollout step", () -> {
                    c.setDriver(driver(OLD, false, 1, null, null));
                    Waits.until("valid again", WAIT, () -> c.condition("InvalidSpec").startsWith("False"));
                    GenericKubernetesResource r = new GenericKubernetesResource();
                    r.setApiVersion("npu.openfuyao.com/v1");
                    r.setKind("NPUOperatorCtl");
                    r.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("npuoperatorctl-other")
                            .withNamespace(NodeAgentEmulator.NS).build());
                    r.setAdditionalProperty("spec", Map.of("driver", driver(NEW, true, 0, "100%", null)));
                    c.backend().npuOperatorCtls().inNamespace(NodeAgentEmulator.NS).resource(r).create();
                    // a later change of the real one is reconciled: the other one was seen and did not count
                    c.setDriver(with("upgradePolicy.maxParallelUpgrades", -2));
                    Waits.until("the real CR reconciled after the second one appeared", WAIT,
                            () -> c.condition("InvalidSpec").contains("maxParallelUpgrades: -2"));
                    assertNothingRolled();
                }));
        return l.stream();
    }
}
