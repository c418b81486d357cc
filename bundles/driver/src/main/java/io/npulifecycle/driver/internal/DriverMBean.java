package io.npulifecycle.driver.internal;

import io.npulifecycle.api.reboot.DriverMXBean;

/**
 * {@value DriverMXBean#OBJECT_NAME}: the driver's MBean, an adapter that answers every attribute and operation from
 * its {@link DriverEngine} at the time of the call (nothing is cached here). Registered by {@link DriverComponent} as
 * a {@code DynamicMBean} service with {@code jmx.objectname} set
 * ({@link io.npulifecycle.api.management.MBeanRegistrations}); the attribute and operation names are those of
 * {@link DriverMXBean}, which Jolokia clients, Hawtio and the metrics bundle read.
 */
public final class DriverMBean implements DriverMXBean {
    private final DriverEngine engine;

    /** @param engine the engine whose state is shown and whose operations are called */
    public DriverMBean(DriverEngine engine) {
        this.engine = java.util.Objects.requireNonNull(engine, "engine");
    }

    @Override
    public String getPodVersion() {
        return engine.getPodVersion();
    }

    @Override
    public String getLoadedVersion() {
        return engine.getLoadedVersion();
    }

    @Override
    public boolean isModulesLoaded() {
        return engine.isModulesLoaded();
    }

    @Override
    public String getState() {
        return engine.getState();
    }

    @Override
    public String getStateReason() {
        return engine.getStateReason();
    }

    @Override
    public String getStaged() {
        return engine.getStaged();
    }

    @Override
    public String getLoader() {
        return engine.getLoader();
    }

    @Override
    public String evaluateNow() {
        return engine.evaluateNow();
    }
}
