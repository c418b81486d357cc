package io.npulifecycle.simulator.cluster;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.zjsonpatch.JsonPatchException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The CRUD mock's dispatcher plus what the real {@code kubectl} (v1.32) and reliability tests need (DESIGN.md "Known
 * traps"): discovery documents, {@code /openapi/*} answering 404, field selectors on any field (lists and watches),
 * strategic merge patch handled as a JSON merge patch, JSON merge patches applied as RFC 7386 says ({@link
 * MergePatch}: null removes, {@code metadata.resourceVersion} locks), and the {@link EmbeddedCluster}'s fault hooks ({@link
 * EmbeddedFaults}: outage, 410 on watches, injected status codes) and request log. Everything else goes to
 * {@link KubernetesMixedDispatcher} unchanged.
 */
final class KubectlDispatcher extends KubernetesMixedDispatcher {

    static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final Logger LOG = Logger.getLogger(KubectlDispatcher.class.getName());

    private final EmbeddedCluster cluster;
    /** held by every write, so a merge patch reads and writes its object in one step ({@link #mergePatch}) */
    private final Object writes = new Object();
    private final TableView tables = new TableView(java.time.Clock.systemUTC());

    KubectlDispatcher(Map<ServerRequest, Queue<ServerResponse>> responses, EmbeddedCluster cluster) {
        super(responses);
        this.cluster = cluster;
    }

    /**
     * Answers every request. fabric8's MockWebServer calls the dispatcher from a Vert.x callback that has no
     * exception handler: an exception thrown here is logged by Vert.x as "Unhandled exception" and the request is
     * never answered, so its client waits out its request timeout and retries (issue #29: the mock's PatchHandler
     * throws a {@link JsonPatchException} for a JSON patch that does not apply, and NodeReliabilityTest's admin
     * client waited 4 x 30 s). A JSON patch that does not apply is answered as kube-apiserver answers it
     * ({@code handlers/patch.go}: {@code 422}, reason {@code Invalid}, the patch library's message); anything else
     * thrown is an error of the mock, answered {@code 500 InternalError} naming it.
     */
    @Override
    public MockResponse dispatch(RecordedRequest request) {
        try {
            return answer(request);
        } catch (JsonPatchException notApplicable) {
            return status(422, "Invalid", "the JSON patch does not apply: " + notApplicable);
        } catch (RuntimeException bug) {
            LOG.log(Level.WARNING, "the embedded API server failed on " + request.getMethod() + " " + request.getPath()
                    + ": answered 500", bug);
            return status(500, "InternalError", "the embedded API server failed on " + request.getMethod() + " "
                    + request.getPath() + ": " + bug);
        }
    }

    private MockResponse answer(RecordedRequest request) {
        String full = request.getPath();
        int q = full.indexOf('?');
        String path = q < 0 ? full : full.substring(0, q);
        Map<String, String> query = query(q < 0 ? "" : full.substring(q + 1));
        String method = request.getMethod();
        cluster.requestLog().record(method, full, request.getHeader("User-Agent"));

        MockResponse fault = cluster.faults().faultFor(method, full);
        if (fault != null) {
            return fault;
        }
        boolean watch = "true".equals(query.get("watch")) || "1".equals(query.get("watch"));
        if (watch && cluster.faults().takeGoneWatch()) {
            return status(410, "Expired", "too old resource version (simulated by EmbeddedCluster)");
        }
        if ("GET".equals(method)) {
            MockResponse d = discovery(path);
            if (d != null) {
                return d;
            }
        }
        if ("PATCH".equals(method) && String.valueOf(request.getHeader("Content-Type"))
                .startsWith("application/strategic-merge-patch+json")) {
            request = asMergePatch(request);
        }
        if ("PATCH".equals(method) && String.valueOf(request.getHeader("Content-Type"))
                .startsWith("application/merge-patch+json")) {
            try {
                synchronized (writes) {
                    return mergePatch(request, path);
                }
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                return status(503, "ServiceUnavailable", "the embedded API server is stopping");
            }
        }
        String selector = query.get("fieldSelector");
        FieldSelector fields = null;
        if (selector != null && "GET".equals(method)) {
            try {
                fields = FieldSelector.parse(selector);
            } catch (IllegalArgumentException e) {
                return status(400, "BadRequest", "invalid fieldSelector '" + selector + "': " + e.getMessage());
            }
            query.remove("fieldSelector");
            request = new RecordedRequest(request.getHttpVersion(), request.method(), path + toQuery(query),
                    request.getHeaders(), request.getBody());
        }
        MockResponse response;
        try {
            if ("GET".equals(method)) {
                response = super.dispatch(request);
            } else {
                synchronized (writes) {
                    response = super.dispatch(request);
                }
            }
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            // the mock's watch executor is shut down while the cluster closes: a late request gets a plain 503
            // instead of a stack trace in the middle of the demo's output
            return status(503, "ServiceUnavailable", "the embedded API server is stopping");
        }
        if (response.getWebSocketListener() != null) {
            return response.withWebSocketUpgrade(cluster.faults().track(response.getWebSocketListener(), fields));
        }
        if ("GET".equals(method) && response.code() == 200) {
            return shape(response, fields, TableView.wanted(request.getHeader("Accept")), query.get("includeObject"));
        }
        return response;
    }

