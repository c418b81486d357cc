package io.npulifecycle.probe.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/**
 * Reads the output of {@code npu-smi info} into per-chip results. Used by the live probe and by the offline
 * {@code check-npu-smi}.
 *
 * <p>The table is read by {@code |} cells and border lines ({@code +---+}, {@code +===+}), never by column widths
 * (fixtures README: columns widen between releases). The chip table starts at the header row whose first cell starts
 * with {@code NPU} and which has a {@code Health} cell; a chip is a block of two rows: the first carries the NPU id
 * (first token of cell 1) and the Health (cell 2), the second the chip id (first token of cell 1). The table ends at
 * the process table header ({@code Process id}) or at the end of the output; a missing closing border or process
 * table is fine (fixtures README), a block cut in its middle is not.
 *
 * <p>The driver version is the token after {@code Version:} in a row above the chip table; absent on some products
 * (the A3 fixture), then {@code null}.
 *
 * <p>When there is no chip table, the output is searched for a DCMI return code ({@code ret is -8005}) or the text
 * {@code Get physical device number failed} (a strike: the driver refuses to enumerate). Anything else, including an
 * unknown Health value, negative or duplicate ids, or a cut block, is a {@link Classification#PROBE_ERROR}: never a
 * strike from unreadable output.
 */
public final class NpuSmiParser {

    /** Largest output read: 1 MiB. Bigger outputs are a probe error. */
    public static final int DEFAULT_MAX_BYTES = 1024 * 1024;
    /** Raw output kept for the MBean: 4 KiB. */
    public static final int RAW_KEEP_CHARS = 4096;

    private static final Pattern VERSION = Pattern.compile("Version:\\s*([^\\s|]+)");
    private static final Pattern RET_CODE = Pattern.compile("ret(?:\\s+is|\\s*=|\\s*:)?\\s*(-\\d{3,6})\\b",
            Pattern.CASE_INSENSITIVE);
    private static final String NO_DEVICE = "get physical device number failed";

    private NpuSmiParser() {
    }

    /**
     * Parses raw bytes (as read from the process or a file).
     *
     * @param output the bytes; decoded as UTF-8 with replacement
     * @param exitCode npu-smi's exit code
     * @param options switches
     * @return the result; never throws
     */
    public static ProbeResult parse(byte[] output, int exitCode, ProbeOptions options) {
        if (output.length > DEFAULT_MAX_BYTES) {
            return ProbeResult.whole(Classification.PROBE_ERROR,
                    "npu-smi output is " + output.length + " bytes, more than " + DEFAULT_MAX_BYTES,
                    cut(new String(output, 0, RAW_KEEP_CHARS, StandardCharsets.UTF_8)));
        }
        return parse(new String(output, StandardCharsets.UTF_8), exitCode, options);
    }

    /**
     * Parses npu-smi's output.
     *
     * @param text stdout and stderr of {@code npu-smi info}
     * @param exitCode its exit code
     * @param options switches
     * @return the result: a table ({@code outcome == null}) or a whole-probe outcome with an error; never throws
     */
    public static ProbeResult parse(String text, int exitCode, ProbeOptions options) {
        String raw = cut(text);
        try {
            if (text.length() > DEFAULT_MAX_BYTES) {
                return ProbeResult.whole(Classification.PROBE_ERROR,
                        "npu-smi output is longer than " + DEFAULT_MAX_BYTES + " characters", raw);
            }
            Table t = readTable(text, options);
            if (!t.headerFound || exitCode != 0) {
                ProbeResult err = errorOutput(text, exitCode, options, raw);
                if (err != null) {
                    return err;
                }
                if (t.headerFound) {
                    return ProbeResult.whole(Classification.PROBE_ERROR,
                            "npu-smi exited with code " + exitCode + " after printing its table", raw);
                }
                if (exitCode != 0) {
                    return ProbeResult.whole(Classification.PROBE_ERROR, "npu-smi exited with code " + exitCode
                            + " and printed no chip table: " + firstLine(text), raw);
                }
                return ProbeResult.whole(Classification.PROBE_ERROR,
                        text.isBlank() ? "npu-smi printed nothing" : "no npu-smi chip table found: " + firstLine(text), raw);
            }
            if (t.error != null) {
                return new ProbeResult(List.of(), t.version, Classification.PROBE_ERROR, t.error, raw);
            }
            t.chips.sort((a, b) -> a.id().compareTo(b.id()));
            return new ProbeResult(t.chips, t.version, null, null, raw);
        } catch (RuntimeException e) {
            // defensive: a parser bug must never escape as an exception or become a strike
            return ProbeResult.whole(Classification.PROBE_ERROR, "cannot parse npu-smi output: " + e, raw);
        }
    }

