package io.npulifecycle.simulator.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.npulifecycle.api.faults.PlantedBug;

/**
 * A scenario file (YAML), validated completely before anything runs. See docs/simulator.md for the format:
 *
 * <pre>
 * name: wedge then recover before reboot
 * cluster: {nodes: 2, chips: 8, chipType: 910b, driverVersion: 25.2.0}
 * policy: {autoUpgrade: false, autoRecover: false}
 * timeScale: 100
 * steps:
 *   - at: 0s
 *     wedge: {node: node-0, npu: 4, chip: 0}
 *   - at: 200s
 *     expect: {node: node-0, labels: {npu.openfuyao.com/reboot-required: "true"}, within: 60s}
 * </pre>
 *
 * <p>Each step's action is bound to its {@link Action} record ({@link ScenarioMapper}), then checked against the
 * cluster of the file (node names, chip numbers, control-plane replicas). Every error names the file, the line and
 * what was expected ({@link YamlTree.Invalid#where()}).
 */
final class Scenario {

    static final Set<String> TOP = Set.of("name", "cluster", "policy", "timeScale", "steps", "cases", "build",
            "invariants");
    static final Set<String> CLUSTER = Set.of("nodes", "chips", "chipType", "driverVersion", "controlPlanes",
            "driverManagement", "startTime");
    /** The actions by YAML key, {@code expect} included. */
    static final Map<String, Class<? extends Action>> ACTIONS = Action.types();
    /** Categories of the reliability matrix; the report groups cases by them. */
    static final List<String> CATEGORIES = List.of("agent killed", "control plane killed", "API outage", "clock",
            "marker folder");
    static final Set<String> CASE = Set.of("id", "category", "name", "outcome", "steps");

    /**
     * One step: when, what, and the line it starts on. An action may carry a condition ({@code when:}, an
     * expectation with {@code within}): it waits until that holds, then acts at once (e.g. SIGKILL at a precise point
     * of a flow).
     *
     * @param at simulated time from the start of the scenario
     * @param action what is done or checked
     * @param when the condition of an action, or null
     * @param line the line of the step's {@code - at:}
     * @param whenLine the line of {@code when:}, or 0
     * @param yaml the action as the file gives it, its condition included, on one line of flow-style YAML
     *        ({@link YamlTree#flow}): {@code wedge: {node: node-0, npu: 4, chip: 0}}
     */
    record Step(Duration at, Action action, Action.Expect when, int line, int whenLine, String yaml) {

        /** @return the action's YAML key */
        String kind() {
            return action.kind();
        }
    }

    /**
     * A reliability case: its own steps, run concurrently with the other cases and the shared steps on the same
     * simulated cluster, and its own verdict.
     *
     * @param id unique in the file
     * @param category one of {@link #CATEGORIES}
     * @param name what is done, e.g. {@code recovery: killed after strike 1}
     * @param outcome what must be true, e.g. {@code one approved reboot, driver ready}
     * @param steps its steps, in time order
     * @param line where it starts
     */
    record Case(String id, String category, String name, String outcome, List<Step> steps, int line) {
    }

    final String file;
    String name;
    int nodes = 1;
    int chips = 8;
    String chipType = "910b";
    String driverVersion = "25.2.0";
    double timeScale = 60;
    int controlPlanes = 1;
    /** {@code cluster.driverManagement}: {@code managed} (driver DaemonSets) or {@code host} (drivers installed on the hosts). */
    String driverManagement = "managed";
    /**
     * {@code cluster.startTime}: the simulated instant at time 0 (when the steps' clock starts), or null for the
     * harness's wall clock; e.g. to place a maintenance window's edge inside a drain.
     */
    java.time.Instant startTime;
    /** {@code invariants}: the invariants checked throughout the run ({@link Invariants}; {@code all}), or none. */
    List<String> invariants = List.of();
    /**
     * The bug planted in every runtime of its cluster ({@link PlantedBug}, testing the chaos checker), or null: not
     * read from the file, set from {@code --planted-bug} of the command that runs it.
     */
    PlantedBug plantedBug;
    /** {@code default}: the reliability IT runs it in every build; {@code long}: only with -Preliability. */
    String build = "default";
    final Map<String, Object> policy = new LinkedHashMap<>();
    final List<Step> steps = new ArrayList<>();
    final List<Case> cases = new ArrayList<>();

