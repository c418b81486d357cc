package io.npulifecycle.simulator.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 */
final class Scenario {

    static final Set<String> TOP = Set.of("name", "cluster", "policy", "timeScale", "steps", "cases", "build");
    static final Set<String> CLUSTER = Set.of("nodes", "chips", "chipType", "driverVersion", "controlPlanes");
    static final Set<String> ACTIONS = Set.of("wedge", "recover", "setChip", "persistent", "approve", "annotate",
            "setPolicy", "setVersion", "killAgent", "killControlPlane", "startControlPlane", "apiOutage", "apiGone",
            "apiUnreachable", "clockJump", "markersReadOnly", "markersFull", "expect");
    static final Set<String> EXPECT = Set.of("node", "labels", "annotations", "events", "reboots", "markers",
            "driverVersion", "upgradeState", "status", "violations", "mbean", "within", "holdFor");
    /** Categories of the reliability matrix (issue #7); the report groups cases by them. */
    static final List<String> CATEGORIES = List.of("agent killed", "control plane killed", "API outage", "clock",
            "marker folder");
    static final Set<String> CASE = Set.of("id", "category", "name", "outcome", "steps");
    static final Set<String> STATES = Set.of("healthy", "warning", "wedged", "occupied", "hanging", "garbled",
            "absent");
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

