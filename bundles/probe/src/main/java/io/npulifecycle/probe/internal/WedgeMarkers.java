package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SortedSet;

import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.MarkerStoreException;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.probe.ChipId;

/**
 * The markers the health-watch writes for a wedge and takes back on its suppression, with writer
 * {@value #WRITER}.
 *
 * <p>Wedged: {@code driver-ready} is removed and {@code reboot-required reason=recovery chips=.. since=..} written,
 * never over a {@code reason=upgrade} marker (the upgrade reboot recovers the chips too). Suppressed: the health-watch's
 * own recovery marker is removed (any other {@code reboot-required} is left alone) and {@code driver-ready} restored
 * when it was present before the wedge. A write that fails leaves the markers {@link #dirty()}, retried by the engine.
 *
 * <p>Not thread-safe: guarded by the engine's lock.
 */
final class WedgeMarkers {

    /** Writer name on the health-watch's markers. */
    static final String WRITER = "health-watch";
    private static final System.Logger LOG = System.getLogger(HealthWatchEngine.class.getName());

    private final MarkerStore markers;
    private boolean driverReadyBefore;
    private boolean dirty;
    private boolean upgradeLogged;

    /** @param markers the marker store */
    WedgeMarkers(MarkerStore markers) {
        this.markers = markers;
    }

    /** A wedge starts: remembers whether {@code driver-ready} is present, before {@link #ensureWedged} removes it. */
    void wedgeStarted() {
        driverReadyBefore = markers.read(Markers.DRIVER_READY).present();
        upgradeLogged = false;
    }

    /**
     * The markers are to be (re)written for the wedge: {@link #dirty()} from now until {@link #ensureWedged} succeeds,
     * so that a state file saved before that write says so.
     */
    void markDirty() {
        dirty = true;
    }

    /**
     * Makes the markers say "wedged"; idempotent.
     *
     * @param wedged the chips wedged now (the marker's {@code chips})
     * @param since when the wedge was declared (the marker's {@code since})
     * @throws MarkerStoreException when a marker cannot be written; the markers stay {@link #dirty()}
     */
    void ensureWedged(SortedSet<ChipId> wedged, Instant since) throws MarkerStoreException {
        dirty = true;
        if (markers.read(Markers.DRIVER_READY).status() != MarkerStatus.ABSENT) {
            markers.remove(Markers.DRIVER_READY, WRITER);
        }
        MarkerRead rr = markers.read(Markers.REBOOT_REQUIRED);
        String chipList = ChipId.format(wedged);
        if (rr.present() && Markers.REASON_UPGRADE.equals(rr.marker().reason())) {
            if (!upgradeLogged) {
                upgradeLogged = true;
                LOG.log(Level.WARNING, "marker reboot-required reason=upgrade present: left untouched; the upgrade "
                        + "reboot also recovers wedged chip(s) " + chipList);
            }
        } else if (!(rr.present() && Markers.REASON_RECOVERY.equals(rr.marker().reason())
                && chipList.equals(rr.marker().content().get(Markers.KEY_CHIPS))
                && String.valueOf(since).equals(rr.marker().content().get(Markers.KEY_SINCE)))) {
            Map<String, String> content = new LinkedHashMap<>();
            content.put(Markers.KEY_REASON, Markers.REASON_RECOVERY);
            content.put(Markers.KEY_CHIPS, chipList);
            content.put(Markers.KEY_SINCE, String.valueOf(since));
            markers.write(Markers.REBOOT_REQUIRED, content, WRITER);
        }
        dirty = false;
    }

    /**
     * Takes the wedge markers back (false-positive suppression).
     *
     * @param wedgeChips every chip wedged during the wedge (the restored marker's {@code chips})
     * @return whether {@code driver-ready} was restored
     * @throws MarkerStoreException when a marker cannot be written; nothing is forgotten, so it can be retried
     */
    boolean suppress(SortedSet<ChipId> wedgeChips) throws MarkerStoreException {
        String chipList = ChipId.format(wedgeChips);
        MarkerRead rr = markers.read(Markers.REBOOT_REQUIRED);
        if (rr.present() && Markers.REASON_RECOVERY.equals(rr.marker().reason())
                && WRITER.equals(rr.marker().writer())) {
            markers.remove(Markers.REBOOT_REQUIRED, WRITER);
        } else if (rr.present()) {
            LOG.log(Level.INFO, "marker reboot-required reason=" + rr.marker().reason() + " written by "
                    + rr.marker().writer() + " is not the health-watch's recovery marker: left untouched");
        }
        boolean restored = false;
        if (driverReadyBefore && !markers.read(Markers.DRIVER_READY).present()) {
            Map<String, String> content = new LinkedHashMap<>();
            content.put("restoredBy", "false-positive-suppression");
            content.put(Markers.KEY_CHIPS, chipList);
            markers.write(Markers.DRIVER_READY, content, WRITER);
            restored = true;
        }
        LOG.log(Level.WARNING, "false-positive suppression: wedged chip(s) " + chipList + " answer healthy again "
                + "before a reboot; recovery marker removed" + (restored ? ", driver-ready restored" : ""));
        driverReadyBefore = false;
        dirty = false;
        return restored;
    }

    /**
     * Restores the kept facts.
     *
     * @param driverReadyBeforeWedge whether {@code driver-ready} was present when the wedge was declared
     * @param markersDirty whether the wedge markers must be (re)written at the next probe
     */
    void restore(boolean driverReadyBeforeWedge, boolean markersDirty) {
        this.driverReadyBefore = driverReadyBeforeWedge;
        this.dirty = markersDirty;
    }

    /** @return whether {@code driver-ready} was present when the active wedge was declared */
    boolean driverReadyBefore() {
        return driverReadyBefore;
    }

    /** @return whether a wedge marker write is still to be made */
    boolean dirty() {
        return dirty;
    }
}
