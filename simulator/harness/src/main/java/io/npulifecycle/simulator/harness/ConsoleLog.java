package io.npulifecycle.simulator.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * What one run of a runtime wrote to its {@code console.log} (the launcher's standard output and error, the kernel
 * appending every run to the one file): whether it got as far as the launcher's {@code npu-lifecycle <role> runtime
 * <version> started: Jolokia ...} line, and its last error line.
 */
final class ConsoleLog {

    /** A line of the runtimes' log format: {@code 2026-11-30T10:00:00.123Z ERROR [Main] message}. */
    private static final Pattern RECORD = Pattern.compile("^\\d{4}-\\d{2}-\\d{2}T\\S+ +(\\S+) .*");
    /** A stack trace's frame or elision. */
    private static final Pattern FRAME = Pattern.compile("^\\s+(at |\\.\\.\\. \\d+ more).*");
    /** The longest last-error line kept, in characters. */
    static final int MAX_LINE = 600;

    /**
     * @param ready whether the run printed the launcher's {@code started:} line (its framework and bundles started)
     * @param lastError its last error line: the last log record at ERROR level, or the last plain line that is not a
     *        stack frame or a warning (the launcher prints a refusal, e.g. a bad {@code runtime.properties}, as a
     *        plain line on standard error, as the JVM does its fatal errors); else its last non-blank line; else
     *        {@code (no output)}; at most {@value #MAX_LINE} characters
     */
    record Run(boolean ready, String lastError) {
    }

    private ConsoleLog() {
    }

    /**
     * Reads one run's part of a console log.
     *
     * @param file the console log
     * @param from the byte offset where the run's output starts (the file's size when it was started)
     * @param to the byte offset where it ends (exclusive; the file's size when the next run started), or -1 for the
     *        end of the file
     * @return what the run wrote; {@code (cannot read ...)} as its last error when the file cannot be read
     */
    static Run read(Path file, long from, long to) {
        try (InputStream in = Files.newInputStream(file)) {
            in.skipNBytes(Math.max(0, from));
            InputStream part = to < 0 ? in : new java.io.ByteArrayInputStream(in.readNBytes(
                    (int) Math.min(Integer.MAX_VALUE, Math.max(0, to - from))));
            return parse(new BufferedReader(new InputStreamReader(part, StandardCharsets.UTF_8)));
        } catch (IOException e) {
            return new Run(false, "(cannot read " + file + ": " + e.getMessage() + ")");
        }
    }

    /**
     * @param text one run's output
     * @return what it wrote
     */
    static Run parse(String text) {
        try {
            return parse(new BufferedReader(new java.io.StringReader(text)));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // a StringReader does not fail
        }
    }

    private static Run parse(BufferedReader r) throws IOException {
        boolean ready = false;
        String error = null;
        String last = null;
        String line;
        while ((line = r.readLine()) != null) {
            String t = line.strip();
            if (t.isEmpty()) {
                continue;
            }
            last = t;
            if (t.startsWith("npu-lifecycle ") && t.contains(" runtime ") && t.contains(" started: ")) {
                ready = true;
                continue;
            }
            if (isError(line)) {
                error = t;
            }
        }
        String chosen = error != null ? error : last != null ? last : "(no output)";
        return new Run(ready, chosen.length() <= MAX_LINE ? chosen : chosen.substring(0, MAX_LINE) + "...");
    }

    private static boolean isError(String line) {
        var m = RECORD.matcher(line);
        if (m.matches()) {
            String level = m.group(1);
            return level.equals("ERROR") || level.equals("SEVERE") || level.equals("FATAL");
        }
        if (FRAME.matcher(line).matches()) {
            return false;
        }
        String t = line.strip();
        return !(t.startsWith("WARN") || t.startsWith("INFO") || t.startsWith("DEBUG") || t.startsWith("SLF4J")
                || t.contains("VM warning"));
    }
}
