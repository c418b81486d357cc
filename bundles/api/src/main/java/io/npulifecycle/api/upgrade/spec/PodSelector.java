package io.npulifecycle.api.upgrade.spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A label selector in the string syntax of {@code kubectl -l} and {@code metav1.ParseToLabelSelector}: requirements
 * separated by commas, each {@code key=value}, {@code key==value}, {@code key!=value}, {@code key in (a,b)},
 * {@code key notin (a,b)}, {@code key} (exists) or {@code !key} (does not exist). An empty string selects everything.
 *
 * @param text the selector as written
 * @param requirements the parsed requirements, all of which must hold
 */
public record PodSelector(String text, List<Requirement> requirements) {

    /** The selector that selects every pod. */
    public static final PodSelector ALL = new PodSelector("", List.of());

    private static final String KEY = "([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?";
    private static final String VALUE = "([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?";
    private static final Pattern SET = Pattern.compile("^(" + KEY + ")\\s+(in|notin)\\s+\\(([^()]*)\\)$");
    private static final Pattern EQ = Pattern.compile("^(" + KEY + ")\\s*(==|!=|=)\\s*(" + VALUE + ")$");
    private static final Pattern EXISTS = Pattern.compile("^(!?)\\s*(" + KEY + ")$");

    /** One requirement: an operator over a key and its values. */
    public record Requirement(String key, String op, Set<String> values) {
        boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (op) {
                case "in", "=" -> v != null && values.contains(v);
                case "notin", "!=" -> v == null || !values.contains(v);
                case "exists" -> v != null;
                case "!" -> v == null;
                default -> false; // an operator the API server refuses: selects nothing
            };
        }

        /**
         * @param key the label key
         * @param operator a {@code LabelSelectorRequirement}'s operator: {@code In}, {@code NotIn}, {@code Exists},
         *        {@code DoesNotExist} (any other, which the API server refuses, selects nothing)
         * @param values its values, may be null
         * @return the requirement
         */
        public static Requirement expression(String key, String operator, java.util.Collection<String> values) {
            String op = switch (String.valueOf(operator)) {
                case "In" -> "in";
                case "NotIn" -> "notin";
                case "Exists" -> "exists";
                case "DoesNotExist" -> "!";
                default -> "invalid " + operator;
            };
            return new Requirement(key, op, values == null ? Set.of() : Set.copyOf(values));
        }
    }

    /**
     * A Kubernetes {@code LabelSelector} (metav1, e.g. a PodDisruptionBudget's {@code spec.selector}): every
     * {@code matchLabels} pair and every {@code matchExpressions} requirement must hold; none at all selects every
     * pod. Whether a null or empty selector selects anything is the caller's rule (policy/v1 budgets differ there).
     *
     * @param matchLabels its {@code matchLabels}, may be null
     * @param expressions its {@code matchExpressions} ({@link Requirement#expression}), may be null
     * @return the selector; its text is for messages only
     */
    public static PodSelector of(Map<String, String> matchLabels, List<Requirement> expressions) {
        List<Requirement> all = new ArrayList<>();
        if (matchLabels != null) {
            new java.util.TreeMap<>(matchLabels).forEach((k, v) -> all.add(new Requirement(k, "=", Set.of(v))));
        }
        if (expressions != null) {
            all.addAll(expressions);
        }
        return new PodSelector(String.join(",", all.stream().map(r -> r.key() + " " + r.op() + " "
                + new java.util.TreeSet<>(r.values())).toList()), List.copyOf(all));
    }

    /**
     * @param text a selector, may be null or blank (everything)
     * @return the parsed selector
     * @throws IllegalArgumentException naming the requirement that does not parse, or when longer than
     *         {@value SpecGrammar#SELECTOR_MAX_LENGTH} characters (the CRD's {@code maxLength})
     */
    public static PodSelector parse(String text) {
        if (text == null || text.isBlank()) {
            return ALL;
        }
        if (text.length() > SpecGrammar.SELECTOR_MAX_LENGTH) {
            throw new IllegalArgumentException("longer than " + SpecGrammar.SELECTOR_MAX_LENGTH + " characters");
        }
        List<Requirement> out = new ArrayList<>();
        for (String part : splitOutsideParens(text)) {
            String r = part.strip();
            Matcher m;
            if ((m = SET.matcher(r)).matches()) {
                Set<String> vals = new java.util.TreeSet<>();
                for (String v : m.group(6).split(",")) {
                    String s = v.strip();
                    if (!s.matches(VALUE)) {
                        throw new IllegalArgumentException("'" + r + "': '" + s + "' is not a label value");
                    }
                    vals.add(s);
                }
                out.add(new Requirement(m.group(1), m.group(5), Set.copyOf(vals)));
            } else if ((m = EQ.matcher(r)).matches()) {
                out.add(new Requirement(m.group(1), m.group(5).equals("!=") ? "!=" : "=", Set.of(m.group(6))));
            } else if ((m = EXISTS.matcher(r)).matches()) {
                out.add(new Requirement(m.group(2), m.group(1).isEmpty() ? "exists" : "!", Set.of()));
            } else {
                throw new IllegalArgumentException("'" + r + "' is not a requirement (expected key=value, key!=value, "
                        + "key in (a,b), key notin (a,b), key or !key)");
            }
        }
        return new PodSelector(text.strip(), List.copyOf(out));
    }

    /**
     * Reads a selector field of the spec ({@code podSelector}, {@code blockingPodSelector}), adding a problem naming
     * the field when it is not a string, is blank where a selector is required, or does not parse.
     *
     * @param raw the field's value, or null when absent
     * @param field the field's path, for the problem
     * @param blankSelectsAll whether an empty or blank string is every pod ({@code podSelector}) or refused
     *        ({@code blockingPodSelector})
     * @param problems where the problem goes
     * @return the selector; {@code absent} when the field is absent or refused
     */
    static PodSelector field(Object raw, String field, boolean blankSelectsAll, List<String> problems,
            PodSelector absent) {
        if (raw == null) {
            return absent;
        }
        if (!(raw instanceof String s) || (!blankSelectsAll && s.isBlank())) {
            problems.add(field + ": " + (raw instanceof String ? "'" + raw + "'" : raw) + " is not a label selector "
                    + "(expected a string like app=train)");
            return absent;
        }
        try {
            return parse(s);
        } catch (IllegalArgumentException e) {
            problems.add(field + ": '" + s + "' does not parse: " + e.getMessage());
            return absent;
        }
    }

    private static List<String> splitOutsideParens(String s) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            if (c == ',' && depth == 0) {
                parts.add(s.substring(start, i));
                start = i + 1;
            }
        }
        parts.add(s.substring(start));
        return parts;
    }

    /**
     * @param labels a pod's labels, may be null
     * @return whether every requirement holds
     */
    public boolean matches(Map<String, String> labels) {
        Map<String, String> l = labels == null ? Map.of() : labels;
        return requirements.stream().allMatch(r -> r.matches(l));
    }
}
