package io.npulifecycle.probe.internal;

import io.npulifecycle.api.probe.HealthWatchMXBean;

/**
 * {@value HealthWatchMXBean#OBJECT_NAME}: the health-watch's MBean, an adapter that answers every attribute and
 * operation from its {@link HealthWatchEngine} at the time of the call (nothing is cached here). Registered by
 * {@link HealthWatchComponent} as a {@code DynamicMBean} service with {@code jmx.objectname} set
 * ({@link io.npulifecycle.api.management.MBeanRegistrations}); the attribute and operation names are those of
 * {@link HealthWatchMXBean}, which Jolokia clients, Hawtio, the driver bundle (its health view) and the metrics bundle
 * read.
 */
public final class HealthWatchMBean implements HealthWatchMXBean {
    private final HealthWatchEngine engine;

    /** @param engine the engine whose state is shown and whose operations are called */
    public HealthWatchMBean(HealthWatchEngine engine) {
        this.engine = java.util.Objects.requireNonNull(engine, "engine");
    }

    @Override
    public long getIntervalSeconds() {
        return engine.getIntervalSeconds();
    }

    @Override
    public long getTimeoutSeconds() {
        return engine.getTimeoutSeconds();
    }

    @Override
    public int getFailureThreshold() {
        return engine.getFailureThreshold();
    }

    @Override
    public String getMethod() {
        return engine.getMethod();
    }

    @Override
    public String getExpectedChips() {
        return engine.getExpectedChips();
    }

    @Override
    public String getWedgedChips() {
        return engine.getWedgedChips();
    }

    @Override
    public String getLastProbeTime() {
        return engine.getLastProbeTime();
    }

    @Override
    public long getLastProbeDurationMs() {
        return engine.getLastProbeDurationMs();
    }

    @Override
    public String getLastVerdict() {
        return engine.getLastVerdict();
    }

    @Override
    public String getLastError() {
        return engine.getLastError();
    }

    @Override
    public String getDriverVersion() {
        return engine.getDriverVersion();
    }

    @Override
    public long getProbeErrorCount() {
        return engine.getProbeErrorCount();
    }

    @Override
    public int getProbeErrorsInRow() {
        return engine.getProbeErrorsInRow();
    }

    @Override
    public boolean isProbeDegraded() {
        return engine.isProbeDegraded();
    }

    @Override
    public String getLastRawOutput() {
        return engine.getLastRawOutput();
    }

    @Override
    public String probeNow() {
        return engine.probeNow();
    }
}
