package io.npulifecycle.simulator.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kubernetes permission table of {@code docs/security.md} ("Kubernetes permissions"), between the markers
 * {@value #BEGIN} and {@value #END}: one row per (role, API group, resource, resource names) with its verbs, the code
 * paths that need them and why. Each cell value is written in backquotes; {@code core} is the API group {@code ""}.
 *
 * <pre>
 * | `ClusterRole/npu-lifecycle-node-agent` | `core` | `nodes` | `list`, `watch` | | `NodeSync#startInformers` | why |
 * </pre>
 *
 * The manifests tests compare it with the rules of {@code charts/target/kubectl/} (the chart rendered by module charts), the real-server tests with what the API
 * server grants each ServiceAccount ({@code kubectl auth can-i --list}).
 */
public final class RbacTable {

    /** The line before the table. */
    public static final String BEGIN = "<!-- rbac-table:begin -->";
    /** The line after the table. */
    public static final String END = "<!-- rbac-table:end -->";

    private static final Pattern CELL = Pattern.compile("`([^`]*)`");

    /**
     * One permission: a verb on a resource of an API group, granted by a role, limited to some resource names.
     *
     * @param role {@code ClusterRole/<name>} or {@code Role/<namespace>/<name>}
     * @param group API group, {@code ""} for core
     * @param resource plural resource, with {@code /subresource} when it is one (e.g. {@code npuoperatorctls/status})
     * @param verb e.g. {@code list}
     * @param names the resource names the rule is limited to; empty: any
     */
    public record Permission(String role, String group, String resource, String verb, Set<String> names)
            implements Comparable<Permission> {

        /** Keeps an unmodifiable sorted copy of the names. */
        public Permission {
            names = Collections.unmodifiableSet(new TreeSet<>(names));
        }

        /** @return the namespace of a {@code Role/<namespace>/<name>}, null for a ClusterRole */
        public String namespace() {
            String[] p = role.split("/");
            return p.length == 3 ? p[1] : null;
        }

        /** @return the role's own name (the last segment of {@link #role()}) */
        public String roleName() {
            return role.substring(role.lastIndexOf('/') + 1);
        }

        /**
         * @param otherRole another role
         * @return this permission granted by {@code otherRole}
         */
        public Permission withRole(String otherRole) {
            return new Permission(otherRole, group, resource, verb, names);
        }

        @Override
        public int compareTo(Permission o) {
            return toString().compareTo(o.toString());
        }

        /** @return e.g. {@code ClusterRole/x core/nodes get} or {@code Role/ns/x apps/daemonsets patch [a, b]} */
        @Override
        public String toString() {
            return role + " " + (group.isEmpty() ? "core" : group) + "/" + resource + " " + verb
                    + (names.isEmpty() ? "" : " " + names);
        }
    }

    /**
     * One row of the table.
     *
     * @param line the row's line number in the file (1-based)
     * @param permissions one per verb
     * @param codePaths the {@code Class#method} cells
     * @param reason the last cell
     */
    public record Row(int line, Set<Permission> permissions, List<String> codePaths, String reason) {
    }

    private final Path file;
    private final List<Row> rows;

    private RbacTable(Path file, List<Row> rows) {
        this.file = file;
        this.rows = List.copyOf(rows);
    }

    /**
     * @param securityMd {@code docs/security.md}
     * @return its table
     * @throws UncheckedIOException when the file cannot be read
     * @throws IllegalArgumentException when the markers are missing, the table is empty, or a row is malformed
     *         (fewer than 7 cells, not exactly one value in the role, group or resource cell, no verb, no code path,
     *         no reason); the message names the file and the line
     */
    public static RbacTable read(Path securityMd) {
        String doc;
        try {
            doc = Files.readString(securityMd);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + securityMd, e);
        }
        int b = doc.indexOf(BEGIN);
        int e = doc.indexOf(END);
        if (b < 0 || e < b) {
            throw new IllegalArgumentException(securityMd + " has no " + BEGIN + " ... " + END + " section");
        }
        int firstLine = (int) doc.substring(0, b).chars().filter(c -> c == '\n').count() + 1;
        List<Row> rows = new ArrayList<>();
        String[] lines = doc.substring(b, e).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.startsWith("| `")) {
                rows.add(row(securityMd + ":" + (firstLine + i), firstLine + i, line));
            }
        }
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("empty RBAC table in " + securityMd);
        }
        return new RbacTable(securityMd, rows);
    }

    private static Row row(String where, int lineNumber, String line) {
        String[] c = line.split("\\|", -1);
        if (c.length < 8) {
            throw new IllegalArgumentException(where + ": row with fewer than 7 cells: " + line);
        }
        String role = one(c[1], where, line);
        String group = one(c[2], where, line);
        group = "core".equals(group) ? "" : group;
        String res = one(c[3], where, line);
        List<String> verbs = cells(c[4]);
        Set<String> names = new TreeSet<>(cells(c[5]));
        List<String> code = cells(c[6]);
        if (verbs.isEmpty()) {
            throw new IllegalArgumentException(where + ": no verb: " + line);
        }
        if (code.isEmpty()) {
            throw new IllegalArgumentException(where + ": no code path: " + line);
        }
        if (c[7].isBlank()) {
            throw new IllegalArgumentException(where + ": no reason: " + line);
        }
        Set<Permission> perms = new LinkedHashSet<>();
        for (String v : verbs) {
            perms.add(new Permission(role, group, res, v, names));
        }
        return new Row(lineNumber, Collections.unmodifiableSet(perms), List.copyOf(code), c[7].strip());
    }

    private static List<String> cells(String cell) {
        List<String> out = new ArrayList<>();
        Matcher m = CELL.matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static String one(String cell, String where, String line) {
        List<String> c = cells(cell);
        if (c.size() != 1) {
            throw new IllegalArgumentException(where + ": expected one `value` in '" + cell.trim() + "' of: " + line);
        }
        return c.get(0);
    }

    /** @return the file read */
    public Path file() {
        return file;
    }

    /** @return the rows in file order */
    public List<Row> rows() {
        return rows;
    }

    /** @return every permission of every row, sorted (a permission listed twice appears once) */
    public Set<Permission> permissions() {
        Set<Permission> all = new TreeSet<>();
        rows.forEach(r -> all.addAll(r.permissions()));
        return all;
    }
}
