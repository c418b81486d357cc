package io.npulifecycle.simulator.common;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Another JVM's view of a port's lock file, for {@link LoopbackPortsTest}: {@code hold FOLDER PORT} locks
 * {@code FOLDER/PORT.lock} as {@link LoopbackPorts} does, prints {@code locked PORT} and keeps the lock until it is
 * killed; {@code probe FOLDER PORT} prints {@code free} when it could lock the file (and lets go at once) or
 * {@code held} when another process holds it, then exits.
 */
public final class PortLockProbe {

    private PortLockProbe() {
    }

    /**
     * @param args {@code hold|probe FOLDER PORT}
     * @throws Exception when the file cannot be opened
     */
    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[1]).resolve(Integer.parseInt(args[2]) + ".lock");
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = ch.tryLock();
        if (args[0].equals("probe")) {
            System.out.println(lock == null ? "held" : "free");
            ch.close();
            return;
        }
        if (lock == null) {
            System.out.println("already held");
            System.exit(1);
        }
        System.out.println("locked " + args[2]);
        System.out.flush();
        Object forever = new Object();
        synchronized (forever) {
            while (true) {
                forever.wait(); // holds the lock until the test kills this JVM
            }
        }
    }
}
