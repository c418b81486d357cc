package io.npulifecycle.api.upgrade.model;

/** {@code spec.driver}: the desired driver and how to roll it out. */
public class DriverSpec {
    private String version;
    private String registry;
    private UpgradePolicy upgradePolicy;
    private RecoveryPolicy recoveryPolicy;

    /** @return desired driver version, e.g. {@code 25.5.0} */
    public String getVersion() {
        return version;
    }

    public void setVersion(String version) {
        this.version = version;
    }

    /** @return registry (host[:port][/path]) holding {@code mlops/ascend-driver} images */
    public String getRegistry() {
        return registry;
    }

    public void setRegistry(String registry) {
        this.registry = registry;
    }

    public UpgradePolicy getUpgradePolicy() {
        return upgradePolicy;
    }

    public void setUpgradePolicy(UpgradePolicy upgradePolicy) {
        this.upgradePolicy = upgradePolicy;
    }

    public RecoveryPolicy getRecoveryPolicy() {
        return recoveryPolicy;
    }

    public void setRecoveryPolicy(RecoveryPolicy recoveryPolicy) {
        this.recoveryPolicy = recoveryPolicy;
    }
}
