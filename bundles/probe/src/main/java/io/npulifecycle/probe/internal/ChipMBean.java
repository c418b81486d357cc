package io.npulifecycle.probe.internal;

import io.npulifecycle.api.probe.ChipMXBean;

/**
 * {@code io.npulifecycle:type=Chip,name=npuN-chipM} ({@link io.npulifecycle.api.management.Mbeans#chipObjectName}):
 * one expected chip's MBean, an adapter that answers every attribute from the chip's {@link ChipState} at the time
 * of the call. Registered by {@link HealthWatchComponent} while the chip is expected; the attribute names are those of
 * {@link ChipMXBean}.
 */
public final class ChipMBean implements ChipMXBean {
    private final ChipState chip;

    /** @param chip the chip state the health-watch engine keeps */
    public ChipMBean(ChipState chip) {
        this.chip = java.util.Objects.requireNonNull(chip, "chip");
    }

    @Override
    public int getNpu() {
        return chip.getNpu();
    }

    @Override
    public int getChip() {
        return chip.getChip();
    }

    @Override
    public String getHealth() {
        return chip.getHealth();
    }

    @Override
    public String getClassification() {
        return chip.getClassification();
    }

    @Override
    public int getConsecutiveFailures() {
        return chip.getConsecutiveFailures();
    }

    @Override
    public boolean isWedged() {
        return chip.isWedged();
    }

    @Override
    public String getLastError() {
        return chip.getLastError();
    }

    @Override
    public String getLastSeen() {
        return chip.getLastSeen();
    }
}
