package io.npulifecycle.kube.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.files.internal.DurableFiles;

/**
 * The node agent's writes the API server has not received yet, kept on the host in {@code <stateDir>/}{@value #NAME}
 * (default {@code /var/lib/npu-operator/}, a persistent host path: it must outlive the reboot the writes announce).
 *
 * <p>Format: UTF-8 lines; {@code #} comments; first {@code format=1}, then one record per line, fields separated by
 * one space, each field URL-encoded ({@link URLEncoder}, UTF-8, so a field never holds a space or a line break):
 * {@code event <at ISO-8601> <key> <type> <reason> <message>}, {@code label <key> <value>},
 * {@code label-removed <key>}, {@code annotation <key> <value>}, {@code annotation-removed <key>}; last
 * {@code end <number of records>}, so a truncated file is recognised. Written atomically: temporary file in the same
 * folder, fsync, rename, fsync of the folder; removed (and the folder fsynced) when nothing is pending.
 *
 * <p>A file that does not parse is never a reason to stop: {@link #load()} keeps every record that parses and says
 * what did not ({@link Loaded#problems()}); the caller moves the file aside ({@link #quarantine}).
 */
final class PendingWritesFile {

    private static final System.Logger LOG = System.getLogger(PendingWritesFile.class.getName());
    /** The file's name in the state folder. */
    static final String NAME = "node-writes.pending";
    /** Larger files are not read (a queue of Events of a few days' outage is far smaller). */
    static final int MAX_BYTES = 4 * 1024 * 1024;

    /**
     * What is pending, in the order it is written.
     *
     * @param events Events not yet created, oldest first
     * @param labels labels not yet on the Node: a value to set, or empty to remove, by key
     * @param annotations annotations not yet on the Node, as {@code labels}
     */
    record Content(List<QueuedEvent> events, SortedMap<String, Optional<String>> labels,
            SortedMap<String, Optional<String>> annotations) {
        /** Copies the collections. */
        Content {
            events = List.copyOf(events);
            labels = new TreeMap<>(labels);
            annotations = new TreeMap<>(annotations);
        }

        /** Nothing pending. */
        static final Content EMPTY = new Content(List.of(), new TreeMap<>(), new TreeMap<>());

        /** @return whether nothing is pending */
        boolean isEmpty() {
            return events.isEmpty() && labels.isEmpty() && annotations.isEmpty();
        }

        /** @return how many writes are pending */
        int size() {
            return events.size() + labels.size() + annotations.size();
        }
    }

    /**
     * What {@link #load()} found.
     *
     * @param content the records that parse
     * @param problems what did not parse, one message per problem naming the file and the line, empty when the file is
     *        sound
     */
    record Loaded(Content content, List<String> problems) {
        /** Copies the list. */
        Loaded {
            Objects.requireNonNull(content, "content");
            problems = List.copyOf(problems);
        }
    }

    private final Path file;

    /** @param stateDir the state folder (created on the first write) */
    PendingWritesFile(Path stateDir) {
        this.file = stateDir.resolve(NAME);
    }

    /** @return the file */
    Path path() {
        return file;
    }

