package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The claim of one {@code npu-lifecycle cluster} on its {@code --kubeconfig}: an exclusive lock on
 * {@code <kubeconfig>.lock} beside it, holding the owner's pid, for as long as the command runs. The operating
 * system releases the lock when the process ends, however it ends, so a lock file left by a killed command is taken
 * over; a second command with the same {@code --kubeconfig} is refused while the first one lives.
 */
final class KubeconfigLock implements AutoCloseable {

    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;

    private KubeconfigLock(Path file, FileChannel channel, FileLock lock) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
    }

    /** A command that runs holds the lock. */
    static final class Held extends Exception {
        private static final long serialVersionUID = 1L;

        Held(String message) {
            super(message);
        }
    }

    /**
     * @param kubeconfig the {@code --kubeconfig} file
     * @return the lock, held until {@link #close()}
     * @throws Held when another live command holds it (the message names its pid and the file)
     * @throws IOException when the lock file cannot be created or written
     */
    static KubeconfigLock acquire(Path kubeconfig) throws Held, IOException {
        Path file = kubeconfig.resolveSibling(kubeconfig.getFileName() + ".lock");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException sameJvm) {
            lock = null;
        }
        if (lock == null) {
            String owner = owner(ch);
            ch.close();
            throw new Held("--kubeconfig " + kubeconfig + " belongs to another 'npu-lifecycle cluster' that is still "
                    + "running" + (owner.isEmpty() ? "" : " (pid " + owner + ")") + ": stop it first, or give "
                    + "another --kubeconfig");
        }
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
        ch.force(false);
        return new KubeconfigLock(file, ch, lock);
    }

    private static String owner(FileChannel ch) {
        try {
            ByteBuffer b = ByteBuffer.allocate(32);
            int n = ch.read(b, 0);
            return n <= 0 ? "" : new String(b.array(), 0, n, StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return "";
        }
    }

    /** Releases the lock and removes the lock file. */
    @Override
    public void close() {
        try {
            Files.deleteIfExists(file);
            lock.release();
            channel.close();
        } catch (IOException e) {
            // the process ends soon; the operating system releases the lock then
        }
    }
}
