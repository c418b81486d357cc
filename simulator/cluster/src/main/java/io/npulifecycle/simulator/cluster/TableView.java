package io.npulifecycle.simulator.cluster;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Server-side printing ({@code meta.k8s.io/v1 Table}), which {@code kubectl get} asks for with
 * {@code Accept: application/json;as=Table;...}: without it kubectl falls back to NAME and AGE only. Columns as the
 * API server prints them for events (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE), nodes (with OS image and kernel in
 * {@code -o wide}) and pods; NAME and AGE for every other kind.
 */
final class TableView {

    private static final class Column {
        final String name;
        final int priority;
        final Function<JsonNode, String> cell;

        Column(String name, int priority, Function<JsonNode, String> cell) {
            this.name = name;
            this.priority = priority;
            this.cell = cell;
        }
    }

    private final Clock clock;

    TableView(Clock clock) {
        this.clock = clock;
    }

    /** @return whether the request's Accept header asks for a Table */
    static boolean wanted(String accept) {
        return accept != null && accept.contains("as=Table");
    }

    /**
     * @param body a list ({@code items}) or a single object
     * @param crdColumns the printer columns of a custom resource (API version, kind), empty for a built-in kind
     * @param includeObject the request's {@code includeObject}: {@code Object} (each row carries its whole object),
     *        {@code None} (no object), anything else, null included, {@code Metadata} (a PartialObjectMetadata)
     * @return the Table of its objects
     */
    ObjectNode table(JsonNode body,
            java.util.function.BiFunction<String, String, List<ApiResource.PrinterColumn>> crdColumns,
            String includeObject) {
        List<JsonNode> objects = new ArrayList<>();
        String kind = body.path("kind").asString("");
        if (body.has("items")) {
            body.path("items").forEach(objects::add);
            kind = kind.endsWith("List") ? kind.substring(0, kind.length() - 4) : kind;
            if (!objects.isEmpty() && objects.get(0).has("kind")) {
                kind = objects.get(0).path("kind").asString(kind); // the mock's lists say "List"
            }
        } else {
            objects.add(body);
        }
        String apiVersion = objects.isEmpty() ? body.path("apiVersion").asString("")
                : objects.get(0).path("apiVersion").asString("");
        List<ApiResource.PrinterColumn> custom = kind.isEmpty() ? List.of() : crdColumns.apply(apiVersion, kind);
        List<Column> columns = custom.isEmpty() ? columns(kind) : crdColumns(custom);
        ObjectNode t = KubectlDispatcher.JSON.createObjectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
        t.putObject("metadata").put("resourceVersion", body.path("metadata").path("resourceVersion").asString(""));
        ArrayNode defs = t.putArray("columnDefinitions");
        for (Column c : columns) {
            defs.addObject().put("name", c.name).put("type", "string").put("format", "Name".equals(c.name) ? "name" : "")
                    .put("description", c.name).put("priority", c.priority);
        }
        ArrayNode rows = t.putArray("rows");
        for (JsonNode o : objects) {
            ObjectNode row = rows.addObject();
            ArrayNode cells = row.putArray("cells");
            for (Column c : columns) {
                cells.add(c.cell.apply(o));
            }
            if ("Object".equals(includeObject)) {
                row.set("object", o.deepCopy());
            } else if (!"None".equals(includeObject)) {
                ObjectNode meta = row.putObject("object").put("kind", "PartialObjectMetadata").put("apiVersion",
                        "meta.k8s.io/v1");
                meta.set("metadata", o.path("metadata").deepCopy());
            }
        }
        return t;
    }

