package io.npulifecycle.kube.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.ClosedByInterruptException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.Node;
import io.npulifecycle.api.time.TimeSource;

/**
 * Keeps on the host what the node agent owes the API server: the Events queued in {@link NodeEventQueue} and the
 * desired labels and annotations of {@link DesiredNodeState} that the Node, as last seen, does not have yet. Each
 * {@link #keep()} writes them to the {@link PendingWritesFile} when they differ from what it holds (atomically, before
 * it returns), so a write survives a SIGKILL and the reboot it announces once {@code keep()} returned; a new runtime
 * gives them back ({@link #restore()}) and the sync writes them when the API server answers, once each (Event names
 * are derived from their keys; a label or annotation set again in between keeps the last value). Without a state
 * folder they are kept in memory only. Thread-safe.
 */
final class PendingWrites {

    private static final System.Logger LOG = System.getLogger(PendingWrites.class.getName());

    private final PendingWritesFile file;
    private final TimeSource time;
    private final DesiredNodeState desired;
    private final NodeEventQueue events;
    private final Supplier<Node> node;
    private PendingWritesFile.Content saved = PendingWritesFile.Content.EMPTY;
    private boolean durable = true;
    private volatile String problem;

    /**
     * @param stateDir the state folder, or {@code null}: the writes are kept in memory only
     * @param time the TimeSource (the name of a file moved aside)
     * @param desired the desired labels and annotations
     * @param events the queued Events
     * @param node the Node as last seen, {@code null} before it is seen
     */
    PendingWrites(Path stateDir, TimeSource time, DesiredNodeState desired, NodeEventQueue events,
            Supplier<Node> node) {
        this.file = stateDir == null ? null : new PendingWritesFile(stateDir);
        this.time = Objects.requireNonNull(time, "time");
        this.desired = Objects.requireNonNull(desired, "desired");
        this.events = Objects.requireNonNull(events, "events");
        this.node = Objects.requireNonNull(node, "node");
    }

    /**
     * Gives back what an earlier runtime kept: the Events to the queue, the labels and annotations to the desired
     * state (call it before anything else writes, so that every later write supersedes them). A file that does not
     * parse or cannot be read is logged (ERROR, naming the file, the line and what was expected), moved aside
     * ({@value PendingWritesFile#NAME}{@code .corrupt-<epoch ms>}) and every record in it that parses is kept.
     * Never throws.
     */
    synchronized void restore() {
        if (file == null) {
            return;
        }
        PendingWritesFile.Loaded loaded;
        try {
            loaded = file.load();
        } catch (IOException e) {
            loaded = new PendingWritesFile.Loaded(PendingWritesFile.Content.EMPTY,
                    List.of("cannot read " + file.path() + ": " + e));
        }
        List<String> problems = new ArrayList<>(loaded.problems());
        PendingWritesFile.Content c = loaded.content();
        int queued = events.restore(c.events());
        restoreEntries(c.labels(), "label", desired::setLabel, problems);
        restoreEntries(c.annotations(), "annotation", desired::setAnnotation, problems);
        if (!problems.isEmpty()) {
            String aside;
            try {
                aside = file.quarantine(String.valueOf(time.now().toEpochMilli())).toString();
            } catch (IOException e) {
                aside = "not moved aside (" + e + "): it is replaced at the next write";
            }
            problem = "pending-writes file " + file.path() + " is not usable: " + String.join("; ", problems)
                    + "; kept aside as " + aside + "; the " + c.size() + " writes that parse are kept";
            LOG.log(Level.ERROR, problem);
            // what was kept must be on disk again before anything else is written
            saved = null;
        } else {
            saved = c;
        }
        if (!c.isEmpty()) {
            LOG.log(Level.INFO, c.size() + " writes the API server has not received yet were kept in " + file.path()
                    + " (" + queued + " Events): written when it answers");
        }
        keep();
    }

    private interface Setter {
        boolean set(String key, String value);
    }

    private static void restoreEntries(Map<String, Optional<String>> entries, String kind, Setter setter,
            List<String> problems) {
        entries.forEach((k, v) -> {
            try {
                setter.set(k, v.orElse(null));
            } catch (IllegalArgumentException e) {
                problems.add(kind + " " + k + " dropped: " + e.getMessage());
            }
        });
    }

    /**
     * Writes what is pending now to the file when it differs from what the file holds (removes the file when nothing
     * is pending). A failure is logged once per message and shown by {@link #problem()}; the writes stay in memory and
     * the next call tries again.
     *
     * @return whether everything pending is on disk (always {@code true} without a state folder: nothing to keep)
     */
    synchronized boolean keep() {
        if (file == null) {
            return true;
        }
        PendingWritesFile.Content now = current();
        if (durable && now.equals(saved)) {
            return true;
        }
        try {
            file.save(now);
            boolean wasPending = saved != null && !saved.isEmpty();
            saved = now;
            durable = true;
            if (problem != null && problem.startsWith("cannot write")) {
                problem = null;
            }
            if (now.isEmpty() && wasPending) {
                LOG.log(Level.INFO, "every write kept in " + file.path() + " was received by the API server");
            } else if (!now.isEmpty()) {
                LOG.log(Level.DEBUG, now.size() + " writes pending, kept in " + file.path());
            }
            return true;
        } catch (ClosedByInterruptException e) {
            // a round cancelled by a flush that timed out: the flush keeps it on the caller's thread right after
            LOG.log(Level.DEBUG, "keeping the pending writes interrupted; tried again at the next change or round");
            return false;
        } catch (IOException | RuntimeException e) {
            durable = false;
            String p = "cannot write " + file.path() + ": " + e + ": " + now.size()
                    + " writes the API server has not received are in memory only (lost if the node agent stops)";
            if (!p.equals(problem)) {
                LOG.log(Level.ERROR, p);
            }
            problem = p;
            return false;
        }
    }

    private PendingWritesFile.Content current() {
        Node n = node.get();
        return new PendingWritesFile.Content(events.queued(), desired.pendingLabels(n), desired.pendingAnnotations(n));
    }

    /**
     * @return what is pending now, one line each: {@code Event <reason> <name> (<type>, since <at>)},
     *         {@code label <key>=<value>}, {@code label <key> removed}, the same for annotations
     */
    List<String> describe(String nodeName) {
        PendingWritesFile.Content c = current();
        List<String> out = new ArrayList<>();
        for (QueuedEvent e : c.events()) {
            out.add("Event " + e.reason() + " " + NodeEventQueue.eventName(nodeName, e.key()) + " (" + e.type()
                    + ", since " + e.at() + ")");
        }
        c.labels().forEach((k, v) -> out.add("label " + k + (v.isPresent() ? "=" + v.get() : " removed")));
        c.annotations().forEach((k, v) -> out.add("annotation " + k + (v.isPresent() ? "=" + v.get() : " removed")));
        return out;
    }

    /** @return the file, or {@code null} when the writes are kept in memory only */
    Path path() {
        return file == null ? null : file.path();
    }

    /** @return the last problem reading or writing the file, or {@code null} */
    String problem() {
        return problem;
    }
}
