package io.npulifecycle.api.markers;

import java.nio.file.Path;

/**
 * The outcome of reading one marker file.
 *
 * @param name the marker name
 * @param path the host file
 * @param status what the read gave
 * @param marker the parsed marker when {@code status} is {@link MarkerStatus#PRESENT} or {@link MarkerStatus#STALE},
 *        else {@code null}
 * @param error why the file is {@link MarkerStatus#INVALID} or {@link MarkerStatus#STALE}, else {@code null}
 */
public record MarkerRead(String name, Path path, MarkerStatus status, Marker marker, String error) {

    /** @return {@code true} only if the marker holds (present, valid, current boot) */
    public boolean present() {
        return status == MarkerStatus.PRESENT;
    }
}
