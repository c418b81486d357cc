package io.npulifecycle.api.management;

import java.beans.ConstructorProperties;
import java.util.List;

/** One health check as the Health MBean reports it (an MXBean composite: Jolokia renders it as a JSON object). */
public final class HealthCheckState {
    private final String name;
    private final List<String> tags;
    private final String status;
    private final String message;
    private final String since;

    /**
     * @param name the check's name, e.g. {@code npu-lifecycle bundles active}
     * @param tags its tags, e.g. {@code [ready]}
     * @param status {@code OK}, {@code WARN}, {@code TEMPORARILY_UNAVAILABLE}, {@code CRITICAL} or
     *        {@code HEALTH_CHECK_ERROR}
     * @param message what the check said, its entries of the worst status joined with {@code "; "} (at most 2,000
     *        characters)
     * @param since when the check was first seen with this status, ISO-8601 UTC (e.g.
     *        {@code 2026-12-01T20:30:00Z}), on the runtime's clock (the demo's compressed clock runs ahead of the
     *        wall clock)
     */
    @ConstructorProperties({"name", "tags", "status", "message", "since"})
    public HealthCheckState(String name, List<String> tags, String status, String message, String since) {
        this.name = name;
        this.tags = List.copyOf(tags);
        this.status = status;
        this.message = message;
        this.since = since;
    }

    public String getName() {
        return name;
    }

    public List<String> getTags() {
        return tags;
    }

    public String getStatus() {
        return status;
    }

    public String getMessage() {
        return message;
    }

    public String getSince() {
        return since;
    }
}
