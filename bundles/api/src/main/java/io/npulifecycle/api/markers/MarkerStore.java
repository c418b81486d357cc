package io.npulifecycle.api.markers;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Marker and state files in a host folder (default {@code /run/npu-operator/}, a tmpfs; PID
 * {@code io.npulifecycle.markers}, key {@code folder}), registered as an OSGi service.
 *
 * <p>File format: UTF-8 {@code key=value} lines in a fixed order: {@code bootId}, {@code writtenAt}, {@code writer},
 * then the content keys in the caller's order. Keys are {@code [A-Za-z0-9._:-]+}; values are one line (CR/LF are
 * rejected). Every write is atomic: a temporary file {@code .NAME.tmp-*} in the same folder, fsync, rename over
 * {@code NAME}, fsync of the folder; a concurrent reader sees the old or the new file, never a partial one.
 *
 * <p>Every file records the boot id ({@code /proc/sys/kernel/random/boot_id}) it was written under; a file from another
 * boot is {@link MarkerStatus#STALE} and reads as absent. A file that cannot be parsed is
 * {@link MarkerStatus#INVALID}: it is never taken as a reason to reboot, is logged with its path, and is reported by the
 * {@code io.npulifecycle:type=Markers} MBean.
 *
 * <p>Marker changes made through the store are published as OSGi events on {@link Markers#TOPIC_CHANGED}, passed to
 * {@link MarkerListener}s and counted by {@link #changeCount()}.
 */
@ProviderType
public interface MarkerStore {

    /** @return the host folder holding the files */
    Path folder();

    /** @return the current boot id, as read from the configured boot id file at activation */
    String bootId();

    /**
     * Reads a marker. Never throws: an unreadable or unparsable file gives {@link MarkerStatus#INVALID}.
     *
     * @param name marker name, e.g. {@link Markers#DRIVER_READY}
     * @return the outcome; {@link MarkerRead#present()} tells whether the marker holds
     * @throws IllegalArgumentException if {@code name} is not a valid file name ({@code [A-Za-z0-9._-]+}, not starting
     *         with a dot)
     */
    MarkerRead read(String name);

    /** @return a read of every marker file in the folder (not state files, not temporary files), sorted by name */
    List<MarkerRead> readAll();

    /**
     * Writes (creates or replaces) a marker atomically under the current boot id and publishes the change.
     *
     * @param name marker name
     * @param content content keys in order (e.g. {@code reason}, {@code chips}, {@code since}); the header keys
     *        {@code bootId}, {@code writtenAt}, {@code writer} are added by the store and must not be given
     * @param writer who writes, e.g. {@code health-watch}
     * @return the marker as written
     * @throws MarkerStoreException if the folder or file cannot be written (the message names the path); the previous
     *         file, if any, is left unchanged
     * @throws IllegalArgumentException on an invalid name, key or value
     */
    Marker write(String name, Map<String, String> content, String writer) throws MarkerStoreException;

    /**
     * Removes a marker file (whatever its status) and publishes the change if there was one.
     *
     * @param name marker name
     * @param writer who removes it, for the log and the event
     * @return {@code true} if a file was removed
     * @throws MarkerStoreException if the file exists and cannot be removed
     */
    boolean remove(String name, String writer) throws MarkerStoreException;

    /**
     * Reads a state file ({@code NAME.state} next to the markers) written under the current boot id.
     *
     * @param name state name, e.g. {@code health-watch}
     * @return its keys, or an empty map when absent, stale (other boot) or invalid (logged)
     */
    Map<String, String> readState(String name);

    /**
     * Writes a state file atomically under the current boot id. No event is published.
     *
     * @param name state name
     * @param state the keys in order
     * @throws MarkerStoreException if it cannot be written
     */
    void writeState(String name, Map<String, String> state) throws MarkerStoreException;

    /** @return a counter incremented on every marker change made through this store since activation */
    long changeCount();

    /** @param listener called after every marker change; adding it twice has no effect */
    void addListener(MarkerListener listener);

    /** @param listener a listener to stop calling */
    void removeListener(MarkerListener listener);
}
