package io.npulifecycle.kube.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.npulifecycle.api.node.NodePolicy;
import io.npulifecycle.api.upgrade.spec.SpecReader;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.testing.support.ClusterFixture;

/**
 * The CRD's schema and the one reader of the spec agree (issue #27): every {@code spec.driver} of a corpus (valid,
 * invalid and edge values: unit orders, zero, six-part and rc versions, the longest lengths, empty strings, unknown
 * fields, selectors, time zones) is sent to a real kube-apiserver with the CRD ({@code kubectl create --dry-run=server
 * --validate=strict}, as an operator's {@code kubectl apply} sends it) and read by {@link SpecReader} (the control
 * plane) and {@link PolicyParser} (the node agent). The test fails on any disagreement between the three, and when
 * they agree on a verdict the corpus does not expect.
 */
class SpecCorpusTest {

    /**
     * One entry: what it is, whether it is valid, and {@code spec.driver} as flow YAML.
     *
     * @param valid the expected verdict
     * @param what a name for the report
     * @param driver {@code spec.driver}, e.g. {@code {version: 25.5.0}}
     */
    record Entry(boolean valid, String what, String driver) {
    }

    static final String LONGEST_VERSION = "25.5.0." + "1".repeat(25);
    static final String LONGEST_REGISTRY = "r" + "e".repeat(251) + "g";

