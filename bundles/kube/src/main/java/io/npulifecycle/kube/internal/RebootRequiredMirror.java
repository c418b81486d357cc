package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.util.Objects;

import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;

/**
 * Mirrors the node's markers onto its desired Node state: the boot id into the annotation {@value NodeKeys#BOOT_ID},
 * and the {@code reboot-required} marker of this boot into the label {@value NodeKeys#REBOOT_REQUIRED}, the annotation
 * {@value NodeKeys#REBOOT_REASON} (with a recovery's chips in {@value NodeKeys#REBOOT_CHIPS}) and one {@value NodeKeys#EVENT_REBOOT_REQUIRED} Event per request (a request is
 * the marker's boot id, reason and {@code since}). A marker with a reason other than {@code recovery} or
 * {@code upgrade} is not mirrored (logged): the control plane acts on the label.
 */
final class RebootRequiredMirror {

    private static final System.Logger LOG = System.getLogger(RebootRequiredMirror.class.getName());

    private final MarkerStore markers;
    private final DesiredNodeState desired;
    private final NodeEventQueue events;

    /**
     * @param markers the marker store
     * @param desired where the label and annotations go
     * @param events where the Event goes
     */
    RebootRequiredMirror(MarkerStore markers, DesiredNodeState desired, NodeEventQueue events) {
        this.markers = Objects.requireNonNull(markers, "markers");
        this.desired = Objects.requireNonNull(desired, "desired");
        this.events = Objects.requireNonNull(events, "events");
    }

    /** Reads the markers and updates the desired state and the Event queue. */
    void mirror() {
        desired.setAnnotation(NodeKeys.BOOT_ID, markers.bootId());
        MarkerRead r = markers.read(Markers.REBOOT_REQUIRED);
        if (!r.present()) {
            clear();
            return;
        }
        Marker m = r.marker();
        String reason = m.reason();
        if (!Markers.REASON_RECOVERY.equals(reason) && !Markers.REASON_UPGRADE.equals(reason)) {
            LOG.log(Level.WARNING, "reboot-required marker " + r.path() + " has reason '" + reason
                    + "', expected recovery or upgrade: not mirrored onto the Node");
            clear();
            return;
        }
        desired.setLabel(NodeKeys.REBOOT_REQUIRED, "true");
        desired.setAnnotation(NodeKeys.REBOOT_REASON, reason);
        String chips = m.content().get(Markers.KEY_CHIPS);
        desired.setAnnotation(NodeKeys.REBOOT_CHIPS, Markers.REASON_RECOVERY.equals(reason) && chips != null
                && !chips.isBlank() ? chips : null);
        String since = m.content().getOrDefault(Markers.KEY_SINCE, String.valueOf(m.writtenAt()));
        StringBuilder msg = new StringBuilder("reason=").append(reason);
        m.content().forEach((k, v) -> {
            if (!Markers.KEY_REASON.equals(k)) {
                msg.append(' ').append(k).append('=').append(v);
            }
        });
        msg.append(" bootId=").append(m.bootId());
        events.record(NodeKeys.EVENT_REBOOT_REQUIRED + "/" + m.bootId() + "/" + reason + "/" + since, NodeKeys.NORMAL,
                NodeKeys.EVENT_REBOOT_REQUIRED, msg.toString());
    }

    private void clear() {
        desired.setLabel(NodeKeys.REBOOT_REQUIRED, null);
        desired.setAnnotation(NodeKeys.REBOOT_REASON, null);
        desired.setAnnotation(NodeKeys.REBOOT_CHIPS, null);
    }
}
