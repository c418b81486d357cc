package io.npulifecycle.kube.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.node.NodeKeys;

/** The pending-writes file: what is saved is loaded back; a damaged file gives every record that parses, and why. */
class PendingWritesFileTest {

    @TempDir
    Path dir;

    static PendingWritesFile.Content sample() {
        TreeMap<String, Optional<String>> labels = new TreeMap<>();
        labels.put(NodeKeys.REBOOT_REQUIRED, Optional.of("true"));
        labels.put(NodeKeys.RECOVERY_BLOCKED, Optional.empty());
        TreeMap<String, Optional<String>> annotations = new TreeMap<>();
        annotations.put(NodeKeys.RECOVERY_FAILURE, Optional.of("3 reboots in 24h; limit=3 (window 24h) ü % + = "));
        annotations.put(NodeKeys.REBOOTING_FROM_BOOT_ID, Optional.empty());
        return new PendingWritesFile.Content(List.of(
                new QueuedEvent("RebootRequired/boot-a/recovery/2026-12-01T10:00:00Z", NodeKeys.NORMAL,
                        NodeKeys.EVENT_REBOOT_REQUIRED, "reason=recovery chips=1:0 since=2026-12-01T10:00:00Z bootId=boot-a",
                        Instant.parse("2026-12-01T10:00:01Z")),
                new QueuedEvent("Rebooting/boot-a", NodeKeys.NORMAL, NodeKeys.EVENT_REBOOTING, "",
                        Instant.parse("2026-12-01T10:00:02.5Z"))), labels, annotations);
    }

    @Test
    void whatIsSavedIsLoadedBackInOrder() throws IOException {
        PendingWritesFile f = new PendingWritesFile(dir);
        f.save(sample());

        PendingWritesFile.Loaded l = f.load();

        assertEquals(List.of(), l.problems());
        assertEquals(sample(), l.content());
        assertEquals("Rebooting/boot-a", l.content().events().get(1).key());
        List<Path> files;
        try (var s = Files.list(dir)) {
            files = s.toList();
        }
        assertEquals(List.of(dir.resolve(PendingWritesFile.NAME)), files, "no temporary file left");
    }

    @Test
    void nothingPendingRemovesTheFileAndNoFileIsNothingPending() throws IOException {
        PendingWritesFile f = new PendingWritesFile(dir);
        f.save(sample());
        f.save(PendingWritesFile.Content.EMPTY);

        assertFalse(Files.exists(f.path()));
        PendingWritesFile.Loaded l = f.load();
        assertTrue(l.content().isEmpty());
        assertEquals(List.of(), l.problems());
    }

    @Test
    void aTruncatedFileGivesTheRecordsBeforeTheCutAndSaysItIsTruncated() throws IOException {
        PendingWritesFile f = new PendingWritesFile(dir);
        f.save(sample());
        String text = Files.readString(f.path());
        // cut in the middle of the third record (the first label)
        int cut = text.indexOf("\nlabel ") + 8;
        Files.writeString(f.path(), text.substring(0, cut));

        PendingWritesFile.Loaded l = f.load();

        assertEquals(2, l.content().events().size(), "both Events before the cut");
        assertEquals(2, l.problems().size(), l.problems().toString());
        assertTrue(l.problems().get(1).contains("no 'end' line: the file is truncated"), l.problems().toString());
        assertTrue(l.problems().get(0).contains(f.path() + " line 5: "), l.problems().toString());
    }

    @Test
    void malformedLinesAreNamedAndTheOthersKept() throws IOException {
        PendingWritesFile f = new PendingWritesFile(dir);
        Files.writeString(f.path(), String.join("\n",
                "format=1",
                "event not-a-time k Normal R m",
                "event 2026-12-01T10:00:00Z k Sideways R m",
                "label example.com/not-ours v",
                "label " + NodeKeys.NPU_HEALTH + " wedged",
                "frobnicate x",
                "annotation %ZZ v",
                "end 6",
                ""), StandardCharsets.UTF_8);

        PendingWritesFile.Loaded l = f.load();

        assertEquals(Optional.of("wedged"), l.content().labels().get(NodeKeys.NPU_HEALTH));
        assertEquals(1, l.content().size());
        List<String> p = l.problems();
        assertEquals(5, p.size(), p.toString());
        assertTrue(p.get(0).contains("line 2: expected an ISO-8601 instant, got 'not-a-time'"), p.get(0));
        assertTrue(p.get(1).contains("line 3: Event type must be Normal or Warning"), p.get(1));
        assertTrue(p.get(2).contains("line 4: 'example.com/not-ours' is not a key the node agent writes"), p.get(2));
        assertTrue(p.get(3).contains("line 6: expected event, label,"), p.get(3));
        assertTrue(p.get(4).contains("line 7: "), p.get(4));
    }

    @Test
    void binaryGarbageIsAProblemNotAnException() throws IOException {
        PendingWritesFile f = new PendingWritesFile(dir);
        Files.write(f.path(), new byte[] {0, (byte) 0xff, (byte) 0xfe, '\n', 'x', '='});

        PendingWritesFile.Loaded l = f.load();

        assertTrue(l.content().isEmpty());
        assertFalse(l.problems().isEmpty());
    }

    @Test
    void aFileMovedAsideIsNotReplacedByTheNextSave() throws IOException {
        PendingWritesFile f = new PendingWritesFile(dir);
        Files.writeString(f.path(), "garbage\n");

        Path aside = f.quarantine("1764583200000");
        f.save(sample());

        assertEquals(dir.resolve(PendingWritesFile.NAME + ".corrupt-1764583200000"), aside);
        assertEquals("garbage\n", Files.readString(aside));
        assertEquals(sample(), f.load().content());
    }
}
