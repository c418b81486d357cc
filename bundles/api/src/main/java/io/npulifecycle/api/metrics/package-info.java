/**
 * Facts a bundle keeps for the metrics bundle ({@code io.npulifecycle.metrics}, {@code /metrics}): counters and
 * duration histograms that must outlive a hot update of the metrics bundle, so the bundle that owns the fact counts
 * it ({@link Counts}, {@link Durations}) and offers them as a {@link MetricSource} service; the metrics bundle reads
 * every source at each scrape. The metric names are the contract of {@code docs/metrics.md}.
 */
@Export
@Version("1.0.0")
package io.npulifecycle.api.metrics;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
