package io.npulifecycle.upgrade.internal.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;

/**
 * The controller side of {@link RolloutScaleBenchmark}, in a JVM of its own so that its CPU time and heap are the
 * controller's alone (the API server and the emulated node agents run in the benchmark's JVM).
 *
 * <p>Arguments: the API server URL. Runs one {@link UpgradeController} (leader, registry preflight off, real-time
 * clock, default debounce 200 ms, resync 10 s, status interval 2 s) with User-Agent {@code npu-controller}. Every
 * {@value #SAMPLE_MS} ms it runs {@code System.gc()} and records the used heap (the live set: informer caches and
 * whatever the controller holds). Line protocol on stdin/stdout: prints {@code READY <stat>} once the informers
 * synced; answers {@code STAT} with {@code STAT <stat>}; {@code STOP} prints the last {@code STAT} and exits.
 * {@code <stat>} = {@code cpuNs=<process CPU ns> gcForcedNs=<time in the forced collections, ns> heapNow=<bytes>
 * heapMax=<bytes> reconciles=<n> writes=<map>}.
 */
public final class BenchController {

    static final int SAMPLE_MS = 2000;
    private static long heapMax;
    private static long heapLast;
    private static long gcForcedNs;

    private BenchController() {
    }

    public static void main(String[] args) throws Exception {
        Config c = new ConfigBuilder(Config.empty()).withMasterUrl(args[0]).withTrustCerts(true).withNamespace(NodeAgentEmulator.NS)
                .withUserAgent("npu-controller").withRequestRetryBackoffLimit(3).build();
        KubernetesClient k = new KubernetesClientBuilder().withConfig(c).withHttpClientFactory(new JdkHttpClientFactory()).build();
        ScaledTestClock time = new ScaledTestClock(1);
        UpgradeController uc = new UpgradeController(k, time, LeaderAndScaleTest.cfg(false, false, "bench"), null);
        uc.start();
        uc.setLeader(true);
        Waits.until("informers synced", Duration.ofMinutes(5), uc::hasSynced);
        sample();
        Thread sampler = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(SAMPLE_MS);
                } catch (InterruptedException e) {
                    return;
                }
                sample();
            }
        }, "bench-heap-sampler");
        sampler.setDaemon(true);
        sampler.start();
        System.out.println("READY " + stat(uc));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            if (line.equals("STAT")) {
                System.out.println("STAT " + stat(uc));
            } else if (line.equals("STOP")) {
                sample();
                System.out.println("STAT " + stat(uc));
                System.out.flush();
                break;
            }
        }
        System.exit(0); // shutdown hooks only (a JFR recording is written); the benchmark JVM owns the cluster
    }

    /**
     * Forced full collection, then the used heap. The collection's CPU time is the benchmark's, not the
     * controller's: with the serial collector it runs on the JVM's "VM Thread", whose CPU time (ns,
     * {@code /proc/self/task/<tid>/schedstat}) is read around it.
     */
    private static synchronized void sample() {
        long vm0 = vmThreadCpuNs();
        System.gc();
        gcForcedNs += Math.max(0, vmThreadCpuNs() - vm0);
        heapLast = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        heapMax = Math.max(heapMax, heapLast);
    }

    private static Path vmThread;

    private static long vmThreadCpuNs() {
        try {
            if (vmThread == null) {
                try (var tasks = Files.list(Paths.get("/proc/self/task"))) {
                    for (Path t : (Iterable<Path>) tasks::iterator) {
                        if (Files.readString(t.resolve("comm")).trim().equals("VM Thread")) {
                            vmThread = t.resolve("schedstat");
                        }
                    }
                }
            }
            return vmThread == null ? 0 : Long.parseLong(Files.readString(vmThread).trim().split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return 0; // not Linux: the forced collections stay in the CPU figure
        }
    }

    private static long gcMillis() {
        long ms = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) {
            ms += Math.max(0, g.getCollectionTime());
        }
        return ms;
    }

    private static synchronized String stat(UpgradeController uc) {
        long cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        return "cpuNs=" + cpu + " gcForcedNs=" + gcForcedNs + " heapNow=" + heapLast + " heapMax=" + heapMax + " reconciles="
                + uc.writeCounts().get("reconciles") + " writes=" + uc.writeCounts().toString().replace(' ', '_');
    }
}