    /**
     * Reads the file.
     *
     * @return what it holds, and what in it does not parse; empty with no problem when there is no file
     * @throws IOException if it exists but cannot be read
     */
    Loaded load() throws IOException {
        if (!Files.exists(file)) {
            return new Loaded(Content.EMPTY, List.of());
        }
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            return new Loaded(Content.EMPTY, List.of(file + " is " + size + " bytes, larger than " + MAX_BYTES
                    + ": not read"));
        }
        String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        List<String> problems = new ArrayList<>();
        List<QueuedEvent> events = new ArrayList<>();
        SortedMap<String, Optional<String>> labels = new TreeMap<>();
        SortedMap<String, Optional<String>> annotations = new TreeMap<>();
        boolean format = false;
        Integer end = null;
        int records = 0;
        int lineNo = 0;
        for (String line : text.split("\n", -1)) {
            lineNo++;
            // not stripped: an empty last field is a trailing space
            String l = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
            if (l.isBlank() || l.startsWith("#")) {
                continue;
            }
            String where = file + " line " + lineNo + ": ";
            if (!format) {
                if (!"format=1".equals(l)) {
                    problems.add(where + "expected format=1, got '" + cut(l) + "'");
                }
                // a missing or other format line does not make the records after it unreadable
                format = true;
                if ("format=1".equals(l)) {
                    continue;
                }
            }
            if (end != null) {
                problems.add(where + "a record after 'end': '" + cut(l) + "'");
                continue;
            }
            try {
                String[] f = fields(l);
                switch (f[0]) {
                    case "event" -> {
                        arity(f, 6, "event <at> <key> <type> <reason> <message>");
                        if (!NodeKeys.NORMAL.equals(f[3]) && !NodeKeys.WARNING.equals(f[3])) {
                            throw new IllegalArgumentException("Event type must be " + NodeKeys.NORMAL + " or "
                                    + NodeKeys.WARNING + ", got '" + cut(f[3]) + "'");
                        }
                        events.add(new QueuedEvent(f[2], f[3], f[4], f[5], instant(f[1])));
                    }
                    case "label" -> {
                        arity(f, 3, "label <key> <value>");
                        labels.put(key(f[1]), Optional.of(f[2]));
                    }
                    case "label-removed" -> {
                        arity(f, 2, "label-removed <key>");
                        labels.put(key(f[1]), Optional.empty());
                    }
                    case "annotation" -> {
                        arity(f, 3, "annotation <key> <value>");
                        annotations.put(key(f[1]), Optional.of(f[2]));
                    }
                    case "annotation-removed" -> {
                        arity(f, 2, "annotation-removed <key>");
                        annotations.put(key(f[1]), Optional.empty());
                    }
                    case "end" -> {
                        arity(f, 2, "end <number of records>");
                        end = Integer.parseInt(f[1]);
                        continue;
                    }
                    default -> throw new IllegalArgumentException("expected event, label, label-removed, annotation,"
                            + " annotation-removed or end, got '" + cut(f[0]) + "'");
                }
                records++;
            } catch (IllegalArgumentException e) {
                problems.add(where + e.getMessage());
            }
        }
        if (end == null) {
            if (format) {
                problems.add(file + ": no 'end' line: the file is truncated (" + records + " records read)");
            } else {
                problems.add(file + ": empty, expected format=1 ... end");
            }
        } else if (end != records && problems.isEmpty()) {
            problems.add(file + ": 'end " + end + "' but " + records + " records: the file is damaged");
        }
        return new Loaded(new Content(events, labels, annotations), problems);
    }

    private static String[] fields(String line) {
        if (!line.chars().allMatch(c -> c > 32 && c < 127 || c == ' ')) {
            throw new IllegalArgumentException("characters other than URL-encoded fields");
        }
        String[] raw = line.split(" ", -1);
        String[] out = new String[raw.length];
        for (int i = 0; i < raw.length; i++) {
            out[i] = URLDecoder.decode(raw[i], StandardCharsets.UTF_8);
        }
        return out;
    }

    private static void arity(String[] f, int n, String expected) {
        if (f.length != n) {
            throw new IllegalArgumentException("expected '" + expected + "' (" + n + " fields), got " + f.length
                    + " fields");
        }
    }

    private static String key(String k) {
        if (!NodeKeys.writableByNodeAgent(k)) {
            throw new IllegalArgumentException("'" + cut(k) + "' is not a key the node agent writes");
        }
        return k;
    }

    private static Instant instant(String s) {
        try {
            return Instant.parse(s);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("expected an ISO-8601 instant, got '" + cut(s) + "'");
        }
    }

    private static String cut(String s) {
        return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }

    /**
     * Writes what is pending atomically, or removes the file when nothing is.
     *
     * @param c what is pending
     * @throws IOException if it cannot be written (the previous file is left as it was)
     */
    void save(Content c) throws IOException {
        if (c.isEmpty()) {
            if (Files.deleteIfExists(file)) {
                DurableFiles.syncFolder(file.getParent());
            }
            return;
        }
        StringBuilder sb = new StringBuilder("# npu-lifecycle node agent: writes the API server has not received yet"
                + " (io.npulifecycle.kube); do not edit while the node agent runs\nformat=1\n");
        for (QueuedEvent e : c.events()) {
            line(sb, "event", e.at().toString(), e.key(), e.type(), e.reason(), e.message());
        }
        entries(sb, "label", c.labels());
        entries(sb, "annotation", c.annotations());
        sb.append("end ").append(c.size()).append('\n');
        DurableFiles.writeAtomically(file, sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void entries(StringBuilder sb, String kind, SortedMap<String, Optional<String>> m) {
        m.forEach((k, v) -> {
            if (v.isPresent()) {
                line(sb, kind, k, v.get());
            } else {
                line(sb, kind + "-removed", k);
            }
        });
    }

    private static void line(StringBuilder sb, String kind, String... fields) {
        sb.append(kind);
        for (String f : fields) {
            sb.append(' ').append(URLEncoder.encode(f, StandardCharsets.UTF_8));
        }
        sb.append('\n');
    }

    /**
     * Moves a file that does not parse aside, {@value #NAME}{@code .corrupt-<suffix>}, so that the next
     * {@link #save} does not replace it.
     *
     * @param suffix e.g. the time in epoch milliseconds
     * @return where it is now
     * @throws IOException if it can be neither moved nor copied
     */
    Path quarantine(String suffix) throws IOException {
        Path aside = file.resolveSibling(NAME + ".corrupt-" + suffix);
        try {
            Files.move(file, aside, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            Files.copy(file, aside, StandardCopyOption.REPLACE_EXISTING);
        }
        LOG.log(Level.ERROR, "kept the pending-writes file that does not parse as " + aside);
        return aside;
    }
}
