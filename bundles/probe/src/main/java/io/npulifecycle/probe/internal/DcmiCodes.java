package io.npulifecycle.probe.internal;

import io.npulifecycle.api.probe.Classification;

/**
 * DCMI return codes (base -8000) and how they count, from the fixtures README: only codes that mean "the driver
 * refuses to enumerate or answer for the chip" are strikes.
 */
public final class DcmiCodes {
    /** Internal error: the driver refuses to answer (strike). */
    public static final int INTERNAL_ERROR = -8005;
    /** Timeout: a strike when {@code timeoutIsFailure}. */
    public static final int TIMEOUT = -8006;
    /** Device does not exist: the driver refuses to enumerate (strike). */
    public static final int DEVICE_NOT_EXIST = -8008;
    /** Not ready, retry: probe error. */
    public static final int NOT_READY = -8012;
    /** Not supported in a container: probe error. */
    public static final int NOT_SUPPORT_IN_CONTAINER = -8013;
    /** Upgrade in progress: probe error. */
    public static final int UPGRADING = -8017;
    /** Resource occupied (device held by another process or container): probe error. */
    public static final int RESOURCE_OCCUPIED = -8020;
    /** A transient error of the driver, gone at a later call: probe error, never a strike. */
    public static final int MINUS_9005 = -9005;

    private DcmiCodes() {
    }

    /**
     * @param code a non-zero DCMI return code
     * @param options classification switches
     * @return {@link Classification#FAILED} or {@link Classification#PROBE_ERROR}; unknown codes are probe errors
     */
    public static Classification classify(int code, ProbeOptions options) {
        switch (code) {
            case INTERNAL_ERROR:
            case DEVICE_NOT_EXIST:
                return Classification.FAILED;
            case TIMEOUT:
                return options.timeoutIsFailure() ? Classification.FAILED : Classification.PROBE_ERROR;
            default:
                return Classification.PROBE_ERROR;
        }
    }

    /**
     * @param code a DCMI return code
     * @return e.g. {@code "DCMI -8020 (resource occupied)"}
     */
    public static String describe(int code) {
        String what;
        switch (code) {
            case INTERNAL_ERROR: what = "internal error"; break;
            case TIMEOUT: what = "timeout"; break;
            case DEVICE_NOT_EXIST: what = "device does not exist"; break;
            case NOT_READY: what = "not ready"; break;
            case NOT_SUPPORT_IN_CONTAINER: what = "not supported in a container"; break;
            case UPGRADING: what = "upgrade in progress"; break;
            case RESOURCE_OCCUPIED: what = "resource occupied"; break;
            case MINUS_9005: what = "transient error"; break;
            default: what = "unknown code"; break;
        }
        return "DCMI " + code + " (" + what + ")";
    }
}
