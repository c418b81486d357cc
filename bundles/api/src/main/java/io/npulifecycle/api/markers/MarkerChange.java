package io.npulifecycle.api.markers;

/**
 * A marker write or removal, passed to {@link MarkerListener}s and mirrored by the {@link Markers#TOPIC_CHANGED}
 * event.
 *
 * @param marker the marker name
 * @param present whether the marker is present after the change
 * @param reason its {@value Markers#KEY_REASON} after the change, or {@code null}
 * @param writer who made the change, or {@code null}
 * @param changeCount the store's change counter after the change
 */
public record MarkerChange(String marker, boolean present, String reason, String writer, long changeCount) {
}
