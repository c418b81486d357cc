package io.npulifecycle.api.reboot;

import io.npulifecycle.api.management.Description;

/** The driver bundle, object name {@code io.npulifecycle:type=Driver}. */
@Description("The driver loader (io.npulifecycle:type=Driver): load, stage and validate the NPU driver of this pod's "
        + "version.")
public interface DriverMXBean {
    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=Driver";

    /** @return the version this pod carries ({@code DRIVER_VERSION}) */
    @Description("The version this pod carries (DRIVER_VERSION).")
    String getPodVersion();

    /** @return the version loaded in the running kernel (health-watch), or {@code null} */
    @Description("The version loaded in the running kernel (health-watch), or null.")
    String getLoadedVersion();

    /** @return whether {@code /proc/modules} shows an NPU module */
    @Description("Whether /proc/modules shows an NPU module.")
    boolean isModulesLoaded();

    /** @return NO_DRIVER_VERSION, LOADING, LOAD_FAILED, WAITING_FOR_VERSION, STAGED, VALIDATING, VALIDATED, VALIDATION_FAILED, ERROR */
    @Description("The driver loader's state: NO_DRIVER_VERSION, LOADING, LOAD_FAILED, WAITING_FOR_VERSION, STAGED, "
            + "VALIDATING, VALIDATED, VALIDATION_FAILED, ERROR.")
    String getState();

    /** @return why */
    @Description("Why the driver is in its State, in words.")
    String getStateReason();

    /** @return the staged version and the boot it was staged in, or {@code null} */
    @Description("The staged version and the boot it was staged in, or null.")
    String getStaged();

    /** @return the loader, or why there is none */
    @Description("The loader, or why there is none.")
    String getLoader();

    /**
     * Runs one round now (load from a fresh boot / stage / validate). Never unloads. Logged.
     *
     * @return the state and why
     */
    @Description("Runs one round now (load from a fresh boot / stage / validate). Never unloads. Logged. Returns the state "
            + "and why.")
    String evaluateNow();
}
