package io.npulifecycle.probe.internal;

import java.time.Instant;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.probe.Classification;

/** Mutable per-chip state of the health-watch; guarded by the engine's lock, read by its MBean {@link ChipMBean}. */
public final class ChipState {
    final ChipId id;
    volatile String health;
    volatile Classification classification;
    volatile int consecutiveFailures;
    volatile boolean wedged;
    volatile String lastError;
    volatile Instant lastSeen;

    ChipState(ChipId id) {
        this.id = id;
    }

    /** @return the chip */
    public ChipId id() {
        return id;
    }

    /** @return what the MBean attribute {@link ChipMXBean#getNpu()} shows */
    public int getNpu() {
        return id.npu();
    }

    /** @return what the MBean attribute {@link ChipMXBean#getChip()} shows */
    public int getChip() {
        return id.chip();
    }

    /** @return what the MBean attribute {@link ChipMXBean#getHealth()} shows */
    public String getHealth() {
        return health;
    }

    /** @return what the MBean attribute {@link ChipMXBean#getClassification()} shows */
    public String getClassification() {
        Classification c = classification;
        return c == null ? null : c.label();
    }

    /** @return what the MBean attribute {@link ChipMXBean#getConsecutiveFailures()} shows */
    public int getConsecutiveFailures() {
        return consecutiveFailures;
    }

    /** @return what the MBean attribute {@link ChipMXBean#isWedged()} shows */
    public boolean isWedged() {
        return wedged;
    }

    /** @return what the MBean attribute {@link ChipMXBean#getLastError()} shows */
    public String getLastError() {
        return lastError;
    }

    /** @return what the MBean attribute {@link ChipMXBean#getLastSeen()} shows */
    public String getLastSeen() {
        Instant t = lastSeen;
        return t == null ? null : t.toString();
    }
}