    private Scenario(String file) {
        this.file = file;
    }

    /**
     * Parses and validates a scenario.
     *
     * @param file the file name, for messages
     * @param text its content
     * @return the scenario
     * @throws YamlTree.Invalid naming the file and the line and what is wrong and what was expected: malformed YAML,
     *         an unknown key or action, a value of the wrong type, a missing field, an unknown node, chip or state, a
     *         bad duration
     */
    static Scenario parse(String file, String text) throws YamlTree.Invalid {
        try {
            return parseText(file, text);
        } catch (YamlTree.Invalid e) {
            throw e.in(file);
        }
    }

    /** One part of the file that is checked alone, so that an error in it does not hide the errors of the others. */
    @FunctionalInterface
    private interface Part {
        void check() throws YamlTree.Invalid;
    }

    /** The errors found so far while parsing, in the order found. */
    private final List<YamlTree.Invalid> errors = new ArrayList<>();

    private void attempt(Part part) {
        try {
            part.check();
        } catch (YamlTree.Invalid e) {
            errors.addAll(e.all());
        }
    }

    private static Scenario parseText(String file, String text) throws YamlTree.Invalid {
        YamlTree.Node root = YamlTree.parse(text);
        Scenario s = new Scenario(file);
        Map<String, YamlTree.Node> top = map(root, "the scenario");
        s.keys(top, TOP, "the scenario");
        s.attempt(() -> s.name = top.containsKey("name") ? string(top.get("name"), "name") : file);
        if (top.containsKey("cluster")) {
            s.attempt(() -> s.cluster(top.get("cluster")));
        }
        if (top.containsKey("build")) {
            s.attempt(() -> {
                String build = string(top.get("build"), "build");
                if (!build.equals("default") && !build.equals("long")) {
                    throw new YamlTree.Invalid(top.get("build").line(), "build must be default or long, got " + build);
                }
                s.build = build;
            });
        }
        if (s.chipType.equals("310p") && s.chips % 2 != 0) {
            s.errors.add(new YamlTree.Invalid(root.line(), "cluster.chips must be even for 310p (two chips per NPU "
                    + "id)"));
        }
        if (top.containsKey("policy")) {
            s.attempt(() -> s.policy.putAll(ScenarioMapper.bind(top.get("policy"), Action.Policy.class, "policy")
                    .driver()));
        }
        if (top.containsKey("timeScale")) {
            s.attempt(() -> {
                YamlTree.Node n = top.get("timeScale");
                if (!(n.value() instanceof Number) || ((Number) n.value()).doubleValue() < 1
                        || ((Number) n.value()).doubleValue() > 1000) {
                    throw new YamlTree.Invalid(n.line(), "timeScale must be a number from 1 to 1000 (simulated "
                            + "seconds per second), got " + n.value());
                }
                s.timeScale = ((Number) n.value()).doubleValue();
            });
        }
        if (top.containsKey("invariants")) {
            s.attempt(() -> {
                YamlTree.Node n = top.get("invariants");
                List<String> names = new ArrayList<>();
                if ("all".equals(n.value())) {
                    names.addAll(Invariants.ALL);
                } else if (n.value() instanceof List<?>) {
                    for (YamlTree.Node x : n.list()) {
                        String name = string(x, "invariants");
                        if (!Invariants.ALL.contains(name)) {
                            throw new YamlTree.Invalid(x.line(), "invariants: '" + name + "' is not one of "
                                    + Invariants.ALL);
                        }
                        names.add(name);
                    }
                } else {
                    throw new YamlTree.Invalid(n.line(), "invariants must be all or a list of " + Invariants.ALL
                            + ", got " + n.value());
                }
                s.invariants = List.copyOf(names);
            });
        }
        if (!top.containsKey("steps") && !top.containsKey("cases")) {
            s.errors.add(new YamlTree.Invalid(root.line(), "no steps"));
        }
        if (top.containsKey("steps")) {
            s.attempt(() -> s.steps.addAll(s.steps(top.get("steps"), "steps")));
        }
        if (top.containsKey("cases")) {
            s.attempt(() -> s.cases(top.get("cases")));
        }
        if (!s.errors.isEmpty()) {
            throw YamlTree.Invalid.of(s.errors);
        }
        return s;
    }