    /**
     * Maps Health cell text to a classification.
     *
     * @param health the Health cell, e.g. {@code OK}
     * @param options switches
     * @return the classification, or {@code null} when the value is unknown (a probe error for the whole output)
     */
    public static Classification classifyHealth(String health, ProbeOptions options) {
        switch (health.toLowerCase(Locale.ROOT)) {
            case "ok":
                return Classification.HEALTHY;
            case "warning":
                return Classification.DEGRADED;
            case "alarm":
            case "critical":
                return options.alarmIsFailure() ? Classification.FAILED : Classification.DEGRADED;
            default:
                return null;
        }
    }

    private static ProbeResult errorOutput(String text, int exitCode, ProbeOptions options, String raw) {
        Matcher m = RET_CODE.matcher(text);
        if (m.find()) {
            int code;
            try {
                code = Integer.parseInt(m.group(1));
            } catch (NumberFormatException e) {
                return null;
            }
            Classification c = DcmiCodes.classify(code, options);
            return ProbeResult.whole(c, "npu-smi (exit " + exitCode + "): " + DcmiCodes.describe(code) + ": "
                    + lineAt(text, m.start()), raw);
        }
        if (text.toLowerCase(Locale.ROOT).contains(NO_DEVICE)) {
            return ProbeResult.whole(Classification.FAILED,
                    "npu-smi (exit " + exitCode + "): the driver refuses to enumerate: Get physical device number failed", raw);
        }
        return null;
    }

    private static final class Table {
        boolean headerFound;
        String version;
        String error;
        final List<ChipResult> chips = new ArrayList<>();
    }

    private enum Section { BEFORE, HEADER, CHIPS, DONE }

    private static Table readTable(String text, ProbeOptions options) {
        Table t = new Table();
        Section section = Section.BEFORE;
        Set<ChipId> seen = new HashSet<>();
        int pendingNpu = -1;
        String pendingHealth = null;
        Classification pendingClass = null;
        int lineNo = 0;
        int start = 0;
        int len = text.length();
        while (start <= len && section != Section.DONE) {
            int nl = text.indexOf('\n', start);
            int end = nl < 0 ? len : nl;
            String line = text.substring(start, end).strip();
            start = end + 1;
            lineNo++;
            if (nl < 0 && line.isEmpty()) {
                break;
            }
            if (isBorder(line)) {
                if (section == Section.HEADER) {
                    section = Section.CHIPS;
                }
                if (section == Section.CHIPS && pendingHealth != null) {
                    t.error = "line " + lineNo + ": chip block of NPU " + pendingNpu + " has no chip row";
                    return t;
                }
                continue;
            }
            if (!line.startsWith("|")) {
                continue; // noise (driver log lines) around the table
            }
            List<String> cells = cells(line);
            String first = cells.get(0);
            if (section == Section.BEFORE) {
                if (t.version == null) {
                    Matcher vm = VERSION.matcher(line);
                    if (vm.find()) {
                        t.version = vm.group(1);
                    }
                }
                if (isChipHeader(cells)) {
                    t.headerFound = true;
                    section = Section.HEADER;
                }
                continue;
            }
            if (section == Section.HEADER) {
                if (startsWithWord(first, "Chip")) {
                    continue; // second header row (Chip / Device / Phy-ID)
                }
                section = Section.CHIPS; // no '=' border under the header: read on
            }
            // Section.CHIPS
            if (startsWithWord(first, "NPU") || line.contains("Process id") || first.startsWith("No running process")) {
                if (pendingHealth != null) {
                    t.error = "line " + lineNo + ": chip block of NPU " + pendingNpu + " has no chip row";
                    return t;
                }
                section = Section.DONE;
                break;
            }
            if (cells.size() < 2) {
                t.error = "line " + lineNo + ": chip table row has no Health/Bus-Id cell";
                return t;
            }
            String idToken = firstToken(first);
            if (pendingHealth == null) {
                Integer npu = id(idToken);
                if (npu == null) {
                    t.error = "line " + lineNo + ": NPU id '" + idToken + "' is not a non-negative integer";
                    return t;
                }
                String health = cells.get(1).strip();
                Classification c = classifyHealth(health, options);
                if (c == null) {
                    t.error = "line " + lineNo + ": unknown Health value '" + shorten(health) + "' for NPU " + npu;
                    return t;
                }
                pendingNpu = npu;
                pendingHealth = health;
                pendingClass = c;
            } else {
                Integer chip = id(idToken);
                if (chip == null) {
                    t.error = "line " + lineNo + ": chip id '" + idToken + "' of NPU " + pendingNpu
                            + " is not a non-negative integer";
                    return t;
                }
                ChipId cid = new ChipId(pendingNpu, chip);
                if (!seen.add(cid)) {
                    t.error = "line " + lineNo + ": chip " + cid + " is listed twice";
                    return t;
                }
                String detail = pendingClass == Classification.HEALTHY ? null : "npu-smi Health " + pendingHealth;
                t.chips.add(new ChipResult(cid, pendingHealth, pendingClass, detail));
                pendingHealth = null;
                pendingClass = null;
            }
        }
        if (pendingHealth != null) {
            t.error = "output ends inside the chip block of NPU " + pendingNpu;
        }
        return t;
    }

