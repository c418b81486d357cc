package io.npulifecycle.files.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Replaces a file so that after a crash or a power loss at any moment a reader finds either the whole old content or
 * the whole new content, never a mix or an empty file: the bytes go to a temporary file in the same folder
 * ({@code .<name>.tmp-<random>}, a leading dot so that readers listing the folder pass it over), which is fsynced,
 * renamed atomically over the file, and then the folder is fsynced so that the rename itself survives.
 *
 * <p>The node agent's bundles keep their state this way (markers, the rebooter's state file, the pending Node writes,
 * the staged driver version); each carries its own private copy of this package (bnd {@code -conditionalpackage}),
 * so it is never exported or shared between bundles at run time.
 */
public final class DurableFiles {

    private DurableFiles() {
    }

    /**
     * Writes {@code bytes} as the whole content of {@code file}, replacing what was there.
     *
     * @param file the file; its folder is created when missing
     * @param bytes the new content
     * @throws IOException when the folder, the temporary file or the rename fails, or when the folder's file system
     *         cannot rename atomically (the message names the folder); the file then keeps its old content and the
     *         temporary file is removed
     */
    public static void writeAtomically(Path file, byte[] bytes) throws IOException {
        Path dir = file.getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "." + file.getFileName() + ".tmp-", "");
        boolean moved = false;
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(bytes);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system of " + dir + " cannot rename atomically", e);
            }
            moved = true;
            syncFolder(dir);
        } finally {
            if (!moved) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // readers pass the temporary file over (leading dot); the first error is the one to report
                }
            }
        }
    }

    /**
     * Fsyncs a folder, so that a rename, a creation or a deletion of one of its files survives a power loss.
     *
     * @param dir the folder
     * @throws IOException when the folder cannot be opened or synced
     */
    public static void syncFolder(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
