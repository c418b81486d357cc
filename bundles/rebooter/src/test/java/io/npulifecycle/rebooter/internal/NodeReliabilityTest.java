package io.npulifecycle.rebooter.internal;

import static io.npulifecycle.rebooter.internal.NodeRuntime.NODE;
import static io.npulifecycle.rebooter.internal.NodeRuntime.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.reboot.RebootExecutor;
import io.npulifecycle.clock.testing.ManualTimeSource;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.kube.internal.NodeSync;
import io.npulifecycle.markers.internal.FileMarkerStore;
import io.npulifecycle.testing.support.ClusterFixture;

/**
 * Reliability matrix (docs/reliability.md), categories {@code annotation}, {@code marker file}, {@code state file} and the node
 * agent's side of {@code custom resource}: bad input reaches the real node-agent path (marker store, Kubernetes node
 * sync over kubernetes-server-mock, rebooter decision engine, with a counting reboot executor). Every case asserts no
 * reboot (the executor was never called), a clear error naming the input, and no lost state (the approval annotation
 * left as it was, the bad file left in place for a person).
 *
 * <p>One mock API server for all cases; each case boots its own node-agent "runtime" on fresh marker and state
 * folders with its own boot id.
 */
@Timeout(300)
class NodeReliabilityTest {

    static ClusterFixture cluster;
    @TempDir
    static Path tmp;
    static int n;

    final List<String> reboots = new ArrayList<>();
    final RebootExecutor executor = new RebootExecutor() {
        @Override
        public String describe() {
            return "counting executor";
        }

        @Override
        public void reboot(String reason) {
            reboots.add(reason);
        }
    };
    /** One clock for the whole class (the shared node sync is bound to it). */
    static final ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-12-01T10:00:00Z"));
    /** The marker store the shared node sync sees: switched to each case's own store. */
    static volatile MarkerStore currentMarkers;
    static NodeSync sync;
    Path markerDir;
    Path stateDir;
    Rt rt;

    /** One case's node agent: its own boot id, marker folder, state folder and rebooter; the shared node sync. */
    record Rt(String bootId, FileMarkerStore markers, NodeSync sync, RebootEngine rebooter) {
        void close() {
            // the node sync is shared: closing a watch of the mock API server blocks its event loop for 30 s
        }
    }

