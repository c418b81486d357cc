package io.npulifecycle.api.upgrade.spec;

import io.npulifecycle.api.node.NodeKeys;

/**
 * Values of the node label {@code npu.openfuyao.com/driver-upgrade-state}. No label = nothing to do (done).
 * Transitions are documented in {@code docs/upgrade.md}.
 */
public enum UpgradeState {
    /** The loaded driver differs from the target; waiting for a rollout slot (and preflight). */
    UPGRADE_REQUIRED("upgrade-required", false),
    /** Slot given, drain enabled: the control plane cordons the node (unless it is unschedulable already). */
    CORDON_REQUIRED(NodeKeys.UPGRADE_STATE_CORDON_REQUIRED, true),
    /** Cordoned: the control plane evicts the node's pods (Eviction API) until none is left. */
    DRAIN_REQUIRED(NodeKeys.UPGRADE_STATE_DRAIN_REQUIRED, true),
    /** Slot given (and drained): the driver pod was deleted so the DaemonSet recreates it with the target image. */
    POD_RESTART_REQUIRED("pod-restart-required", true),
    /** The node agent staged the driver and asked for a reboot: waiting for approval (unless autoUpgrade). */
    REBOOT_REQUIRED("reboot-required", true),
    /**
     * Manual mode only: the node gave its slot to an approved node that waited (it was in pod-restart-required or
     * reboot-required without an approval). What it staged stays staged; it waits for approval, then for a slot, and
     * the node agent does not use an approval while the node carries this label. Holds no slot.
     */
    REBOOT_DEFERRED(NodeKeys.UPGRADE_STATE_REBOOT_DEFERRED, false),
    /** The node agent wrote rebooting-from-boot-id: the reboot is under way. */
    REBOOTING("rebooting", true),
    /** The node came back with a new boot id: waiting for driver-validated=&lt;target&gt;@&lt;boot-id&gt;. */
    VALIDATION_REQUIRED("validation-required", true),
    /** A deadline was missed; see the driver-upgrade-failure annotation. */
    UPGRADE_FAILED("upgrade-failed", false);

    private final String label;
    private final boolean inFlight;

    UpgradeState(String label, boolean inFlight) {
        this.label = label;
        this.inFlight = inFlight;
    }

    /** @return the label value */
    public String label() {
        return label;
    }

    /** @return whether a node in this state holds a rollout slot (maxParallelUpgrades) */
    public boolean inFlight() {
        return inFlight;
    }

    /**
     * @param v a label value, may be null
     * @return the state, or null when {@code v} is null, empty or unknown
     */
    public static UpgradeState of(String v) {
        if (v == null) {
            return null;
        }
        for (UpgradeState s : values()) {
            if (s.label.equals(v)) {
                return s;
            }
        }
        return null;
    }
}
