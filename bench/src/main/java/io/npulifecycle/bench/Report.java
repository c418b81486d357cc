package io.npulifecycle.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Locale;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;

/**
 * The parts of {@code docs/benchmarks.md} around the node-agent sections: the header (command, date, machine, load),
 * the control-plane section (a Markdown fragment written by the upgrade bundle's benchmark, included as is) and the
 * JMH parse-and-classify table (from JMH's JSON result).
 */
final class Report {

    private Report() {
    }

    static String header(String command, boolean quick, String loadBefore, String loadAfter) {
        return "# Benchmarks\n\n"
                + "Every figure below was produced by one run of\n\n```\n" + command + "\n```\n\n"
                + "from the repository root (`bench/run` builds with `mvn -B -q -DskipTests package`, runs the "
                + "JMH and control-plane benchmarks through Maven, then `io.npulifecycle.bench.BenchMain` (module "
                + "`bench/`) against `distribution/target/npu-lifecycle`, and writes this file; `--quick`: fewer "
                + "runs and iterations, a few minutes; without it about 15 minutes). Each figure is shown with its "
                + "baseline measured in the same run and the ratio; timings are medians of several runs; memory is "
                + "RSS from `/proc/<pid>/status`.\n\n"
                + "| | |\n|---|---|\n"
                + "| date | " + LocalDate.now(ZoneOffset.UTC) + (quick ? " (`--quick` run)" : "") + " |\n"
                + "| machine | " + Proc.machine() + " |\n"
                + "| JDK | " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                + " (" + System.getProperty("java.vm.vendor") + ") |\n"
                + "| OS | " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch") + " |\n"
                + "| load average (1/5/15 min) | before: " + loadBefore + "; after: " + loadAfter
                + " (the 2 cores are shared with other builds) |\n\n";
    }

    static String controlPlane(String fragment, String command, String rc) throws IOException {
        StringBuilder sb = new StringBuilder();
        Path f = fragment == null ? null : Path.of(fragment);
        if (f != null && Files.isRegularFile(f)) {
            String text = Files.readString(f, StandardCharsets.UTF_8).strip();
            if (!text.startsWith("#")) {
                sb.append("## 4. Control plane at scale\n\n");
            }
            sb.append(text).append("\n\n");
        } else {
            sb.append("## 4. Control plane at scale\n\n**Not measured in this run**: `").append(command)
                    .append("` (exit code ").append(rc == null ? "?" : rc).append(") did not write ")
                    .append(fragment == null ? "its fragment" : "`" + fragment + "`")
                    .append(". See `bench/target/control-plane.log`.\n\n");
        }
        return sb.toString();
    }

    static String jmh(String json, String command) throws IOException {
        StringBuilder sb = new StringBuilder("## Probe: parse and classify (JMH)\n\n");
        sb.append("What is measured: `NpuSmiParser.parse` + `Assessment.of` (expected chips `0:0,1:0`) on each "
                + "npu-smi fixture of `/work/shared/fixtures/npu-smi/`: the live probe's code path without the process "
                + "start (`bundles/probe/src/jmh/java/io/npulifecycle/probe/bench/ParseAndClassifyBenchmark.java`, "
                + "profile `bench` of `bundles/probe`). Command: `").append(command).append("`.\n\n");
        Path f = json == null ? null : Path.of(json);
        if (f == null || !Files.isRegularFile(f)) {
            return sb.append("**Not measured in this run**: no JMH result").append(f == null ? "" : " at `" + f + "`")
                    .append(". See `bench/target/jmh.log`.\n\n").toString();
        }
        try {
            JSONArray results = (JSONArray) new JSONParser().parse(Files.readString(f, StandardCharsets.UTF_8));
            sb.append("| fixture | score (µs/op, avg) | error (99.9 %) |\n|---|---|---|\n");
            for (Object o : results) {
                JSONObject r = (JSONObject) o;
                JSONObject params = (JSONObject) r.get("params");
                JSONObject pm = (JSONObject) r.get("primaryMetric");
                String fixture = params == null ? String.valueOf(r.get("benchmark")) : String.valueOf(params.values()
                        .iterator().next());
                double score = ((Number) pm.get("score")).doubleValue();
                Object err = pm.get("scoreError");
                String e = err instanceof Number && !Double.isNaN(((Number) err).doubleValue())
                        ? String.format(Locale.ROOT, "± %.3f", ((Number) err).doubleValue()) : "–";
                sb.append("| ").append(fixture).append(" | ").append(String.format(Locale.ROOT, "%.3f", score))
                        .append(" | ").append(e).append(" |\n");
            }
            sb.append("\nReading: parsing and classifying one `npu-smi info` output costs microseconds, negligible "
                    + "next to running npu-smi itself (see the probe cost above) once a minute.\n\n");
        } catch (Exception e) {
            sb.append("**Cannot read** `").append(f).append("`: ").append(e).append("\n\n");
        }
        return sb.toString();
    }

    /** The line after which docs/benchmarks.md holds sections measured by their own commands. */
    static final String KEPT_MARKER = "<!-- Sections below are measured by their own commands (each names it); bench/run keeps them as they are. -->";

    /**
     * The sections of an existing report that bench/run does not measure (the real API server's build and start, the
     * test suite's duration): everything from {@link #KEPT_MARKER} on.
     *
     * @param report the report file; absent or without the marker: nothing is kept
     * @return the marker and what follows it, preceded by a blank line, or the marker alone
     * @throws IOException when an existing file cannot be read
     */
    static String keptSections(Path report) throws IOException {
        String text = Files.exists(report) ? Files.readString(report) : "";
        int at = text.indexOf(KEPT_MARKER);
        return "\n" + (at < 0 ? KEPT_MARKER + "\n" : text.substring(at));
    }
}
