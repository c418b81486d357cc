package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;

import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.MarkerStoreException;

/**
 * The health-watch's state file {@value HealthWatchEngine#STATE_NAME}{@code .state} in the marker store, holding a
 * {@link WatchState}. A state equal to the one the file holds is not written again (the engine saves after every
 * probe); a write error is logged once per distinct message, not at every probe.
 *
 * <p>Not thread-safe: guarded by the engine's lock.
 */
final class WatchStateFile {

    /** What {@link #save} did. */
    enum Saved {
        /** The file already holds this state: nothing written. */
        UNCHANGED,
        /** Written. */
        WRITTEN,
        /** The write failed: see {@link WatchStateFile#error()}. */
        FAILED
    }

    private static final System.Logger LOG = System.getLogger(HealthWatchEngine.class.getName());

    private final MarkerStore markers;
    private Map<String, String> held = Map.of();
    private String loggedError;
    private String error;

    /** @param markers the marker store */
    WatchStateFile(MarkerStore markers) {
        this.markers = markers;
    }

    /**
     * Reads the state of the current boot.
     *
     * @return the state, or {@code null} when the store holds none for this boot (absent, stale or unreadable file)
     *         or its content is invalid (logged with the key at fault: the health-watch starts from a clean state)
     */
    WatchState load() {
        Map<String, String> stored = markers.readState(HealthWatchEngine.STATE_NAME);
        if (stored.isEmpty()) {
            return null;
        }
        try {
            WatchState s = WatchState.fromMap(stored);
            held = new LinkedHashMap<>(stored);
            return s;
        } catch (WatchState.Invalid e) {
            LOG.log(Level.ERROR, "health-watch state file " + HealthWatchEngine.STATE_NAME + ".state in "
                    + markers.folder() + " is invalid (" + e.getMessage() + "): starting from a clean state");
            return null;
        }
    }

    /**
     * Writes the state unless the file holds it already.
     *
     * @param s the state
     * @return what was done
     */
    Saved save(WatchState s) {
        Map<String, String> content = s.toMap();
        if (content.equals(held)) {
            return Saved.UNCHANGED;
        }
        try {
            markers.writeState(HealthWatchEngine.STATE_NAME, content);
            held = content;
            loggedError = null;
            error = null;
            return Saved.WRITTEN;
        } catch (MarkerStoreException e) {
            error = "cannot write the state file: " + e.getMessage();
            if (!e.getMessage().equals(loggedError)) {
                loggedError = e.getMessage();
                LOG.log(Level.ERROR, "health-watch cannot write its state file (strikes would not survive a restart): "
                        + e.getMessage());
            }
            return Saved.FAILED;
        }
    }

    /** @return why the last write failed, e.g. {@code cannot write the state file: ...}, or {@code null} */
    String error() {
        return error;
    }
}