    private void cluster(YamlTree.Node node) throws YamlTree.Invalid {
        Map<String, YamlTree.Node> c = map(node, "cluster");
        keys(c, CLUSTER, "cluster");
        if (c.containsKey("nodes")) {
            attempt(() -> nodes = integer(c.get("nodes"), "cluster.nodes", 1, 16));
        }
        if (c.containsKey("chips")) {
            attempt(() -> chips = integer(c.get("chips"), "cluster.chips", 1, 32));
        }
        if (c.containsKey("chipType")) {
            attempt(() -> {
                String type = string(c.get("chipType"), "cluster.chipType").toLowerCase(Locale.ROOT);
                if (!type.equals("910b") && !type.equals("310p")) {
                    throw new YamlTree.Invalid(c.get("chipType").line(), "cluster.chipType '" + type
                            + "' is not 910b or 310p");
                }
                chipType = type;
            });
        }
        if (c.containsKey("driverVersion")) {
            attempt(() -> driverVersion = version(c.get("driverVersion"), "cluster.driverVersion"));
        }
        if (c.containsKey("controlPlanes")) {
            attempt(() -> controlPlanes = integer(c.get("controlPlanes"), "cluster.controlPlanes", 1, 2));
        }
        if (c.containsKey("startTime")) {
            attempt(() -> {
                String t = string(c.get("startTime"), "cluster.startTime");
                try {
                    startTime = java.time.Instant.parse(t);
                } catch (java.time.format.DateTimeParseException e) {
                    throw new YamlTree.Invalid(c.get("startTime").line(), "cluster.startTime '" + t
                            + "' is not an RFC 3339 instant such as 2026-12-07T01:50:00Z (an offset such as +08:00 is "
                            + "taken and converted to UTC)");
                }
                if (startTime.isBefore(java.time.Instant.parse("2000-01-01T00:00:00Z"))
                        || startTime.isAfter(java.time.Instant.parse("2200-01-01T00:00:00Z"))) {
                    throw new YamlTree.Invalid(c.get("startTime").line(), "cluster.startTime " + t
                            + " is outside 2000 to 2200");
                }
            });
        }
        if (c.containsKey("driverManagement")) {
            attempt(() -> {
                String m = string(c.get("driverManagement"), "cluster.driverManagement");
                if (!m.equals("managed") && !m.equals("host")) {
                    throw new YamlTree.Invalid(c.get("driverManagement").line(), "cluster.driverManagement '" + m
                            + "' is not managed or host");
                }
                driverManagement = m;
            });
        }
    }

    private void cases(YamlTree.Node casesNode) throws YamlTree.Invalid {
        if (!(casesNode.value() instanceof List) || casesNode.list().isEmpty()) {
            throw new YamlTree.Invalid(casesNode.line(), "cases must be a non-empty list");
        }
        Set<String> ids = new java.util.HashSet<>();
        int c = 0;
        for (YamlTree.Node cn : casesNode.list()) {
            String w = "cases[" + c++ + "]";
            attempt(() -> oneCase(cn, w, ids));
        }
    }

