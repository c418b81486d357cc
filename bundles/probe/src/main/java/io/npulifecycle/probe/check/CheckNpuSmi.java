package io.npulifecycle.probe.check;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONObject;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.probe.internal.Assessment;
import io.npulifecycle.probe.internal.NpuSmiParser;
import io.npulifecycle.probe.internal.ProbeOptions;

/**
 * {@code check-npu-smi FILE [--exit-code N] [--expected-chips 0:0,1:0,...] [--alarm-is-failure] [--help]}: judges a saved
 * {@code npu-smi info} output with the live probe's parser and classifier and prints one JSON object:
 *
 * <pre>
 * {"verdict": "healthy|degraded|failed|probe-error", "driverVersion": "25.2.0" or null,
 *  "chips": [{"npu": 0, "chip": 0, "health": "OK", "classification": "healthy"}, ...],
 *  "error": null or "what was wrong"}
 * </pre>
 *
 * <p>{@code verdict} is the worst chip classification, or the outcome of the output as a whole ({@code probe-error}
 * when it cannot be parsed; {@code failed} for a DCMI code that is a strike, e.g. -8005). {@code --exit-code} is
 * npu-smi's exit code when the output was saved (default 0). {@code --help} lists every option ({@link #OPTIONS}).
 * Exit status: 0 whatever the verdict (and for {@code --help}); 2 when FILE cannot be read (the message names it and
 * says why in plain words: no such file, is a directory, ...) or the arguments are wrong (message on stderr). Runs on a plain class path: probe jar, api jar,
 * jolokia-json jar.
 */
public final class CheckNpuSmi {

