package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.log;
import static io.npulifecycle.bench.Fmt.f0;
import static io.npulifecycle.bench.Fmt.f2;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;

import io.npulifecycle.simulator.common.ChildProcess;

/**
 * Section 3 of {@code docs/benchmarks.md}, the reaction latency: a chip of a running node agent is wedged through
 * Jolokia right after a probe; measured from the agent's log timestamps up to the recovery marker and the reboot
 * executor's call.
 */
final class ReactionSection {

    private final boolean quick;
    private final StringBuilder md = new StringBuilder();

    /** @param quick fewer wedges */
    ReactionSection(boolean quick) {
        this.quick = quick;
    }

    /**
     * @param c the running node agent (its stdout lines, with the agent's log timestamps)
     * @param h its home (its Jolokia port)
     * @return the Markdown of section 3, headed {@code ## 3. Reaction latency}
     * @throws Exception when the wedge cannot be injected or a log line does not come within its deadline
     */
    String run(ChildProcess c, NodeHome h) throws Exception {
        int runs = quick ? 2 : 5;
        double interval = 2.0;
        int threshold = 3;
        log("3. reaction: " + runs + " wedges");
        List<Double> wedgeToMarker = new ArrayList<>();
        List<Double> schedulingError = new ArrayList<>();
        List<Double> offsets = new ArrayList<>();
        List<Double> probeAndWrite = new ArrayList<>();
        List<Double> markerToReboot = new ArrayList<>();
        HttpClient http = HttpClient.newHttpClient();
        String auth = "Basic " + Base64.getEncoder().encodeToString((NodeHome.USER + ":" + NodeHome.PASSWORD)
                .getBytes(StandardCharsets.UTF_8));
        Pattern since = Pattern.compile("since=(\\S+?Z)");
        long periodMs = (long) (interval * 1000);
        int from = 0;
        for (int r = 0; r < runs; r++) {
            // the probe schedule of the current boot: probes start at first-probe start + k x interval
            c.awaitLine(s -> s.contains("health-watch first probe completed"), from, Duration.ofMillis(120_000), "first probe of the boot");
            c.awaitLine(s -> s.contains("marker driver-ready written by"), from, Duration.ofMillis(120_000), "driver-ready");
            // inject right after a probe has completed: its start (HealthWatch LastProbeTime) is the reference
            String before = lastProbeTime(http, h.port, auth);
            long deadline = System.currentTimeMillis() + 3 * periodMs;
            String probeStart;
            while ((probeStart = lastProbeTime(http, h.port, auth)).equals(before)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("no probe within " + 3 * periodMs + " ms (LastProbeTime " + before
                            + ")");
                }
                Thread.sleep(10);
            }
            long previousTick = Instant.parse(probeStart).toEpochMilli();
            int mark = c.lineCount();
            HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + h.port
                    + "/jolokia/exec/io.npulifecycle:type=Simulator/wedge/0/0")).header("Authorization", auth).GET()
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() != 200 || !resp.body().contains("\"status\":200")) {
                throw new IllegalStateException("wedge injection failed: " + resp.body());
            }
            ChildProcess.Line wedged = c.awaitLine(s -> s.contains("chip 0:0: now wedged"), mark,
                    Duration.ofMillis(10_000), "simulator wedge");
            ChildProcess.Line marker = c.awaitLine(s -> s.contains("marker reboot-required written by health-watch"),
                    mark, Duration.ofMillis(30_000), "recovery marker");
            ChildProcess.Line reboot = c.awaitLine(s -> s.contains("REBOOT requested by the rebooter"), mark,
                    Duration.ofMillis(60_000), "reboot executor call");
            Matcher sm = since.matcher(marker.text());
            if (!sm.find()) {
                throw new IllegalStateException("no since= in the marker line: " + marker.text());
            }
            long tw = wedged.logTime().toEpochMilli();
            long tm = marker.logTime().toEpochMilli();
            long tr = reboot.logTime().toEpochMilli();
            // since = start of the probe that found the threshold-th failure (the health-watch's TimeSource)
            long tsince = Instant.parse(sm.group(1)).toEpochMilli();
            wedgeToMarker.add((double) (tm - tw));
            offsets.add((double) (tw - previousTick));
            schedulingError.add((double) (tsince - previousTick - threshold * periodMs));
            probeAndWrite.add((double) (tm - tsince));
            markerToReboot.add((double) (tr - tm));
            log("  wedge " + r + ": wedge->marker " + (tm - tw) + " ms (wedge " + (tw - previousTick)
                    + " ms after a probe start), scheduling error " + (tsince - previousTick - threshold * periodMs)
                    + " ms, last probe + marker write " + (tm - tsince) + " ms, marker->reboot " + (tr - tm) + " ms");
            from = c.lineCount();
        }
        double ideal = threshold * interval * 1000;
        md.append("## 3. Reaction latency\n\n");
        md.append("What is measured: a node agent with the simulator (`restartMode=framework`: a simulated reboot "
                + "restarts the framework in the same JVM), `interval=" + interval + "` s, `timeout=1` s, "
                + "`failureThreshold=" + threshold + "`, NPUOperatorCtl `autoRecover: true` and `recoveryPolicy.drain.enable: false` (no control plane runs: the "
                + "drain before a recovery reboot is measured with the control plane), the rebooter's poll at "
                + "its default 30 s. Chip 0:0 is wedged through Jolokia (`Simulator/wedge/0/0`) right after a probe "
                + "completed (polling `HealthWatch/LastProbeTime`, the start of that probe, every 10 ms); times are the "
                + "agent's own log timestamps (ms): the simulator's `now wedged`, `marker reboot-required written by "
                + "health-watch` (logged once the file is durable: temp file, fsync, rename, fsync of the folder; "
                + "then the listeners are told), its `since` (start of the probe that counted the "
                + threshold + "rd strike), and the simulator executor's `REBOOT requested by the rebooter`. Medians "
                + "of " + runs + " wedges (one simulated reboot each).\n\n");
        md.append("| figure | measured (median) | baseline / expected | ratio | target |\n|---|---|---|---|---|\n");
        double w = Stats.median(wedgeToMarker);
        double off = Stats.median(offsets);
        double pw = Stats.median(probeAndWrite);
        md.append("| wedge injected → recovery marker written (ms) | ").append(f0(w)).append(" | threshold × "
                + "interval = ").append(f0(ideal)).append(", less the ").append(f0(off))
                .append(" ms by which the wedge followed a probe start, plus the last probe and the marker write (")
                .append(f0(pw)).append(" ms) = ").append(f0(ideal - off + pw)).append(" | ")
                .append(f2(w / ideal)).append(" | threshold × interval |\n");
        double se = Stats.median(schedulingError);
        double seMax = Math.max(Math.abs(Stats.percentile(schedulingError, 0)),
                Math.abs(Stats.percentile(schedulingError, 100)));
        md.append("| scheduling error: start of the probe that found the " + threshold + "rd strike − (start of "
                + "the probe before the wedge + threshold × interval) (ms) | ").append(f0(se)).append(" (largest ").append(f0(seMax)).append(") | 0 | – | "
                + "a few ms").append(seMax <= 10 ? " (met)" : " (**missed**)").append(" |\n");
        double m = Stats.median(markerToReboot);
        double mMax = Stats.percentile(markerToReboot, 100);
        md.append("| recovery marker written → reboot executor called (ms) | ").append(f0(m)).append(" (largest ")
                .append(f0(mMax)).append(") | the rebooter's poll: 30,000 | ")
                .append(String.format(Locale.ROOT, "%.4f", m / 30000)).append(" | < 100")
                .append(m < 100 ? " (met" + (mMax < 100 ? ")" : " by the median)") : " (**missed**)").append(" |\n\n");
        md.append("Reading: the recovery marker is written at the probe that counts the ").append(threshold)
                .append("rd strike, `threshold × interval` after the start of the last good probe (the probe loop "
                + "schedules each probe one interval after the previous one's start, whatever the probe took); the "
                + "remaining time is that probe's run and the marker's durable write (fsync of the file and of the "
                + "folder), which depends on the disk. The rebooter does not wait for its 30 s poll: the marker "
                + "store tells its listeners synchronously after the write, and the rebooter's `MarkerListener` "
                + "wakes its `io.npulifecycle.api.time.Loop` (already so before this benchmark; this measurement is "
                + "its end-to-end check). Marker → executor then contains the decision, the rebooter's state saved "
                + "durably before the call (fsync), the `Rebooting` Event and the flush of the Node writes to the "
                + "API server (bounded by `flushTimeoutSeconds`, 5 s): on a quiet machine tens of ms; a slow fsync "
                + "under the load of other builds explains the largest values.\n\n");
        return md.toString();
    }

    private static String lastProbeTime(HttpClient http, int port, String auth) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/jolokia/read/io.npulifecycle:type=HealthWatch/LastProbeTime")).header("Authorization", auth)
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        Object o = new JSONParser().parse(r.body());
        Object v = o instanceof JSONObject ? ((JSONObject) o).get("value") : null;
        if (r.statusCode() != 200 || v == null) {
            throw new IllegalStateException("cannot read HealthWatch LastProbeTime: HTTP " + r.statusCode() + " "
                    + r.body());
        }
        return String.valueOf(v);
    }
}
