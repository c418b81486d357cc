package io.npulifecycle.api.probe;

import io.npulifecycle.api.management.Description;

/** One expected chip, object name {@code io.npulifecycle:type=Chip,name=npuN-chipM}. */
@Description("One expected NPU chip as the health-watch sees it (io.npulifecycle:type=Chip,name=npu<N>-chip<M>): last "
        + "health, strikes, wedged.")
public interface ChipMXBean {

    /** @return NPU id */
    @Description("NPU id, as npu-smi numbers it.")
    int getNpu();

    /** @return chip id */
    @Description("Chip id on that NPU, as npu-smi numbers it.")
    int getChip();

    /** @return the last raw health ({@code OK}, {@code Warning}, ...) or {@code null} when it did not answer */
    @Description("The last raw health (OK, Warning, ...) or null when it did not answer.")
    String getHealth();

    /** @return the last classification label, or {@code null} before the first probe */
    @Description("The last classification label, or null before the first probe.")
    String getClassification();

    /** @return consecutive failures (strikes) */
    @Description("Consecutive failed probes of this chip (strikes, a count); FailureThreshold of them make it wedged.")
    int getConsecutiveFailures();

    /** @return whether the chip is wedged */
    @Description("Whether the chip is wedged.")
    boolean isWedged();

    /** @return the last error, or {@code null} */
    @Description("The last error, or null.")
    String getLastError();

    /** @return ISO-8601 time the chip last answered (healthy or degraded), or {@code null} */
    @Description("ISO-8601 time the chip last answered (healthy or degraded), or null.")
    String getLastSeen();
}
