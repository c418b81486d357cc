package io.npulifecycle.driver.testing;

import io.npulifecycle.driver.internal.HealthView;

/**
 * A health-watch view the test sets by hand: healthy chips {@code 0:0,1:0}, none wedged, driver {@code 25.5.0} until
 * a field is changed. For the driver's and the other modules' tests (the driver's test jar).
 */
public final class FakeHealthView implements HealthView {
    /** {@code healthy|degraded|failed|probe-error}, or {@code null} before the first probe. */
    public volatile String verdict = "healthy";
    /** Expected chips, {@code npu:chip} comma-separated, empty while unknown. */
    public volatile String expected = "0:0,1:0";
    /** Wedged chips, empty when none. */
    public volatile String wedged = "";
    /** The loaded driver version, or {@code null} while unknown. */
    public volatile String version = "25.5.0";

    @Override
    public String verdict() {
        return verdict;
    }

    @Override
    public String expectedChips() {
        return expected;
    }

    @Override
    public String wedgedChips() {
        return wedged;
    }

    @Override
    public String driverVersion() {
        return version;
    }
}
