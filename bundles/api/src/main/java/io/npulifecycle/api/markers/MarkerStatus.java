package io.npulifecycle.api.markers;

/** What a marker file read gave. Only {@link #PRESENT} means the marker holds. */
public enum MarkerStatus {
    /** The file exists, parses, and was written under the current boot id. */
    PRESENT,
    /** There is no file. */
    ABSENT,
    /** The file was written under another boot id: it reads as absent (logged once per file). */
    STALE,
    /** The file cannot be read or parsed: it reads as absent and is never a reason to reboot. */
    INVALID
}
