package io.npulifecycle.management.internal;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * Since when each health check has its current status: the time it was first seen with it. Thread-safe.
 */
final class StatusSince {

    private final Map<String, String> status = new HashMap<>();
    private final Map<String, Instant> since = new HashMap<>();

    /**
     * @param current check name to its status now (checks not in it are forgotten)
     * @param now the time of this evaluation
     * @return check name to since when it has that status
     */
    synchronized Map<String, Instant> update(Map<String, String> current, Instant now) {
        status.keySet().retainAll(current.keySet());
        since.keySet().retainAll(current.keySet());
        Map<String, Instant> out = new HashMap<>();
        for (Map.Entry<String, String> e : current.entrySet()) {
            if (!e.getValue().equals(status.get(e.getKey()))) {
                status.put(e.getKey(), e.getValue());
                since.put(e.getKey(), now);
            }
            out.put(e.getKey(), since.get(e.getKey()));
        }
        return out;
    }
}