    private void oneCase(YamlTree.Node cn, String w, Set<String> ids) throws YamlTree.Invalid {
        Map<String, YamlTree.Node> m = map(cn, w);
        keys(m, CASE, w);
        for (String k : List.of("id", "category", "name", "outcome", "steps")) {
            if (!m.containsKey(k)) {
                throw new YamlTree.Invalid(cn.line(), w + ": '" + k + "' is missing (a case has "
                        + "id, category, name, outcome, steps)");
            }
        }
        String id = string(m.get("id"), w + ".id");
        if (!id.matches("[a-z0-9][a-z0-9-]*") || !ids.add(id)) {
            throw new YamlTree.Invalid(m.get("id").line(), w + ".id '" + id
                    + "' must be unique in the file and made of a-z, 0-9 and -");
        }
        String category = string(m.get("category"), w + ".category");
        if (!CATEGORIES.contains(category)) {
            throw new YamlTree.Invalid(m.get("category").line(), w + ".category '" + category
                    + "' is not one of " + CATEGORIES);
        }
        String name = string(m.get("name"), w + ".name");
        String outcome = string(m.get("outcome"), w + ".outcome");
        if ((name + outcome).contains("|")) {
            throw new YamlTree.Invalid(cn.line(), w + ": name and outcome must not contain '|' (the report "
                    + "separates the columns with it)");
        }
        cases.add(new Case(id, category, name, outcome, steps(m.get("steps"), w + ".steps"), cn.line()));
    }

    /** @return the steps that are valid; an invalid one is added to {@link #errors} */
    private List<Step> steps(YamlTree.Node stepsNode, String where) throws YamlTree.Invalid {
        if (!(stepsNode.value() instanceof List)) {
            throw new YamlTree.Invalid(stepsNode.line(), where + " must be a list");
        }
        if (stepsNode.list().isEmpty()) {
            throw new YamlTree.Invalid(stepsNode.line(), where + " is empty: a scenario needs at least one step");
        }
        List<Step> out = new ArrayList<>();
        int i = 0;
        for (YamlTree.Node stepNode : stepsNode.list()) {
            String w = where + "[" + i++ + "]";
            attempt(() -> out.add(step(stepNode, w)));
        }
        out.sort((a, b) -> a.at().compareTo(b.at()));
        return out;
    }

    /**
     * @param test a test of an expectation
     * @return whether an {@code expect} step, or an action's {@code when}, of the shared steps or of a case passes it
     */
    boolean expects(java.util.function.Predicate<Action.Expect> test) {
        List<Step> all = new ArrayList<>(steps);
        cases.forEach(c -> all.addAll(c.steps()));
        return all.stream().anyMatch(x -> x.action() instanceof Action.Expect e && test.test(e)
                || x.when() != null && test.test(x.when()));
    }

    /** @return whether a shared step or a case's step is an action of this type */
    boolean uses(Class<? extends Action> type) {
        if (steps.stream().anyMatch(x -> type.isInstance(x.action()))) {
            return true;
        }
        return cases.stream().anyMatch(c -> c.steps().stream().anyMatch(x -> type.isInstance(x.action())));
    }