    @BeforeAll
    static void startCluster() throws IOException {
        cluster = NodeRuntime.startCluster(ClusterBackend.EMBEDDED);
        MarkerStore proxy = (MarkerStore) java.lang.reflect.Proxy.newProxyInstance(MarkerStore.class.getClassLoader(),
                new Class<?>[] {MarkerStore.class}, (o, m, args) -> {
                    try {
                        return m.invoke(currentMarkers, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        currentMarkers = new FileMarkerStore(Files.createDirectories(tmp.resolve("run-0")), "boot-0", time::now, null);
        sync = new NodeSync(NodeRuntime.agentClient(cluster, NodeRuntime.proxy(cluster)),
                NodeSync.Settings.builder(NODE).build(), time, proxy, null);
        sync.start();
    }

    @AfterAll
    static void stopCluster() throws IOException {
        sync.stop();
        cluster.close();
    }

    /** A fresh node-agent runtime: policy as given (via the shared CR), no approval annotation, empty folders. */
    Rt boot(Object autoRecover, Object maxReboots, Object window) throws IOException {
        reboots.clear();
        int id = ++n;
        markerDir = Files.createDirectories(tmp.resolve("run-" + id));
        stateDir = Files.createDirectories(tmp.resolve("var-" + id));
        FileMarkerStore markers = new FileMarkerStore(markerDir, "boot-" + id, time::now, null);
        currentMarkers = markers;
        cluster.annotate(NODE, NodeKeys.APPROVE_REBOOT, null);
        cluster.putDriver(NodeRuntime.policy(false, autoRecover, maxReboots, window));
        RebootEngine rebooter = new RebootEngine(markers, () -> sync, () -> sync, () -> sync, () -> executor, time,
                RebootEngine.Settings.builder().stateDir(stateDir).flushTimeoutMillis(300).build());
        rt = new Rt("boot-" + id, markers, sync, rebooter);
        awaitTicking("Node informer synced", () -> sync.approval().known() && sync.approval().value() == null);
        return rt;
    }

    Rt boot(boolean autoRecover) throws IOException {
        Rt r = boot(autoRecover, null, null);
        awaitTicking("policy known, autoRecover=" + autoRecover,
                () -> r.sync.policy().known() && r.sync.policy().autoRecover() == autoRecover);
        return r;
    }

    private int rounds;

    void awaitTicking(String what, BooleanSupplier cond) {
        await(what, cond, () -> {
            if (++rounds % 50 == 0) {
                time.advance(Duration.ofSeconds(30));
            }
        });
    }

    void wedge() throws IOException {
        rt.markers.write(Markers.REBOOT_REQUIRED, Map.of(Markers.KEY_REASON, Markers.REASON_RECOVERY,
                Markers.KEY_CHIPS, "1:0", Markers.KEY_SINCE, time.now().toString()), "health-watch");
    }

    /** Several decision rounds over several poll periods: the executor must never be called. */
    void rounds() {
        for (int i = 0; i < 4; i++) {
            rt.rebooter.evaluate();
            time.advance(Duration.ofSeconds(30));
        }
        rt.rebooter.evaluate();
        assertTrue(reboots.isEmpty(), "rebooted: " + reboots);
    }

    void approve(String value) {
        cluster.annotate(NODE, NodeKeys.APPROVE_REBOOT, value);
        int[] k = {0};
        await("approval '" + cut(value) + "' seen", () -> value.equals(rt.sync.approval().value()), () -> {
            if (++k[0] % 150 == 0) {
                rt.sync.relist();
            }
        });
    }

    static String cut(String s) {
        return s.length() > 20 ? s.substring(0, 20) + "..." : s;
    }

    /** Bad approval value: no reboot, not consumed, ApprovalInvalid Warning naming the value. */
    void badApproval(String value, String shown) throws IOException {
        boot(false);
        wedge();
        approve(value);
        rounds();
        assertEquals("WAITING_FOR_APPROVAL", rt.rebooter.getDecision());
        assertTrue(rt.rebooter.getDecisionReason().contains(shown), rt.rebooter.getDecisionReason());
        assertEquals(value, cluster.annotation(NODE, NodeKeys.APPROVE_REBOOT), "the annotation is left as the person wrote it");
        assertNull(cluster.annotation(NODE, NodeKeys.REBOOTING_FROM_BOOT_ID), "no consumption mark");
        await("ApprovalInvalid Event naming " + shown, () -> cluster.events(NodeRuntime.EVENTS_NAMESPACE, NodeKeys.EVENT_APPROVAL_INVALID).stream()
                .anyMatch(e -> e.getMessage().contains(NodeKeys.APPROVE_REBOOT + "=" + shown)
                        && "Warning".equals(e.getType()) && e.getMessage().length() < 1024));
        assertTrue(reboots.isEmpty());
    }

    /** A corrupt reboot-required marker with autoRecover=true: named as invalid (or stale), no reboot. */
    void badMarker(byte[] content, MarkerStatus status, String why) throws IOException {
        boot(true);
        Path p = markerDir.resolve(Markers.REBOOT_REQUIRED);
        Files.write(p, content);
        assertMarker(p, status, why);
    }

    void assertMarker(Path p, MarkerStatus status, String why) throws IOException {
        MarkerRead r = rt.markers.read(Markers.REBOOT_REQUIRED);
        assertEquals(status, r.status(), String.valueOf(r.error()));
        assertTrue(r.error() != null && r.error().contains(why), "error must say '" + why + "': " + r.error());
        assertEquals(p, r.path(), "the error names the file");
        rounds();
        assertEquals("NONE", rt.rebooter.getDecision(), rt.rebooter.getDecisionReason());
        assertTrue(Files.exists(p), "the bad file is left for a person");
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    String valid(String boot) {
        return "bootId=" + boot + "\nwrittenAt=2026-12-01T10:00:00Z\nwriter=health-watch\nreason=recovery\nchips=1:0\n"
                + "since=2026-12-01T10:00:00Z\n";
    }

    /** A corrupt rebooter.state with autoRecover=true and a valid recovery request: no reboot, named. */
    void badState(Executable write, String why) throws Throwable {
        boot(true);
        write.execute();
        rt.rebooter.reconfigure(RebootEngine.Settings.builder().stateDir(stateDir).flushTimeoutMillis(300).build());
        wedge();
        rounds();
        assertEquals("STATE_CORRUPT", rt.rebooter.getDecision(), rt.rebooter.getDecisionReason());
        assertTrue(rt.rebooter.getDecisionReason().contains(why), rt.rebooter.getDecisionReason());
        assertTrue(rt.rebooter.getDecisionReason().contains(stateDir.resolve(StateFile.NAME).toString()),
                "names the file: " + rt.rebooter.getDecisionReason());
        assertTrue(Files.exists(stateDir.resolve(StateFile.NAME)), "the corrupt file is left in place");
    }

    static DynamicTest test(String category, String input, String expected, Executable body) {
        return DynamicTest.dynamicTest(category + " | " + input + " | " + expected, body);
    }

    @TestFactory
    Stream<DynamicTest> cases() {
        List<DynamicTest> l = new ArrayList<>();
        String a = "annotation";
        String ex = "no reboot, not consumed, Warning Event ApprovalInvalid naming the value";
        l.add(test(a, "approve-reboot=yes", ex, () -> badApproval("yes", "'yes'")));
        l.add(test(a, "approve-reboot='TRUE ' (capitals, trailing space)", ex, () -> badApproval("TRUE ", "'TRUE '")));
        l.add(test(a, "approve-reboot='' (empty)", ex, () -> badApproval("", "''")));
        l.add(test(a, "approve-reboot=' true' (leading space)", ex, () -> badApproval(" true", "' true'")));
        l.add(test(a, "approve-reboot='true\\n' (newline)", ex + " with the newline escaped", () -> badApproval("true\n", "'true\\n'")));
        l.add(test(a, "approve-reboot=1", ex, () -> badApproval("1", "'1'")));
        l.add(test(a, "approve-reboot = 10 KB value", ex + ", cut to 64 characters and its length (Event under 1 KiB)",
                () -> badApproval("t".repeat(10240), "'" + "t".repeat(64) + "...' (10240 characters)")));
        l.add(test(a, "misspelled key npu.openfuyao.com/approve_reboot=true", "not an approval: waiting for approve-reboot=true, no reboot, annotation untouched", () -> {
            boot(false);
            wedge();
            cluster.annotate(NODE, "npu.openfuyao.com/approve_reboot", "true");
            try {
                rounds();
                assertEquals("WAITING_FOR_APPROVAL", rt.rebooter.getDecision());
                assertTrue(rt.rebooter.getDecisionReason().contains("waiting for " + NodeKeys.APPROVE_REBOOT + "=true"),
                        rt.rebooter.getDecisionReason());
                assertEquals("true", cluster.annotation(NODE, "npu.openfuyao.com/approve_reboot"));
            } finally {
                cluster.annotate(NODE, "npu.openfuyao.com/approve_reboot", null);
            }
        }));
        l.add(test(a, "label reboot-required=maybe set by hand, no marker", "the agent puts the label back to the marker's truth (absent), no reboot", () -> {
            boot(true);
            // a person's kubectl label --overwrite: a JSON merge patch of the one label, which applies whatever the
            // agent that just booted writes meanwhile (it removes the label the previous case's marker put there). A
            // read-modify-write (fabric8 edit: a JSON patch "replace" of the label it read) is refused 422 by
            // kube-apiserver when the agent removed the label in between, and was not answered at all by the
            // embedded server (issue #29)
            cluster.admin().nodes().withName(NODE).patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"metadata\":{\"labels\":{\"" + NodeKeys.REBOOT_REQUIRED + "\":\"maybe\"}}}");
            rounds();
            awaitTicking("label corrected", () -> {
                rt.sync.requestSync();
                return cluster.label(NODE, NodeKeys.REBOOT_REQUIRED) == null;
            });
            assertEquals("NONE", rt.rebooter.getDecision());
            assertTrue(reboots.isEmpty());
        }));

        String c = "custom resource";
        for (Object[] bad : new Object[][] {
            {"recoveryPolicy.autoRecover='true' (a string)", "true", null, null, "spec.driver.recoveryPolicy.autoRecover"},
            {"recoveryPolicy.maxReboots=-1", true, -1, null, "spec.driver.recoveryPolicy.maxReboots"},
            {"recoveryPolicy.window='forever'", true, null, "forever", "spec.driver.recoveryPolicy.window"}}) {
            l.add(test(c, "seen by the node agent: " + bad[0] + ", chip wedged",
                    "policy unknown naming " + bad[4] + ", no automatic reboot, waits for an approval", () -> {
                        boot(bad[1], bad[2], bad[3]);
                        awaitTicking("policy unknown naming " + bad[4], () -> !rt.sync.policy().known()
                                && rt.sync.policy().problem().contains((String) bad[4]));
                        wedge();
                        rounds();
                        assertEquals("WAITING_FOR_APPROVAL", rt.rebooter.getDecision());
                        assertTrue(rt.rebooter.getDecisionReason().contains((String) bad[4]), rt.rebooter.getDecisionReason());
                    }));
        }

        String m = "marker file";
        l.add(test(m, "reboot-required truncated in writtenAt", "INVALID naming the file and 'writtenAt', no reboot (autoRecover=true)",
                () -> badMarker(utf8("bootId=boot-" + (n + 1) + "\nwrittenAt=2026-12-0"), MarkerStatus.INVALID, "writtenAt")));
        l.add(test(m, "reboot-required truncated after the header (no reason)", "request with reason 'null' refused as INVALID_REQUEST, no reboot", () -> {
            boot(true);
            Path p = markerDir.resolve(Markers.REBOOT_REQUIRED);
            Files.write(p, utf8("bootId=" + rt.bootId + "\nwrittenAt=2026-12-01T10:00:00Z\n"));
            rounds();
            assertEquals("INVALID_REQUEST", rt.rebooter.getDecision());
            assertTrue(rt.rebooter.getDecisionReason().contains(p.toString()), rt.rebooter.getDecisionReason());
        }));
        l.add(test(m, "reboot-required with reason=garbage", "INVALID_REQUEST naming the file and the reason, no reboot", () -> {
            boot(true);
            Path p = markerDir.resolve(Markers.REBOOT_REQUIRED);
            Files.write(p, utf8(valid(rt.bootId).replace("reason=recovery", "reason=garbage")));
            rounds();
            assertEquals("INVALID_REQUEST", rt.rebooter.getDecision());
            assertTrue(rt.rebooter.getDecisionReason().contains("'garbage'") && rt.rebooter.getDecisionReason().contains(p.toString()),
                    rt.rebooter.getDecisionReason());
        }));
        l.add(test(m, "reboot-required from another boot id", "STALE naming both boot ids, no reboot", () -> {
            boot(true);
            Path p = markerDir.resolve(Markers.REBOOT_REQUIRED);
            Files.write(p, utf8(valid("boot-of-yesterday")));
            assertMarker(p, MarkerStatus.STALE, "written under boot id boot-of-yesterday, current boot id is " + rt.bootId);
        }));
        l.add(test(m, "reboot-required with writtenAt/since in the future (2099), autoRecover=false",
                "a request of this boot: waits for an approval (timestamps are informative), no reboot", () -> {
                    boot(false);
                    Files.write(markerDir.resolve(Markers.REBOOT_REQUIRED),
                            utf8(valid(rt.bootId).replace("2026-12-01T10:00:00Z", "2099-01-01T00:00:00Z")));
                    rounds();
                    assertEquals("WAITING_FOR_APPROVAL", rt.rebooter.getDecision());
                }));
        l.add(test(m, "reboot-required of random binary bytes", "INVALID 'not UTF-8 text', no reboot", () -> {
            byte[] b = new byte[4096];
            new java.util.Random(3).nextBytes(b);
            badMarker(b, MarkerStatus.INVALID, "not UTF-8 text");
        }));
        l.add(test(m, "reboot-required empty (0 bytes)", "INVALID 'no bootId', no reboot",
                () -> badMarker(new byte[0], MarkerStatus.INVALID, "no bootId")));
        l.add(test(m, "reboot-required of 2 MiB", "INVALID 'larger than', no reboot",
                () -> badMarker(utf8("x=" + "y".repeat(2 * 1024 * 1024)), MarkerStatus.INVALID, "larger than")));
        l.add(test(m, "reboot-required with a duplicate reason key", "INVALID 'duplicate key', no reboot",
                () -> badMarker(utf8(valid("boot-" + (n + 1)) + "reason=upgrade\n"), MarkerStatus.INVALID, "duplicate key 'reason'")));
        l.add(test(m, "reboot-required is a directory", "INVALID 'cannot be read', no reboot", () -> {
            boot(true);
            Path p = Files.createDirectories(markerDir.resolve(Markers.REBOOT_REQUIRED));
            Files.writeString(p.resolve("inside"), "x");
            assertMarker(p, MarkerStatus.INVALID, "cannot be read");
        }));
        l.add(test(m, "reboot-required unreadable (mode 000)", "INVALID 'cannot be read', no reboot (skipped as root: root reads anything)", () -> {
            Assumptions.assumeFalse("root".equals(System.getProperty("user.name")), "running as root: mode 000 does not stop reads");
            boot(true);
            Path p = markerDir.resolve(Markers.REBOOT_REQUIRED);
            Files.write(p, utf8(valid(rt.bootId)));
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("---------"));
            assertMarker(p, MarkerStatus.INVALID, "cannot be read");
        }));

        String s = "state file";
        l.add(test(s, "rebooter.state truncated mid-line", "STATE_CORRUPT naming file and line, copy kept, no reboot (autoRecover=true)",
                () -> badState(() -> Files.writeString(stateDir.resolve(StateFile.NAME), "format=1\nintent.bootId=boot-x\nintent.rea"), "line 3")));
        l.add(test(s, "rebooter.state of random binary bytes", "STATE_CORRUPT 'not UTF-8 text', no reboot", () -> badState(() -> {
            byte[] b = new byte[2048];
            new java.util.Random(5).nextBytes(b);
            Files.write(stateDir.resolve(StateFile.NAME), b);
        }, "not UTF-8 text")));
        l.add(test(s, "rebooter.state empty (0 bytes)", "STATE_CORRUPT 'expected format=1', no reboot",
                () -> badState(() -> Files.write(stateDir.resolve(StateFile.NAME), new byte[0]), "expected format=1")));
        l.add(test(s, "rebooter.state is a directory", "STATE_CORRUPT 'cannot read state file', no reboot",
                () -> badState(() -> Files.createDirectories(stateDir.resolve(StateFile.NAME)), "cannot read state file")));
        l.add(test(s, "rebooter.state with an unknown reason in intent", "STATE_CORRUPT naming the key and value, no reboot",
                () -> badState(() -> Files.writeString(stateDir.resolve(StateFile.NAME), "format=1\nintent.bootId=b\nintent.reason=fun\n"
                        + "intent.at=2026-12-01T10:00:00Z\nintent.via=approval\n"), "intent.reason must be recovery or upgrade, got 'fun'")));
        l.add(test(s, "rebooter.state with 3 recovery reboots dated in the future (2099)",
                "counted in the window: recovery blocked (a person is needed), no reboot", () -> {
                    boot(true);
                    StringBuilder sb = new StringBuilder("format=1\n");
                    for (int i = 0; i < 3; i++) {
                        sb.append("history.").append(i).append("=2099-01-01T00:00:0").append(i)
                                .append("Z;recovery;boot-old;autoRecover=true;completed;\n");
                    }
                    Files.writeString(stateDir.resolve(StateFile.NAME), sb.toString());
                    rt.rebooter.reconfigure(RebootEngine.Settings.builder().stateDir(stateDir).flushTimeoutMillis(300)
                            .build());
                    wedge();
                    rounds();
                    assertEquals("RECOVERY_BLOCKED", rt.rebooter.getDecision(), rt.rebooter.getDecisionReason());
                }));
        l.add(test(s, "rebooter.state with a consumed approval of another boot id", "a past step of another boot: no reboot without a new approval", () -> {
            boot(false);
            Files.writeString(stateDir.resolve(StateFile.NAME), "format=1\nconsumed.bootId=boot-elsewhere\nconsumed.reason=recovery\n"
                    + "consumed.at=2026-12-01T09:00:00Z\nconsumed.via=approval\n");
            rt.rebooter.reconfigure(RebootEngine.Settings.builder().stateDir(stateDir).flushTimeoutMillis(300).build());
            wedge();
            rounds();
            assertEquals("WAITING_FOR_APPROVAL", rt.rebooter.getDecision(), rt.rebooter.getDecisionReason());
        }));
        l.add(test(s, "rebooter.state of 300 KiB", "STATE_CORRUPT 'larger than', no reboot",
                () -> badState(() -> Files.writeString(stateDir.resolve(StateFile.NAME), "format=1\n# " + "x".repeat(300 * 1024)), "larger than")));
        String only = System.getProperty("npu.case", "");
        return l.stream().filter(t -> t.getDisplayName().contains(only)).map(t -> DynamicTest.dynamicTest(t.getDisplayName(), () -> {
            try {
                t.getExecutable().execute();
            } finally {
                if (rt != null) {
                    rt.close();
                    rt = null;
                }
            }
        }));
    }
}
