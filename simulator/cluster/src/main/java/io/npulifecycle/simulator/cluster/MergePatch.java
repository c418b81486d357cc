package io.npulifecycle.simulator.cluster;

import java.util.List;

import io.fabric8.zjsonpatch.JsonDiff;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A JSON merge patch (RFC 7386) applied as the API server applies it, for the embedded API server: the CRUD mock
 * merges a {@code application/merge-patch+json} body with Jackson's updating reader, which stores a {@code null}
 * member as a literal {@code null} instead of removing it (so {@code kubectl annotate node n key-} or a controller's
 * {@code {"metadata":{"annotations":{"key":null}}}} left {@code key: null} on the object, which a real server never
 * shows). {@link KubectlDispatcher} therefore turns every merge patch into the equivalent JSON patch (RFC 6902),
 * computed here from the stored object, which the mock applies correctly.
 */
final class MergePatch {

    private MergePatch() {
    }

    /**
     * RFC 7386 section 2: a patch object merges member by member, a {@code null} member removes it, anything else
     * (arrays included) replaces the target.
     *
     * @param target the document patched (not modified), or null when absent
     * @param patch the merge patch
     * @return the patched document, a new tree
     */
    static JsonNode apply(JsonNode target, JsonNode patch) {
        if (!(patch instanceof ObjectNode)) {
            return patch.deepCopy();
        }
        ObjectNode out = target instanceof ObjectNode ? ((ObjectNode) target).deepCopy()
                : KubectlDispatcher.JSON.createObjectNode();
        for (String name : patch.propertyNames()) {
            JsonNode value = patch.get(name);
            if (value.isNull()) {
                out.remove(name);
            } else {
                out.set(name, apply(out.get(name), value));
            }
        }
        return out;
    }

    /**
     * @param current the stored object
     * @param patch the merge patch, its {@code metadata.resourceVersion} (the optimistic lock) already checked
     * @return the JSON patch operations that turn {@code current} into {@code current} merged with {@code patch};
     *         empty when the patch changes nothing
     */
    static ArrayNode asJsonPatch(JsonNode current, JsonNode patch) {
        JsonNode merged = apply(current, withoutResourceVersion(patch));
        JsonNode ops = JsonDiff.asJson(current, merged);
        ArrayNode out = KubectlDispatcher.JSON.createArrayNode();
        ops.forEach(out::add);
        return out;
    }

    /**
     * @param patch a merge patch
     * @return the {@code metadata.resourceVersion} it carries (the client's optimistic lock), or null
     */
    static String resourceVersion(JsonNode patch) {
        JsonNode rv = patch.path("metadata").path("resourceVersion");
        return rv.isString() ? rv.asString() : null;
    }

    private static JsonNode withoutResourceVersion(JsonNode patch) {
        if (resourceVersion(patch) == null) {
            return patch;
        }
        ObjectNode copy = ((ObjectNode) patch).deepCopy();
        ((ObjectNode) copy.get("metadata")).remove(List.of("resourceVersion"));
        return copy;
    }
}
