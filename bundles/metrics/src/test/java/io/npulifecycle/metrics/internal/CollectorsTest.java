package io.npulifecycle.metrics.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.management.StandardMBean;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.metrics.Counts;
import io.npulifecycle.api.metrics.Durations;
import io.npulifecycle.api.metrics.MetricSource;
import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.reboot.RebooterMXBean;
import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The collectors against fake MBeans published as the bundles publish theirs (a {@link StandardMBean} per MXBean),
 * written by the client's own format writers.
 */
class CollectorsTest {

    private final MBeans server = new MBeans();
    private final List<MetricSource> sources = new ArrayList<>();

    private <T> StandardMBean register(Class<T> type, T impl, String name) throws Exception {
        StandardMBean m = new StandardMBean(impl, type, true);
        server.add(name, m);
        return m;
    }

    private String text(String role) throws IOException {
        PrometheusRegistry r = RuntimeRegistry.of(role, server, () -> sources, false);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, r.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void chipHealthHasOneSeriesPerStateAndTheWedgedOneIsOne() throws Exception {
        register(ChipMXBean.class, new FakeChip(0, 0, "healthy", 0, false), "io.npulifecycle:type=Chip,npu=0,chip=0");
        register(ChipMXBean.class, new FakeChip(1, 0, "failed", 3, true), "io.npulifecycle:type=Chip,npu=1,chip=0");
        String t = text("node");
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"0\",state=\"healthy\"} 1.0"), t);
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"0\",state=\"wedged\"} 0.0"), t);
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"1\",state=\"wedged\"} 1.0"), t);
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"1\",state=\"failed\"} 0.0"), t);
        assertTrue(t.contains("npu_lifecycle_chip_consecutive_failures{chip=\"0\",npu=\"1\"} 3.0"), t);
        assertFalse(t.contains("npu_lifecycle_nodes{"), "no control-plane series in a node runtime: " + t);
    }

    @Test
    void rebooterDecisionGivesRecoveryBlockedAndApprovalWaiting() throws Exception {
        FakeRebooter r = new FakeRebooter();
        register(RebooterMXBean.class, r, RebooterMXBean.OBJECT_NAME);
        r.decision = "RECOVERY_BLOCKED";
        String t = text("node");
        assertTrue(t.contains("npu_lifecycle_recovery_blocked 1.0"), t);
        assertTrue(t.contains("npu_lifecycle_approval_waiting 0.0"), t);
        r.decision = "WAITING_FOR_APPROVAL";
        t = text("node");
        assertTrue(t.contains("npu_lifecycle_recovery_blocked 0.0"), t);
        assertTrue(t.contains("npu_lifecycle_approval_waiting 1.0"), t);
    }

    @Test
    void nodesPerStateListEveryStateAndCountNodesWithoutOneAsDone() throws Exception {
        Map<String, String> states = new TreeMap<>(Map.of("a", "drain-required", "b", "upgraded", "c", "pending",
                "d", "cordon-required", "e", "rebooting"));
        register(UpgradeOrchestratorMXBean.class, new FakeOrchestrator(states), UpgradeOrchestratorMXBean.OBJECT_NAME);
        String t = text("control-plane");
        for (String s : ControlPlaneCollector.STATES) {
            assertTrue(t.contains("npu_lifecycle_nodes{state=\"" + s + "\"}"), s + " missing: " + t);
        }
        assertTrue(t.contains("npu_lifecycle_nodes{state=\"done\"} 2.0"), t);
        assertTrue(t.contains("npu_lifecycle_nodes{state=\"rebooting\"} 1.0"), t);
        assertTrue(t.contains("npu_lifecycle_nodes{state=\"upgrade-failed\"} 0.0"), t);
        assertTrue(t.contains("npu_lifecycle_nodes_draining 2.0"), t);
        assertTrue(t.contains("npu_lifecycle_rollout_info{target=\"25.3.0\\\"x\"} 1"), "escaped by the client: " + t);
        assertTrue(t.contains("npu_lifecycle_leader 1.0"), t);
        assertTrue(t.contains("npu_lifecycle_rollout_paused 0.0"), t);
    }

    @Test
    void sourcesBecomeCountersAndHistogramsInBothFormats() throws Exception {
        Counts wedges = new Counts("npu_lifecycle_wedges_total", "wedges");
        wedges.increment();
        wedges.increment();
        Counts requests = new Counts("npu_lifecycle_kubernetes_requests_total", "requests", "verb", "code");
        requests.increment("GET", "200");
        Durations probe = new Durations("npu_lifecycle_probe_duration_seconds", "probe", List.of(0.01, 0.1));
        probe.observe(Duration.ofMillis(5));
        probe.observe(Duration.ofMillis(50));
        probe.observe(Duration.ofMillis(500));
        sources.add(() -> List.of(wedges.family(), requests.family(), probe.family()));
        String t = text("node");
        assertTrue(t.contains("# TYPE npu_lifecycle_wedges_total counter\n"), t);
        assertTrue(t.contains("npu_lifecycle_wedges_total 2.0"), t);
        assertTrue(t.contains("npu_lifecycle_kubernetes_requests_total{code=\"200\",verb=\"GET\"} 1.0"), t);
        assertTrue(t.contains("npu_lifecycle_probe_duration_seconds_bucket{le=\"0.01\"} 1"), t);
        assertTrue(t.contains("npu_lifecycle_probe_duration_seconds_bucket{le=\"0.1\"} 2"), t);
        assertTrue(t.contains("npu_lifecycle_probe_duration_seconds_bucket{le=\"+Inf\"} 3"), t);
        assertTrue(t.contains("npu_lifecycle_probe_duration_seconds_count 3"), t);

        PrometheusRegistry r = RuntimeRegistry.of("node", server, () -> sources, false);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OpenMetricsTextFormatWriter.create().write(out, r.scrape());
        String om = out.toString(StandardCharsets.UTF_8);
        assertTrue(om.contains("# TYPE npu_lifecycle_wedges counter\n") && om.contains("npu_lifecycle_wedges_total 2.0"), om);
        assertTrue(om.contains("# UNIT npu_lifecycle_probe_duration_seconds seconds"), om);
        assertTrue(om.endsWith("# EOF\n"), om);
    }

    @Test
    void aFailingSourceIsLeftOutAndTheScrapeGoesOn() throws Exception {
        sources.add(() -> {
            throw new IllegalStateException("boom");
        });
        Counts ok = new Counts("npu_lifecycle_suppressed_total", "suppressed");
        ok.touch();
        sources.add(() -> List.of(ok.family()));
        assertTrue(text("node").contains("npu_lifecycle_suppressed_total 0.0"));
    }

    @Test
    void aChipWhoseMBeanGoesAwayLosesItsSeriesAndAStaleRemovalKeepsTheNewOne() throws Exception {
        StandardMBean old = register(ChipMXBean.class, new FakeChip(0, 0, "healthy", 0, false),
                "io.npulifecycle:type=Chip,name=npu0-chip0");
        StandardMBean updated = register(ChipMXBean.class, new FakeChip(0, 0, "degraded", 1, false),
                "io.npulifecycle:type=Chip,name=npu0-chip0");
        server.remove("io.npulifecycle:type=Chip,name=npu0-chip0", old); // the old bundle's service goes after
        String t = text("node");
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"0\",state=\"degraded\"} 1.0"), t);
        server.remove("io.npulifecycle:type=Chip,name=npu0-chip0", updated);
        t = text("node");
        assertFalse(t.contains("npu_lifecycle_chip_health{"), t);
    }

    @Test
    void labelsFollowTheValuesFromOneScrapeToTheNext() throws Exception {
        FakeRebooter r = new FakeRebooter();
        register(RebooterMXBean.class, r, RebooterMXBean.OBJECT_NAME);
        Counts reboots = new Counts("npu_lifecycle_reboots_total", "reboots", "reason", "via");
        sources.add(() -> List.of(reboots.family()));
        PrometheusRegistry reg = RuntimeRegistry.of("node", server, () -> sources, false);
        for (int i = 0; i < 3; i++) {
            reboots.increment("wedge", "reboot-" + i);
            String t = write(reg);
            for (int j = 0; j <= i; j++) {
                assertTrue(t.contains("npu_lifecycle_reboots_total{reason=\"wedge\",via=\"reboot-" + j + "\"} 1.0"),
                        t);
            }
        }
    }

    @Test
    void theJvmMetricsAreTheDocumentedOnes() throws Exception {
        PrometheusRegistry r = RuntimeRegistry.of("node", server, () -> sources, true);
        String t = write(r);
        for (String name : List.of("jvm_memory_used_bytes{area=\"heap\"}", "jvm_memory_committed_bytes{area=\"nonheap\"}",
                "jvm_memory_max_bytes{area=\"heap\"}", "jvm_memory_pool_used_bytes{pool=", "jvm_gc_collection_seconds_count{gc=",
                "jvm_threads_current ", "jvm_threads_daemon ", "jvm_threads_peak ", "jvm_threads_started_total ",
                "jvm_classes_currently_loaded ", "jvm_classes_loaded_total ", "jvm_classes_unloaded_total ",
                "process_cpu_seconds_total ", "process_start_time_seconds ", "process_resident_memory_bytes ",
                "process_open_fds ", "process_max_fds ")) {
            assertTrue(t.contains("\n" + name), name + " missing: " + t);
        }
        for (String left : List.of("jvm_threads_state", "jvm_threads_deadlocked", "jvm_buffer_pool", "jvm_compilation",
                "jvm_runtime_info", "process_virtual_memory_bytes", "jvm_memory_pool_max_bytes",
                "jvm_memory_pool_collection")) {
            assertFalse(t.contains(left), left + " is not published: " + t);
        }
    }

    @Test
    void aChipThatChangesBetweenScrapesShowsItsNewStateInTheSameRegistry() throws Exception {
        MutableChip c = new MutableChip();
        register(ChipMXBean.class, c, "io.npulifecycle:type=Chip,name=npu3-chip0");
        PrometheusRegistry reg = RuntimeRegistry.of("node", server, () -> sources, false);
        assertFalse(write(reg).contains("npu_lifecycle_chip_health{"), "no series before the first probe");
        c.classification = "healthy";
        String t = write(reg);
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"3\",state=\"healthy\"} 1.0"), t);
        assertEquals(t, write(reg), "an unchanged chip scrapes the same");
        c.failures = 3;
        c.wedged = true;
        t = write(reg);
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"3\",state=\"wedged\"} 1.0"), t);
        assertTrue(t.contains("npu_lifecycle_chip_health{chip=\"0\",npu=\"3\",state=\"healthy\"} 0.0"), t);
        assertTrue(t.contains("npu_lifecycle_chip_consecutive_failures{chip=\"0\",npu=\"3\"} 3.0"), t);
    }

    @Test
    void theProcessMetricsKeepTheClientsNamesAndUnits() throws Exception {
        PrometheusRegistry r = RuntimeRegistry.of("node", server, () -> sources, true);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OpenMetricsTextFormatWriter.create().write(out, r.scrape());
        String om = out.toString(StandardCharsets.UTF_8);
        assertTrue(om.contains("# TYPE process_cpu_seconds counter\n# UNIT process_cpu_seconds seconds\n"
                + "# HELP process_cpu_seconds Total user and system CPU time spent in seconds.\n"
                + "process_cpu_seconds_total "), om);
        assertTrue(om.contains("# UNIT process_resident_memory_bytes bytes\n"), om);
        assertTrue(om.contains("# UNIT process_start_time_seconds seconds\n"), om);
        long rss = ProcessCollector.residentBytes();
        assertTrue(rss > 1 << 20, "VmRSS of this JVM: " + rss);
    }

    @Test
    void theOpenDescriptorsAreTheCountTheJdkListsOrAbsentWithoutTheFolder() {
        long bySize = ProcessCollector.openFdsBySize(java.nio.file.Path.of("/proc/self/fd"));
        org.junit.jupiter.api.Assumptions.assumeTrue(bySize > 0, "Linux 6.2 or later gives the count as the size");
        long listed = ((com.sun.management.UnixOperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getOpenFileDescriptorCount();
        assertTrue(Math.abs(listed - bySize) <= 2, "size " + bySize + ", listed " + listed);
        assertEquals(-1, ProcessCollector.openFdsBySize(java.nio.file.Path.of("/proc/self/no-such-folder")));
    }

    @Test
    void vmRssIsReadInKibibytesAndAbsentWithoutTheLine() {
        assertEquals(123_456L * 1024, ProcessCollector.vmRssBytes("Name:\tjava\nVmHWM:\t  999 kB\nVmRSS:\t  123456 kB\n"));
        assertEquals(-1, ProcessCollector.vmRssBytes("Name:\tjava\n"));
        assertEquals(-1, ProcessCollector.vmRssBytes("Name:\tjava\nVmRSS:\t kB\n"));
    }

    private static String write(PrometheusRegistry r) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, r.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    // ---- fakes ----

    /** A chip MBean with fixed values. */
    public static final class FakeChip implements ChipMXBean {
        private final int npu;
        private final int chip;
        private final String classification;
        private final int failures;
        private final boolean wedged;

        FakeChip(int npu, int chip, String classification, int failures, boolean wedged) {
            this.npu = npu;
            this.chip = chip;
            this.classification = classification;
            this.failures = failures;
            this.wedged = wedged;
        }

        @Override public int getNpu() { return npu; }
        @Override public int getChip() { return chip; }
        @Override public String getHealth() { return "OK"; }
        @Override public String getClassification() { return classification; }
        @Override public int getConsecutiveFailures() { return failures; }
        @Override public boolean isWedged() { return wedged; }
        @Override public String getLastError() { return null; }
        @Override public String getLastSeen() { return null; }
    }

    /** A chip MBean whose state the test sets. */
    public static final class MutableChip implements ChipMXBean {
        volatile String classification;
        volatile int failures;
        volatile boolean wedged;

        @Override public int getNpu() { return 3; }
        @Override public int getChip() { return 0; }
        @Override public String getHealth() { return "OK"; }
        @Override public String getClassification() { return classification; }
        @Override public int getConsecutiveFailures() { return failures; }
        @Override public boolean isWedged() { return wedged; }
        @Override public String getLastError() { return null; }
        @Override public String getLastSeen() { return null; }
    }

    /** A rebooter MBean whose decision the test sets. */
    public static final class FakeRebooter implements RebooterMXBean {
        volatile String decision = "NONE";

        @Override public String getDecision() { return decision; }
        @Override public String getDecisionReason() { return ""; }
        @Override public String getPendingRequest() { return null; }
        @Override public String getLastReboot() { return null; }
        @Override public List<String> getHistory() { return List.of(); }
        @Override public int getRecoveryRebootsInWindow() { return 0; }
        @Override public int getMaxReboots() { return 3; }
        @Override public long getWindowSeconds() { return 86400; }
        @Override public boolean isDryRun() { return false; }
        @Override public String getExecutor() { return "dry"; }
        @Override public String getStateFile() { return ""; }
        @Override public String getStateProblem() { return null; }
        @Override public String getConsumedApproval() { return null; }
        @Override public String getLastError() { return null; }
        @Override public String evaluateNow() { return ""; }
        @Override public String resetState() { return ""; }
    }

    /** An orchestrator MBean with fixed node states. */
    public static final class FakeOrchestrator implements UpgradeOrchestratorMXBean {
        private final Map<String, String> states;

        FakeOrchestrator(Map<String, String> states) {
            this.states = states;
        }

        @Override public String getTargetVersion() { return "25.3.0\"x"; }
        @Override public Map<String, Integer> getCountsPerState() { return Map.of(); }
        @Override public Map<String, String> getNodeStates() { return states; }
        @Override public List<String> getAwaitingApproval() { return List.of(); }
        @Override public List<String> getSlotHolders() { return List.of(); }
        @Override public List<String> getFailedNodes() { return List.of(); }
        @Override public List<String> getConditions() { return List.of(); }
        @Override public boolean isLeader() { return true; }
        @Override public String getIdentity() { return "cp-0"; }
        @Override public boolean isPaused() { return false; }
        @Override public Map<String, Long> getWriteCounts() { return Map.of(); }
        @Override public boolean pause() { return false; }
        @Override public boolean resume() { return false; }
    }

    static Collection<MetricSource> none() {
        return List.of();
    }
}
