package io.npulifecycle.simulator.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.exc.InvalidNullException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
import tools.jackson.databind.exc.ValueInstantiationException;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.type.LogicalType;

/**
 * Binds the parts of a scenario file ({@link YamlTree} nodes, which know their lines) to the {@link Action} records
 * with Jackson, and turns every Jackson error into a {@link YamlTree.Invalid} naming the line and the path of the
 * value at fault and what was expected ({@code steps[2].wedge.npu must be a whole number, got four}).
 *
 * <p>Strict: unknown keys are refused; a number is not taken from a text ({@code "4"}) nor a whole number from a
 * fraction; true/false is not taken from a text or a number. Durations are {@code 500ms}, {@code 200s}, {@code 5m},
 * {@code 1h} (simulated time).
 */
final class ScenarioMapper {

    /** What a bad duration is told. */
    static final String NOT_A_DURATION = "is not a duration of at most 8760h (e.g. 0s, 200s, 5m, 1h, 500ms)";

    /** The longest duration a scenario may name: a year of simulated time (longer ones overflow the clock's sums). */
    static final Duration MAX_DURATION = Duration.ofHours(8760);

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .withCoercionConfig(LogicalType.Integer, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Boolean, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail))
            .addModule(new SimpleModule("scenario")
                    .addDeserializer(Duration.class, new DurationDeserializer())
                    .addDeserializer(Action.Expected.class, new ExpectedDeserializer()))
            .build();

    private ScenarioMapper() {
    }

    /**
     * @param text e.g. {@code 200s}
     * @return the duration, or null when {@code text} is not one or is longer than {@link #MAX_DURATION}
     */
    static Duration parseDuration(String text) {
        Matcher m = DURATION.matcher(text.trim());
        if (!m.matches()) {
            return null;
        }
        double v = Double.parseDouble(m.group(1));
        long ms;
        switch (m.group(2)) {
            case "ms": ms = (long) v; break;
            case "s": ms = (long) (v * 1000); break;
            case "m": ms = (long) (v * 60_000); break;
            default: ms = (long) (v * 3_600_000); break;
        }
        Duration d = Duration.ofMillis(ms);
        return d.compareTo(MAX_DURATION) > 0 ? null : d;
    }

    /** A duration: {@code 200s}, {@code 5m}. */
    static final class DurationDeserializer extends ValueDeserializer<Duration> {
        @Override
        public Duration deserialize(JsonParser p, DeserializationContext ctxt) {
            if (!p.currentToken().isScalarValue()) {
                return (Duration) ctxt.handleUnexpectedToken(Duration.class, p);
            }
            String text = p.getValueAsString();
            Duration d = text == null ? null : parseDuration(text);
            if (d == null) {
                throw ctxt.weirdStringException(String.valueOf(text), Duration.class, NOT_A_DURATION);
            }
            return d;
        }
    }

    /** A duration with an optional sign: {@code -1h}, {@code +5m}, {@code 5m}. */
    static final class SignedDurationDeserializer extends ValueDeserializer<Duration> {
        @Override
        public Duration deserialize(JsonParser p, DeserializationContext ctxt) {
            if (!p.currentToken().isScalarValue()) {
                return (Duration) ctxt.handleUnexpectedToken(Duration.class, p);
            }
            String text = String.valueOf(p.getValueAsString()).trim();
            boolean back = text.startsWith("-");
            Duration d = parseDuration(back || text.startsWith("+") ? text.substring(1) : text);
            if (d == null) {
                throw ctxt.weirdStringException(text, Duration.class, NOT_A_DURATION);
            }
            return back ? d.negated() : d;
        }
    }

    /**
     * A {@code maintenanceWindow} of the policy shorthand: a mapping (passed on for the controller to check), or
     * {@link Action#REMOVE_WINDOW} for an explicit null (the window removed); an absent key stays null (unchanged).
     */
    static final class WindowDeserializer extends ValueDeserializer<Map<String, Object>> {
        @Override
        @SuppressWarnings("unchecked")
        public Map<String, Object> deserialize(JsonParser p, DeserializationContext ctxt) {
            if (p.currentToken() != tools.jackson.core.JsonToken.START_OBJECT) {
                return (Map<String, Object>) ctxt.handleUnexpectedToken(Map.class, p);
            }
            return ctxt.readValue(p, java.util.LinkedHashMap.class);
        }

        @Override
        public Map<String, Object> getNullValue(DeserializationContext ctxt) {
            return Action.REMOVE_WINDOW;
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return null;
        }
    }

    /** {@link Action.Expected}: a text, or {@code Expected(null)} for an explicit null; an absent key stays null. */
    static final class ExpectedDeserializer extends ValueDeserializer<Action.Expected> {
        @Override
        public Action.Expected deserialize(JsonParser p, DeserializationContext ctxt) {
            if (!p.currentToken().isScalarValue()) {
                return (Action.Expected) ctxt.handleUnexpectedToken(String.class, p);
            }
            return new Action.Expected(p.getValueAsString());
        }

        @Override
        public Action.Expected getNullValue(DeserializationContext ctxt) {
            return new Action.Expected(null);
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return null;
        }
    }

    /**
     * Binds one YAML value to a type.
     *
     * @param node the value, e.g. the body of {@code wedge:}
     * @param type the record
     * @param where its path in the file, for messages, e.g. {@code steps[2].wedge}
     * @param <T> the type
     * @return the bound value
     * @throws YamlTree.Invalid naming the line of the value at fault, its path and what was expected
     */
    static <T> T bind(YamlTree.Node node, Class<T> type, String where) throws YamlTree.Invalid {
        if (node.value() == null) {
            throw new YamlTree.Invalid(node.line(), where + " must be a mapping ({key: value, ...})");
        }
        JsonNode tree = MAPPER.valueToTree(plain(node));
        List<YamlTree.Invalid> errors = new ArrayList<>();
        java.util.Set<String> removed = new java.util.HashSet<>();
        while (true) {
            try {
                T value = MAPPER.treeToValue(tree, type);
                if (errors.isEmpty()) {
                    return value;
                }
                throw YamlTree.Invalid.of(errors);
            } catch (JacksonException e) {
                Fault f = fault(tree, e, removed);
                if (f != null && f.removed() && errors.size() < MAX_ERRORS) {
                    errors.add(invalid(e, node, where));
                    continue;
                }
                // an error tied to no key ("nothing to check"), a key never given ("is missing"), or one that
                // follows from a value taken out before (a required key, the only key to check): reported unless it
                // follows from one
                if (f == null ? errors.isEmpty() : !removed.contains(f.where())) {
                    errors.add(invalid(e, node, where));
                }
                throw YamlTree.Invalid.of(errors);
            }
        }
    }

    /** At most this many errors are reported for one mapping. */
    private static final int MAX_ERRORS = 50;

    /**
     * @param where the key's path in the bound value, e.g. {@code .upgradePolicy.drain.timeoutSeconds}
     * @param removed whether it was taken out of the tree now
     */
    private record Fault(String where, boolean removed) {
    }

    /**
     * Takes the value at fault out of {@code tree}, so that binding again finds the next bad value of the same mapping
     * (Jackson stops at the first error, and a record's checks at its first bad field).
     *
     * @param removed the keys taken out before; the one taken out now is added
     * @return the key at fault and whether it was taken out; {@code null} when the error names no key
     */
    private static Fault fault(JsonNode tree, JacksonException e, java.util.Set<String> removed) {
        List<JacksonException.Reference> path = e.getPath();
        int parentSize;
        String key;
        if (e instanceof ValueInstantiationException && e.getCause() instanceof Action.Bad bad) {
            if (bad.field == null) {
                return null;
            }
            parentSize = path.size();
            key = bad.field;
        } else if (e instanceof UnrecognizedPropertyException || e instanceof MismatchedInputException
                || e instanceof InputCoercionException) {
            if (path.isEmpty() || path.get(path.size() - 1).getPropertyName() == null) {
                return null;
            }
            parentSize = path.size() - 1;
            key = path.get(path.size() - 1).getPropertyName();
        } else {
            return null;
        }
        JsonNode parent = tree;
        StringBuilder where = new StringBuilder();
        for (int i = 0; i < parentSize && parent != null; i++) {
            JacksonException.Reference r = path.get(i);
            if (r.getPropertyName() != null) {
                parent = parent.get(r.getPropertyName());
                where.append('.').append(r.getPropertyName());
            } else if (r.getIndex() >= 0) {
                parent = parent.get(r.getIndex());
                where.append('[').append(r.getIndex()).append(']');
            } else {
                return new Fault(where.toString(), false);
            }
        }
        String at = where + "." + key;
        if (!(parent instanceof tools.jackson.databind.node.ObjectNode object) || !object.has(key)) {
            return new Fault(at, false);
        }
        object.remove(key);
        removed.add(at);
        return new Fault(at, true);
    }

    private static YamlTree.Invalid invalid(JacksonException e, YamlTree.Node root, String where) {
        List<JacksonException.Reference> path = e.getPath();
        int keep = e instanceof UnrecognizedPropertyException ? path.size() - 1 : path.size();
        YamlTree.Node at = root;
        StringBuilder w = new StringBuilder(where);
        for (int i = 0; i < keep; i++) {
            JacksonException.Reference r = path.get(i);
            at = child(at, r, w);
        }
        if (e instanceof UnrecognizedPropertyException u) {
            YamlTree.Node bad = at.isMap() ? at.map().get(u.getPropertyName()) : null;
            Collection<Object> known = u.getKnownPropertyIds();
            return new YamlTree.Invalid(bad != null ? bad.line() : at.line(), w + ": unknown key '"
                    + u.getPropertyName() + "'" + (known == null ? "" : " (expected " + new TreeSet<>(names(known))
                    + ")"));
        }
        if (e instanceof ValueInstantiationException && e.getCause() instanceof Action.Bad bad) {
            YamlTree.Node field = bad.field != null && at.isMap() ? at.map().get(bad.field) : null;
            String name = bad.field == null ? ":" : "." + bad.field;
            return new YamlTree.Invalid(field != null ? field.line() : at.line(), w + name + " " + bad.getMessage());
        }
        Class<?> target = e instanceof MismatchedInputException m ? m.getTargetType()
                : e instanceof InputCoercionException c ? c.getTargetType() : null;
        if (target != null || e instanceof InvalidNullException) {
            return new YamlTree.Invalid(at.line(), w + " " + expected(target, at.value()));
        }
        String msg = e.getOriginalMessage() == null ? String.valueOf(e.getMessage()) : e.getOriginalMessage();
        return new YamlTree.Invalid(at.line(), w + ": " + msg.split("\n")[0]);
    }

    private static List<String> names(Collection<Object> ids) {
        List<String> out = new ArrayList<>();
        ids.forEach(o -> out.add(String.valueOf(o)));
        return out;
    }

    private static YamlTree.Node child(YamlTree.Node at, JacksonException.Reference r, StringBuilder w) {
        if (r.getPropertyName() != null) {
            w.append('.').append(r.getPropertyName());
            return at.isMap() && at.map().containsKey(r.getPropertyName()) ? at.map().get(r.getPropertyName()) : at;
        }
        if (r.getIndex() >= 0) {
            w.append('[').append(r.getIndex()).append(']');
            return at.value() instanceof List && r.getIndex() < at.list().size() ? at.list().get(r.getIndex()) : at;
        }
        return at;
    }

    private static String expected(Class<?> target, Object got) {
        String shown = got instanceof Map ? "a mapping" : got instanceof List ? "a list"
                : got instanceof String t && t.matches("[-+]?[0-9.]+") ? "the text \"" + t + "\"" : String.valueOf(got);
        if (target == Duration.class) {
            return got instanceof Map || got instanceof List ? NOT_A_DURATION + ", got " + shown
                    : "'" + shown + "' " + NOT_A_DURATION;
        }
        String what;
        if (target == Boolean.class || target == boolean.class) {
            what = "must be true or false";
        } else if ((target == Integer.class || target == int.class) && got instanceof Number n
                && n.doubleValue() == Math.rint(n.doubleValue())) {
            what = "is outside " + Integer.MIN_VALUE + ".." + Integer.MAX_VALUE + " (a whole number this field can hold)";
        } else if (target == Integer.class || target == int.class || target == Long.class || target == long.class) {
            what = "must be a whole number";
        } else if (target == Double.class || target == double.class) {
            what = "must be a number";
        } else if (target == String.class || target == Action.Expected.class) {
            what = "must be a text value";
        } else if (target != null && Collection.class.isAssignableFrom(target)) {
            what = "must be a list";
        } else {
            what = "must be a mapping ({key: value, ...})";
        }
        return what + ", got " + shown;
    }

    /** @return the node as maps, lists and scalars */
    static Object plain(YamlTree.Node n) {
        if (n.value() instanceof Map) {
            Map<String, Object> m = new LinkedHashMap<>();
            n.map().forEach((k, v) -> m.put(k, plain(v)));
            return m;
        }
        if (n.value() instanceof List) {
            List<Object> l = new ArrayList<>();
            n.list().forEach(v -> l.add(plain(v)));
            return l;
        }
        return n.value();
    }
}
