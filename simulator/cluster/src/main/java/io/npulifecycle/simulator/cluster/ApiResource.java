package io.npulifecycle.simulator.cluster;

import java.util.List;
import java.util.Objects;

/**
 * One resource type served by the {@link EmbeddedCluster}, as its discovery documents describe it
 * ({@code APIResourceList} entries of {@code /api/v1} and {@code /apis/<group>/<version>}).
 */
public final class ApiResource {

    /** Verbs of a served resource type (what {@code kubectl api-resources -o wide} shows for a real one). */
    static final List<String> VERBS = List.of("create", "delete", "deletecollection", "get", "list", "patch",
            "update", "watch");

    private final String group;
    private final String version;
    private final String kind;
    private final String plural;
    private final String singular;
    private final boolean namespaced;
    private final List<String> shortNames;
    private final List<String> subresources;
    private final List<PrinterColumn> printerColumns;

    /** A CRD's {@code additionalPrinterColumns} entry (what {@code kubectl get} shows for a custom resource). */
    public static final class PrinterColumn {
        final String name;
        final String type;
        final String jsonPath;
        final int priority;

        /**
         * @param name column name
         * @param type {@code string}, {@code integer}, {@code number}, {@code boolean} or {@code date}
         * @param jsonPath a dotted path such as {@code .spec.driver.version} (the only form evaluated)
         * @param priority 0 = always shown, more = only with {@code -o wide}
         */
        public PrinterColumn(String name, String type, String jsonPath, int priority) {
            this.name = name;
            this.type = type;
            this.jsonPath = jsonPath;
            this.priority = priority;
        }
    }

    /**
     * @param group API group; {@code ""} for the core group
     * @param version e.g. {@code v1}
     * @param kind e.g. {@code NPUOperatorCtl}
     * @param plural e.g. {@code npuoperatorctls}
     * @param singular e.g. {@code npuoperatorctl}
     * @param namespaced namespaced (true) or cluster-scoped
     * @param shortNames e.g. {@code ["npuctl"]}
     * @param subresources e.g. {@code ["status"]}
     */
    public ApiResource(String group, String version, String kind, String plural, String singular, boolean namespaced,
            List<String> shortNames, List<String> subresources) {
        this(group, version, kind, plural, singular, namespaced, shortNames, subresources, List.of());
    }

    /**
     * As {@link #ApiResource(String, String, String, String, String, boolean, List, List)}, with a CRD's printer
     * columns.
     *
     * @param group API group
     * @param version version
     * @param kind kind
     * @param plural plural
     * @param singular singular
     * @param namespaced namespaced or cluster-scoped
     * @param shortNames short names
     * @param subresources subresources
     * @param printerColumns {@code additionalPrinterColumns}
     */
    public ApiResource(String group, String version, String kind, String plural, String singular, boolean namespaced,
            List<String> shortNames, List<String> subresources, List<PrinterColumn> printerColumns) {
        this.printerColumns = List.copyOf(printerColumns);
        this.group = Objects.requireNonNull(group);
        this.version = Objects.requireNonNull(version);
        this.kind = Objects.requireNonNull(kind);
        this.plural = Objects.requireNonNull(plural);
        this.singular = Objects.requireNonNull(singular);
        this.namespaced = namespaced;
        this.shortNames = List.copyOf(shortNames);
        this.subresources = List.copyOf(subresources);
    }

    static ApiResource core(String kind, String plural, boolean namespaced, String... shortNames) {
        return new ApiResource("", "v1", kind, plural, kind.toLowerCase(java.util.Locale.ROOT), namespaced,
                List.of(shortNames), List.of("status"));
    }

    static ApiResource of(String group, String kind, String plural, boolean namespaced, String... shortNames) {
        return new ApiResource(group, "v1", kind, plural, kind.toLowerCase(java.util.Locale.ROOT), namespaced,
                List.of(shortNames), List.of("status"));
    }

    /** @return the API group, {@code ""} for core */
    public String group() {
        return group;
    }

    /** @return the version */
    public String version() {
        return version;
    }

    /** @return {@code v1} or {@code <group>/<version>} */
    public String groupVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    /** @return the kind */
    public String kind() {
        return kind;
    }

    /** @return the plural (the URL segment) */
    public String plural() {
        return plural;
    }

    /** @return the singular name */
    public String singular() {
        return singular;
    }

    /** @return whether the resource lives in namespaces */
    public boolean namespaced() {
        return namespaced;
    }

    /** @return short names */
    public List<String> shortNames() {
        return shortNames;
    }

    /** @return subresources ({@code status}, ...) */
    public List<String> subresources() {
        return subresources;
    }

    /** @return the CRD's printer columns (empty for built-in kinds) */
    public List<PrinterColumn> printerColumns() {
        return printerColumns;
    }

    @Override
    public String toString() {
        return plural + "." + groupVersion() + " (" + kind + (namespaced ? ", namespaced" : ", cluster") + ")";
    }
}
