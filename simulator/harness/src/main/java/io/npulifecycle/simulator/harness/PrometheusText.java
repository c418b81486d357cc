package io.npulifecycle.simulator.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the samples of a {@code /metrics} page in the Prometheus text exposition format 0.0.4 (what the Prometheus
 * Java client writes for {@code text/plain}), for {@code expect.metrics}: {@code # HELP}, {@code # TYPE} and other
 * comment lines are skipped, every other non-empty line is {@code name[{label="value",...}] value [timestamp]}, label
 * values with the escapes {@code \\}, {@code \"} and {@code \n}; values are floats, {@code +Inf}, {@code -Inf} or
 * {@code NaN}.
 */
final class PrometheusText {

    /**
     * One sample.
     *
     * @param name the sample's name as exposed (with {@code _total}, {@code _bucket}, ...)
     * @param labels its labels
     * @param value its value
     */
    record Sample(String name, Map<String, String> labels, double value) {
    }

    private PrometheusText() {
    }

    /**
     * @param text a page in the text format
     * @return its samples in order
     * @throws IllegalArgumentException naming the line (1-based) and what was expected, for a line that is not a
     *         sample
     */
    static List<Sample> parse(String text) {
        List<Sample> out = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                out.add(sample(line));
            } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
                throw new IllegalArgumentException("line " + (i + 1) + " is not a sample (name{label=\"value\"} "
                        + "value): " + (line.length() > 120 ? line.substring(0, 120) + "..." : line)
                        + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"));
            }
        }
        return out;
    }

    /**
     * @param text a page in the text format
     * @return the names of the families its {@code # TYPE} lines declare (e.g. {@code npu_lifecycle_reboots} for the
     *         samples {@code npu_lifecycle_reboots_total}), in order
     */
    static java.util.Set<String> families(String text) {
        java.util.Set<String> out = new java.util.LinkedHashSet<>();
        for (String line : text.split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 3 && f[0].equals("#") && f[1].equals("TYPE")) {
                out.add(f[2]);
            }
        }
        return out;
    }

    /**
     * @param name a sample name of a check
     * @param families the page's families ({@link #families})
     * @return whether the page declares the family {@code name} belongs to ({@code _total}, {@code _bucket},
     *         {@code _sum}, {@code _count}, {@code _created}, {@code _info} samples of it included)
     */
    static boolean declared(String name, java.util.Set<String> families) {
        for (String f : families) {
            if (name.equals(f) || name.startsWith(f + "_") && java.util.List.of("total", "bucket", "sum", "count",
                    "created", "info").contains(name.substring(f.length() + 1))) {
                return true;
            }
        }
        return false;
    }

    private static Sample sample(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        String name = line.substring(0, i);
        if (!Action.METRIC_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("bad metric name '" + name + "'");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (true) {
                while (line.charAt(i) == ' ' || line.charAt(i) == ',') {
                    i++;
                }
                if (line.charAt(i) == '}') {
                    i++;
                    break;
                }
                int eq = line.indexOf('=', i);
                if (eq < 0 || line.charAt(eq + 1) != '"') {
                    throw new IllegalArgumentException("a label without =\"value\"");
                }
                String key = line.substring(i, eq).strip();
                StringBuilder v = new StringBuilder();
                int j = eq + 2;
                for (;; j++) {
                    char c = line.charAt(j);
                    if (c == '\\') {
                        char next = line.charAt(++j);
                        v.append(next == 'n' ? '\n' : next);
                    } else if (c == '"') {
                        break;
                    } else {
                        v.append(c);
                    }
                }
                labels.put(key, v.toString());
                i = j + 1;
            }
        }
        String[] rest = line.substring(i).strip().split("\\s+");
        if (rest.length < 1 || rest.length > 2 || rest[0].isEmpty()) {
            throw new IllegalArgumentException("expected a value and an optional timestamp");
        }
        double value = switch (rest[0]) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(rest[0]);
        };
        return new Sample(name, Map.copyOf(labels), value);
    }
}