    private Step step(YamlTree.Node n, String where) throws YamlTree.Invalid {
        Map<String, YamlTree.Node> m = map(n, where);
        if (!m.containsKey("at")) {
            throw new YamlTree.Invalid(n.line(), where + ": 'at' is missing (when the step runs, e.g. at: 120s)");
        }
        Duration at = duration(m.get("at"), where + ".at");
        List<String> kinds = new ArrayList<>();
        for (String k : m.keySet()) {
            if (k.equals("at")) {
                continue;
            }
            if (!ACTIONS.containsKey(k)) {
                throw new YamlTree.Invalid(m.get(k).line(), where + ": unknown key '" + k + "' (expected at and one of "
                        + new TreeSet<>(ACTIONS.keySet()) + ")");
            }
            kinds.add(k);
        }
        if (kinds.size() != 1) {
            throw new YamlTree.Invalid(n.line(), where + ": expected exactly one action or expect, got " + kinds);
        }
        String kind = kinds.get(0);
        Class<? extends Action> type = ACTIONS.get(kind);
        YamlTree.Node body = m.get(kind);
        String yaml = kind + ": " + YamlTree.flow(body);
        String w = where + "." + kind;
        Action.Expect when = null;
        int whenLine = 0;
        if (type != Action.Expect.class && body.isMap() && body.map().containsKey("when")) {
            // an action at a precise point: wait for the condition, then act at once
            YamlTree.Node cond = body.map().get("when");
            when = ScenarioMapper.bind(cond, Action.Expect.class, w + ".when");
            if (when.within() == null) {
                throw new YamlTree.Invalid(cond.line(), w + ".when needs 'within' (how long to wait for the "
                        + "condition before the step fails)");
            }
            check(when, cond, w + ".when");
            whenLine = cond.line();
            Map<String, YamlTree.Node> rest = new LinkedHashMap<>(body.map());
            rest.remove("when");
            body = new YamlTree.Node(rest, body.line());
        }
        Action action = ScenarioMapper.bind(body, type, w);
        check(action, body, w);
        return new Step(at, action, when, n.line(), whenLine, yaml);
    }

    /** A check that may fail with {@link YamlTree.Invalid}. */
    @FunctionalInterface
    private interface Check {
        void run() throws YamlTree.Invalid;
    }

    /**
     * Checks what an action refers to in this scenario's cluster: nodes, chips, control-plane replicas.
     *
     * @throws YamlTree.Invalid naming every value at fault (the first carrying the others)
     */
    private void check(Action a, YamlTree.Node body, String w) throws YamlTree.Invalid {
        List<Check> checks = new ArrayList<>();
        if (a instanceof Action.OnNode o) {
            checks.add(() -> node(o.node(), line(body, "node"), w + ".node", false));
        }
        if (a instanceof Action.OnChip c) {
            int npus = chipType.equals("310p") ? chips / 2 : chips;
            int perNpu = chipType.equals("310p") ? 2 : 1;
            checks.add(() -> range(c.npu(), line(body, "npu"), w + ".npu", npus - 1));
            checks.add(() -> range(c.chip(), line(body, "chip"), w + ".chip", perNpu - 1));
        }
        if (a instanceof Action.ClockJump j && !Action.ClockJump.CONTROL_PLANE.equals(j.node())) {
            checks.add(() -> node(j.node(), line(body, "node"), w + ".node (a node or control-plane)", false));
        }
        if (a instanceof Action.Expect e) {
            checks.add(() -> node(e.node(), line(body, "node"), w + ".node", true));
        }
        if (a instanceof Action.PodStep p && p.npu() > chips) {
            checks.add(() -> {
                throw new YamlTree.Invalid(line(body, "npu"), w + ".npu " + p.npu() + " is more than the node's "
                        + chips + " chips (cluster.chips): no node could run the pod");
            });
        }
        if (a instanceof Action.KillControlPlane k) {
            checks.add(() -> replica(k.replica(), true, line(body, "replica"), w));
        }
        if (a instanceof Action.StartControlPlane k) {
            checks.add(() -> replica(k.replica(), false, line(body, "replica"), w));
        }
        List<YamlTree.Invalid> errors = new ArrayList<>();
        for (Check c : checks) {
            try {
                c.run();
            } catch (YamlTree.Invalid e) {
                errors.add(e);
            }
        }
        if (!errors.isEmpty()) {
            throw YamlTree.Invalid.of(errors);
        }
    }

    private void replica(String replica, boolean kill, int line, String w) throws YamlTree.Invalid {
        boolean ok = replica.equals("0") || (controlPlanes > 1 && replica.equals("1"))
                || (kill && (replica.equals("leader") || replica.equals("all")));
        if (!ok) {
            throw new YamlTree.Invalid(line, w + ".replica '" + replica + "' is not one of 0"
                    + (controlPlanes > 1 ? ", 1" : "") + (kill ? ", leader, all" : "") + " (cluster.controlPlanes is "
                    + controlPlanes + ")");
        }
    }

