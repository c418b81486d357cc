package io.npulifecycle.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.logging.FileHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.StreamHandler;
import java.util.logging.Logger;

/**
 * Logging of a runtime: java.util.logging (the backend of {@code System.Logger}, of SLF4J through slf4j-jdk14 and
 * of FileInstall), one line per record, to stdout (container-friendly) and to {@code logs/npu-lifecycle.log} (10 MiB
 * x 5 files). The audit logger {@code io.npulifecycle.audit} (Jolokia exec/write decisions, failed logins) also goes to
 * {@code logs/audit.log} (one file, appended, never rotated by the runtime: rotate it with logrotate
 * {@code copytruncate}).
 */
public final class LogSetup {

    /** Held so its level is not garbage-collected with the logger. */
    private static final Logger JETTY = Logger.getLogger("org.eclipse.jetty");
    /** The audit logger of the security bundle (every exec/write decision, failed logins): also in logs/audit.log. */
    private static final Logger AUDIT = Logger.getLogger("io.npulifecycle.audit");

    private LogSetup() {
    }

    /** One line: {@code 2026-11-30T10:00:00.123Z INFO  [logger] message}, then the stack trace if any. */
    static final class LineFormatter extends Formatter {
        @Override
        public String format(LogRecord r) {
            StringBuilder sb = new StringBuilder(160);
            sb.append(Instant.ofEpochMilli(r.getMillis())).append(' ');
            String level = levelName(r.getLevel());
            sb.append(level);
            for (int i = level.length(); i < 6; i++) {
                sb.append(' ');
            }
            String name = r.getLoggerName() == null ? "" : r.getLoggerName();
            sb.append('[').append(shorten(name)).append("] ").append(formatMessage(r)).append('\n');
            if (r.getThrown() != null) {
                java.io.StringWriter sw = new java.io.StringWriter();
                r.getThrown().printStackTrace(new java.io.PrintWriter(sw));
                sb.append(sw);
            }
            return sb.toString();
        }

        private static String shorten(String name) {
            int dot = name.lastIndexOf('.');
            return dot < 0 ? name : name.substring(dot + 1);
        }
    }

    static String levelName(Level l) {
        int v = l.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "ERROR";
        }
        if (v >= Level.WARNING.intValue()) {
            return "WARN";
        }
        if (v >= Level.INFO.intValue()) {
            return "INFO";
        }
        if (v >= Level.FINE.intValue()) {
            return "DEBUG";
        }
        return "TRACE";
    }

    /**
     * @param level ERROR, WARN, INFO, DEBUG or TRACE
     * @return the JUL level
     */
    static Level julLevel(String level) {
        switch (level) {
            case "ERROR": return Level.SEVERE;
            case "WARN": return Level.WARNING;
            case "DEBUG": return Level.FINE;
            case "TRACE": return Level.FINEST;
            default: return Level.INFO;
        }
    }

    /**
     * Configures the root logger.
     *
     * @param level ERROR, WARN, INFO, DEBUG or TRACE
     * @param logs the {@code logs/} folder, or {@code null} for stdout only
     * @param out where console records go (stdout)
     * @return a warning to print if the log file could not be opened, else {@code null}
     */
    public static String configure(String level, Path logs, PrintStream out) {
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        Level l = julLevel(level);
        root.setLevel(l);
        // A StreamHandler on stdout that flushes every record and never closes the stream. (ConsoleHandler would
        // close System.err when given another stream.)
        Handler console = new StreamHandler(out, new LineFormatter()) {
            @Override
            public synchronized void publish(LogRecord r) {
                super.publish(r);
                flush();
            }

            @Override
            public synchronized void close() {
                flush();
            }
        };
        console.setLevel(l);
        root.addHandler(console);
        // Jetty is chatty at INFO, and at DEBUG it logs request headers, Authorization included: never below INFO.
        JETTY.setLevel(l.intValue() >= Level.INFO.intValue() ? Level.WARNING : Level.INFO);
        // never above INFO, whatever log.level says: allowed execs are INFO lines
        AUDIT.setLevel(l.intValue() < Level.INFO.intValue() ? l : Level.INFO);
        if (logs == null) {
            return null;
        }
        try {
            // logs may hold host names, versions and chips: owner and group only
            java.nio.file.Files.setPosixFilePermissions(logs,
                    java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-x---"));
            FileHandler file = new FileHandler(logs.resolve("npu-lifecycle.%g.log").toString(), 10 * 1024 * 1024, 5,
                    true);
            file.setFormatter(new LineFormatter());
            file.setLevel(l);
            file.setEncoding("UTF-8");
            root.addHandler(file);
            for (Handler h : AUDIT.getHandlers()) {
                AUDIT.removeHandler(h);
                h.close();
            }
            FileHandler audit = new FileHandler(logs.resolve("audit.log").toString(), 0, 1, true);
            audit.setFormatter(new LineFormatter());
            audit.setLevel(Level.INFO);
            audit.setEncoding("UTF-8");
            AUDIT.addHandler(audit);
            try {
                // the audit trail names users and what they did: owner only (docs/security.md)
                java.nio.file.Files.setPosixFilePermissions(logs.resolve("audit.log"),
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException | IOException e) {
                // not a POSIX file system: its own permissions apply
            }
            return null;
        } catch (IOException | SecurityException e) {
            return "cannot write the log file under " + logs + ": " + e + "; logging to stdout only";
        }
    }
}
