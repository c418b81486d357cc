package io.npulifecycle.markers.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerChange;
import io.npulifecycle.api.markers.MarkerListener;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.MarkerStoreException;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.files.internal.DurableFiles;

/**
 * The file implementation of {@link MarkerStore}, usable without OSGi (tests, other bundles' tests). See the interface
 * for the file format and the atomic-write protocol.
 */
public final class FileMarkerStore implements MarkerStore {

    private static final System.Logger LOG = System.getLogger(FileMarkerStore.class.getName());
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._:-]+");
    /** Marker and state files are tiny; anything bigger is not ours and reads as invalid. */
    static final int MAX_FILE_BYTES = 64 * 1024;
    static final String STATE_SUFFIX = ".state";
    private static final Set<String> HEADER = Set.of(Markers.KEY_BOOT_ID, Markers.KEY_WRITTEN_AT, Markers.KEY_WRITER);

    private volatile Path folder;
    private volatile String bootId;
    private final Supplier<Instant> clock;
    private final Consumer<MarkerChange> publisher;
    private final Object writeLock = new Object();
    private final AtomicLong changeCount = new AtomicLong();
    private final List<MarkerListener> listeners = new CopyOnWriteArrayList<>();
    /** path -> last problem logged for it, so a stale or invalid file is logged once, not at every read. */
    private final Map<Path, String> logged = new ConcurrentHashMap<>();
    private volatile String lastError;

    /**
     * @param folder host folder of the markers
     * @param bootId current boot id
     * @param clock the time written into {@code writtenAt} (the runtime's TimeSource)
     * @param publisher called after every marker change, e.g. to post an OSGi event; may be {@code null}
     */
    public FileMarkerStore(Path folder, String bootId, Supplier<Instant> clock, Consumer<MarkerChange> publisher) {
        this.folder = Objects.requireNonNull(folder, "folder");
        this.bootId = Objects.requireNonNull(bootId, "bootId");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.publisher = publisher;
    }

    /**
     * Reads the boot id file.
     *
     * @param path usually {@code /proc/sys/kernel/random/boot_id}
     * @return its trimmed content
     * @throws IOException if it cannot be read or is empty
     */
    public static String readBootId(Path path) throws IOException {
        String id = Files.readString(path, StandardCharsets.UTF_8).trim();
        if (id.isEmpty() || id.contains("\n")) {
            throw new IOException("boot id file " + path + " is empty or has several lines");
        }
        return id;
    }

    /**
     * Points the store at another folder / boot id (configuration change). Listeners and the change counter stay.
     *
     * @param newFolder the folder
     * @param newBootId the boot id
     */
    public void reconfigure(Path newFolder, String newBootId) {
        this.folder = Objects.requireNonNull(newFolder);
        this.bootId = Objects.requireNonNull(newBootId);
        logged.clear();
    }

    @Override
    public Path folder() {
        return folder;
    }

    /** Boot id used while the boot id file cannot be read. */
    public static final String UNKNOWN_BOOT_ID = "unknown";
    private volatile Path bootIdSource;

    /**
     * Keeps trying {@code path} while the boot id is {@value #UNKNOWN_BOOT_ID} (a boot id file that was missing or
     * unreadable at start, e.g. an emulated host still being created).
     *
     * @param path the boot id file
     */
    public void retryBootIdFrom(Path path) {
        this.bootIdSource = path;
    }

    @Override
    public String bootId() {
        String id = bootId;
        Path source = bootIdSource;
        if (UNKNOWN_BOOT_ID.equals(id) && source != null) {
            try {
                id = readBootId(source);
                bootId = id;
                bootIdSource = null;
                logged.clear();
            } catch (IOException e) {
                // still unknown; the component logged it once
            }
        }
        return id;
    }

    /** @return the last write/remove error message, or {@code null} */
    public String lastError() {
        return lastError;
    }

    /** @return whether the folder is an existing writable directory (root semantics included) */
    public boolean isWritable() {
        Path f = folder;
        return Files.isDirectory(f) && Files.isWritable(f);
    }

    @Override
    public MarkerRead read(String name) {
        checkName(name);
        return readFile(name, folder.resolve(name));
    }

    @Override
    public List<MarkerRead> readAll() {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(folder)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (!n.startsWith(".") && !n.endsWith(STATE_SUFFIX) && NAME.matcher(n).matches() && Files.isRegularFile(p)) {
                    names.add(n);
                }
            }
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot list marker folder " + folder + ": " + e);
            return List.of();
        }
        Collections.sort(names);
        List<MarkerRead> out = new ArrayList<>();
        for (String n : names) {
            out.add(read(n));
        }
        return out;
    }

    private MarkerRead readFile(String name, Path path) {
        byte[] bytes;
        try {
            if (!Files.exists(path)) {
                logged.remove(path);
                return new MarkerRead(name, path, MarkerStatus.ABSENT, null, null);
            }
            if (Files.size(path) > MAX_FILE_BYTES) {
                return invalid(name, path, "larger than " + MAX_FILE_BYTES + " bytes");
            }
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            return new MarkerRead(name, path, MarkerStatus.ABSENT, null, null);
        } catch (IOException e) {
            return invalid(name, path, "cannot be read: " + e);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return invalid(name, path, "not UTF-8 text");
        }
        Map<String, String> all = new LinkedHashMap<>();
        int lineNo = 0;
        for (String line : text.split("\n", -1)) {
            lineNo++;
            String l = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
            if (l.isBlank() || l.startsWith("#")) {
                continue;
            }
            int eq = l.indexOf('=');
            if (eq <= 0) {
                return invalid(name, path, "line " + lineNo + " is not key=value");
            }
            String key = l.substring(0, eq).trim();
            if (!KEY.matcher(key).matches()) {
                return invalid(name, path, "line " + lineNo + " has an invalid key");
            }
            if (all.put(key, l.substring(eq + 1).trim()) != null) {
                return invalid(name, path, "duplicate key '" + key + "'");
            }
        }
        String fileBoot = all.get(Markers.KEY_BOOT_ID);
        if (fileBoot == null || fileBoot.isEmpty()) {
            return invalid(name, path, "no " + Markers.KEY_BOOT_ID);
        }
        Instant writtenAt;
        try {
            String w = all.get(Markers.KEY_WRITTEN_AT);
            if (w == null) {
                return invalid(name, path, "no " + Markers.KEY_WRITTEN_AT);
            }
            writtenAt = Instant.parse(w);
        } catch (DateTimeParseException e) {
            return invalid(name, path, Markers.KEY_WRITTEN_AT + " is not an ISO-8601 instant");
        }
        Map<String, String> content = new LinkedHashMap<>(all);
        content.keySet().removeAll(HEADER);
        Marker marker = new Marker(name, fileBoot, writtenAt, all.get(Markers.KEY_WRITER), content);
        String current = bootId();
        if (!fileBoot.equals(current)) {
            String why = "written under boot id " + fileBoot + ", current boot id is " + current;
            logOnce(path, "stale", "marker file " + path + " is stale (" + why + "): it reads as absent");
            return new MarkerRead(name, path, MarkerStatus.STALE, marker, why);
        }
        logged.remove(path);
        return new MarkerRead(name, path, MarkerStatus.PRESENT, marker, null);
    }

    private MarkerRead invalid(String name, Path path, String why) {
        logOnce(path, "invalid:" + why, "marker file " + path + " is invalid (" + why
                + "): it reads as absent and is never a reason to reboot");
        return new MarkerRead(name, path, MarkerStatus.INVALID, null, why);
    }

    private void logOnce(Path path, String key, String message) {
        if (!key.equals(logged.put(path, key))) {
            LOG.log(Level.WARNING, message);
        }
    }

    @Override
    public Marker write(String name, Map<String, String> content, String writer) throws MarkerStoreException {
        checkName(name);
        Marker m = writeFile(name, folder.resolve(name), content, writer);
        LOG.log(Level.INFO, "marker " + name + " written by " + writer + ": " + m.content());
        changed(new MarkerChange(name, true, m.reason(), writer, changeCount.incrementAndGet()));
        return m;
    }

    @Override
    public boolean remove(String name, String writer) throws MarkerStoreException {
        checkName(name);
        Path path = folder.resolve(name);
        boolean removed;
        synchronized (writeLock) {
            try {
                removed = Files.deleteIfExists(path);
                if (removed) {
                    DurableFiles.syncFolder(folder);
                }
            } catch (IOException e) {
                throw fail(path, "cannot remove marker file " + path + ": " + e, e);
            }
        }
        if (removed) {
            LOG.log(Level.INFO, "marker " + name + " removed by " + writer);
            changed(new MarkerChange(name, false, null, writer, changeCount.incrementAndGet()));
        }
        return removed;
    }

    @Override
    public Map<String, String> readState(String name) {
        checkName(name);
        MarkerRead r = readFile(name, folder.resolve(name + STATE_SUFFIX));
        return r.present() ? r.marker().content() : Map.of();
    }

    @Override
    public void writeState(String name, Map<String, String> state) throws MarkerStoreException {
        checkName(name);
        writeFile(name, folder.resolve(name + STATE_SUFFIX), state, name);
    }

    @Override
    public long changeCount() {
        return changeCount.get();
    }

    @Override
    public void addListener(MarkerListener listener) {
        Objects.requireNonNull(listener);
        if (!listeners.contains(listener)) {
            listeners.add(listener);
        }
    }

    @Override
    public void removeListener(MarkerListener listener) {
        listeners.remove(listener);
    }

    private void changed(MarkerChange change) {
        for (MarkerListener l : listeners) {
            try {
                l.markerChanged(change);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "marker listener " + l + " failed on " + change, e);
            }
        }
        if (publisher != null) {
            try {
                publisher.accept(change);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "cannot publish marker change " + change, e);
            }
        }
    }

    private Marker writeFile(String name, Path path, Map<String, String> content, String writer)
            throws MarkerStoreException {
        Instant now = clock.get();
        String boot = bootId();
        StringBuilder sb = new StringBuilder();
        sb.append(Markers.KEY_BOOT_ID).append('=').append(boot).append('\n');
        sb.append(Markers.KEY_WRITTEN_AT).append('=').append(now).append('\n');
        sb.append(Markers.KEY_WRITER).append('=').append(value(writer == null ? "" : writer)).append('\n');
        for (Map.Entry<String, String> e : content.entrySet()) {
            String k = e.getKey();
            if (k == null || !KEY.matcher(k).matches() || HEADER.contains(k)) {
                throw new IllegalArgumentException("invalid marker key '" + k + "' for " + path);
            }
            sb.append(k).append('=').append(value(e.getValue())).append('\n');
        }
        byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
        Path dir = path.getParent();
        synchronized (writeLock) {
            try {
                DurableFiles.writeAtomically(path, bytes);
            } catch (IOException | SecurityException e) {
                throw fail(path, "cannot write marker file " + path + " (folder " + dir + "): " + e, e);
            }
            lastError = null;
        }
        Map<String, String> copy = new LinkedHashMap<>();
        content.forEach((k, v) -> copy.put(k, v == null ? "" : v.trim()));
        return new Marker(name, boot, now, writer, copy);
    }

    private MarkerStoreException fail(Path path, String message, Exception cause) {
        lastError = message;
        LOG.log(Level.ERROR, message);
        return new MarkerStoreException(path, message, cause);
    }

    private static String value(String v) {
        String s = v == null ? "" : v.trim();
        if (s.indexOf('\n') >= 0 || s.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("marker values are one line: '" + s + "'");
        }
        return s;
    }

    private static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches() || name.endsWith(STATE_SUFFIX)) {
            throw new IllegalArgumentException("invalid marker name '" + name + "'");
        }
    }
}
