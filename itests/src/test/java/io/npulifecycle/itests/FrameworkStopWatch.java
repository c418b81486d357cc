package io.npulifecycle.itests;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Evidence for a framework that does not stop: Pax Exam stops a test class's Felix after its last test and waits up
 * to 180 s ("Framework has not yet stopped after 180000 ms"); a stop that hangs leaves that framework, its MBeans and
 * its threads in the JVM. Armed when a class's tests are over ({@link FelixTestSupport}'s {@code @AfterClass}), it
 * writes every thread's stack, with the locks held and waited for, to
 * {@code target/failed-runs/framework-stop-<time>-threads.txt} (and says so on stderr) when the stop takes longer than
 * {@link #GRACE}; the next class's {@code @BeforeClass} disarms it.
 */
final class FrameworkStopWatch {

    /** A framework stop of the tests takes a few seconds; this long means it hangs. */
    static final Duration GRACE = Duration.ofSeconds(60);

    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "framework-stop-watch");
        t.setDaemon(true);
        return t;
    });
    private static ScheduledFuture<?> armed;

    private FrameworkStopWatch() {
    }

    static synchronized void arm(String what) {
        disarm();
        armed = TIMER.schedule(() -> dump(what), GRACE.toSeconds(), TimeUnit.SECONDS);
    }

    static synchronized void disarm() {
        if (armed != null) {
            armed.cancel(false);
            armed = null;
        }
    }

    private static void dump(String what) {
        StringBuilder b = new StringBuilder("The framework of " + what + " has not stopped " + GRACE.toSeconds()
                + " s after its last test (" + Instant.now() + "); every thread:\n\n");
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            b.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
            if (t.getLockName() != null) {
                b.append(" on ").append(t.getLockName());
            }
            if (t.getLockOwnerName() != null) {
                b.append(" owned by \"").append(t.getLockOwnerName()).append('"');
            }
            b.append('\n');
            for (StackTraceElement e : t.getStackTrace()) {
                b.append("\tat ").append(e).append('\n');
            }
            for (var m : t.getLockedMonitors()) {
                b.append("\t- locked ").append(m).append(" at ").append(m.getLockedStackFrame()).append('\n');
            }
            b.append('\n');
        }
        Path file = Path.of("target", "failed-runs", "framework-stop-" + System.currentTimeMillis() + "-threads.txt")
                .toAbsolutePath();
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, b, StandardCharsets.UTF_8);
            System.err.println("FrameworkStopWatch: the framework of " + what + " has not stopped after "
                    + GRACE.toSeconds() + " s: thread dump in " + file);
        } catch (IOException e) {
            System.err.println(b);
        }
    }
}
