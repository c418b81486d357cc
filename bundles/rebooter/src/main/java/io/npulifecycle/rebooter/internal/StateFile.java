package io.npulifecycle.rebooter.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

import io.npulifecycle.files.internal.DurableFiles;

/**
 * The rebooter's persisted state, {@code <stateDir>/rebooter.state} (default {@code /var/lib/npu-operator/}, a
 * persistent host path: it must outlive a reboot).
 *
 * <p>Format: UTF-8 {@code key=value} lines; {@code #} comments. Keys: {@code format=1};
 * {@code intent.bootId|reason|at|via}, {@code consumed.bootId|reason|at|via}, {@code reboot.bootId|reason|at|via}
 * (each group all or nothing); {@code history.<n>=<at>;<reason>;<fromBootId>;<via>;<outcome>;<detail>} with
 * {@code n} from 0, oldest first. Instants are ISO-8601 UTC. Written atomically: temporary file in the same folder,
 * fsync, rename, fsync of the folder.
 *
 * <p>A file that cannot be parsed is never repaired silently: {@link #load()} throws {@link Corrupt}; the caller keeps a
 * copy ({@link #quarantine}) and refuses to reboot until a person resets the state.
 */
final class StateFile {

    private static final System.Logger LOG = System.getLogger(StateFile.class.getName());
    static final String NAME = "rebooter.state";
    private static final Pattern FIELD = Pattern.compile("[^;\\n\\r]*");
    private static final int MAX_BYTES = 256 * 1024;

    /** The state file cannot be parsed; the message names the file, the line and what was expected. */
    static final class Corrupt extends Exception {
        private static final long serialVersionUID = 1L;

        Corrupt(String message) {
            super(message);
        }
    }

    /** The state file cannot be used; the message is the log line saying what a person must do. */
    static final class Unusable extends Exception {
        private static final long serialVersionUID = 1L;
        private final String problem;

        Unusable(String problem, String message) {
            super(message);
            this.problem = problem;
        }

        /** @return the problem alone, e.g. {@code state file /x/rebooter.state line 3: ...} */
        String problem() {
            return problem;
        }
    }

    private final Path file;

    StateFile(Path stateDir) {
        this.file = stateDir.resolve(NAME);
    }

    Path path() {
        return file;
    }

    /**
     * {@link #load()}, keeping a copy of a corrupt file first ({@code rebooter.state.corrupt-<epoch ms>}).
     *
     * @param now the time the copy is named after
     * @return the state; an empty state when the file does not exist
     * @throws Unusable if it is corrupt or cannot be read: nothing reboots until a person resets it (corrupt) or it
     *         can be read
     */
    RebooterState loadOrQuarantine(Instant now) throws Unusable {
        try {
            return load();
        } catch (Corrupt e) {
            String copy;
            try {
                copy = quarantine(String.valueOf(now.toEpochMilli())).toString();
            } catch (IOException io) {
                copy = "no copy (" + io + ")";
            }
            throw new Unusable(e.getMessage(), e.getMessage() + ": NO reboot until a person inspects it (copy: " + copy
                    + ") and calls resetState() on io.npulifecycle:type=Rebooter");
        } catch (IOException e) {
            String problem = "cannot read state file " + file + ": " + e;
            throw new Unusable(problem, problem + ": NO reboot until it can be read");
        }
    }

    /**
     * @return the state; an empty state when the file does not exist
     * @throws Corrupt if it exists but cannot be parsed
     * @throws IOException if it cannot be read
     */
    RebooterState load() throws Corrupt, IOException {
        RebooterState s = new RebooterState();
        if (!Files.exists(file)) {
            return s;
        }
        if (Files.size(file) > MAX_BYTES) {
            throw new Corrupt("state file " + file + " is larger than " + MAX_BYTES + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(Files.readAllBytes(file))).toString();
        } catch (CharacterCodingException e) {
            throw new Corrupt("state file " + file + " is not UTF-8 text");
        }
        Map<String, String> kv = new LinkedHashMap<>();
        int lineNo = 0;
        for (String line : text.split("\n", -1)) {
            lineNo++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            int eq = l.indexOf('=');
            if (eq <= 0) {
                throw new Corrupt("state file " + file + " line " + lineNo + ": expected key=value, got '" + cut(l) + "'");
            }
            if (kv.put(l.substring(0, eq), l.substring(eq + 1)) != null) {
                throw new Corrupt("state file " + file + " line " + lineNo + ": duplicate key '" + l.substring(0, eq) + "'");
            }
        }
        if (!"1".equals(kv.remove("format"))) {
            throw new Corrupt("state file " + file + ": expected format=1");
        }
        s.intent = step(kv, "intent");
        s.consumed = step(kv, "consumed");
        s.reboot = step(kv, "reboot");
        TreeMap<Integer, String> hist = new TreeMap<>();
        for (Map.Entry<String, String> e : Map.copyOf(kv).entrySet()) {
            if (e.getKey().startsWith("history.")) {
                try {
                    hist.put(Integer.parseInt(e.getKey().substring(8)), e.getValue());
                } catch (NumberFormatException ex) {
                    throw new Corrupt("state file " + file + ": key '" + e.getKey() + "' is not history.<number>");
                }
                kv.remove(e.getKey());
            }
        }
        if (!kv.isEmpty()) {
            throw new Corrupt("state file " + file + ": unknown keys " + kv.keySet());
        }
        for (Map.Entry<Integer, String> e : hist.entrySet()) {
            String[] f = e.getValue().split(";", -1);
            if (f.length != 6) {
                throw new Corrupt("state file " + file + ": history." + e.getKey()
                        + " must be <at>;<reason>;<fromBootId>;<via>;<outcome>;<detail>");
            }
            s.add(new RebooterState.Entry(instant(f[0], "history." + e.getKey()), f[1], f[2], f[3], f[4], f[5]));
        }
        return s;
    }