    static final List<Entry> CORPUS = List.of(
            ok("the smallest spec", "{version: 25.5.0}"),
            ok("an rc version", "{version: 24.1.rc3}"),
            ok("an RC version", "{version: 24.1.RC3}"),
            ok("a four-part version", "{version: 23.0.3.1}"),
            ok("a six-part version", "{version: 1.2.3.4.5.6}"),
            ok("the longest version (32)", "{version: " + LONGEST_VERSION + "}"),
            bad("a version of 33 characters", "{version: " + LONGEST_VERSION + "1}"),
            bad("a two-part version", "{version: '25.5'}"),
            bad("a version as a number", "{version: 25.5}"),
            bad("a version with a v", "{version: v25.5.0}"),
            bad("a version with a suffix", "{version: 25.5.0-rc1}"),
            bad("an empty version", "{version: ''}"),
            bad("no version", "{registry: registry.local}"),
            ok("a registry with port and path", "{version: 25.5.0, registry: 'registry.local:5000/mirror/npu'}"),
            ok("the longest registry (253)", "{version: 25.5.0, registry: " + LONGEST_REGISTRY + "}"),
            bad("a registry of 254 characters", "{version: 25.5.0, registry: " + LONGEST_REGISTRY + "x}"),
            bad("a registry with a scheme", "{version: 25.5.0, registry: 'https://registry.local'}"),
            bad("a registry in capitals", "{version: 25.5.0, registry: Registry.Local}"),
            ok("window 24h", window("24h")),
            ok("window 90m", window("90m")),
            ok("window 1h30m", window("1h30m")),
            ok("window 30m1h (units in any order)", window("30m1h")),
            ok("window 1h1h (a unit twice)", window("1h1h")),
            ok("window 600s", window("600s")),
            ok("window 0h1s", window("0h1s")),
            ok("window 8760h (the longest)", window("8760h")),
            ok("window 525600m (8760h in minutes)", window("525600m")),
            bad("window 0s", window("0s")),
            bad("window 0h0m0s", window("0h0m0s")),
            bad("window 8761h", window("8761h")),
            bad("window 525601m", window("525601m")),
            bad("window 99999999999999999999h (overflows)", window("99999999999999999999h")),
            bad("window 1.5h", window("1.5h")),
            bad("window 1d", window("1d")),
            bad("window 24 (no unit)", window("'24'")),
            bad("window as a number", "{version: 25.5.0, recoveryPolicy: {window: 24}}"),
            bad("an empty window", window("''")),
            bad("a window of 33 characters", window("1s".repeat(16) + "1")),
            ok("maxReboots 0", "{version: 25.5.0, recoveryPolicy: {maxReboots: 0}}"),
            ok("maxReboots 1000", "{version: 25.5.0, recoveryPolicy: {maxReboots: 1000}}"),
            bad("maxReboots -1", "{version: 25.5.0, recoveryPolicy: {maxReboots: -1}}"),
            bad("maxReboots 1001", "{version: 25.5.0, recoveryPolicy: {maxReboots: 1001}}"),
            bad("maxReboots as a string", "{version: 25.5.0, recoveryPolicy: {maxReboots: '3'}}"),
            bad("autoRecover as a string", "{version: 25.5.0, recoveryPolicy: {autoRecover: 'true'}}"),
            bad("autoUpgrade as a string", "{version: 25.5.0, upgradePolicy: {autoUpgrade: 'yes'}}"),
            ok("maxUnavailable 25%", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '25%'}}"),
            ok("maxUnavailable 100%", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '100%'}}"),
            ok("maxUnavailable 2", "{version: 25.5.0, upgradePolicy: {maxUnavailable: 2}}"),
            ok("maxUnavailable '2'", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '2'}}"),
            bad("maxUnavailable 101%", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '101%'}}"),
            bad("maxUnavailable 0 (no node could be upgraded)", "{version: 25.5.0, upgradePolicy: {maxUnavailable: 0}}"),
            bad("maxUnavailable '0%'", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '0%'}}"),
            bad("maxUnavailable '00%'", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '00%'}}"),
            bad("maxUnavailable '000'", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '000'}}"),
            ok("maxUnavailable '1%' (rounded up to 1 node)", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '1%'}}"),
            ok("maxUnavailable '10'", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '10'}}"),
            ok("recovery maxUnavailable 0 (at least 1)", "{version: 25.5.0, recoveryPolicy: {maxUnavailable: 0}}"),
            bad("maxUnavailable -1", "{version: 25.5.0, upgradePolicy: {maxUnavailable: -1}}"),
            bad("maxUnavailable abc", "{version: 25.5.0, upgradePolicy: {maxUnavailable: abc}}"),
            ok("maxUnavailable '999999' (six digits)", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '999999'}}"),
            bad("maxUnavailable '1000000' (seven digits)", "{version: 25.5.0, upgradePolicy: {maxUnavailable: '1000000'}}"),
            bad("maxUnavailable 100001", "{version: 25.5.0, upgradePolicy: {maxUnavailable: 100001}}"),
            ok("recovery maxUnavailable 100%", "{version: 25.5.0, recoveryPolicy: {maxUnavailable: '100%'}}"),
            bad("recovery maxUnavailable abc", "{version: 25.5.0, recoveryPolicy: {maxUnavailable: abc}}"),
            ok("maxParallelUpgrades 0 (unlimited)", "{version: 25.5.0, upgradePolicy: {maxParallelUpgrades: 0}}"),
            bad("maxParallelUpgrades 100001", "{version: 25.5.0, upgradePolicy: {maxParallelUpgrades: 100001}}"),
            ok("a drain of every field", "{version: 25.5.0, upgradePolicy: {drain: {enable: true, scope: npu, "
                    + "podSelector: 'app=train,tier in (a, b),!debug', timeoutSeconds: 1, gracePeriodSeconds: -1, "
                    + "deleteEmptyDirData: true, force: true, onTimeout: reboot}}}"),
            ok("drain disableEviction", "{version: 25.5.0, recoveryPolicy: {drain: {force: true, disableEviction: true}}}"),
            bad("drain disableEviction as a string", "{version: 25.5.0, upgradePolicy: {drain: {disableEviction: 'yes'}}}"),
            bad("drain scope some", "{version: 25.5.0, upgradePolicy: {drain: {scope: some}}}"),
            bad("drain onTimeout retry", "{version: 25.5.0, upgradePolicy: {drain: {onTimeout: retry}}}"),
            bad("drain timeoutSeconds 0", "{version: 25.5.0, upgradePolicy: {drain: {timeoutSeconds: 0}}}"),
            bad("drain gracePeriodSeconds -2", "{version: 25.5.0, upgradePolicy: {drain: {gracePeriodSeconds: -2}}}"),
            ok("an empty drain podSelector (every pod)", "{version: 25.5.0, upgradePolicy: {drain: {podSelector: ''}}}"),
            bad("a drain podSelector that does not parse", "{version: 25.5.0, upgradePolicy: {drain: "
                    + "{podSelector: 'app=(x'}}}"),
            ok("a blockingPodSelector", "{version: 25.5.0, upgradePolicy: {blockingPodSelector: 'app=critical'}}"),
            bad("an empty blockingPodSelector", "{version: 25.5.0, upgradePolicy: {blockingPodSelector: ''}}"),
            ok("deadlines at their bounds", "{version: 25.5.0, upgradePolicy: {deadlines: {podRestartSeconds: 0, "
                    + "rebootRequiredSeconds: 31536000}}}"),
            bad("a deadline above a year", "{version: 25.5.0, upgradePolicy: {deadlines: {rebootingSeconds: 31536001}}}"),
            ok("a maintenance window", "{version: 25.5.0, upgradePolicy: {maintenanceWindow: {days: 'mo,tu', "
                    + "startTime: '22:00', endTime: '04:00', timeZone: Asia/Shanghai}}}"),
            bad("a maintenance window of no length", "{version: 25.5.0, upgradePolicy: {maintenanceWindow: "
                    + "{startTime: '22:00', endTime: '22:00'}}}"),
            bad("a maintenance window at 24:00", "{version: 25.5.0, upgradePolicy: {maintenanceWindow: "
                    + "{startTime: '24:00', endTime: '04:00'}}}"),
            bad("a maintenance window on a day that is not one", "{version: 25.5.0, upgradePolicy: "
                    + "{maintenanceWindow: {days: 'mo,xx', startTime: '22:00', endTime: '04:00'}}}"),
            bad("a maintenance window without endTime", "{version: 25.5.0, upgradePolicy: {maintenanceWindow: "
                    + "{startTime: '22:00'}}}"),
            ok("a drain podSelector of 1024 characters", "{version: 25.5.0, upgradePolicy: {drain: {podSelector: 'a="
                    + "b".repeat(1022) + "'}}}"),
            bad("a drain podSelector of 1025 characters", "{version: 25.5.0, upgradePolicy: {drain: {podSelector: 'a="
                    + "b".repeat(1023) + "'}}}"),
            ok("a blank drain podSelector (every pod)", "{version: 25.5.0, recoveryPolicy: {drain: {podSelector: '  '}}}"),
            bad("a drain podSelector ending in a comma", "{version: 25.5.0, recoveryPolicy: {drain: {podSelector: 'a=b,'}}}"),
            ok("a drain podSelector with an empty set and a prefix", "{version: 25.5.0, recoveryPolicy: {drain: "
                    + "{podSelector: 'example.com/tier notin (), x==y'}}}"),
            bad("a blank blockingPodSelector", "{version: 25.5.0, recoveryPolicy: {blockingPodSelector: '   '}}"),
            bad("a blockingPodSelector with a space in a value", "{version: 25.5.0, recoveryPolicy: "
                    + "{blockingPodSelector: 'app=a b'}}"),
            ok("time zone UTC", zone("UTC")),
            ok("time zone Etc/GMT-3", zone("Etc/GMT-3")),
            ok("time zone America/Argentina/Buenos_Aires", zone("America/Argentina/Buenos_Aires")),
            bad("time zone Mars/Phobos", zone("Mars/Phobos")),
            bad("time zone Local", zone("Local")),
            bad("time zone +08:00", zone("'+08:00'")),
            bad("time zone UTC+8", zone("UTC+8")),
            bad("an empty time zone", zone("''")),
            bad("a time zone of 65 characters", zone("A" + "b".repeat(64))),
            bad("an empty days", "{version: 25.5.0, upgradePolicy: {maintenanceWindow: {days: '', startTime: '22:00', "
                    + "endTime: '04:00'}}}"),
            bad("an unknown field in spec.driver", "{version: 25.5.0, bogus: 1}"),
            bad("an unknown field in upgradePolicy", "{version: 25.5.0, upgradePolicy: {autoUpgrad: true}}"),
            bad("an unknown field in recoveryPolicy", "{version: 25.5.0, recoveryPolicy: {autoRecovery: true}}"),
            bad("an unknown field in a drain", "{version: 25.5.0, recoveryPolicy: {drain: {enabled: false}}}"),
            ok("a recovery drain off", "{version: 25.5.0, recoveryPolicy: {autoRecover: true, drain: {enable: false}}}"),
            ok("recovery maxUnavailable 1", "{version: 25.5.0, recoveryPolicy: {maxUnavailable: 1}}"),
            bad("upgradePolicy as a string", "{version: 25.5.0, upgradePolicy: fast}"));

    static Entry ok(String what, String driver) {
        return new Entry(true, what, driver);
    }

    static Entry bad(String what, String driver) {
        return new Entry(false, what, driver);
    }

    static String zone(String z) {
        return "{version: 25.5.0, upgradePolicy: {maintenanceWindow: {startTime: '22:00', endTime: '04:00', timeZone: "
                + z + "}}}";
    }

    static String window(String w) {
        return "{version: 25.5.0, recoveryPolicy: {autoRecover: true, window: " + w + "}}";
    }

    @TempDir
    static Path dir;
    static ClusterFixture server;
    static Path kubeconfig;

    @BeforeAll
    static void start() {
        server = ClusterFixture.start(ClusterBackend.REAL);
        kubeconfig = server.real().writeKubeconfig(dir.resolve("kubeconfig"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** @return the resource of an entry, as kubectl would send it */
    static String resource(Entry e, int i) {
        return "apiVersion: npu.openfuyao.com/v1\nkind: NPUOperatorCtl\nmetadata:\n  name: corpus-" + i
                + "\n  namespace: npu-operator\nspec:\n  driver: " + e.driver() + "\n";
    }

    /** @return null when the API server accepts the resource, else what it said */
    static String serverRefusal(Path file) throws IOException, InterruptedException {
        Path out = file.resolveSibling(file.getFileName() + ".out");
        Process p = new ProcessBuilder("kubectl", "--kubeconfig", kubeconfig.toString(), "create", "--dry-run=server",
                "--validate=strict", "-f", file.toString()).redirectErrorStream(true).redirectOutput(out.toFile())
                .start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kubectl create --dry-run=server did not end");
        String text = Files.readString(out, StandardCharsets.UTF_8).strip();
        return p.exitValue() == 0 ? null : text;
    }

    @Test
    void theApiServerTheControlPlaneAndTheNodeAgentReachTheSameVerdictOnEveryEntry() throws Exception {
        List<String> wrong = new ArrayList<>();
        // the API server's verdicts, four requests at a time (one kubectl each)
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        List<java.util.concurrent.Future<String>> refusals = new ArrayList<>();
        try {
            for (int i = 0; i < CORPUS.size(); i++) {
                Path file = Files.writeString(dir.resolve("corpus-" + i + ".yaml"), resource(CORPUS.get(i), i));
                refusals.add(pool.submit(() -> serverRefusal(file)));
            }
        } finally {
            pool.shutdown();
        }
        for (int i = 0; i < CORPUS.size(); i++) {
            Entry e = CORPUS.get(i);
            String yaml = resource(e, i);
            String refusal = refusals.get(i).get(2, TimeUnit.MINUTES);
            GenericKubernetesResource cr = Serialization.unmarshal(yaml, GenericKubernetesResource.class);
            Object spec = cr.getAdditionalProperties().get("spec");
            SpecReader.Result controlPlane = SpecReader.parse(spec);
            NodePolicy nodeAgent = PolicyParser.parse("npu-operator/corpus-" + i, spec, "1");
            boolean server = refusal == null;
            if (server != e.valid() || controlPlane.valid() != e.valid() || nodeAgent.known() != e.valid()) {
                wrong.add(String.format("%s (%s): expected %s; API server %s; control plane %s; node agent %s",
                        e.what(), e.driver(), e.valid() ? "valid" : "invalid",
                        server ? "accepts" : "refuses: " + refusal,
                        controlPlane.valid() ? "accepts" : "refuses: " + controlPlane.problems(),
                        nodeAgent.known() ? "accepts" : "refuses: " + nodeAgent.problem()));
            }
        }
        assertEquals(List.of(), wrong, wrong.size() + " of " + CORPUS.size() + " entries disagree:\n"
                + String.join("\n", wrong));
    }
}
