package io.npulifecycle.upgrade.internal;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;
import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;
import io.npulifecycle.upgrade.internal.cluster.UpgradeController;

/**
 * {@code io.npulifecycle:type=UpgradeOrchestrator}: the view of the component's controller as its last reconcile left
 * it, and the pause and resume of the rollout. The controller is asked at every call: the component replaces it on a
 * new configuration, and while there is none every attribute reads empty.
 */
public final class UpgradeOrchestratorMBean implements UpgradeOrchestratorMXBean {

    private static final System.Logger LOG = System.getLogger(UpgradeOrchestratorMBean.class.getName());

    private final Supplier<UpgradeController> controller;
    private final Supplier<ControllerConfig> config;
    private final Supplier<String> identity;

    /**
     * @param controller the running controller, or null while none runs
     * @param config the configuration in force (the CR's namespace and name for the operations' log lines)
     * @param identity this replica's Lease holder identity
     */
    public UpgradeOrchestratorMBean(Supplier<UpgradeController> controller, Supplier<ControllerConfig> config,
            Supplier<String> identity) {
        this.controller = controller;
        this.config = config;
        this.identity = identity;
    }

    private UpgradeController.Snapshot snap() {
        UpgradeController uc = controller.get();
        return uc == null ? UpgradeController.Snapshot.EMPTY : uc.snapshot();
    }

    @Override
    public String getTargetVersion() {
        return snap().target();
    }

    @Override
    public Map<String, Integer> getCountsPerState() {
        return snap().counts();
    }

    @Override
    public Map<String, String> getNodeStates() {
        return snap().nodeStates();
    }

    @Override
    public List<String> getAwaitingApproval() {
        return snap().awaitingApproval();
    }

    @Override
    public List<String> getSlotHolders() {
        return snap().slotHolders();
    }

    @Override
    public List<String> getDrainingNodes() {
        return snap().draining();
    }

    @Override
    public List<String> getBlockedNodes() {
        return snap().blocked();
    }

    @Override
    public List<String> getWaitingForWindow() {
        return snap().waitingForWindow();
    }

    @Override
    public List<String> getRecoveringNodes() {
        return snap().recovering();
    }

    @Override
    public List<String> getFailedNodes() {
        return snap().failed();
    }

    @Override
    public List<String> getConditions() {
        return snap().conditions();
    }

    @Override
    public boolean isLeader() {
        UpgradeController uc = controller.get();
        return uc != null && uc.isLeader();
    }

    @Override
    public String getIdentity() {
        return identity.get();
    }

    @Override
    public boolean isPaused() {
        return snap().paused();
    }

    @Override
    public Map<String, Long> getWriteCounts() {
        UpgradeController uc = controller.get();
        return uc == null ? Map.of() : uc.writeCounts();
    }

    @Override
    public boolean pause() {
        LOG.log(Level.INFO, "operation pause(): pausing the driver rollout of " + resource());
        controller.get().setPaused(true);
        return isPaused();
    }

    @Override
    public boolean resume() {
        LOG.log(Level.INFO, "operation resume(): resuming the driver rollout of " + resource());
        controller.get().setPaused(false);
        return isPaused();
    }

    private String resource() {
        ControllerConfig c = config.get();
        return c.namespace() + "/" + c.resourceName();
    }
}
