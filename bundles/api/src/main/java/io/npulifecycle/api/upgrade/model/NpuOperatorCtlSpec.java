package io.npulifecycle.api.upgrade.model;

/** {@code spec} of an NPUOperatorCtl. */
public class NpuOperatorCtlSpec {
    private DriverSpec driver;

    /** @return {@code spec.driver} */
    public DriverSpec getDriver() {
        return driver;
    }

    /** @param driver {@code spec.driver} */
    public void setDriver(DriverSpec driver) {
        this.driver = driver;
    }
}
