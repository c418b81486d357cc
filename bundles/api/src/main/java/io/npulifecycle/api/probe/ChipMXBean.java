package io.npulifecycle.api.probe;

/** One expected chip, object name {@code io.npulifecycle:type=Chip,npu=N,chip=M}. */
public interface ChipMXBean {

    /** @return NPU id */
    int getNpu();

    /** @return chip id */
    int getChip();

    /** @return the last raw health ({@code OK}, {@code Warning}, ...) or {@code null} when it did not answer */
    String getHealth();

    /** @return the last classification label, or {@code null} before the first probe */
    String getClassification();

    /** @return consecutive failures (strikes) */
    int getConsecutiveFailures();

    /** @return whether the chip is wedged */
    boolean isWedged();

    /** @return the last error, or {@code null} */
    String getLastError();

    /** @return ISO-8601 time the chip last answered (healthy or degraded), or {@code null} */
    String getLastSeen();
}
