package io.npulifecycle.api.markers;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A marker as read from its host file: name, the boot id and time it was written under, the writer, and its content
 * (the {@code key=value} lines other than the store's header keys). Immutable.
 */
public final class Marker {
    private final String name;
    private final String bootId;
    private final Instant writtenAt;
    private final String writer;
    private final Map<String, String> content;

    /**
     * @param name marker name, e.g. {@link Markers#REBOOT_REQUIRED}
     * @param bootId boot id the file was written under
     * @param writtenAt when it was written
     * @param writer who wrote it, may be {@code null}
     * @param content the content keys, copied; iteration order is kept
     */
    public Marker(String name, String bootId, Instant writtenAt, String writer, Map<String, String> content) {
        this.name = Objects.requireNonNull(name, "name");
        this.bootId = bootId;
        this.writtenAt = writtenAt;
        this.writer = writer;
        this.content = Collections.unmodifiableMap(new LinkedHashMap<>(content));
    }

    /** @return the marker name */
    public String name() {
        return name;
    }

    /** @return the boot id ({@code /proc/sys/kernel/random/boot_id}) under which the file was written */
    public String bootId() {
        return bootId;
    }

    /** @return when the file was written, per the writer's TimeSource */
    public Instant writtenAt() {
        return writtenAt;
    }

    /** @return the writer, e.g. {@code health-watch}, or {@code null} */
    public String writer() {
        return writer;
    }

    /** @return the content keys (without {@code bootId}, {@code writtenAt}, {@code writer}), unmodifiable */
    public Map<String, String> content() {
        return content;
    }

    /** @return the {@value Markers#KEY_REASON} value, or {@code null} */
    public String reason() {
        return content.get(Markers.KEY_REASON);
    }

    @Override
    public String toString() {
        return name + content + " (boot " + bootId + ", written " + writtenAt + " by " + writer + ")";
    }
}
