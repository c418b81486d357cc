package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.markers.internal.FileMarkerStore;

/** The health-watch state record and its codec: the on-disk format of {@code health-watch.state}. */
class WatchStateTest {

    private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    private static final ChipId A = new ChipId(0, 0);
    private static final ChipId B = new ChipId(1, 0);

    /** The content lines of a state file as the health-watch writes it: the format every release must keep. */
    private static final String CONTENT = """
            expectedChips=0:0,1:0
            wedgeActive=true
            wedgeSince=2026-11-30T10:03:00Z
            wedgeChips=1:0
            driverReadyBeforeWedge=true
            markersDirty=false
            probeErrorsInRow=2
            probeDegraded=false
            chip.0:0.failures=1
            chip.0:0.wedged=false
            chip.1:0.failures=3
            chip.1:0.wedged=true
            """;

    @TempDir
    Path dir;

    private static WatchState sample() {
        Map<ChipId, WatchState.Strikes> chips = new TreeMap<>();
        chips.put(A, new WatchState.Strikes(1, false));
        chips.put(B, new WatchState.Strikes(3, true));
        return new WatchState(ChipId.parseList("0:0,1:0"), true, Instant.parse("2026-11-30T10:03:00Z"),
                ChipId.parseList("1:0"), true, false, 2, false, new TreeMap<>(chips));
    }

    private static Map<String, String> parse(String content) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : content.split("\n")) {
            if (!line.isBlank()) {
                int eq = line.indexOf('=');
                m.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return m;
    }

    private FileMarkerStore store() {
        return new FileMarkerStore(dir, "boot-1", () -> T0, null);
    }

    @Test
    void encodesInTheFixedKeyOrder() {
        assertEquals(parse(CONTENT), sample().toMap());
        assertEquals(List.copyOf(parse(CONTENT).keySet()), List.copyOf(sample().toMap().keySet()), "key order");
    }

    @Test
    void theFileIsByteForByteTheKnownFormat() throws Exception {
        store().writeState(HealthWatchEngine.STATE_NAME, sample().toMap());
        assertEquals("bootId=boot-1\nwrittenAt=" + T0 + "\nwriter=health-watch\n" + CONTENT,
                Files.readString(dir.resolve("health-watch.state")));
    }

    @Test
    void roundTrip() throws Exception {
        assertEquals(sample(), WatchState.fromMap(sample().toMap()));
        WatchState empty = new WatchState(null, false, null, null, false, false, 0, false, null);
        assertEquals(empty, WatchState.fromMap(empty.toMap()));
        assertEquals(empty, WatchState.fromMap(Map.of()), "every key missing: the defaults");
    }

    @Test
    void chipsWithoutAStrikeAndNotWedgedAreNotWritten() {
        TreeMap<ChipId, WatchState.Strikes> chips = new TreeMap<>();
        chips.put(A, new WatchState.Strikes(0, false));
        chips.put(B, new WatchState.Strikes(0, true));
        Map<String, String> m = new WatchState(null, false, null, null, false, false, 0, false, chips).toMap();
        assertFalse(m.containsKey("chip.0:0.failures"));
        assertEquals("0", m.get("chip.1:0.failures"));
        assertEquals("true", m.get("chip.1:0.wedged"));
    }

    @Test
    void anOlderFileWithoutTheLaterKeysLoadsWithDefaults() throws Exception {
        WatchState s = WatchState.fromMap(parse("""
                expectedChips=0:0,1:0
                wedgeActive=true
                wedgeSince=
                wedgeChips=0:0
                driverReadyBeforeWedge=true
                chip.0:0.failures=3
                chip.0:0.wedged=true
                """));
        assertTrue(s.wedgeActive());
        assertNull(s.wedgeSince(), "an empty wedgeSince is no time (the tracker dates it at restore)");
        assertFalse(s.markersDirty());
        assertEquals(0, s.probeErrorsInRow());
        assertFalse(s.probeDegraded());
        assertEquals(Map.of(A, new WatchState.Strikes(3, true)), s.chips());
    }

    @Test
    void readingIsLenientWhereEveryWrittenFileMustLoad() throws Exception {
        WatchState s = WatchState.fromMap(parse("""
                wedgeActive=TRUE
                probeDegraded=yes
                someFutureKey=1
                chip.1:0.wedged=true
                chip.0:0.failures=0
                """));
        assertTrue(s.wedgeActive(), "a boolean is case-insensitive");
        assertFalse(s.probeDegraded(), "anything but true is false");
        assertEquals(Map.of(A, new WatchState.Strikes(0, false)), s.chips(), "a wedged key without failures is ignored");
        assertTrue(s.expectedChips().isEmpty());
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "expectedChips,        0:0;zz,                 a chip list",
        "wedgeChips,           x,                      a chip list",
        "wedgeSince,           yesterday,              an ISO-8601 instant",
        "probeErrorsInRow,     many,                   a whole number",
        "chip.0:0.failures,    two,                    a whole number",
        "chip.zz.failures,     1,                      a chip npu:chip",
        "chip.failures,        1,                      a chip npu:chip",
    })
    void malformedValuesAreRefusedNamingTheKey(String key, String value, String expected) {
        Map<String, String> m = new LinkedHashMap<>(sample().toMap());
        m.put(key, value.replace(';', ','));
        WatchState.Invalid e = assertThrows(WatchState.Invalid.class, () -> WatchState.fromMap(m));
        assertTrue(e.getMessage().startsWith("key " + key + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(" is not " + expected), e.getMessage());
    }

    @Test
    void theStateFileLoadsWhatItSavedAndDoesNotRewriteAnUnchangedState() throws Exception {
        WatchStateFile file = new WatchStateFile(store());
        assertNull(file.load(), "no file: no state");
        assertEquals(WatchStateFile.Saved.WRITTEN, file.save(sample()));
        assertEquals(WatchStateFile.Saved.UNCHANGED, file.save(sample()));
        WatchStateFile restarted = new WatchStateFile(store());
        assertEquals(sample(), restarted.load());
        assertEquals(WatchStateFile.Saved.UNCHANGED, restarted.save(sample()), "the file holds it already");
        assertNull(restarted.error());
    }

    @Test
    void aMalformedStateFileLoadsAsNoStateWithAnErrorNamingTheFileAndTheKey() throws Exception {
        try (LogLines log = new LogLines(HealthWatchEngine.class.getName())) {
            Files.writeString(dir.resolve("health-watch.state"), "bootId=boot-1\nwrittenAt=" + T0
                    + "\nwriter=health-watch\nexpectedChips=0:0\nprobeErrorsInRow=lots\n");
            assertNull(new WatchStateFile(store()).load());
            List<String> logged = log.withLevels();
            assertEquals(1, logged.size(), String.valueOf(logged));
            assertTrue(logged.get(0).startsWith("SEVERE health-watch state file health-watch.state in " + dir
                    + " is invalid (key probeErrorsInRow: 'lots' is not a whole number"), logged.get(0));
            assertTrue(logged.get(0).endsWith("): starting from a clean state"), logged.get(0));
        }
    }

    @Test
    void aFailedWriteIsReportedAndRetried() throws Exception {
        Path notAFolder = Files.writeString(dir.resolve("file"), "x");
        WatchStateFile file = new WatchStateFile(new FileMarkerStore(notAFolder.resolve("sub"), "boot-1", () -> T0, null));
        assertEquals(WatchStateFile.Saved.FAILED, file.save(sample()));
        assertTrue(file.error().startsWith("cannot write the state file: "), file.error());
        assertEquals(WatchStateFile.Saved.FAILED, file.save(sample()), "not taken as written");
    }
}
