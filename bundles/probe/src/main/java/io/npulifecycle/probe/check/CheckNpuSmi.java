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
 * {@code check-npu-smi FILE [--exit-code N] [--expected-chips 0:0,1:0,...] [--alarm-is-failure]}: judges a saved
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
 * npu-smi's exit code when the output was saved (default 0). Exit status: 0 whatever the verdict; 2 when FILE cannot
 * be read or the arguments are wrong (message on stderr). Runs on a plain class path: probe jar, api jar,
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
                switch (args[i]) {
                    case "--exit-code":
                        exitCode = exitCode(value(args, ++i, "--exit-code"));
                        break;
                    case "--expected-chips":
                        expected = ChipId.parseList(value(args, ++i, "--expected-chips"));
                        break;
                    case "--alarm-is-failure":
                        alarmIsFailure = true;
                        break;
                    default:
                        if (args[i].startsWith("--") || file != null) {
                            throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
                        }
                        file = args[i];
                }
            }
            if (file == null) {
                throw new IllegalArgumentException("no FILE given");
            }
        } catch (IllegalArgumentException e) {
            err.println("check-npu-smi: " + e.getMessage());
            err.println("usage: check-npu-smi FILE [--exit-code N] [--expected-chips 0:0,1:0,...] [--alarm-is-failure]");
            return 2;
        }
        byte[] bytes;
        try {
            bytes = readCapped(Path.of(file), NpuSmiParser.DEFAULT_MAX_BYTES + 1);
        } catch (IOException | RuntimeException e) {
            err.println("check-npu-smi: cannot read " + file + ": " + e);
            return 2;
        }
        ProbeResult r = NpuSmiParser.parse(bytes, exitCode, new ProbeOptions(alarmIsFailure, true));
        out.println(toJson(Assessment.of(r, expected)).toJSONString());
        return 0;
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