    private RebooterState.Step step(Map<String, String> kv, String prefix) throws Corrupt {
        String boot = kv.remove(prefix + ".bootId");
        String reason = kv.remove(prefix + ".reason");
        String at = kv.remove(prefix + ".at");
        String via = kv.remove(prefix + ".via");
        if (boot == null && reason == null && at == null && via == null) {
            return null;
        }
        if (boot == null || reason == null || at == null || via == null || boot.isEmpty()) {
            throw new Corrupt("state file " + file + ": " + prefix + ".bootId, .reason, .at and .via must all be present");
        }
        if (!reason.equals("recovery") && !reason.equals("upgrade")) {
            throw new Corrupt("state file " + file + ": " + prefix + ".reason must be recovery or upgrade, got '" + cut(reason) + "'");
        }
        return new RebooterState.Step(boot, reason, instant(at, prefix + ".at"), via);
    }

    private Instant instant(String s, String key) throws Corrupt {
        try {
            return Instant.parse(s);
        } catch (DateTimeParseException e) {
            throw new Corrupt("state file " + file + ": " + key + " must be an ISO-8601 instant, got '" + cut(s) + "'");
        }
    }

    private static String cut(String s) {
        return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }

    /**
     * Writes the state atomically.
     *
     * @throws IOException if it cannot be written (the previous file is left unchanged)
     */
    void save(RebooterState s) throws IOException {
        StringBuilder sb = new StringBuilder("# npu-lifecycle rebooter state (io.npulifecycle.rebooter); do not edit while the node agent runs\n");
        sb.append("format=1\n");
        put(sb, "intent", s.intent);
        put(sb, "consumed", s.consumed);
        put(sb, "reboot", s.reboot);
        int i = 0;
        for (RebooterState.Entry e : s.history) {
            sb.append("history.").append(i++).append('=').append(e.at()).append(';').append(clean(e.reason())).append(';')
                    .append(clean(e.fromBootId())).append(';').append(clean(e.via())).append(';')
                    .append(clean(e.outcome())).append(';').append(clean(e.detail())).append('\n');
        }
        DurableFiles.writeAtomically(file, sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void put(StringBuilder sb, String prefix, RebooterState.Step st) {
        if (st == null) {
            return;
        }
        sb.append(prefix).append(".bootId=").append(clean(st.bootId())).append('\n');
        sb.append(prefix).append(".reason=").append(clean(st.reason())).append('\n');
        sb.append(prefix).append(".at=").append(st.at()).append('\n');
        sb.append(prefix).append(".via=").append(clean(st.via())).append('\n');
    }

    private static String clean(String v) {
        if (v == null) {
            return "";
        }
        String s = v.replace('\n', ' ').replace('\r', ' ').replace(';', ',').strip();
        return FIELD.matcher(s).matches() ? s : "";
    }

    /**
     * Keeps a copy of a corrupt file next to it, {@code rebooter.state.corrupt-<suffix>}, once: a copy with the same
     * bytes kept before (the rebooter re-reads the file at every evaluation while it is corrupt, and after a restart)
     * is reused, so the folder gets one copy per corrupt content. The copy has the original's permissions
     * ({@link StandardCopyOption#COPY_ATTRIBUTES}), so it is no more readable than the state file.
     *
     * @return the copy, new or kept before
     * @throws IOException when the file cannot be read or copied
     */
    Path quarantine(String suffix) throws IOException {
        Path kept = keptBefore();
        if (kept != null) {
            return kept;
        }
        Path copy = file.resolveSibling(NAME + ".corrupt-" + suffix);
        Files.copy(file, copy, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
        LOG.log(Level.ERROR, "kept a copy of the corrupt state file " + file + " as " + copy);
        return copy;
    }

    /** @return a {@code rebooter.state.corrupt-*} copy with the same bytes as the state file, or {@code null} */
    private Path keptBefore() throws IOException {
        long size = Files.size(file);
        try (java.util.stream.Stream<Path> siblings = Files.list(file.toAbsolutePath().getParent())) {
            for (Path p : (Iterable<Path>) siblings::iterator) {
                if (p.getFileName().toString().startsWith(NAME + ".corrupt-") && Files.isRegularFile(p)
                        && Files.size(p) == size && Files.mismatch(file, p) == -1) {
                    return p;
                }
            }
        }
        return null;
    }
}
