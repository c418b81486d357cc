package io.npulifecycle.api.markers;

import java.io.IOException;
import java.nio.file.Path;

/** A marker or state file could not be written or removed; carries the host path concerned. */
public class MarkerStoreException extends IOException {
    private static final long serialVersionUID = 1L;
    private final transient Path path;

    /**
     * @param path the file or folder concerned
     * @param message what went wrong, naming the path
     * @param cause the underlying I/O error, may be {@code null}
     */
    public MarkerStoreException(Path path, String message, Throwable cause) {
        super(message, cause);
        this.path = path;
    }

    /** @return the file or folder concerned */
    public Path path() {
        return path;
    }
}