    /**
     * One step: when, what, and the line it starts on. An action may carry a condition ({@code when:}, an expectation
     * in {@code args.get("when")}): it waits until that holds, then acts at once (e.g. SIGKILL at a precise point of a
     * flow).
     */
    record Step(Duration at, String kind, Map<String, Object> args, Duration within, int line) {
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
     * @throws YamlTree.Invalid with the line and what is wrong: malformed YAML, an unknown key, a value of the wrong
     *         type, an unknown node, chip or state, a bad duration
     */
    static Scenario parse(String file, String text) throws YamlTree.Invalid {
        YamlTree.Node root = YamlTree.parse(text);
        Scenario s = new Scenario(file);
        Map<String, YamlTree.Node> top = map(root, "the scenario");
        keys(top, TOP, "the scenario");
        s.name = top.containsKey("name") ? string(top.get("name"), "name") : file;
        if (top.containsKey("cluster")) {
            Map<String, YamlTree.Node> c = map(top.get("cluster"), "cluster");
            keys(c, CLUSTER, "cluster");
            if (c.containsKey("nodes")) {
                s.nodes = integer(c.get("nodes"), "cluster.nodes", 1, 16);
            }
            if (c.containsKey("chips")) {
                s.chips = integer(c.get("chips"), "cluster.chips", 1, 32);
            }
            if (c.containsKey("chipType")) {
                s.chipType = string(c.get("chipType"), "cluster.chipType").toLowerCase(Locale.ROOT);
                if (!s.chipType.equals("910b") && !s.chipType.equals("310p")) {
                    throw new YamlTree.Invalid(c.get("chipType").line(), "cluster.chipType '" + s.chipType
                            + "' is not 910b or 310p");
                }
            }
            if (c.containsKey("driverVersion")) {
                s.driverVersion = version(c.get("driverVersion"), "cluster.driverVersion");
            }
            if (c.containsKey("controlPlanes")) {
                s.controlPlanes = integer(c.get("controlPlanes"), "cluster.controlPlanes", 1, 2);
            }
        }
        if (top.containsKey("build")) {
            s.build = string(top.get("build"), "build");
            if (!s.build.equals("default") && !s.build.equals("long")) {
                throw new YamlTree.Invalid(top.get("build").line(), "build must be default or long, got " + s.build);
            }
        }
        if (s.chipType.equals("310p") && s.chips % 2 != 0) {
            throw new YamlTree.Invalid(root.line(), "cluster.chips must be even for 310p (two chips per NPU id)");
        }
        if (top.containsKey("policy")) {
            s.policy.putAll(policy(top.get("policy"), "policy"));
        }
        if (top.containsKey("timeScale")) {
            YamlTree.Node n = top.get("timeScale");
            if (!(n.value() instanceof Number) || ((Number) n.value()).doubleValue() < 1
                    || ((Number) n.value()).doubleValue() > 1000) {
                throw new YamlTree.Invalid(n.line(), "timeScale must be a number from 1 to 1000 (simulated seconds "
                        + "per second), got " + n.value());
            }
            s.timeScale = ((Number) n.value()).doubleValue();
        }
        if (!top.containsKey("steps") && !top.containsKey("cases")) {
            throw new YamlTree.Invalid(root.line(), "no steps");
        }
        if (top.containsKey("steps")) {
            s.steps.addAll(s.steps(top.get("steps"), "steps"));
        }
        if (top.containsKey("cases")) {
            YamlTree.Node casesNode = top.get("cases");
            if (!(casesNode.value() instanceof List) || casesNode.list().isEmpty()) {
                throw new YamlTree.Invalid(casesNode.line(), "cases must be a non-empty list");
            }
            Set<String> ids = new java.util.HashSet<>();
            int c = 0;
            for (YamlTree.Node cn : casesNode.list()) {
                String w = "cases[" + c++ + "]";
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
                s.cases.add(new Case(id, category, name, outcome, s.steps(m.get("steps"), w + ".steps"), cn.line()));
            }
        }
        return s;
    }

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
            out.add(step(stepNode, where + "[" + i++ + "]"));
        }
        out.sort((a, b) -> a.at().compareTo(b.at()));
        return out;
    }

    /** @return whether a shared step or a case's step is a {@code kind} action */
    boolean uses(String kind) {
        if (steps.stream().anyMatch(x -> x.kind().equals(kind))) {
            return true;
        }
        return cases.stream().anyMatch(c -> c.steps().stream().anyMatch(x -> x.kind().equals(kind)));
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
            if (!ACTIONS.contains(k)) {
                throw new YamlTree.Invalid(m.get(k).line(), where + ": unknown key '" + k + "' (expected at and one of "
                        + new java.util.TreeSet<>(ACTIONS) + ")");
            }
            kinds.add(k);
        }
        if (kinds.size() != 1) {
            throw new YamlTree.Invalid(n.line(), where + ": expected exactly one action or expect, got " + kinds);
        }
        String kind = kinds.get(0);
        YamlTree.Node body = m.get(kind);
        String w = where + "." + kind;
        Map<String, Object> args = new LinkedHashMap<>();
        Duration within = null;
        if (!kind.equals("expect") && body != null && body.isMap() && body.map().containsKey("when")) {
            // an action at a precise point: wait for the condition, then act at once
            YamlTree.Node cond = body.map().get("when");
            Map<String, Object> whenArgs = new LinkedHashMap<>();
            Duration whenWithin = expectArgs(cond, w + ".when", whenArgs);
            if (whenWithin == null) {
                throw new YamlTree.Invalid(cond.line(), w + ".when needs 'within' (how long to wait for the "
                        + "condition before the step fails)");
            }
            Map<String, YamlTree.Node> rest = new LinkedHashMap<>(body.map());
            rest.remove("when");
            body = new YamlTree.Node(rest, body.line());
            args.put("when", new Step(Duration.ZERO, "expect", whenArgs, whenWithin, cond.line()));
        }
        switch (kind) {
            case "wedge":
            case "recover":
            case "persistent":
                args.putAll(chipRef(body, w, Set.of("node", "npu", "chip")));
                break;
            case "setChip":
                args.putAll(chipRef(body, w, Set.of("node", "npu", "chip", "state")));
                String state = string(map(body, w).get("state"), w + ".state").toLowerCase(Locale.ROOT);
                if (!STATES.contains(state)) {
                    throw new YamlTree.Invalid(map(body, w).get("state").line(), w + ".state '" + state
                            + "' is not one of " + new java.util.TreeSet<>(STATES));
                }
                args.put("state", state);
                break;
            case "approve":
            case "killAgent": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, Set.of("node"), w);
                args.put("node", node(a.get("node"), w + ".node", false));
                break;
            }
            case "markersReadOnly":
            case "markersFull": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, Set.of("node", "on"), w);
                args.put("node", node(a.get("node"), w + ".node", false));
                if (a.get("on") == null || !(a.get("on").value() instanceof Boolean)) {
                    throw new YamlTree.Invalid(body.line(), w + ".on must be true or false");
                }
                args.put("on", a.get("on").value());
                break;
            }
            case "clockJump": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, Set.of("node", "by"), w);
                YamlTree.Node nn = a.get("node");
                args.put("node", nn != null && "control-plane".equals(nn.value()) ? "control-plane"
                        : node(nn, w + ".node (a node or control-plane)", false));
                String by = a.get("by") == null ? "" : String.valueOf(a.get("by").value()).trim();
                boolean back = by.startsWith("-");
                Duration d = duration(new YamlTree.Node(back || by.startsWith("+") ? by.substring(1) : by,
                        a.get("by") == null ? body.line() : a.get("by").line()), w + ".by");
                args.put("by", back ? d.negated() : d);
                break;
            }
            case "killControlPlane":
            case "startControlPlane": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, kind.equals("killControlPlane") ? Set.of("replica", "restart") : Set.of("replica"), w);
                String replica = a.containsKey("replica") ? string(a.get("replica"), w + ".replica") : "0";
                boolean ok = replica.equals("0") || (controlPlanes > 1 && replica.equals("1"))
                        || (kind.equals("killControlPlane") && (replica.equals("leader") || replica.equals("all")));
                if (!ok) {
                    throw new YamlTree.Invalid(a.containsKey("replica") ? a.get("replica").line() : body.line(),
                            w + ".replica '" + replica + "' is not one of 0" + (controlPlanes > 1 ? ", 1" : "")
                            + (kind.equals("killControlPlane") ? ", leader, all" : "") + " (cluster.controlPlanes is "
                            + controlPlanes + ")");
                }
                args.put("replica", replica);
                if (kind.equals("killControlPlane")) {
                    YamlTree.Node r = a.get("restart");
                    if (r != null && !(r.value() instanceof Boolean)) {
                        throw new YamlTree.Invalid(r.line(), w + ".restart must be true or false");
                    }
                    args.put("restart", r == null || (Boolean) r.value());
                }
                break;
            }
            case "apiGone": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, Set.of("failNext"), w);
                args.put("failNext", a.containsKey("failNext") ? integer(a.get("failNext"), w + ".failNext", 0, 1000)
                        : 5);
                break;
            }
            case "annotate": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, Set.of("node", "key", "value"), w);
                args.put("node", node(a.get("node"), w + ".node", false));
                args.put("key", string(a.get("key"), w + ".key"));
                if (!a.containsKey("value")) {
                    throw new YamlTree.Invalid(body.line(), w + ".value is missing (null removes the annotation)");
                }
                args.put("value", a.get("value").value() == null ? null : String.valueOf(a.get("value").value()));
                break;
            }
            case "setPolicy":
                args.putAll(policy(body, w));
                break;
            case "setVersion": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, Set.of("version"), w);
                args.put("version", version(a.get("version"), w + ".version"));
                break;
            }
            case "apiOutage":
            case "apiUnreachable": {
                Map<String, YamlTree.Node> a = map(body, w);
                keys(a, Set.of("duration"), w);
                args.put("duration", duration(a.get("duration"), w + ".duration"));
                break;
            }
            case "expect":
                within = expectArgs(body, w, args);
                break;
            default:
                throw new YamlTree.Invalid(body.line(), where + ": unknown action " + kind);
        }
        return new Step(at, kind, args, within, n.line());
    }

    /**
     * Parses an expectation ({@code expect:} or an action's {@code when:}) into {@code args}.
     *
     * @return its {@code within}, or {@code null}
     */
    private Duration expectArgs(YamlTree.Node body, String w, Map<String, Object> args) throws YamlTree.Invalid {
        Duration within = null;
        Map<String, YamlTree.Node> e = map(body, w);
        keys(e, EXPECT, w);
        if (e.size() == (e.containsKey("within") ? 2 : 1) && e.containsKey("node")) {
            throw new YamlTree.Invalid(body.line(), w + ": nothing to check");
        }
        for (Map.Entry<String, YamlTree.Node> x : e.entrySet()) {
            String key = x.getKey();
            YamlTree.Node v = x.getValue();
            switch (key) {
                case "node": args.put("node", node(v, w + ".node", true)); break;
                case "within": within = duration(v, w + ".within"); break;
                case "holdFor": args.put("holdFor", duration(v, w + ".holdFor")); break;
                case "mbean": {
                    Map<String, YamlTree.Node> mb = map(v, w + ".mbean");
                    keys(mb, Set.of("name", "attribute", "equals", "contains", "atLeast"), w + ".mbean");
                    Map<String, Object> out = new LinkedHashMap<>();
                    String mbName = string(mb.get("name"), w + ".mbean.name");
                    if (!mbName.startsWith("io.npulifecycle:") && !mbName.startsWith("java.lang:")) {
                        throw new YamlTree.Invalid(mb.get("name").line(), w + ".mbean.name '" + mbName
                                + "' is not an io.npulifecycle: or java.lang: object name");
                    }
                    out.put("name", mbName);
                    out.put("attribute", string(mb.get("attribute"), w + ".mbean.attribute"));
                    int tests = 0;
                    for (String t : List.of("equals", "contains")) {
                        if (mb.containsKey(t)) {
                            out.put(t, string(mb.get(t), w + ".mbean." + t));
                            tests++;
                        }
                    }
                    if (mb.containsKey("atLeast")) {
                        out.put("atLeast", integer(mb.get("atLeast"), w + ".mbean.atLeast", 0, Integer.MAX_VALUE));
                        tests++;
                    }
                    if (tests != 1) {
                        throw new YamlTree.Invalid(v.line(), w + ".mbean needs exactly one of equals, contains, "
                                + "atLeast");
                    }
                    args.put("mbean", out);
                    break;
                }
                case "labels":
                case "annotations":
                case "status":
                    args.put(key, nullableStrings(v, w + "." + key));
                    break;
                case "markers": {
                    Map<String, YamlTree.Node> mk = map(v, w + ".markers");
                    keys(mk, Set.of("driver-ready", "reboot-required"), w + ".markers");
                    Map<String, Object> out = new LinkedHashMap<>();
                    if (mk.containsKey("driver-ready")) {
                        if (!(mk.get("driver-ready").value() instanceof Boolean)) {
                            throw new YamlTree.Invalid(mk.get("driver-ready").line(), w
                                    + ".markers.driver-ready must be true or false");
                        }
                        out.put("driver-ready", mk.get("driver-ready").value());
                    }
                    if (mk.containsKey("reboot-required")) {
                        Object rv = mk.get("reboot-required").value();
                        if (rv != null && !"recovery".equals(rv) && !"upgrade".equals(rv)) {
                            throw new YamlTree.Invalid(mk.get("reboot-required").line(), w
                                    + ".markers.reboot-required must be recovery, upgrade or null, got " + rv);
                        }
                        out.put("reboot-required", rv);
                    }
                    args.put("markers", out);
                    break;
                }
                case "events": {
                    if (!(v.value() instanceof List)) {
                        throw new YamlTree.Invalid(v.line(), w + ".events must be a list");
                    }
                    List<Map<String, Object>> evs = new ArrayList<>();
                    for (YamlTree.Node ev : v.list()) {
                        Map<String, YamlTree.Node> em = map(ev, w + ".events[]");
                        keys(em, Set.of("reason", "messageContains", "count"), w + ".events[]");
                        Map<String, Object> one = new LinkedHashMap<>();
                        one.put("reason", string(em.get("reason"), w + ".events[].reason"));
                        if (em.containsKey("messageContains")) {
                            one.put("messageContains", string(em.get("messageContains"),
                                    w + ".events[].messageContains"));
                        }
                        if (em.containsKey("count")) {
                            one.put("count", integer(em.get("count"), w + ".events[].count", 0, 10_000));
                        }
                        evs.add(one);
                    }
                    args.put("events", evs);
                    break;
                }
                case "reboots":
                case "violations":
                    args.put(key, integer(v, w + "." + key, 0, 10_000));
                    break;
                case "driverVersion":
                    args.put(key, version(v, w + ".driverVersion"));
                    break;
                case "upgradeState":
                    args.put(key, v.value() == null ? null : string(v, w + ".upgradeState"));
                    break;
                default:
                    throw new YamlTree.Invalid(v.line(), w + ": unknown key " + key);
            }
        }
        if (!args.containsKey("node")) {
            args.put("node", "all");
        }
        return within;
    }

    private Map<String, Object> chipRef(YamlTree.Node body, String w, Set<String> allowed) throws YamlTree.Invalid {
        Map<String, YamlTree.Node> a = map(body, w);
        keys(a, allowed, w);
        int npus = chipType.equals("310p") ? chips / 2 : chips;
        int perNpu = chipType.equals("310p") ? 2 : 1;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("node", node(a.get("node"), w + ".node", false));
        out.put("npu", integer(a.get("npu"), w + ".npu", 0, npus - 1));
        out.put("chip", integer(a.get("chip"), w + ".chip", 0, perNpu - 1));
        return out;
    }

    private String node(YamlTree.Node n, String where, boolean allowAll) throws YamlTree.Invalid {
        String name = string(n, where);
        if (allowAll && name.equals("all")) {
            return name;
        }
        for (int i = 0; i < nodes; i++) {
            if (name.equals("node-" + i)) {
                return name;
            }
        }
        throw new YamlTree.Invalid(n.line(), where + ": no node '" + name + "' in a cluster of " + nodes
                + " (node-0 .. node-" + (nodes - 1) + (allowAll ? ", or all" : "") + ")");
    }

    /**
     * Maps the policy shorthand to spec.driver fields, checking every value's type, so a typo is rejected here with its
     * line rather than reaching the control plane (QA: {@code autoRecover: maybe} made a scenario wait forever).
     */
    private static Map<String, Object> policy(YamlTree.Node n, String where) throws YamlTree.Invalid {
        Map<String, YamlTree.Node> m = map(n, where);
        Map<String, Object> driver = new LinkedHashMap<>();
        for (Map.Entry<String, YamlTree.Node> e : m.entrySet()) {
            String key = e.getKey();
            YamlTree.Node v = e.getValue();
            String w = where + "." + key;
            switch (key) {
                case "autoUpgrade":
                case "maxParallelUpgrades":
                case "maxUnavailable":
                    sub(driver, "upgradePolicy").put(key, policyValue(key, v, w));
                    break;
                case "autoRecover":
                case "maxReboots":
                case "window":
                    sub(driver, "recoveryPolicy").put(key, policyValue(key, v, w));
                    break;
                case "version":
                    driver.put(key, version(v, w));
                    break;
                case "registry":
                    driver.put(key, string(v, w));
                    break;
                case "upgradePolicy":
                case "recoveryPolicy": {
                    Set<String> allowed = key.equals("upgradePolicy")
                            ? Set.of("autoUpgrade", "maxParallelUpgrades", "maxUnavailable", "deadlines")
                            : Set.of("autoRecover", "maxReboots", "window");
                    Map<String, YamlTree.Node> inner = map(v, w);
                    keys(inner, allowed, w);
                    Map<String, Object> out = sub(driver, key);
                    for (Map.Entry<String, YamlTree.Node> x : inner.entrySet()) {
                        out.put(x.getKey(), policyValue(x.getKey(), x.getValue(), w + "." + x.getKey()));
                    }
                    break;
                }
                default:
                    throw new YamlTree.Invalid(v.line(), where + ": unknown key '" + key
                            + "' (expected autoUpgrade, maxParallelUpgrades, maxUnavailable, autoRecover, maxReboots, "
                            + "window, version, registry, upgradePolicy, recoveryPolicy)");
            }
        }
        return driver;
    }

    private static Object policyValue(String key, YamlTree.Node v, String where) throws YamlTree.Invalid {
        switch (key) {
            case "autoUpgrade":
            case "autoRecover":
                if (!(v.value() instanceof Boolean)) {
                    throw new YamlTree.Invalid(v.line(), where + " must be true or false, got " + v.value());
                }
                return v.value();
            case "maxParallelUpgrades":
                return integer(v, where, 0, 100_000);
            case "maxReboots":
                return integer(v, where, 0, 1000);
            case "maxUnavailable":
                if (v.value() instanceof Integer || v.value() instanceof Long) {
                    return integer(v, where, 0, 100_000);
                }
                String pct = string(v, where);
                if (!pct.matches("(100|[1-9]?[0-9])%")) {
                    throw new YamlTree.Invalid(v.line(), where + " must be a number of nodes or a percentage like 25%, "
                            + "got " + pct);
                }
                return pct;
            case "window":
                duration(v, where);
                return string(v, where);
            case "deadlines": {
                Map<String, Object> out = new LinkedHashMap<>();
                Map<String, YamlTree.Node> d = map(v, where);
                keys(d, Set.of("podRestartSeconds", "rebootRequiredSeconds", "rebootingSeconds", "validationSeconds"),
                        where);
                for (Map.Entry<String, YamlTree.Node> x : d.entrySet()) {
                    out.put(x.getKey(), integer(x.getValue(), where + "." + x.getKey(), 0, 10_000_000));
                }
                return out;
            }
            default:
                throw new YamlTree.Invalid(v.line(), where + ": unknown key");
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> sub(Map<String, Object> m, String key) {
        return (Map<String, Object>) m.computeIfAbsent(key, k -> new LinkedHashMap<>());
    }

    private static Object plain(YamlTree.Node n) {
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

    private static Map<String, YamlTree.Node> map(YamlTree.Node n, String where) throws YamlTree.Invalid {
        if (n == null || !n.isMap()) {
            throw new YamlTree.Invalid(n == null ? 0 : n.line(), where + " must be a mapping ({key: value, ...})");
        }
        return n.map();
    }

    private static void keys(Map<String, YamlTree.Node> m, Set<String> allowed, String where) throws YamlTree.Invalid {
        for (Map.Entry<String, YamlTree.Node> e : m.entrySet()) {
            if (!allowed.contains(e.getKey())) {
                throw new YamlTree.Invalid(e.getValue().line(), where + ": unknown key '" + e.getKey()
                        + "' (expected " + new java.util.TreeSet<>(allowed) + ")");
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
        if (!v.matches("[0-9]+(\\.[0-9A-Za-z]+){1,3}")) {
            throw new YamlTree.Invalid(n.line(), where + " '" + v + "' is not a driver version like 25.5.0");
        }
        return v;
    }

    private static Map<String, String> nullableStrings(YamlTree.Node n, String where) throws YamlTree.Invalid {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, YamlTree.Node> e : map(n, where).entrySet()) {
            Object v = e.getValue().value();
            if (v instanceof Map || v instanceof List) {
                throw new YamlTree.Invalid(e.getValue().line(), where + "." + e.getKey()
                        + " must be a text value or null");
            }
            out.put(e.getKey(), v == null ? null : String.valueOf(v));
        }
        return out;
    }

    /**
     * @return the duration of {@code 200s}, {@code 5m}, {@code 1h}, {@code 500ms} (simulated time)
     */
    static Duration duration(YamlTree.Node n, String where) throws YamlTree.Invalid {
        String text = n == null || n.value() == null ? "" : String.valueOf(n.value()).trim();
        Matcher m = DURATION.matcher(text);
        if (!m.matches()) {
            throw new YamlTree.Invalid(n == null ? 0 : n.line(), where + " '" + text
                    + "' is not a duration (e.g. 0s, 200s, 5m, 1h, 500ms)");
        }
        double v = Double.parseDouble(m.group(1));
        long ms;
        switch (m.group(2)) {
            case "ms": ms = (long) v; break;
            case "s": ms = (long) (v * 1000); break;
            case "m": ms = (long) (v * 60_000); break;
            default: ms = (long) (v * 3_600_000); break;
        }
        return Duration.ofMillis(ms);
    }
}