    private static void range(int v, int line, String where, int max) throws YamlTree.Invalid {
        if (v < 0 || v > max) {
            throw new YamlTree.Invalid(line, where + " " + v + " is outside 0.." + max);
        }
    }

    /** @return the line of {@code key} in a mapping, else the mapping's line */
    private static int line(YamlTree.Node body, String key) {
        YamlTree.Node v = body.isMap() ? body.map().get(key) : null;
        return v != null ? v.line() : body.line();
    }

    private void node(String name, int line, String where, boolean allowAll) throws YamlTree.Invalid {
        if (allowAll && name.equals(Action.Expect.ALL)) {
            return;
        }
        for (int i = 0; i < nodes; i++) {
            if (name.equals("node-" + i)) {
                return;
            }
        }
        throw new YamlTree.Invalid(line, where + ": no node '" + name + "' in a cluster of " + nodes
                + " (node-0 .. node-" + (nodes - 1) + (allowAll ? ", or all" : "") + ")");
    }

    private static Map<String, YamlTree.Node> map(YamlTree.Node n, String where) throws YamlTree.Invalid {
        if (n == null || !n.isMap()) {
            throw new YamlTree.Invalid(n == null ? 0 : n.line(), where + " must be a mapping ({key: value, ...})");
        }
        return n.map();
    }

    /** Adds an error for each key of {@code m} that is not {@code allowed}. */
    private void keys(Map<String, YamlTree.Node> m, Set<String> allowed, String where) {
        for (Map.Entry<String, YamlTree.Node> e : m.entrySet()) {
            if (!allowed.contains(e.getKey())) {
                errors.add(new YamlTree.Invalid(e.getValue().line(), where + ": unknown key '" + e.getKey()
                        + "' (expected " + new java.util.TreeSet<>(allowed) + ")"));
            }
        }
    }

    private static String string(YamlTree.Node n, String where) throws YamlTree.Invalid {
        if (n == null || n.value() == null || n.value() instanceof Map || n.value() instanceof List) {
            throw new YamlTree.Invalid(n == null ? 0 : n.line(), where + " must be a text value");
        }
        return String.valueOf(n.value());
    }

    private static int integer(YamlTree.Node n, String where, int min, int max) throws YamlTree.Invalid {
        if (n == null || !(n.value() instanceof Integer || n.value() instanceof Long)) {
            throw new YamlTree.Invalid(n == null ? 0 : n.line(), where + " must be a whole number from " + min + " to "
                    + max + (n == null ? " (missing)" : ", got " + n.value()));
        }
        long v = ((Number) n.value()).longValue();
        if (v < min || v > max) {
            throw new YamlTree.Invalid(n.line(), where + " " + v + " is outside " + min + ".." + max);
        }
        return (int) v;
    }

    private static String version(YamlTree.Node n, String where) throws YamlTree.Invalid {
        String v = string(n, where);
        // the CR's grammar (the CRD's and the reader's): the version is the NPUOperatorCtl's at the install
        if (!io.npulifecycle.api.upgrade.spec.SpecGrammar.isVersion(v)) {
            throw new YamlTree.Invalid(n.line(), where + " '" + v + "' is not a driver version ("
                    + io.npulifecycle.api.upgrade.spec.SpecGrammar.VERSION_EXPECTED + ")");
        }
        return v;
    }

    /**
     * @return the duration of {@code 200s}, {@code 5m}, {@code 1h}, {@code 500ms} (simulated time)
     */
    static Duration duration(YamlTree.Node n, String where) throws YamlTree.Invalid {
        String text = n == null || n.value() == null ? "" : String.valueOf(n.value()).trim();
        Duration d = ScenarioMapper.parseDuration(text);
        if (d == null) {
            throw new YamlTree.Invalid(n == null ? 0 : n.line(), where + " '" + text + "' "
                    + ScenarioMapper.NOT_A_DURATION);
        }
        return d;
    }
}