    private List<Column> columns(String kind) {
        Column name = new Column("Name", 0, o -> o.path("metadata").path("name").asString(""));
        Column age = new Column("Age", 0, o -> age(o.path("metadata").path("creationTimestamp").asString("")));
        switch (kind) {
            case "Event":
                return List.of(
                        new Column("Last Seen", 0, o -> age(first(o, "lastTimestamp", "eventTime")
                                .orElse(o.path("metadata").path("creationTimestamp").asString("")))),
                        new Column("Type", 0, o -> o.path("type").asString("")),
                        new Column("Reason", 0, o -> o.path("reason").asString("")),
                        new Column("Object", 0, o -> o.path("involvedObject").path("kind").asString("")
                                .toLowerCase(java.util.Locale.ROOT) + "/" + o.path("involvedObject").path("name").asString("")),
                        new Column("Message", 0, o -> o.path("message").asString("")),
                        new Column("Count", 1, o -> o.path("count").asString("")),
                        new Column("Name", 1, o -> o.path("metadata").path("name").asString("")));
            case "Node":
                return List.of(name,
                        new Column("Status", 0, TableView::nodeStatus),
                        new Column("Roles", 0, o -> "<none>"),
                        age,
                        new Column("Version", 0, o -> o.path("status").path("nodeInfo").path("kubeletVersion").asString("")),
                        new Column("Internal-IP", 1, o -> address(o, "InternalIP")),
                        new Column("OS-Image", 1, o -> o.path("status").path("nodeInfo").path("osImage").asString("")),
                        new Column("Kernel-Version", 1, o -> o.path("status").path("nodeInfo").path("kernelVersion").asString("")),
                        new Column("Container-Runtime", 1,
                                o -> o.path("status").path("nodeInfo").path("containerRuntimeVersion").asString("")));
            case "Pod":
                return List.of(name,
                        new Column("Ready", 0, TableView::podReady),
                        new Column("Status", 0, o -> o.path("status").path("phase").asString("Pending")),
                        new Column("Restarts", 0, o -> "0"),
                        age,
                        new Column("IP", 1, o -> o.path("status").path("podIP").asString("<none>")),
                        new Column("Node", 1, o -> o.path("spec").path("nodeName").asString("<none>")));
            default:
                return List.of(name, age);
        }
    }

    /** NAME, then a CRD's {@code additionalPrinterColumns} (dotted JSON paths; dates as ages). */
    private List<Column> crdColumns(List<ApiResource.PrinterColumn> custom) {
        List<Column> out = new ArrayList<>();
        out.add(new Column("Name", 0, o -> o.path("metadata").path("name").asString("")));
        for (ApiResource.PrinterColumn c : custom) {
            out.add(new Column(c.name, c.priority, o -> {
                JsonNode n = o;
                for (String p : c.jsonPath.replaceFirst("^\\.", "").split("\\.")) {
                    n = n.path(p);
                }
                if (n.isMissingNode() || n.isNull()) {
                    return "";
                }
                return "date".equals(c.type) ? age(n.asString("")) : n.isValueNode() ? n.asString() : n.toString();
            }));
        }
        return out;
    }

    private static java.util.Optional<String> first(JsonNode o, String... fields) {
        for (String f : fields) {
            String v = o.path(f).asString("");
            if (!v.isEmpty()) {
                return java.util.Optional.of(v);
            }
        }
        return java.util.Optional.empty();
    }

    private static String nodeStatus(JsonNode o) {
        String status = "Unknown";
        for (JsonNode c : o.path("status").path("conditions")) {
            if ("Ready".equals(c.path("type").asString(""))) {
                status = "True".equals(c.path("status").asString("")) ? "Ready" : "NotReady";
            }
        }
        return o.path("spec").path("unschedulable").asBoolean(false) ? status + ",SchedulingDisabled" : status;
    }

    private static String address(JsonNode o, String type) {
        for (JsonNode a : o.path("status").path("addresses")) {
            if (type.equals(a.path("type").asString(""))) {
                return a.path("address").asString("");
            }
        }
        return "<none>";
    }

    private static String podReady(JsonNode o) {
        int total = o.path("spec").path("containers").size();
        int ready = 0;
        for (JsonNode s : o.path("status").path("containerStatuses")) {
            ready += s.path("ready").asBoolean(false) ? 1 : 0;
        }
        if (o.path("status").path("containerStatuses").isEmpty() && "Running".equals(o.path("status").path("phase").asString(""))) {
            ready = total;
        }
        return ready + "/" + total;
    }

    /** Kubernetes' short duration format: 45s, 12m, 3h, 5d. */
    String age(String timestamp) {
        if (timestamp == null || timestamp.isEmpty()) {
            return "<unknown>";
        }
        try {
            Duration d = Duration.between(Instant.parse(timestamp), clock.instant());
            long s = Math.max(0, d.getSeconds());
            return s < 120 ? s + "s" : s < 7200 ? s / 60 + "m" : s < 172800 ? s / 3600 + "h" : s / 86400 + "d";
        } catch (DateTimeParseException e) {
            return "<unknown>";
        }
    }

}