    private CheckNpuSmi() {
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /**
     * The command without {@code System.exit}, for tests and the launcher.
     *
     * @param args arguments
     * @param out where the JSON goes
     * @param err where errors go
     * @return the exit status: 0, or 2 on an unreadable file or bad arguments
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        String file = null;
        int exitCode = 0;
        Set<ChipId> expected = Set.of();
        boolean alarmIsFailure = false;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.startsWith("-") && !OPTIONS.containsKey(a)) {
                    throw new IllegalArgumentException("unknown option '" + a + "' (--help lists the options)");
                }
                switch (a) {
                    case "--help":
                    case "-h":
                        out.print(help());
                        return 0;
                    case "--exit-code":
                        exitCode = exitCode(value(args, ++i, a));
                        break;
                    case "--expected-chips":
                        expected = expectedChips(value(args, ++i, a));
                        break;
                    case "--alarm-is-failure":
                        alarmIsFailure = true;
                        break;
                    default:
                        if (file != null) {
                            throw new IllegalArgumentException("unexpected argument '" + a + "' (one FILE is judged)");
                        }
                        file = a;
                }
            }
            if (file == null) {
                throw new IllegalArgumentException("no FILE given");
            }
        } catch (IllegalArgumentException e) {
            err.println("check-npu-smi: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        byte[] bytes;
        try {
            bytes = readCapped(Path.of(file), NpuSmiParser.DEFAULT_MAX_BYTES + 1);
        } catch (java.nio.file.InvalidPathException e) {
            err.println("check-npu-smi: cannot read " + file.replace('\0', '?') + ": not a valid path (" + e.getReason()
                    + ")");
            return 2;
        } catch (IOException e) {
            err.println("check-npu-smi: cannot read " + file + ": " + readProblem(Path.of(file), e));
            return 2;
        }
        ProbeResult r = NpuSmiParser.parse(bytes, exitCode, new ProbeOptions(alarmIsFailure, true));
        out.println(toJson(Assessment.of(r, expected)).toJSONString());
        return 0;
    }

    /** The one-line usage printed after an argument error. */
    static final String USAGE = "usage: check-npu-smi FILE [--exit-code N] [--expected-chips 0:0,1:0,...] "
            + "[--alarm-is-failure] (--help for more)";

    /** Every option {@link #run} accepts, with its help text, in the order the help lists them. */
    public static final java.util.Map<String, String> OPTIONS;

    static {
        java.util.Map<String, String> o = new java.util.LinkedHashMap<>();
        o.put("--exit-code", "N: npu-smi's exit status when the output was saved, 0 to 255 (default 0)");
        o.put("--expected-chips", "0:0,1:0,...: the chips the node has (npu:chip, comma-separated, no empty "
                + "element); a chip missing from the output is failed (default: the chips of the output)");
        o.put("--alarm-is-failure", "an Alarm health is a failure (the health-watch's alarmIsFailure); default a "
                + "degradation");
        o.put("--help", "this help");
        o.put("-h", "this help");
        OPTIONS = java.util.Collections.unmodifiableMap(o);
    }

    /** @return the help: what the command does, its arguments, every option of {@link #OPTIONS} and the exit status */
    static String help() {
        StringBuilder b = new StringBuilder();
        b.append("usage: check-npu-smi FILE [options]\n");
        b.append("Judges a saved 'npu-smi info' output (FILE) with the health-watch's parser and classifier and prints "
                + "one JSON object:\n{\"verdict\": healthy|degraded|failed|probe-error, \"driverVersion\", "
                + "\"chips\": [...], \"error\"}.\n");
        b.append("Options:\n");
        OPTIONS.forEach((name, text) -> b.append("  ").append(name).append(' ').append(text).append('\n'));
        b.append("Exit status: 0 whatever the verdict; 2 when FILE cannot be read or an argument is wrong.\n");
        return b.toString();
    }

    /**
     * @param v the value of {@code --expected-chips}
     * @return the chips
     * @throws IllegalArgumentException naming the option and the value when an element is empty or not
     *         {@code npu:chip}
     */
    static Set<ChipId> expectedChips(String v) {
        String[] parts = v.split(",", -1);
        for (int i = 0; i < parts.length; i++) {
            if (parts[i].isBlank()) {
                throw new IllegalArgumentException("--expected-chips '" + v + "': element " + (i + 1) + " is empty; "
                        + "expected npu:chip elements separated by single commas, e.g. 0:0,1:0");
            }
        }
        try {
            return ChipId.parseList(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--expected-chips '" + v + "': " + e.getMessage());
        }
    }

    /**
     * @param path the file that could not be read
     * @param e why
     * @return the reason in plain words: {@code no such file}, {@code is a directory}, {@code permission denied}, or
     *         the system's message
     */
    static String readProblem(Path path, IOException e) {
        if (Files.isDirectory(path)) {
            return "is a directory (expected a file holding the output of 'npu-smi info')";
        }
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied";
        }
        String reason = e instanceof java.nio.file.FileSystemException f ? f.getReason() : e.getMessage();
        return reason == null || reason.isBlank() ? "read error" : reason;
    }

    /**
     * @param a an assessment
     * @return it in the {@code check-npu-smi} JSON shape
     */
    public static JSONObject toJson(Assessment a) {
        JSONObject o = new JSONObject();
        o.put("verdict", a.verdict().label());
        o.put("driverVersion", a.driverVersion());
        JSONArray chips = new JSONArray();
        for (ChipResult c : a.chips().values()) {
            JSONObject j = new JSONObject();
            j.put("npu", c.id().npu());
            j.put("chip", c.id().chip());
            j.put("health", c.health());
            j.put("classification", c.classification().label());
            chips.add(j);
        }
        o.put("chips", chips);
        o.put("error", a.error());
        return o;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    /** Reads at most {@code max} bytes, so a huge file cannot exhaust memory; more is reported by the parser. */
    private static byte[] readCapped(Path path, int max) throws IOException {
        try (InputStream in = Files.newInputStream(path)) {
            return in.readNBytes(max);
        }
    }

    /**
     * @param v the value of {@code --exit-code}
     * @return it as npu-smi's exit status
     * @throws IllegalArgumentException naming the option when it is not an integer from 0 to 255
     */
    static int exitCode(String v) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 0 && n <= 255) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below with the option's name
        }
        throw new IllegalArgumentException("--exit-code '" + v + "': expected npu-smi's exit status, an integer from 0 "
                + "to 255");
    }
}
