package io.npulifecycle.files.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableFilesTest {

    @TempDir
    Path dir;

    static List<String> names(Path folder) throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void createsTheFolderAndReplacesTheWholeContentLeavingNoTemporaryFile() throws Exception {
        Path file = dir.resolve("state/rebooter.state");
        DurableFiles.writeAtomically(file, "first=1\nsecond=2\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("first=1\nsecond=2\n", Files.readString(file));
        DurableFiles.writeAtomically(file, "x\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("x\n", Files.readString(file), "shorter content replaces, never overlays");
        DurableFiles.writeAtomically(file, new byte[0]);
        assertEquals(0, Files.size(file));
        assertEquals(List.of("rebooter.state"), names(file.getParent()));
    }

    @Test
    void aFailedRenameKeepsTheTargetAndRemovesTheTemporaryFile() throws Exception {
        Path target = Files.createDirectories(dir.resolve("taken"));
        Files.writeString(target.resolve("inside"), "kept");
        assertThrows(IOException.class, () -> DurableFiles.writeAtomically(target, "new".getBytes(StandardCharsets.UTF_8)));
        assertEquals("kept", Files.readString(target.resolve("inside")));
        assertEquals(List.of("taken"), names(dir), "no temporary file left behind");
    }

    @Test
    void syncsAFolderAndNamesAMissingOne() throws Exception {
        DurableFiles.syncFolder(dir);
        IOException e = assertThrows(IOException.class, () -> DurableFiles.syncFolder(dir.resolve("missing")));
        assertTrue(e.getMessage().contains("missing"), e.getMessage());
    }
}
