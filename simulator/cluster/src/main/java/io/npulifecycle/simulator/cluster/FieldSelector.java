package io.npulifecycle.simulator.cluster;

import java.util.ArrayList;
import java.util.List;

import tools.jackson.databind.JsonNode;

/**
 * A Kubernetes field selector ({@code reason=RebootRequired,involvedObject.name=node-0}, {@code spec.nodeName!=x}),
 * evaluated on an object's JSON. The stock CRUD mock only knows {@code metadata.name} and
 * {@code metadata.namespace}; the {@link EmbeddedCluster} evaluates every selector itself, for lists and watches.
 * A missing field compares as the empty string (as the API server's field sets do).
 */
final class FieldSelector {

    private static final class Requirement {
        final String[] path;
        final String value;
        final boolean equal;

        Requirement(String key, String value, boolean equal) {
            this.path = key.split("\\.");
            this.value = value;
            this.equal = equal;
        }
    }

    private final List<Requirement> requirements;
    private final String text;

    private FieldSelector(List<Requirement> requirements, String text) {
        this.requirements = requirements;
        this.text = text;
    }

    /**
     * @param selector the decoded {@code fieldSelector} query value
     * @return the selector
     * @throws IllegalArgumentException a requirement without {@code =}, {@code ==} or {@code !=}
     */
    static FieldSelector parse(String selector) {
        List<Requirement> out = new ArrayList<>();
        for (String raw : selector.split(",")) {
            String r = raw.strip();
            if (r.isEmpty()) {
                continue;
            }
            int ne = r.indexOf("!=");
            int eqeq = r.indexOf("==");
            int eq = r.indexOf('=');
            if (ne > 0) {
                out.add(new Requirement(r.substring(0, ne).strip(), r.substring(ne + 2).strip(), false));
            } else if (eqeq > 0) {
                out.add(new Requirement(r.substring(0, eqeq).strip(), r.substring(eqeq + 2).strip(), true));
            } else if (eq > 0) {
                out.add(new Requirement(r.substring(0, eq).strip(), r.substring(eq + 1).strip(), true));
            } else {
                throw new IllegalArgumentException("field selector requirement '" + r
                        + "' has no operator (expected key=value, key==value or key!=value)");
            }
        }
        return new FieldSelector(out, selector);
    }

    /**
     * @param object an object's JSON
     * @return whether every requirement holds
     */
    boolean matches(JsonNode object) {
        for (Requirement r : requirements) {
            JsonNode n = object;
            for (String p : r.path) {
                n = n == null ? null : n.get(p);
            }
            String actual = n == null || n.isNull() ? "" : n.isValueNode() ? n.asString() : n.toString();
            if (actual.equals(r.value) != r.equal) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return text;
    }
}
