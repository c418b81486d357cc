package io.npulifecycle.probe.internal;

import java.time.Instant;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.probe.Classification;

/** Mutable per-chip state of the health-watch; guarded by the engine's lock, read by the Chip MBean. */
public final class ChipState implements ChipMXBean {
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

    @Override
    public int getNpu() {
        return id.npu();
    }

    @Override
    public int getChip() {
        return id.chip();
    }

    @Override
    public String getHealth() {
        return health;
    }

    @Override
    public String getClassification() {
        Classification c = classification;
        return c == null ? null : c.label();
    }

    @Override
    public int getConsecutiveFailures() {
        return consecutiveFailures;
    }

    @Override
    public boolean isWedged() {
        return wedged;
    }

    @Override
    public String getLastError() {
        return lastError;
    }

    @Override
    public String getLastSeen() {
        Instant t = lastSeen;
        return t == null ? null : t.toString();
    }
}