    /**
     * A GET answer as the API server gives it: list items in key order (namespace, name), only those that match the
     * field selector, and a Table when kubectl asked for one (its rows carry each object as {@code includeObject}
     * asks: {@code Object} the whole object, which {@code kubectl get --sort-by} sorts on; {@code None} nothing;
     * by default {@code Metadata}).
     */
    private MockResponse shape(MockResponse response, FieldSelector fields, boolean table, String includeObject) {
        JsonNode body;
        try {
            body = JSON.readTree(new String(response.getBody().getBytes(), StandardCharsets.UTF_8));
        } catch (RuntimeException notJson) {
            return response;
        }
        JsonNode items = body.get("items");
        if (items instanceof ArrayNode) {
            List<JsonNode> kept = new ArrayList<>();
            for (JsonNode item : items) {
                if (fields == null || fields.matches(item)) {
                    kept.add(item);
                }
            }
            kept.sort(java.util.Comparator.comparing((JsonNode o) -> o.path("metadata").path("namespace").asString(""))
                    .thenComparing(o -> o.path("metadata").path("name").asString("")));
            ArrayNode sorted = JSON.createArrayNode();
            kept.forEach(sorted::add);
            ((ObjectNode) body).set("items", sorted);
        } else if (!(body instanceof ObjectNode) || !body.has("metadata")) {
            return response;
        }
        if (table) {
            return json(tables.table(body, this::printerColumns, includeObject));
        }
        return response.setBody(JSON.writeValueAsString(body));
    }

