package io.npulifecycle.upgrade.internal;

import static io.npulifecycle.upgrade.testing.MockCluster.await;
import static io.npulifecycle.upgrade.testing.MockCluster.driver;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.npulifecycle.upgrade.testing.MockCluster;

/**
 * The 1,000-node figures of docs/benchmarks.md (not in the default test run):
 * {@code mvn -B -o -pl bundles/upgrade -Prollout-bench verify -Dbench.nodes=1000}. Prints API requests per node
 * upgrade (controller reads and writes, counted at the mock API server by User-Agent), the reconcile thread's CPU
 * time and the heap retained by the controller (used heap after GC with and without the controller's caches).
 */
class RolloutScaleBenchmark {

    @Test
    void rollout() {
        int nodes = Integer.getInteger("bench.nodes", 1000);
        try (MockCluster c = new MockCluster(Double.parseDouble(System.getProperty("bench.scale", "20")))) {
            c.addNodes(nodes, "24.1.0");
            c.emulator.start();
            long heap0 = usedAfterGc();
            ControllerConfig d = LeaderAndScaleTest.cfg(false, false, "bench");
            UpgradeController uc = c.own(new UpgradeController(c.client("npu-controller"), c.time, d, null));
            long t0 = System.nanoTime();
            uc.start();
            uc.setLeader(true);
            // no deadlines: the figures are about requests, CPU and heap, not about a host too slow for a compressed clock
            c.createCr(driver("25.5.0", true, 0, "25%", java.util.Map.of("podRestartSeconds", 0, "rebootRequiredSeconds", 0,
                    "rebootingSeconds", 0, "validationSeconds", 0)));
            await(nodes + " nodes upgraded", Duration.ofMinutes(20), () -> c.allDone("25.5.0") && c.condition("Complete").startsWith("True"));
            long wall = (System.nanoTime() - t0) / 1_000_000;
            long heap1 = usedAfterGc();
            ThreadMXBean tm = ManagementFactory.getThreadMXBean();
            long cpu = 0;
            for (ThreadInfo ti : tm.getThreadInfo(tm.getAllThreadIds())) {
                if (ti != null && ti.getThreadName().startsWith("npu-upgrade-")) {
                    cpu += tm.getThreadCpuTime(ti.getThreadId());
                }
            }
            long[] rw = c.requestsOf("npu-controller");
            System.out.printf("BENCH nodes=%d wall=%dms controllerReads=%d (%.2f/node) controllerWrites=%d (%.2f/node) "
                    + "reconcileCpu=%dms heapRetained=%.1fMiB writes=%s requests=%s%n", nodes, wall, rw[0], rw[0] / (double) nodes,
                    rw[1], rw[1] / (double) nodes, cpu / 1_000_000, (heap1 - heap0) / 1048576.0, uc.writeCounts(), c.requests);
        }
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        var m = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return m.getUsed();
    }
}
