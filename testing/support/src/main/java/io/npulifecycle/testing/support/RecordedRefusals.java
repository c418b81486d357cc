package io.npulifecycle.testing.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.npulifecycle.api.management.ConfigurationRefusals;

/**
 * A {@link ConfigurationRefusals} service for tests that records what a component reports, in order; thread-safe.
 * Give it to the component as DS would (its bind method), then read {@link #lines()} or {@link #refusals()}.
 */
public final class RecordedRefusals implements ConfigurationRefusals {

    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<Refusal> refusals = new CopyOnWriteArrayList<>();

    @Override
    public void refused(String pid, Object file, List<Refusal> refused) {
        if (refused.isEmpty()) {
            throw new IllegalArgumentException("no refusal");
        }
        for (Refusal r : refused) {
            refusals.add(r);
            lines.add(pid + " " + r.key() + "=" + r.value() + ": " + r.reason());
        }
    }

    @Override
    public void accepted(String pid) {
        lines.add(pid + " accepted");
    }

    /**
     * @return every report so far, oldest first: {@code <pid> <key>=<value>: <reason>} for each refused value,
     *         {@code <pid> accepted} for an accepted configuration
     */
    public List<String> lines() {
        return List.copyOf(lines);
    }

    /** @return every refused value so far, oldest first */
    public List<Refusal> refusals() {
        return List.copyOf(refusals);
    }

    /** Forgets what was recorded. */
    public void clear() {
        lines.clear();
        refusals.clear();
    }
}