    /**
     * A JSON merge patch applied as the API server applies it ({@link MergePatch}): the optimistic lock of a
     * {@code metadata.resourceVersion} in the patch answers 409 when the object moved on, a {@code null} member
     * removes the member, and the change reaches the mock as the equivalent JSON patch. Called holding
     * {@link #writes}, so the read and the write are one step for every other writer.
     */
    private MockResponse mergePatch(RecordedRequest request, String path) {
        JsonNode patch;
        try {
            patch = JSON.readTree(new String(request.getBody().getBytes(), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            return status(400, "BadRequest", "the merge patch is not JSON: " + e.getMessage());
        }
        String objectPath = path.endsWith("/status") ? path.substring(0, path.length() - "/status".length()) : path;
        MockResponse current = super.dispatch(new RecordedRequest(request.getHttpVersion(), HttpMethod.GET,
                objectPath, io.fabric8.mockwebserver.http.Headers.builder().build(), new Buffer()));
        if (current.code() != 200 || !(patch instanceof ObjectNode)) {
            return super.dispatch(request);
        }
        JsonNode stored = JSON.readTree(new String(current.getBody().getBytes(), StandardCharsets.UTF_8));
        String wanted = MergePatch.resourceVersion(patch);
        if (wanted != null && !wanted.equals(stored.path("metadata").path("resourceVersion").asString(""))) {
            String[] seg = objectPath.split("/");
            return status(409, "Conflict", "Operation cannot be fulfilled on " + seg[seg.length - 2] + " \""
                    + seg[seg.length - 1] + "\": the object has been modified; please apply your changes to the "
                    + "latest version and try again");
        }
        ArrayNode ops = MergePatch.asJsonPatch(stored, patch);
        if (ops.isEmpty()) {
            return current;
        }
        return super.dispatch(new RecordedRequest(request.getHttpVersion(), HttpMethod.PATCH, request.getPath(),
                request.getHeaders().newBuilder().set("Content-Type", "application/json-patch+json").build(),
                new Buffer(JSON.writeValueAsBytes(ops))));
    }

    /**
     * kubectl label/annotate send a strategic merge patch for built-in kinds; the mock answers 415. For maps
     * (labels, annotations, spec fields) it is a JSON merge patch; list merge keys and {@code $} directives
     * ({@code $patch}, {@code $setElementOrder/...}, {@code $retainKeys}) are dropped.
     */
    private static RecordedRequest asMergePatch(RecordedRequest request) {
        JsonNode patch = JSON.readTree(new String(request.getBody().getBytes(), StandardCharsets.UTF_8));
        stripDirectives(patch);
        return new RecordedRequest(request.getHttpVersion(), HttpMethod.PATCH, request.getPath(),
                request.getHeaders().newBuilder().set("Content-Type", "application/merge-patch+json").build(),
                new Buffer(JSON.writeValueAsBytes(patch)));
    }

    private static void stripDirectives(JsonNode node) {
        if (node instanceof ObjectNode) {
            ObjectNode o = (ObjectNode) node;
            List<String> drop = new ArrayList<>();
            for (String name : o.propertyNames()) {
                if (name.startsWith("$")) {
                    drop.add(name);
                } else {
                    stripDirectives(o.get(name));
                }
            }
            o.remove(drop);
        } else if (node instanceof ArrayNode) {
            for (JsonNode e : node) {
                stripDirectives(e);
            }
        }
    }

    /** Discovery documents, {@code /version} and {@code /openapi}; null for any other path. */
    private MockResponse discovery(String path) {
        String[] seg = path.replaceAll("^/+|/+$", "").split("/");
        if (path.startsWith("/openapi")) {
            return status(404, "NotFound", "the embedded cluster publishes no OpenAPI document");
        }
        if ("/version".equals(path)) {
            return json(cluster.versionJson());
        }
        if ("/api".equals(path)) {
            ObjectNode o = JSON.createObjectNode().put("kind", "APIVersions");
            o.putArray("versions").add("v1");
            o.putArray("serverAddressByClientCIDRs").addObject().put("clientCIDR", "0.0.0.0/0")
                    .put("serverAddress", cluster.hostPort());
            return json(o);
        }
        if ("/api/v1".equals(path)) {
            return resourceList("", "v1");
        }
        if (!"apis".equals(seg[0])) {
            return null;
        }
        Map<String, Set<String>> groups = groups();
        if (seg.length == 1) {
            ObjectNode o = JSON.createObjectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
            ArrayNode list = o.putArray("groups");
            groups.forEach((g, versions) -> list.add(group(g, versions)));
            return json(o);
        }
        if (seg.length == 2) {
            Set<String> versions = groups.get(seg[1]);
            return versions == null ? status(404, "NotFound", "no API group " + seg[1])
                    : json(group(seg[1], versions).put("kind", "APIGroup").put("apiVersion", "v1"));
        }
        if (seg.length == 3) {
            Set<String> versions = groups.get(seg[1]);
            return versions == null || !versions.contains(seg[2])
                    ? status(404, "NotFound", "no API group version " + seg[1] + "/" + seg[2])
                    : resourceList(seg[1], seg[2]);
        }
        return null;
    }

    /**
     * @return every served resource type: the built-in ones, those registered with the cluster, and one per served
     *         version of each CustomResourceDefinition stored in the cluster
     */
    List<ApiResource> apiResources() {
        List<ApiResource> all = new ArrayList<>(cluster.registeredResources());
        RecordedRequest list = new RecordedRequest("HTTP/1.1", HttpMethod.GET,
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                io.fabric8.mockwebserver.http.Headers.builder().build(), new Buffer());
        MockResponse crds = super.dispatch(list);
        if (crds.code() != 200) {
            return all;
        }
        for (JsonNode crd : JSON.readTree(new String(crds.getBody().getBytes(), StandardCharsets.UTF_8)).path("items")) {
            JsonNode spec = crd.path("spec");
            JsonNode names = spec.path("names");
            List<String> shortNames = new ArrayList<>();
            names.path("shortNames").forEach(n -> shortNames.add(n.asString()));
            for (JsonNode v : spec.path("versions")) {
                if (!v.path("served").asBoolean(true)) {
                    continue;
                }
                List<ApiResource.PrinterColumn> columns = new ArrayList<>();
                for (JsonNode c : v.path("additionalPrinterColumns")) {
                    columns.add(new ApiResource.PrinterColumn(c.path("name").asString(""), c.path("type").asString("string"),
                            c.path("jsonPath").asString(""), c.path("priority").asInt(0)));
                }
                ApiResource r = new ApiResource(spec.path("group").asString(), v.path("name").asString(),
                        names.path("kind").asString(), names.path("plural").asString(),
                        names.path("singular").asString(names.path("kind").asString().toLowerCase(java.util.Locale.ROOT)),
                        !"Cluster".equals(spec.path("scope").asString()), shortNames,
                        v.path("subresources").has("status") ? List.of("status") : List.of(), columns);
                all.removeIf(x -> x.groupVersion().equals(r.groupVersion()) && x.plural().equals(r.plural()));
                all.add(r);
            }
        }
        return all;
    }

    /** @return the printer columns of the CRD of {@code apiVersion} / {@code kind}, or an empty list */
    private List<ApiResource.PrinterColumn> printerColumns(String apiVersion, String kind) {
        for (ApiResource r : apiResources()) {
            if (r.groupVersion().equals(apiVersion) && r.kind().equals(kind)) {
                return r.printerColumns();
            }
        }
        return List.of();
    }

    private Map<String, Set<String>> groups() {
        Map<String, Set<String>> groups = new LinkedHashMap<>();
        for (ApiResource r : apiResources()) {
            if (!r.group().isEmpty()) {
                groups.computeIfAbsent(r.group(), g -> new LinkedHashSet<>()).add(r.version());
            }
        }
        return groups;
    }

    private static ObjectNode group(String name, Set<String> versions) {
        ObjectNode g = JSON.createObjectNode().put("name", name);
        ArrayNode vs = g.putArray("versions");
        for (String v : versions) {
            vs.addObject().put("groupVersion", name + "/" + v).put("version", v);
        }
        String preferred = versions.iterator().next();
        g.putObject("preferredVersion").put("groupVersion", name + "/" + preferred).put("version", preferred);
        return g;
    }

    private MockResponse resourceList(String group, String version) {
        String gv = group.isEmpty() ? version : group + "/" + version;
        ObjectNode o = JSON.createObjectNode().put("kind", "APIResourceList").put("apiVersion", "v1")
                .put("groupVersion", gv);
        ArrayNode list = o.putArray("resources");
        for (ApiResource r : apiResources()) {
            if (!r.groupVersion().equals(gv)) {
                continue;
            }
            ObjectNode e = list.addObject().put("name", r.plural()).put("singularName", r.singular())
                    .put("namespaced", r.namespaced()).put("kind", r.kind());
            ArrayNode verbs = e.putArray("verbs");
            ApiResource.VERBS.forEach(verbs::add);
            if (!r.shortNames().isEmpty()) {
                ArrayNode sn = e.putArray("shortNames");
                r.shortNames().forEach(sn::add);
            }
            for (String sub : r.subresources()) {
                ObjectNode s = list.addObject().put("name", r.plural() + "/" + sub).put("singularName", "")
                        .put("namespaced", r.namespaced()).put("kind", "eviction".equals(sub) ? "Eviction" : r.kind());
                ArrayNode sv = s.putArray("verbs");
                ("eviction".equals(sub) ? List.of("create") : List.of("get", "patch", "update")).forEach(sv::add);
            }
        }
        return json(o);
    }

    static MockResponse json(JsonNode body) {
        return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
                .setBody(JSON.writeValueAsString(body));
    }

    /**
     * @param code HTTP status
     * @param reason Kubernetes {@code Status.reason}, e.g. {@code ServiceUnavailable}
     * @param message the message
     * @return a {@code Status} answer as the API server sends it
     */
    static MockResponse status(int code, String reason, String message) {
        ObjectNode o = JSON.createObjectNode().put("kind", "Status").put("apiVersion", "v1");
        o.putObject("metadata");
        o.put("status", "Failure").put("message", message).put("reason", reason).put("code", code);
        return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json")
                .setBody(JSON.writeValueAsString(o));
    }

    private static Map<String, String> query(String q) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String kv : q.split("&")) {
            if (kv.isEmpty()) {
                continue;
            }
            int eq = kv.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? kv : kv.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(k, v);
        }
        return out;
    }

    private static String toQuery(Map<String, String> query) {
        StringBuilder sb = new StringBuilder();
        query.forEach((k, v) -> sb.append(sb.length() == 0 ? '?' : '&')
                .append(URLEncoder.encode(k, StandardCharsets.UTF_8)).append('=')
                .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
        return sb.toString();
    }
}
