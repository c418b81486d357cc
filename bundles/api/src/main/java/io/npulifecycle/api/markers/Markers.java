package io.npulifecycle.api.markers;

/**
 * Names shared by every user of the marker store: marker names, content keys, reasons, and the OSGi event topic and
 * properties published on every marker change. The marker contract comes from {@code DESIGN.md} ("Markers (host
 * files)").
 */
public final class Markers {

    /** Marker present only while the driver is loaded, validated and no chip is wedged. */
    public static final String DRIVER_READY = "driver-ready";

    /** Marker asking the rebooter for a node reboot; content key {@value #KEY_REASON} is {@value #REASON_RECOVERY} or {@value #REASON_UPGRADE}. */
    public static final String REBOOT_REQUIRED = "reboot-required";

    /** Content key: why a reboot is required, {@value #REASON_RECOVERY} or {@value #REASON_UPGRADE}. */
    public static final String KEY_REASON = "reason";
    /** Content key: the chips concerned, {@code npu:chip} pairs separated by commas, e.g. {@code 0:0,4:0}. */
    public static final String KEY_CHIPS = "chips";
    /** Content key: since when the condition holds, an ISO-8601 instant in UTC, e.g. {@code 2026-11-30T10:00:00Z}. */
    public static final String KEY_SINCE = "since";
    /** Header key written by the store: the boot id under which the file was written. */
    public static final String KEY_BOOT_ID = "bootId";
    /** Header key written by the store: when the file was written (ISO-8601 instant, from the runtime's TimeSource). */
    public static final String KEY_WRITTEN_AT = "writtenAt";
    /** Header key written by the store: who wrote the file, e.g. {@code health-watch}. */
    public static final String KEY_WRITER = "writer";

    /** Reason of a self-healing reboot (a wedged chip). */
    public static final String REASON_RECOVERY = "recovery";
    /** Reason of a driver-upgrade reboot. The health-watch never writes, overwrites or removes it. */
    public static final String REASON_UPGRADE = "upgrade";

    /** OSGi EventAdmin topic posted after every marker write or removal. */
    public static final String TOPIC_CHANGED = "io/npulifecycle/markers/CHANGED";
    /** Event property: the marker name (String). */
    public static final String EVENT_MARKER = "marker";
    /** Event property: whether the marker is present after the change (Boolean). */
    public static final String EVENT_PRESENT = "present";
    /** Event property: the marker's {@value #KEY_REASON} after the change, or absent when none (String). */
    public static final String EVENT_REASON = "reason";
    /** Event property: the store's change counter after the change (Long). */
    public static final String EVENT_CHANGE_COUNT = "changeCount";
    /** Event property: who made the change (String). */
    public static final String EVENT_WRITER = "writer";

    private Markers() {
    }
}
