package io.npulifecycle.rebooter.internal;

import io.npulifecycle.clock.testing.ManualTimeSource;
import static io.npulifecycle.rebooter.internal.NodeRuntime.NODE;
import static io.npulifecycle.rebooter.internal.NodeRuntime.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.ConsumeResult;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.reboot.DriverLoader;
import io.npulifecycle.api.reboot.RebootExecutor;
import io.npulifecycle.driver.testing.FakeHealthView;
import io.npulifecycle.driver.internal.HealthView;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.common.TcpProxy;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.Waits;

/**
 * The reboot path's scenarios against each {@link ClusterBackend} (the embedded mock in CRUD mode, and a real
 * kube-apiserver with etcd where the node agent authenticates with a pod-bound token of its ServiceAccount, RBAC and
 * the admission policy of the chart applied), with the real marker store, node sync, rebooter and driver
 * logic, a fake reboot executor and a fake driver loader. A "reboot" is simulated by closing the runtime, clearing
 * the marker folder (tmpfs) and starting a runtime with a new boot id on the same state folder.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {ClusterBackend.EMBEDDED, ClusterBackend.REAL})
class RebootPathTest {

    @Parameter
    String kind;

    @TempDir
    Path tmp;
    ClusterFixture cluster;
    TcpProxy proxy;
    ManualTimeSource time;
    Path markerDir;
    Path stateDir;
    Path procModules;
    final FakeExecutor executor = new FakeExecutor();
    final FakeHealthView health = new FakeHealthView();
    FakeLoader loader;
    final List<NodeRuntime> runtimes = new ArrayList<>();

    static final class FakeExecutor implements RebootExecutor {
        final List<String> reboots = new ArrayList<>();
        /** Runs when the reboot is called, before it is counted: what the host holds at that instant. */
        Runnable atCall = () -> { };

        @Override
        public String describe() {
            return "fake executor";
        }

        @Override
        public void reboot(String reason) {
            atCall.run();
            reboots.add(reason);
        }
    }

    /** Loads by writing module lines; fails the test if a driver is already loaded (that would need an unload). */
    final class FakeLoader implements DriverLoader {
        final List<String> loads = new ArrayList<>();

        @Override
        public String describe() {
            return "fake loader";
        }

        @Override
        public void load(String version) throws IOException {
            String mods = Files.readString(procModules);
            if (mods.contains("drv_davinci_intf")) {
                fail("load(" + version + ") called while a driver is loaded: that would need an unload");
            }
            loads.add(version);
            Files.writeString(procModules, "drv_davinci_intf 16384 0 - Live 0x0\n");
            health.version = version;
        }
    }

    @BeforeEach
    void setUp() throws IOException {
        cluster = NodeRuntime.startCluster(kind);
        proxy = NodeRuntime.proxy(cluster);
        time = new ManualTimeSource(Instant.parse("2026-12-01T10:00:00Z"));
        markerDir = Files.createDirectories(tmp.resolve("run"));
        stateDir = Files.createDirectories(tmp.resolve("var"));
        procModules = tmp.resolve("modules");
        Files.writeString(procModules, "drv_davinci_intf 16384 0 - Live 0x0\n");
        loader = new FakeLoader();
    }

    @AfterEach
    void tearDown() throws IOException {
        runtimes.forEach(NodeRuntime::close);
        cluster.close();
    }

    NodeRuntime boot(String bootId) {
        return boot(bootId, null, false);
    }

    NodeRuntime boot(String bootId, Supplier<ApprovalService> approvals, boolean dryRun) {
        return boot(bootId, approvals, dryRun, NodeRuntime.agentClient(cluster, proxy));
    }

    NodeRuntime boot(String bootId, Supplier<ApprovalService> approvals, boolean dryRun, KubernetesClient client) {
        NodeRuntime r = bootUnsynced(bootId, approvals, dryRun, client);
        await("Node informer synced", () -> r.sync.approval().known(), this::tick);
        return r;
    }

    /** A runtime that may not reach the API server: nothing waits for its informers. */
    NodeRuntime bootUnsynced(String bootId, Supplier<ApprovalService> approvals, boolean dryRun,
            KubernetesClient client) {
        NodeRuntime r = new NodeRuntime(bootId, markerDir, stateDir, client, time, approvals, executor, loader,
                health, procModules, "25.5.0", dryRun);
        runtimes.add(r);
        return r;
    }

    /** Simulates the reboot: the runtime dies, /run is a tmpfs (cleared), a new boot id. */
    NodeRuntime reboot(NodeRuntime old, String newBoot) throws IOException {
        powerCycle(old);
        return boot(newBoot);
    }

    /** The runtime dies with the host (nothing more is written), /run is a tmpfs (cleared). */
    void powerCycle(NodeRuntime old) throws IOException {
        old.close();
        runtimes.remove(old);
        try (var s = Files.list(markerDir)) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        }
    }

    void wedge(NodeRuntime r) throws IOException {
        r.markers.write(Markers.REBOOT_REQUIRED, Map.of(Markers.KEY_REASON, Markers.REASON_RECOVERY,
                Markers.KEY_CHIPS, "1:0", Markers.KEY_SINCE, time.now().toString()), "health-watch");
    }

    private int rounds;

    /** Every 50 rounds of waiting (about 1 s), one health tick: an informer that failed to start is re-created. */
    void tick() {
        if (++rounds % 50 == 0) {
            time.advance(Duration.ofSeconds(30));
        }
    }

    void awaitPolicy(NodeRuntime r, boolean autoRecover) {
        await("policy known", () -> r.sync.policy().known() && r.sync.policy().autoRecover() == autoRecover, this::tick);
    }

    /**
     * Waits until the node agent's informer shows a change of the Node: over the proxy a watch can stay "watching"
     * but silent, so every 150 rounds (about 3 s) a relist, the remedy an operator has (the MBean operation).
     */
    void awaitSeen(String what, NodeRuntime r, java.util.function.BooleanSupplier seen) {
        int[] n = {0};
        await(what, seen, () -> {
            tick();
            if (++n[0] % 150 == 0) {
                r.sync.relist();
            }
        });
    }

    void approve(NodeRuntime r, String value) {
        cluster.annotate(NODE, NodeKeys.APPROVE_REBOOT, value);
        // over the proxy a watch can stay "watching" but silent; a relist (the MBean operation)
        // after a few seconds is the same remedy an operator has
        int[] n = {0};
        await("approval seen", () -> value.equals(r.sync.approval().value()), () -> {
            tick();
            if (++n[0] % 150 == 0) {
                r.sync.relist();
            }
        });
    }

    @Test
    void recoveryWithTheDrainWaitsForTheControlPlanesGrantOfThisBoot() throws IOException {
        Map<String, Object> spec = NodeRuntime.policy(false, true, null, null);
        ((Map<?, ?>) spec.get("recoveryPolicy")).remove("drain"); // the default: the recovery drain enabled
        cluster.putDriver(spec);
        NodeRuntime a = boot("boot-a");
        await("policy known, drain on", () -> a.sync.policy().known() && a.sync.policy().autoRecover()
                && a.sync.policy().recoveryNeedsGrant(), this::tick);
        a.driver.evaluate();
        health.wedged = "1:0";
        a.markers.remove(Markers.DRIVER_READY, "health-watch");
        wedge(a);
        await("label reboot-required and the chips", () -> "true".equals(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED))
                && "1:0".equals(cluster.annotation(NODE, NodeKeys.REBOOT_CHIPS)), this::tick);
        a.rebooter.evaluate();
        assertEquals(List.of(), executor.reboots, "no recovery reboot before the drain");
        assertEquals("WAITING_FOR_DRAIN", a.rebooter.getDecision());
        assertTrue(a.rebooter.getDecisionReason().contains(NodeKeys.RECOVERY_REBOOT_GRANTED + "=boot-a"),
                a.rebooter.getDecisionReason());
        assertTrue(a.rebooter.getRecoveryGrant().startsWith("waiting for " + NodeKeys.RECOVERY_REBOOT_GRANTED
                + "=boot-a (the Node has none)"), "the Rebooter MBean names the grant: " + a.rebooter.getRecoveryGrant());
        cluster.annotate(NODE, NodeKeys.RECOVERY_REBOOT_GRANTED, "boot-before");
        awaitSeen("the other boot's grant seen", a, () -> "boot-before".equals(a.sync.rebootGrant()));
        a.rebooter.evaluate();
        assertEquals(List.of(), executor.reboots, "a grant of another boot is no grant");
        assertTrue(a.rebooter.getRecoveryGrant().contains("(the Node has 'boot-before', another boot's)"),
                a.rebooter.getRecoveryGrant());
        cluster.annotate(NODE, NodeKeys.RECOVERY_REBOOT_GRANTED, "boot-a");
        awaitSeen("the grant seen", a, () -> "boot-a".equals(a.sync.rebootGrant()));
        a.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots);
        assertTrue(a.rebooter.getRecoveryGrant().startsWith("granted for boot boot-a"), a.rebooter.getRecoveryGrant());
    }

    @Test
    void recoveryWithAutoRecoverRebootsOnceThenValidates() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, true);
        a.driver.evaluate();
        assertTrue(a.markers.read(Markers.DRIVER_READY).present());
        health.wedged = "1:0";
        a.markers.remove(Markers.DRIVER_READY, "health-watch");
        wedge(a);
        await("label reboot-required", () -> "true".equals(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED)));
        await("one RebootRequired Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).size() == 1);
        assertTrue(cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).get(0).getMessage().contains("reason=recovery"));
        assertTrue(cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).get(0).getMessage().contains("1:0"));
        a.rebooter.evaluate();
        a.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots);
        // without an approval to consume nothing writes the mark synchronously: the node sync writes it, and the
        // flush before the reboot waits for it only up to its timeout (300 ms here), which a loaded machine exceeds
        Waits.untilAsserted("rebooting-from-boot-id on the Node", NodeRuntime.WAIT,
                () -> assertEquals("boot-a", cluster.annotation(NODE, NodeKeys.REBOOTING_FROM_BOOT_ID)));
        for (int i = 0; i < 5; i++) {
            a.sync.requestSync();
            a.rebooter.evaluate();
        }
        assertEquals(1, cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).size(), "one Event per request, not per poll");

        health.wedged = "";
        NodeRuntime b = reboot(a, "boot-b");
        b.rebooter.evaluate();
        b.driver.evaluate();
        assertTrue(b.markers.read(Markers.DRIVER_READY).present(), "driver-ready back after validation");
        await("label removed", () -> cluster.label(NODE, NodeKeys.REBOOT_REQUIRED) == null);
        await("validated annotation", () -> "25.5.0@boot-b".equals(cluster.annotation(NODE, NodeKeys.DRIVER_VALIDATED)));
        assertEquals(1, executor.reboots.size());
        assertTrue(b.rebooter.getHistory().get(0).contains("completed"), b.rebooter.getHistory().toString());
    }

    @Test
    void recoveryWithoutAutoRecoverWaitsForApprovalAndConsumesIt() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, false);
        wedge(a);
        for (int i = 0; i < 3; i++) {
            time.advance(Duration.ofSeconds(30));
            a.rebooter.evaluate();
        }
        assertTrue(executor.reboots.isEmpty());
        assertEquals("WAITING_FOR_APPROVAL", a.rebooter.getDecision());
        approve(a, "true");
        a.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots);
        assertNull(cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "approval consumed");
        a.rebooter.evaluate();
        assertEquals(1, executor.reboots.size());
    }

    @Test
    void killedAfterConsumingRebootsExactlyOnceWithoutSecondApproval() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime[] holder = new NodeRuntime[1];
        Supplier<ApprovalService> killing = () -> new Delegating(holder[0].sync) {
            @Override
            public ConsumeResult consumeApproval(String bootId) {
                ConsumeResult r = super.consumeApproval(bootId);
                throw new Killed("runtime killed right after " + r);
            }
        };
        NodeRuntime a = boot("boot-a", killing, false);
        holder[0] = a;
        awaitPolicy(a, false);
        wedge(a);
        approve(a, "true");
        assertThrows(Killed.class, a.rebooter::evaluate);
        assertTrue(executor.reboots.isEmpty());
        assertNull(cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT));
        // restart in the same boot: markers (tmpfs) survive a runtime restart, not a reboot
        a.close();
        runtimes.remove(a);
        NodeRuntime a2 = boot("boot-a");
        a2.rebooter.evaluate();
        a2.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots, "exactly one reboot, no second approval");
    }

    @Test
    void approvalWithdrawnBetweenDecisionAndRebootMeansNoReboot() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime[] holder = new NodeRuntime[1];
        Supplier<ApprovalService> withdrawing = () -> new Delegating(holder[0].sync) {
            @Override
            public ConsumeResult consumeApproval(String bootId) {
                cluster.annotate(NODE, NodeKeys.APPROVE_REBOOT, null);
                return super.consumeApproval(bootId);
            }
        };
        NodeRuntime a = boot("boot-a", withdrawing, false);
        holder[0] = a;
        awaitPolicy(a, false);
        wedge(a);
        approve(a, "true");
        a.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty());
        assertEquals("WAITING_FOR_APPROVAL", a.rebooter.getDecision());
    }

    @Test
    void chipRecoversFirstNoRebootApprovalLeftInPlace() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, false);
        approve(a, "true");
        wedge(a);
        a.markers.remove(Markers.REBOOT_REQUIRED, "health-watch"); // false-positive suppression
        a.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty());
        assertEquals("true", cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT));
    }

    @Test
    void chipRecoversAfterConsumptionApprovalPutBack() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime[] holder = new NodeRuntime[1];
        Supplier<ApprovalService> recovering = () -> new Delegating(holder[0].sync) {
            @Override
            public ConsumeResult consumeApproval(String bootId) {
                ConsumeResult r = super.consumeApproval(bootId);
                try {
                    holder[0].markers.remove(Markers.REBOOT_REQUIRED, "health-watch");
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
                return r;
            }
        };
        NodeRuntime a = boot("boot-a", recovering, false);
        holder[0] = a;
        awaitPolicy(a, false);
        approve(a, "true");
        wedge(a);
        a.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty());
        assertEquals("RECHECK_FAILED", a.rebooter.getDecision());
        assertEquals("true", cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "an approval not used is put back");
    }

    /**
     * A reboot command returns before the host goes down (systemctl reboot, the simulator): the node agent may run on
     * for a moment and see the marker vanish. The approval was used by the reboot call and must not be put back
     * (it would authorise a later, unrelated reboot).
     */
    /**
     * Reliability matrix: the agent SIGKILLed after it recorded the reboot call but before the executor's work
     * took effect. The host stays in the same boot; the restarted agent must serve the request again with the approval
     * consumed for this boot (never asking for a second one), once, and only after a grace period.
     */
    @Test
    void killedBeforeTheRebootTookEffectCallsItAgainOnceAfterTheGrace() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, false);
        approve(a, "true");
        wedge(a);
        a.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots, "the first call");
        await("approval consumed", () -> cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT) == null);
        // the process died before the call did anything: the host is still in boot-a, markers and state survive
        executor.reboots.clear();
        a.close();
        runtimes.remove(a);
        NodeRuntime a2 = boot("boot-a");
        a2.rebooter.evaluate();
        time.advance(RebootEngine.NOT_REBOOTED_GRACE.minusSeconds(30));
        a2.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty(), "not before the grace: the host may still be going down");
        time.advance(Duration.ofSeconds(31));
        a2.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots, "called again, with the approval consumed for boot-a");
        for (int i = 0; i < 3; i++) {
            time.advance(RebootEngine.NOT_REBOOTED_GRACE);
            a2.rebooter.evaluate();
        }
        assertEquals(1, executor.reboots.size(), "one agent calls it once per boot");
        assertNull(cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "no second approval was needed or consumed");
    }

    @Test
    void approvalIsNeverPutBackOnceTheRebootWasCalled() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, false);
        approve(a, "true");
        wedge(a);
        a.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots);
        await("approval consumed", () -> cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT) == null);
        a.markers.remove(Markers.REBOOT_REQUIRED, "health-watch"); // the host is going down, the marker vanishes
        for (int i = 0; i < 3; i++) {
            time.advance(Duration.ofSeconds(30));
            a.rebooter.evaluate();
        }
        a.sync.requestSync();
        assertNull(cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "the used approval must not come back");
        assertEquals(1, executor.reboots.size());
    }

    @Test
    void invalidApprovalValuesNeverRebootOneWarningEach() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, false);
        wedge(a);
        for (String v : new String[] {"yes", "TRUE", ""}) {
            approve(a, v);
            a.rebooter.evaluate();
            a.rebooter.evaluate();
        }
        assertTrue(executor.reboots.isEmpty());
        await("three ApprovalInvalid Events", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_APPROVAL_INVALID).size() == 3);
        List<String> msgs = cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_APPROVAL_INVALID).stream().map(e -> e.getMessage()).toList();
        assertTrue(msgs.stream().anyMatch(m -> m.contains("'yes'")), msgs.toString());
        assertTrue(msgs.stream().anyMatch(m -> m.contains("'TRUE'")), msgs.toString());
        assertTrue(msgs.stream().anyMatch(m -> m.contains("''")), msgs.toString());
        assertTrue(cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_APPROVAL_INVALID).stream().allMatch(e -> "Warning".equals(e.getType())));
    }

    @Test
    void apiUnreachableWithoutAutoRecoverNoReboot() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, false);
        approve(a, "true");
        wedge(a);
        proxy.cutOff(TcpProxy.Disconnect.CLOSE);
        a.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty());
        assertEquals("WAITING_FOR_API", a.rebooter.getDecision());
        assertEquals("true", cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "approval not used");
    }

    @Test
    void apiUnreachableWithAutoRecoverRebootsAndReportsWhenBack() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, true);
        proxy.cutOff(TcpProxy.Disconnect.CLOSE);
        wedge(a);
        a.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots);
        assertNull(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED));
        proxy.restore();
        for (int i = 0; i < 3; i++) {
            time.advance(Duration.ofSeconds(30));
        }
        await("label written when the API server is back", () -> "true".equals(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED)));
        await("RebootRequired Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).size() == 1);
        await("Rebooting Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOTING).size() == 1);
    }

    @Test
    void apiUnreachableAcrossTheRecoveryRebootTheNodeGetsItsEventsOnceWhenBack() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, true);
        a.driver.evaluate();
        await("boot-a reported", () -> "boot-a".equals(cluster.annotation(NODE, NodeKeys.BOOT_ID)));
        Path pendingFile = stateDir.resolve("node-writes.pending");
        List<String> onDiskAtTheCall = new ArrayList<>();
        executor.atCall = () -> {
            try {
                onDiskAtTheCall.add(Files.readString(pendingFile));
            } catch (IOException e) {
                onDiskAtTheCall.add("no file: " + e);
            }
        };

        proxy.cutOff(TcpProxy.Disconnect.CLOSE);
        health.wedged = "1:0";
        a.markers.remove(Markers.DRIVER_READY, "health-watch");
        wedge(a);
        a.rebooter.evaluate();

        assertEquals(List.of("recovery"), executor.reboots);
        String kept = onDiskAtTheCall.get(0);
        assertTrue(kept.contains(" RebootRequired ") && kept.contains(" Rebooting "),
                "both Events on disk before the reboot was called: " + kept);
        assertTrue(kept.contains("npu.openfuyao.com%2Frebooting-from-boot-id boot-a"), kept);
        assertTrue(cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOTING).isEmpty());

        // the host reboots while the API server is still unreachable; the new boot comes up without it
        health.wedged = "";
        powerCycle(a);
        NodeRuntime b = bootUnsynced("boot-b", null, false, NodeRuntime.agentClient(cluster, proxy));
        assertTrue(b.sync.getPendingWrites().stream().anyMatch(w -> w.startsWith("Event RebootRequired ")),
                b.sync.getPendingWrites().toString());
        assertTrue(b.sync.getPendingWrites().stream().anyMatch(w -> w.startsWith("Event Rebooting ")),
                b.sync.getPendingWrites().toString());
        b.rebooter.evaluate();
        b.driver.evaluate();
        assertTrue(b.rebooter.getHistory().get(0).contains("completed"), b.rebooter.getHistory().toString());

        proxy.restore();
        await("everything kept written", () -> {
            b.sync.requestSync();
            return b.sync.getPendingWrites().isEmpty() && !Files.exists(pendingFile);
        }, this::tick);
        List<io.fabric8.kubernetes.api.model.Event> required = cluster.events(NodeRuntime.EVENTS_NAMESPACE,
                NodeKeys.EVENT_REBOOT_REQUIRED);
        List<io.fabric8.kubernetes.api.model.Event> rebooting = cluster.events(NodeRuntime.EVENTS_NAMESPACE,
                NodeKeys.EVENT_REBOOTING);
        assertEquals(1, required.size(), "one RebootRequired Event");
        assertTrue(required.get(0).getMessage().contains("reason=recovery") && required.get(0).getMessage()
                .contains("bootId=boot-a"), required.get(0).getMessage());
        assertEquals(1, rebooting.size(), "one Rebooting Event");
        assertTrue(rebooting.get(0).getMessage().contains("leaving boot boot-a"), rebooting.get(0).getMessage());
        // the Node shows the new boot: the request and the reboot's mark belong to boot-a and are gone
        await("boot-b reported", () -> "boot-b".equals(cluster.annotation(NODE, NodeKeys.BOOT_ID)));
        assertNull(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED));
        assertNull(cluster.annotation(NODE, NodeKeys.REBOOT_REASON));
        assertNull(cluster.annotation(NODE, NodeKeys.REBOOTING_FROM_BOOT_ID));
        await("validated in boot-b", () -> "25.5.0@boot-b".equals(cluster.annotation(NODE, NodeKeys.DRIVER_VALIDATED)));

        // once each: another runtime in the same boot and more rounds add nothing
        b.close();
        runtimes.remove(b);
        NodeRuntime c = boot("boot-b");
        for (int i = 0; i < 3; i++) {
            c.sync.requestSync();
            c.rebooter.evaluate();
        }
        assertTrue(c.sync.flush(NodeRuntime.WAIT.toMillis()));
        assertEquals(1, cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).size());
        assertEquals(1, cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOTING).size());
        assertEquals(1, executor.reboots.size());
    }

    @Test
    void recoveryRebootLimitReached() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, 2, "24h"));
        NodeRuntime r = boot("boot-0");
        awaitPolicy(r, true);
        for (int i = 1; i <= 2; i++) {
            wedge(r);
            r.rebooter.evaluate();
            assertEquals(i, executor.reboots.size());
            time.advance(Duration.ofMinutes(10));
            r = reboot(r, "boot-" + i);
            awaitPolicy(r, true);
        }
        wedge(r);
        r.rebooter.evaluate();
        r.rebooter.evaluate();
        assertEquals(2, executor.reboots.size(), "no more reboots past the limit");
        assertEquals("RECOVERY_BLOCKED", r.rebooter.getDecision());
        await("RecoveryFailed Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_RECOVERY_FAILED).size() == 1);
        await("recovery-blocked label", () -> "true".equals(cluster.label(NODE, NodeKeys.RECOVERY_BLOCKED)));
        // the window slides: a day later a recovery reboot is allowed again
        time.advance(Duration.ofHours(25));
        r.rebooter.evaluate();
        assertEquals(3, executor.reboots.size());
    }

    /**
     * The node agent's re-check right before an automatic upgrade reboot: the maintenance window the control plane
     * wrote on the Node ({@code upgrade-reboot-before}) has closed, so no reboot (UPGRADE_HELD); the same while the
     * control plane holds the node ({@code reboot-deferred}); once a new window's close is written, it reboots. The
     * rule reads the Node only, the same on either backend: embedded only.
     */
    @Test
    void anAutomaticUpgradeRebootWaitsForTheMaintenanceWindowTheControlPlaneWrote() {
        Assumptions.assumeTrue(ClusterBackend.EMBEDDED.equals(kind), "a rule of the Node's annotations");
        cluster.putDriver(NodeRuntime.policy(true, false, null, null));
        cluster.annotate(NODE, NodeKeys.UPGRADE_REBOOT_BEFORE, time.now().minusSeconds(1).toString());
        health.version = "25.2.0";
        NodeRuntime a = boot("boot-a");
        await("policy and window seen", () -> a.sync.policy().autoUpgrade()
                && a.sync.upgradeRebootRefusal(time.now()) != null);
        a.driver.evaluate();
        assertEquals("STAGED", a.driver.getState());
        a.rebooter.evaluate();
        assertEquals("UPGRADE_HELD", a.rebooter.getDecision());
        assertTrue(executor.reboots.isEmpty(), "no reboot after the window closed");

        cluster.annotate(NODE, NodeKeys.UPGRADE_REBOOT_BEFORE, null);
        upgradeState("reboot-deferred");
        await("deferred seen", () -> String.valueOf(a.sync.upgradeRebootRefusal(time.now()))
                .contains("reboot-deferred"));
        a.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty(), "no reboot while the control plane holds the node");

        upgradeState("reboot-required");
        cluster.annotate(NODE, NodeKeys.UPGRADE_REBOOT_BEFORE, time.now().plusSeconds(3600).toString());
        await("the open window seen", () -> a.sync.upgradeRebootRefusal(time.now()) == null);
        a.rebooter.evaluate();
        assertEquals(List.of("upgrade"), executor.reboots);
    }

    private void upgradeState(String state) {
        // a merge patch without a resourceVersion, as the node agent writes the same Node meanwhile
        cluster.admin().nodes().withName(NODE).patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\""
                        + NodeKeys.DRIVER_UPGRADE_STATE + "\":\"" + state + "\"}}}");
    }

    /**
     * The Kubernetes bundle stopping (or starting): its approval service is gone while the policy source still says
     * autoUpgrade=true. The control plane's grant cannot be read, so no upgrade reboot, even with the node's slot
     * granted on the Node (seen in a chaos run: an upgrade reboot without its Rebooting Event while the agent stopped).
     */
    @Test
    void noUpgradeRebootWhileTheApprovalServiceIsGone() throws IOException {
        cluster.putDriver(NodeRuntime.policy(true, false, null, null));
        health.version = "25.2.0";
        boolean[] gone = {false};
        NodeRuntime[] self = new NodeRuntime[1];
        NodeRuntime a = boot("boot-a", () -> gone[0] ? null : self[0].sync, false);
        self[0] = a;
        await("policy", () -> a.sync.policy().autoUpgrade());
        a.driver.evaluate();
        assertEquals("upgrade", a.markers.read(Markers.REBOOT_REQUIRED).marker().reason());
        upgradeState("pod-restart-required");
        await("the grant seen", () -> a.sync.upgradeRebootRefusal(time.now()) == null);
        gone[0] = true;
        a.rebooter.evaluate();
        assertEquals("UPGRADE_HELD", a.rebooter.getDecision());
        assertTrue(a.rebooter.getDecisionReason().contains("no Kubernetes connection service"),
                a.rebooter.getDecisionReason());
        assertTrue(executor.reboots.isEmpty(), "no upgrade reboot without the grant read");
        gone[0] = false;
        a.rebooter.evaluate();
        assertEquals(List.of("upgrade"), executor.reboots, "the service back: the grant read, the reboot made");
    }

    @Test
    void upgradeStagesNeverUnloadsRebootsLoadsValidates() throws IOException {
        cluster.putDriver(NodeRuntime.policy(true, false, null, null));
        health.version = "25.2.0";
        NodeRuntime a = boot("boot-a");
        await("policy", () -> a.sync.policy().autoUpgrade());
        a.driver.evaluate();
        assertEquals("STAGED", a.driver.getState());
        assertTrue(loader.loads.isEmpty(), "nothing loaded into a kernel with a driver");
        assertTrue(Files.readString(procModules).contains("drv_davinci_intf"), "25.2.0 stays loaded");
        assertEquals("upgrade", a.markers.read(Markers.REBOOT_REQUIRED).marker().reason());
        assertEquals("25.5.0", a.markers.read(Markers.REBOOT_REQUIRED).marker().content().get("to"));
        assertTrue(Files.readString(stateDir.resolve("driver-staged")).contains("version=25.5.0"));
        await("reason=upgrade Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).stream()
                .anyMatch(e -> e.getMessage().contains("reason=upgrade")));
        await("25.2.0 reported", () -> "25.2.0".equals(cluster.label(NODE, NodeKeys.DRIVER_VERSION)));
        // staged outside a rollout (no driver-upgrade-state: no slot, no drain): autoUpgrade does not reboot
        a.rebooter.evaluate();
        assertEquals("UPGRADE_HELD", a.rebooter.getDecision());
        assertTrue(a.rebooter.getDecisionReason().contains("driver-upgrade-state is absent"),
                a.rebooter.getDecisionReason());
        assertTrue(executor.reboots.isEmpty(), "no upgrade reboot before the control plane's grant");
        // the control plane gave the node its slot, drained it and replaced its driver pod
        upgradeState("pod-restart-required");
        await("the grant seen", () -> a.sync.upgradeRebootRefusal(time.now()) == null);
        a.rebooter.evaluate();
        assertEquals(List.of("upgrade"), executor.reboots);

        Files.writeString(procModules, ""); // fresh kernel: no module
        health.version = null;
        NodeRuntime b = reboot(a, "boot-b");
        b.rebooter.evaluate();
        b.driver.evaluate();
        assertEquals(List.of("25.5.0"), loader.loads);
        assertTrue(Files.exists(stateDir.resolve("driver-current")), "staged switched to current at the fresh boot");
        b.driver.evaluate();
        assertEquals("VALIDATED", b.driver.getState(), b.driver.getStateReason());
        assertTrue(b.markers.read(Markers.DRIVER_READY).present());
        await("version reported", () -> "25.5.0".equals(cluster.label(NODE, NodeKeys.DRIVER_VERSION)));
        await("validated", () -> "25.5.0@boot-b".equals(cluster.annotation(NODE, NodeKeys.DRIVER_VALIDATED)));
        await("DriverValidated Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_DRIVER_VALIDATED).size() == 1);
        assertEquals(1, loader.loads.size());
    }

    @Test
    void validationFailureLeavesDriverReadyAbsentAndRequestsNoReboot() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        health.verdict = "failed";
        NodeRuntime a = boot("boot-a");
        a.driver.evaluate();
        assertEquals("VALIDATING", a.driver.getState());
        time.advance(Duration.ofMinutes(11));
        a.driver.evaluate();
        assertEquals("VALIDATION_FAILED", a.driver.getState());
        assertFalse(a.markers.read(Markers.DRIVER_READY).present());
        assertFalse(a.markers.read(Markers.REBOOT_REQUIRED).present());
        await("DriverValidationFailed Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_DRIVER_VALIDATION_FAILED).size() == 1);
    }

    @Test
    void markerFromPreviousBootIsIgnored() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, true);
        a.close();
        runtimes.remove(a);
        // a marker left by another boot (e.g. /run is not a tmpfs on this host)
        new io.npulifecycle.markers.internal.FileMarkerStore(markerDir, "boot-old", time::now, null)
                .write(Markers.REBOOT_REQUIRED, Map.of(Markers.KEY_REASON, Markers.REASON_RECOVERY), "health-watch");
        NodeRuntime b = boot("boot-b");
        awaitPolicy(b, true);
        assertEquals(MarkerStatus.STALE, b.markers.read(Markers.REBOOT_REQUIRED).status());
        b.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty());
        assertEquals("NONE", b.rebooter.getDecision());
        assertTrue(b.rebooter.getDecisionReason().contains("previous boot"), b.rebooter.getDecisionReason());
        assertNull(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED));
    }

    @Test
    void corruptStateFileNeverRebootsAndKeepsACopy() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        Files.writeString(stateDir.resolve("rebooter.state"), "format=1\nhistory.0=garbage\n");
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, true);
        wedge(a);
        a.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty());
        assertEquals("STATE_CORRUPT", a.rebooter.getDecision());
        try (var s = Files.list(stateDir)) {
            assertTrue(s.anyMatch(p -> p.getFileName().toString().startsWith("rebooter.state.corrupt-")));
        }
        assertEquals("state reset", a.rebooter.resetState());
        a.rebooter.evaluate();
        assertEquals(1, executor.reboots.size());
    }

    @Test
    void aCorruptStateFileIsCopiedAsideOnceWithItsModeAndTheLogNamesTheCopy() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        Path state = Files.writeString(stateDir.resolve("rebooter.state"), "format=1\nhistory.0=garbage\n");
        Files.setPosixFilePermissions(state, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        try (RebooterLog rebooterLog = new RebooterLog()) {
            NodeRuntime a = boot("boot-a");
            awaitPolicy(a, true);
            wedge(a);
            for (int i = 0; i < 4; i++) {
                a.rebooter.evaluate();
            }
            assertEquals("STATE_CORRUPT", a.rebooter.getDecision());
            java.util.List<Path> copies;
            try (var s = Files.list(stateDir)) {
                copies = s.filter(p -> p.getFileName().toString().startsWith("rebooter.state.corrupt-")).toList();
            }
            assertEquals(1, copies.size(), copies.toString());
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(copies.get(0))));
            java.util.List<String> log = rebooterLog.messages();
            assertEquals(1, log.stream().filter(l -> l.startsWith("kept a copy of the corrupt state file")
                    && l.endsWith(copies.get(0).toString())).count(), log.toString());
            assertTrue(log.stream().anyMatch(l -> l.contains("(copy: " + copies.get(0) + ")")), log.toString());
        }
    }

    @Test
    void aCorruptStateIsAnErrorOnceAndResetEndsTheCorruptDecision() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, true, null, null));
        Files.writeString(stateDir.resolve("rebooter.state"), "format=1\nhistory.0=garbage\n");
        try (RebooterLog rebooterLog = new RebooterLog()) {
            java.util.List<java.util.logging.LogRecord> log = rebooterLog.records;
            NodeRuntime a = boot("boot-a");
            awaitPolicy(a, true);
            wedge(a);
            for (int i = 0; i < 5; i++) {
                a.rebooter.evaluate();
            }
            assertEquals("STATE_CORRUPT", a.rebooter.getDecision());
            java.util.function.Supplier<Long> errors = () -> log.stream()
                    .filter(r -> r.getLevel() == java.util.logging.Level.SEVERE
                            && String.valueOf(r.getMessage()).contains("history.0"))
                    .count();
            assertEquals(1, errors.get(), "one ERROR for one corruption, not one per evaluation");
            // another corruption is an ERROR again
            Files.writeString(stateDir.resolve("rebooter.state"), "format=2\n");
            a.rebooter.evaluate();
            a.rebooter.evaluate();
            assertEquals(1, log.stream().filter(r -> r.getLevel() == java.util.logging.Level.SEVERE
                    && String.valueOf(r.getMessage()).contains("expected format=1")).count(), "the new corruption");
            assertEquals("state reset", a.rebooter.resetState());
            assertEquals("NONE", a.rebooter.getDecision(), a.rebooter.getDecisionReason());
            assertTrue(a.rebooter.getDecisionReason().contains("reset"), a.rebooter.getDecisionReason());
            a.rebooter.evaluate();
            assertEquals(1, executor.reboots.size());
        }
    }

    @Test
    void noExecutorOrDryRunNeverRebootsNorConsumes() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a", null, true);
        awaitPolicy(a, false);
        approve(a, "true");
        wedge(a);
        a.rebooter.evaluate();
        assertTrue(executor.reboots.isEmpty());
        assertEquals("DRY_RUN", a.rebooter.getDecision());
        assertEquals("true", cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "a dry run never consumes an approval");
        assertTrue(a.rebooter.getHistory().get(0).contains("dry-run"));
    }

    /**
     * The API server becomes unreachable, the node agent's label is removed meanwhile, and the health ticks of the
     * outage re-create the informers; once the server is back, the relist shows the Node without the label and the
     * node agent writes it again.
     *
     * <p>The open connections are reset, not closed in order: over plain HTTP (the embedded mock) an orderly close
     * can leave the agent's watch "watching" for good. The JDK 17 WebSocket reads the end of the stream on its
     * selector thread whether or not its listener asked for the next message; when the close arrives while fabric8
     * still processes the previous event (here the event of the agent's own label write, sent just as the proxy
     * cuts), it fails with an InternalError in {@code TransportImpl.acknowledgeReception} that no one receives, and
     * neither {@code onClose} nor {@code onError} ever comes: fabric8's {@code isWatching()} stays true, the watchdog
     * has nothing to re-create, the cache keeps the label and nothing is written. A reset is a read error, which the
     * JDK reports through {@code onError} at once. The test waits until the agent noticed the outage, so that the
     * ticks of the outage see an informer that does not watch.
     */
    @Test
    void informerRelistRebuildsNodeStateAfterApiServerOutage() throws IOException {
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        wedge(a);
        await("label", () -> "true".equals(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED)));
        long relistsBefore = a.sync.getRelists();
        proxy.cutOff(TcpProxy.Disconnect.RESET);
        await("the node agent's watch ended with the outage", () -> !a.sync.isNodeInformerWatching());
        // meanwhile someone removes our label directly on the API server, retrying on a 409 as kubectl edit's user
        // would: the node sync may still be writing the node (its annotations) when the proxy is cut
        io.npulifecycle.simulator.cluster.NodeEdits.retryOnConflict(() -> cluster.admin().nodes().withName(NODE)
                .edit(n -> {
                    n.getMetadata().getLabels().remove(NodeKeys.REBOOT_REQUIRED);
                    return n;
                }));
        for (int i = 0; i < 3; i++) {
            time.advance(Duration.ofSeconds(30));
        }
        assertFalse(a.sync.isConnected());
        assertTrue(a.sync.getRelists() > relistsBefore, "the ticks of the outage re-created the informers");
        proxy.restore();
        await("label restored after the relist", () -> {
            time.advance(Duration.ofSeconds(30));
            return "true".equals(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED));
        });
        await("watching again", () -> a.sync.isNodeInformerWatching());
    }

    void assumeReal(String why) {
        Assumptions.assumeTrue(ClusterBackend.REAL.equals(kind), why);
    }

    /**
     * kube-apiserver killed and started again (etcd kept) while a recovery waits for its approval: the node agent's
     * informer recovers (its watch reconnects, or the health tick re-creates it), sees the approval given after the
     * restart, and the reboot path completes with its Events.
     */
    @Test
    void apiServerRestartedMidRecoveryTheInformerRecoversAndTheRebootPathCompletes() throws IOException {
        assumeReal("a kube-apiserver restart needs the real server (the mock has no process to restart)");
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a");
        awaitPolicy(a, false);
        wedge(a);
        a.rebooter.evaluate();
        assertEquals("WAITING_FOR_APPROVAL", a.rebooter.getDecision());
        await("label reboot-required", () -> "true".equals(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED)));
        await("RebootRequired Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOT_REQUIRED).size() == 1);

        cluster.real().restartApiServer();
        cluster.annotate(NODE, NodeKeys.APPROVE_REBOOT, "true"); // only a recovered informer can see this
        await("approval seen after the restart", () -> "true".equals(a.sync.approval().value()), this::tick);
        a.rebooter.evaluate();
        assertEquals(List.of("recovery"), executor.reboots);
        await("approval consumed", () -> cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT) == null);
        await("Rebooting Event", () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_REBOOTING).size() == 1);

        health.wedged = "";
        NodeRuntime b = reboot(a, "boot-b");
        b.rebooter.evaluate();
        b.driver.evaluate();
        await("label removed", () -> cluster.label(NODE, NodeKeys.REBOOT_REQUIRED) == null);
        await("validated annotation", () -> "25.5.0@boot-b".equals(cluster.annotation(NODE, NodeKeys.DRIVER_VALIDATED)));
        assertEquals(1, executor.reboots.size());
    }

    /**
     * etcd compacted while the node agent is cut off (a server without watch cache, so etcd itself answers the
     * watch): the informer's watch from its last resourceVersion gets 410 Gone and fabric8 lists again, without the
     * health tick's re-creation; the approval written meanwhile is not lost. A timeout names the informer's state and
     * the agent's requests for Nodes with their times; fabric8's own log (a reflector that stops, a watch that ends)
     * is in the test output (slf4j-jdk14).
     */
    @Test
    void etcdCompactedWhileCutOffTheInformerGetsGoneRelistsAndLosesNothing() throws IOException {
        assumeReal("a compaction needs etcd: the mock has no resourceVersion history");
        proxy.close();
        cluster.close();
        cluster = NodeRuntime.withNode(ClusterFixture.startReal(List.of("--watch-cache=false")));
        proxy = NodeRuntime.proxy(cluster);
        AtomicInteger nodeLists = new AtomicInteger();
        long start = System.nanoTime();
        List<String> timeline = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.function.Consumer<String> mark = what -> timeline.add(
                (System.nanoTime() - start) / 1_000_000 + " ms " + what);
        Interceptor countLists = new Interceptor() {
            @Override
            public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                String q = String.valueOf(request.uri().getQuery());
                if (request.uri().getPath().equals("/api/v1/nodes")) {
                    mark.accept((q.contains("watch=true") ? "watch " : "list ") + q);
                    if (!q.contains("watch=true")) {
                        nodeLists.incrementAndGet();
                    }
                }
            }
        };
        // the watch's WebSocket pinged every second (fabric8's default 30 s): a CI run (2026-12-06) showed the
        // proxy's close of the watch's connection unnoticed by the client, "node informer watching: true" and no
        // request for 20 s after the restore; a ping written to the closed connection fails and the watch reconnects
        java.util.function.Consumer<io.fabric8.kubernetes.client.Config> config = NodeRuntime.agentConfig(cluster, proxy)
                .andThen(c -> c.setWebsocketPingInterval(1000L));
        KubernetesClient client = cluster.own(cluster.real().newTokenClient(
                cluster.serviceAccountToken(NodeRuntime.NODE_AGENT_SA, NODE), config,
                h -> h.addOrReplaceInterceptor("count-node-lists", countLists)));
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a", null, false, client);
        awaitPolicy(a, false);
        await("the node informer watching before the cut (its watch resumes from a resourceVersion)",
                () -> a.sync.isNodeInformerWatching());
        int listsBefore = nodeLists.get();
        long relistsBefore = a.sync.getRelists();

        mark.accept("cut off");
        proxy.cutOff(TcpProxy.Disconnect.CLOSE);
        cluster.annotate(NODE, NodeKeys.APPROVE_REBOOT, "true");
        for (int i = 0; i < 3; i++) {
            cluster.annotate(NODE, "example.com/touched", "n" + i);
        }
        long compactedTo = cluster.real().compact();
        mark.accept("compacted to " + compactedTo + ", restored");
        proxy.restore();

        Waits.until("approval written during the cut seen after the relist", NodeRuntime.WAIT,
                () -> "true".equals(a.sync.approval().value()),
                () -> "node informer watching: " + a.sync.isNodeInformerWatching() + "; last informer event: "
                        + a.sync.getLastInformerEvent() + "; the node agent's requests for Nodes from the start of the "
                        + "test:\n" + String.join("\n", timeline));
        assertTrue(nodeLists.get() > listsBefore, "the node informer listed again after the compaction to "
                + compactedTo + " (" + listsBefore + " lists before, " + nodeLists.get() + " after)");
        assertEquals(relistsBefore, a.sync.getRelists(), "fabric8's relist on 410, not the health tick's re-creation");
        await("watching again", () -> a.sync.isNodeInformerWatching());
    }

    /**
     * Another client annotates the Node between the node agent's read and its update (hooked into the agent's HTTP
     * client right before its PUT of the Node), so the update, guarded by the resourceVersion just read, gets a real
     * {@code 409 Conflict}: the agent reads again and retries; the approval is consumed once, one reboot, and the
     * other writer's annotation is kept.
     */
    @Test
    void aWriteBetweenTheAgentsReadAndUpdateIsARealConflictTheAgentRetriesNothingLost() throws IOException {
        assumeReal("the write is hooked into the node agent's token client of the real server");
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicInteger conflicts = new AtomicInteger();
        String nodePath = "/api/v1/nodes/" + NODE;
        Interceptor between = new Interceptor() {
            @Override
            public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                if ("PUT".equals(request.method()) && nodePath.equals(request.uri().getPath())
                        && armed.compareAndSet(true, false)) {
                    cluster.annotate(NODE, "example.com/touched", "between");
                }
            }

            @Override
            public void after(HttpRequest request, io.fabric8.kubernetes.client.http.HttpResponse<?> response,
                    io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<java.nio.ByteBuffer>> consumer) {
                if ("PUT".equals(request.method()) && nodePath.equals(request.uri().getPath())
                        && response.code() == 409) {
                    conflicts.incrementAndGet();
                }
            }
        };
        KubernetesClient client = cluster.own(cluster.real().newTokenClient(
                cluster.serviceAccountToken(NodeRuntime.NODE_AGENT_SA, NODE), NodeRuntime.agentConfig(cluster, proxy),
                h -> h.addOrReplaceInterceptor("write-between", between)));
        cluster.putDriver(NodeRuntime.policy(false, false, null, null));
        NodeRuntime a = boot("boot-a", null, false, client);
        awaitPolicy(a, false);
        wedge(a);
        await("label reboot-required", () -> "true".equals(cluster.label(NODE, NodeKeys.REBOOT_REQUIRED)));
        approve(a, "true");

        armed.set(true);
        // a decision round whose read of the Node fails (a connection reset through the proxy) retries at the next
        // round, as the health tick does; the round that reads the Node makes the PUT and meets the other write
        await("the other write made between a read and a PUT of the node agent", () -> {
            a.rebooter.evaluate();
            return !armed.get();
        }, this::tick);
        assertTrue(conflicts.get() >= 1, "the PUT after the other write was refused with 409");
        assertEquals(List.of("recovery"), executor.reboots);
        assertNull(cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "approval consumed");
        assertEquals("boot-a", cluster.annotation(NODE, NodeKeys.REBOOTING_FROM_BOOT_ID));
        assertEquals("between", cluster.annotation(NODE, "example.com/touched"), "the other writer's annotation kept");
        assertEquals("true", cluster.label(NODE, NodeKeys.REBOOT_REQUIRED), "the agent's label kept");
    }

    static final class Killed extends Error {
        private static final long serialVersionUID = 1L;

        Killed(String m) {
            super(m);
        }
    }

    static class Delegating implements ApprovalService {
        private final ApprovalService d;

        Delegating(ApprovalService d) {
            this.d = d;
        }

        @Override
        public ApprovalState approval() {
            return d.approval();
        }

        @Override
        public ConsumeResult consumeApproval(String bootId) {
            return d.consumeApproval(bootId);
        }

        @Override
        public boolean restoreApproval(String bootId) {
            return d.restoreApproval(bootId);
        }
    }

    /** The records the rebooter's loggers ({@code io.npulifecycle.rebooter}) publish while it is open. */
    private static final class RebooterLog extends java.util.logging.Handler implements AutoCloseable {
        private final java.util.logging.Logger logger = java.util.logging.Logger.getLogger("io.npulifecycle.rebooter");
        final java.util.List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();

        RebooterLog() {
            logger.addHandler(this);
        }

        /** @return the messages published so far */
        java.util.List<String> messages() {
            return records.stream().map(r -> String.valueOf(r.getMessage())).toList();
        }

        @Override
        public void publish(java.util.logging.LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }
}
