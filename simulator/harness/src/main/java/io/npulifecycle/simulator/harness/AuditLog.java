package io.npulifecycle.simulator.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The requests a real kube-apiserver received, from its audit log, for {@code expect.apiRequests}: the server is
 * started with {@link #serverFlags(Path)} (a policy that records every request at the {@code Metadata} level, once,
 * when its answer is complete, leader-election Leases and Events aside), and {@link #read()} reads the JSON lines it
 * wrote ({@code audit.k8s.io/v1} {@code Event}s).
 */
final class AuditLog {

    /**
     * One request.
     *
     * @param verb the audit verb ({@code create}, {@code patch}, ...)
     * @param resource e.g. {@code pods}
     * @param subresource e.g. {@code eviction}, or null
     * @param namespace or null
     * @param name or null
     * @param user the requesting user name
     * @param code the HTTP status of the answer, or 0 when none was recorded
     * @param at when the answer was complete ({@code stageTimestamp}, wall clock)
     */
    record Request(String verb, String resource, String subresource, String namespace, String name, String user,
            int code, Instant at) {
    }

    /** The audit policy: Leases and Events (many, and not the point of a scenario) not recorded. */
    static final String POLICY = String.join("\n",
            "apiVersion: audit.k8s.io/v1",
            "kind: Policy",
            "omitStages: [RequestReceived]",
            "rules:",
            "  - level: None",
            "    resources: [{group: coordination.k8s.io, resources: [leases]}, {group: '', resources: [events]},"
                    + " {group: events.k8s.io, resources: [events]}]",
            "  - level: Metadata",
            "");

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private final Path file;

    private AuditLog(Path file) {
        this.file = file;
    }

    /**
     * Writes the policy into {@code dir} and returns the kube-apiserver flags that record to {@code dir/audit.log}.
     *
     * @param dir a folder of the run (created when absent)
     * @return the flags
     * @throws IOException when the policy cannot be written
     */
    static List<String> serverFlags(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path policy = Files.writeString(dir.resolve("audit-policy.yaml"), POLICY);
        return List.of("--audit-policy-file=" + policy.toAbsolutePath(),
                "--audit-log-path=" + dir.resolve("audit.log").toAbsolutePath(), "--audit-log-format=json",
                "--audit-log-mode=blocking", "--audit-log-maxbackup=0");
    }

    /** @return the log kube-apiserver writes into {@code dir} with {@link #serverFlags(Path)} */
    static AuditLog in(Path dir) {
        return new AuditLog(dir.resolve("audit.log"));
    }

    /**
     * @return every request recorded so far, in the order written (a line being written is skipped)
     * @throws IOException when the log cannot be read
     */
    List<Request> read() throws IOException {
        List<Request> out = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(file)) {
            String line;
            while ((line = r.readLine()) != null) {
                Request q = parse(line);
                if (q != null) {
                    out.add(q);
                }
            }
        } catch (NoSuchFileException e) {
            return out; // nothing recorded yet
        }
        return out;
    }

    /** @return the request of one line, or null for a line that is not a complete audit event */
    static Request parse(String line) {
        JsonNode n;
        try {
            n = MAPPER.readTree(line);
        } catch (JacksonException e) {
            return null;
        }
        if (n == null || !"ResponseComplete".equals(n.path("stage").asString(""))) {
            return null;
        }
        JsonNode o = n.path("objectRef");
        Instant at;
        try {
            at = Instant.parse(n.path("stageTimestamp").asString(""));
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
        return new Request(n.path("verb").asString(""), text(o, "resource"), text(o, "subresource"),
                text(o, "namespace"), text(o, "name"), n.path("user").path("username").asString(""),
                n.path("responseStatus").path("code").asInt(0), at);
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : v.asString();
    }

    /**
     * @param requests what the server received
     * @param c the check
     * @param timeScale simulated seconds per wall-clock second (for {@code minIntervalSeconds})
     * @return null when it holds, else what was seen
     */
    static String failure(List<Request> requests, Action.RequestCheck c, double timeScale) {
        List<Request> match = requests.stream().filter(q -> q.verb().equals(c.verb())
                && c.resource().equals(q.resource()) && java.util.Objects.equals(c.subresource(), q.subresource())
                && (c.namespace() == null || c.namespace().equals(q.namespace()))
                && (c.name() == null || c.name().equals(q.name())) && (c.user() == null || c.user().equals(q.user()))
                && (c.code() == null || c.code() == q.code())).toList();
        int n = match.size();
        boolean ok = c.count() != null ? n == c.count() : c.atLeast() != null ? n >= c.atLeast() : n <= c.atMost();
        if (!ok) {
            return "saw " + n + " such request(s)";
        }
        if (c.minIntervalSeconds() != null) {
            for (int i = 1; i < match.size(); i++) {
                double gap = java.time.Duration.between(match.get(i - 1).at(), match.get(i).at()).toNanos() / 1e9
                        * timeScale;
                if (gap < c.minIntervalSeconds()) {
                    return String.format(java.util.Locale.ROOT, "requests %d and %d of %d were %.1f simulated s apart"
                            + " (at %s and %s)", i, i + 1, n, gap, match.get(i - 1).at(), match.get(i).at());
                }
            }
        }
        return null;
    }
}
