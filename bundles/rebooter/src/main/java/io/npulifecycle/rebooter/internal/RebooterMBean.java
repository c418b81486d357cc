package io.npulifecycle.rebooter.internal;

import java.util.List;

import io.npulifecycle.api.reboot.RebooterMXBean;

/**
 * {@value RebooterMXBean#OBJECT_NAME}: the rebooter's MBean, an adapter that answers every attribute and operation
 * from its {@link RebootEngine} at the time of the call (nothing is cached here). Registered by
 * {@link RebooterComponent} as a {@code DynamicMBean} service with {@code jmx.objectname} set
 * ({@link io.npulifecycle.api.management.MBeanRegistrations}); the attribute and operation names are those of
 * {@link RebooterMXBean}, which Jolokia clients, Hawtio and the metrics bundle read.
 */
public final class RebooterMBean implements RebooterMXBean {
    private final RebootEngine engine;

    /** @param engine the engine whose state is shown and whose operations are called */
    public RebooterMBean(RebootEngine engine) {
        this.engine = java.util.Objects.requireNonNull(engine, "engine");
    }

    @Override
    public String getDecision() {
        return engine.getDecision();
    }

    @Override
    public String getDecisionReason() {
        return engine.getDecisionReason();
    }

    @Override
    public String getPendingRequest() {
        return engine.getPendingRequest();
    }

    @Override
    public String getRecoveryGrant() {
        return engine.getRecoveryGrant();
    }

    @Override
    public String getLastReboot() {
        return engine.getLastReboot();
    }

    @Override
    public List<String> getHistory() {
        return engine.getHistory();
    }

    @Override
    public int getRecoveryRebootsInWindow() {
        return engine.getRecoveryRebootsInWindow();
    }

    @Override
    public int getMaxReboots() {
        return engine.getMaxReboots();
    }

    @Override
    public long getWindowSeconds() {
        return engine.getWindowSeconds();
    }

    @Override
    public boolean isDryRun() {
        return engine.isDryRun();
    }

    @Override
    public String getExecutor() {
        return engine.getExecutor();
    }

    @Override
    public String getStateFile() {
        return engine.getStateFile();
    }

    @Override
    public String getStateProblem() {
        return engine.getStateProblem();
    }

    @Override
    public String getConsumedApproval() {
        return engine.getConsumedApproval();
    }

    @Override
    public String getLastError() {
        return engine.getLastError();
    }

    @Override
    public String evaluateNow() {
        return engine.evaluateNow();
    }

    @Override
    public String resetState() {
        return engine.resetState();
    }
}
