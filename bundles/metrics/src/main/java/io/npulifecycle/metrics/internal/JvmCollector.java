package io.npulifecycle.metrics.internal;

import java.util.Set;

import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The JVM's metrics an operator watches a runtime with (listed in docs/metrics.md): memory by area and by pool, GC
 * time, threads and class loading from the Prometheus client's {@code instrumentation-jvm}, process CPU, resident
 * memory, start time and file descriptors from {@link ProcessCollector} (the client's names). The client's
 * collectors live in a registry of their own, scraped with {@link #NAMES} as the filter, so the ones left out are
 * never called: thread states and deadlock detection (three safepoint operations per scrape), memory-pool
 * init/committed/max and after-GC usage, buffer pools, JIT compilation time, runtime info.
 */
final class JvmCollector implements MultiCollector {

    /**
     * The names published, as the client names its collectors (a counter without {@code _total}, which the writers
     * add): {@code jvm_memory_used_bytes}, {@code jvm_memory_committed_bytes}, {@code jvm_memory_max_bytes}
     * ({@code area} heap/nonheap), {@code jvm_memory_pool_used_bytes} ({@code pool}), {@code jvm_gc_collection_seconds}
     * (summary, {@code gc}), {@code jvm_threads_current}, {@code jvm_threads_daemon}, {@code jvm_threads_peak},
     * {@code jvm_threads_started_total}, {@code jvm_classes_currently_loaded}, {@code jvm_classes_loaded_total},
     * {@code jvm_classes_unloaded_total}, {@code process_cpu_seconds_total}, {@code process_start_time_seconds},
     * {@code process_resident_memory_bytes}, {@code process_open_fds}, {@code process_max_fds}.
     */
    static final Set<String> NAMES = Set.of("jvm_memory_used_bytes", "jvm_memory_committed_bytes",
            "jvm_memory_max_bytes", "jvm_memory_pool_used_bytes", "jvm_gc_collection_seconds", "jvm_threads_current",
            "jvm_threads_daemon", "jvm_threads_peak", "jvm_threads_started", "jvm_classes_currently_loaded",
            "jvm_classes_loaded", "jvm_classes_unloaded", "process_cpu_seconds", "process_start_time_seconds",
            "process_resident_memory_bytes", "process_open_fds", "process_max_fds");

    private final PrometheusRegistry jvm = new PrometheusRegistry();

    /** Registers the client's JVM collectors (without {@code JvmMemoryPoolAllocationMetrics}, see below). */
    JvmCollector() {
        // JvmMemoryPoolAllocationMetrics is not registered: it adds GC notification listeners that are never
        // removed, which would keep an updated bundle's class loader alive
        JvmMemoryMetrics.builder().register(jvm);
        JvmGarbageCollectorMetrics.builder().register(jvm);
        JvmThreadsMetrics.builder().register(jvm);
        JvmClassLoadingMetrics.builder().register(jvm);
        jvm.register(new ProcessCollector());
    }

    @Override
    public MetricSnapshots collect() {
        return jvm.scrape(NAMES::contains);
    }
}
