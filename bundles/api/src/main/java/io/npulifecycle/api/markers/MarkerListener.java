package io.npulifecycle.api.markers;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Called synchronously, on the writer's thread, after a marker change made through the store (so the rebooter can be
 * woken at once). Must return quickly and must not call back into a write of the store. Exceptions are logged and
 * ignored.
 */
@ConsumerType
@FunctionalInterface
public interface MarkerListener {
    /** @param change what changed */
    void markerChanged(MarkerChange change);
}