    private static boolean isChipHeader(List<String> cells) {
        if (!startsWithWord(cells.get(0), "NPU")) {
            return false;
        }
        for (int i = 1; i < cells.size(); i++) {
            if (startsWithWord(cells.get(i), "Health")) {
                return true;
            }
        }
        return false;
    }

    private static boolean isBorder(String line) {
        if (line.length() < 2 || line.charAt(0) != '+') {
            return false;
        }
        for (int i = 1; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c != '-' && c != '=' && c != '+') {
                return false;
            }
        }
        return true;
    }

    /** Cells of a {@code |} row, stripped; a missing closing {@code |} (cut line) is tolerated. */
    private static List<String> cells(String line) {
        String body = line.substring(1);
        if (body.endsWith("|")) {
            body = body.substring(0, body.length() - 1);
        }
        List<String> out = new ArrayList<>();
        int from = 0;
        while (true) {
            int bar = body.indexOf('|', from);
            if (bar < 0) {
                out.add(body.substring(from).strip());
                return out;
            }
            out.add(body.substring(from, bar).strip());
            from = bar + 1;
        }
    }

    private static boolean startsWithWord(String cell, String word) {
        return cell.startsWith(word) && (cell.length() == word.length() || !Character.isLetterOrDigit(cell.charAt(word.length())));
    }

    private static String firstToken(String cell) {
        int i = 0;
        while (i < cell.length() && !Character.isWhitespace(cell.charAt(i))) {
            i++;
        }
        return cell.substring(0, i);
    }

    private static Integer id(String token) {
        if (token.isEmpty() || token.length() > 9) {
            return null;
        }
        for (int i = 0; i < token.length(); i++) {
            if (token.charAt(i) < '0' || token.charAt(i) > '9') {
                return null;
            }
        }
        return Integer.valueOf(token);
    }

    private static String firstLine(String text) {
        for (String l : text.split("\n", 50)) {
            if (!l.isBlank()) {
                return shorten(l.strip());
            }
        }
        return "";
    }

    private static String lineAt(String text, int pos) {
        int s = text.lastIndexOf('\n', pos) + 1;
        int e = text.indexOf('\n', pos);
        return shorten(text.substring(s, e < 0 ? text.length() : e).strip());
    }

    private static String shorten(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && sb.length() < 120; i++) {
            char c = s.charAt(i);
            sb.append(c < 0x20 || c == 0x7f || c == '\uFFFD' ? '?' : c);
        }
        return s.length() > 120 ? sb + "..." : sb.toString();
    }

    /**
     * The raw output as kept for the MBean {@code HealthWatch/LastRawOutput}: cut to {@value #RAW_KEEP_CHARS}
     * characters, every control character except {@code \n} and {@code \t} (C0, DEL, C1) and every unpaired surrogate
     * replaced by {@code ?}, so the text is valid UTF-8 and Jolokia serves it as valid JSON (a control character of
     * binary output would make the JSON invalid).
     *
     * @param text raw output, may be {@code null}
     * @return the printable text, {@code null} for {@code null}
     */
    public static String printable(String text) {
        if (text == null) {
            return null;
        }
        String t = cut(text);
        StringBuilder sb = new StringBuilder(t.length());
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < t.length() && Character.isLowSurrogate(t.charAt(i + 1))) {
                sb.append(c).append(t.charAt(++i));
            } else if (Character.isSurrogate(c) || (Character.isISOControl(c) && c != '\n' && c != '\t')) {
                sb.append('?');
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /**
     * @param text raw output
     * @return the text cut to {@value #RAW_KEEP_CHARS} characters
     */
    public static String cut(String text) {
        return text.length() <= RAW_KEEP_CHARS ? text : text.substring(0, RAW_KEEP_CHARS);
    }
}
