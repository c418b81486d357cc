package io.npulifecycle.driver.internal;

/** What the driver bundle reads from the health-watch ({@code io.npulifecycle:type=HealthWatch}). */
public interface HealthView {
    /** @return last verdict {@code healthy|degraded|failed|probe-error}, or {@code null} before the first probe */
    String verdict();

    /** @return expected chips, {@code npu:chip} comma-separated, empty while unknown */
    String expectedChips();

    /** @return wedged chips, empty when none */
    String wedgedChips();

    /** @return the loaded driver version reported by the last probe (npu-smi / DCMI), or {@code null} */
    String driverVersion();
}
