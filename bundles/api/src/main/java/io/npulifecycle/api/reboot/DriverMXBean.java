package io.npulifecycle.api.reboot;

/** The driver bundle, object name {@code io.npulifecycle:type=Driver}. */
public interface DriverMXBean {
    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=Driver";

    /** @return the version this pod carries ({@code DRIVER_VERSION}) */
    String getPodVersion();

    /** @return the version loaded in the running kernel (health-watch), or {@code null} */
    String getLoadedVersion();

    /** @return whether {@code /proc/modules} shows an NPU module */
    boolean isModulesLoaded();

    /** @return NO_DRIVER_VERSION, LOADING, LOAD_FAILED, WAITING_FOR_VERSION, STAGED, VALIDATING, VALIDATED, VALIDATION_FAILED, ERROR */
    String getState();

    /** @return why */
    String getStateReason();

    /** @return the staged version and the boot it was staged in, or {@code null} */
    String getStaged();

    /** @return the loader, or why there is none */
    String getLoader();

    /**
     * Runs one round now (load from a fresh boot / stage / validate). Never unloads. Logged.
     *
     * @return the state and why
     */
    String evaluateNow();
}
