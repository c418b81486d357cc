package io.npulifecycle.simulator.harness;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonTypeName;

import tools.jackson.databind.annotation.JsonDeserialize;

/**
 * What a scenario step does: one record per action, named in the file by its {@link JsonTypeName} (the step's key
 * beside {@code at}) and bound from the YAML by Jackson ({@link ScenarioMapper}). Each record checks in its
 * constructor what it can check alone (required fields, ranges, formats) and throws {@link Bad} naming the field;
 * {@link Scenario} then checks what depends on the cluster (node names, chip numbers, replicas), and
 * {@link ScenarioRunner} has one handler per record.
 *
 * <p>A new action is a record here (added to nothing else: the sealed type lists it) and a handler in the runner.
 */
sealed interface Action {

    /** Chip states of {@code setChip} (the simulator's states). */
    Set<String> STATES = Set.of("healthy", "warning", "wedged", "occupied", "hanging", "garbled", "absent");

    /** An action on one node of the cluster ({@code node-0} ...). */
    interface OnNode {
        /** @return the node name */
        String node();
    }

    /** An action on one chip of one node. */
    interface OnChip extends OnNode {
        /** @return the NPU id, 0-based */
        Integer npu();

        /** @return the chip of the NPU, 0 (910B) or 0..1 (310P) */
        Integer chip();
    }

    /** A value of an action that is wrong by itself; {@link ScenarioMapper} adds the file's path and line. */
    final class Bad extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        /** the field (YAML key) at fault */
        final String field;

        Bad(String field, String message) {
            super(message);
            this.field = field;
        }
    }

    /**
     * A value that must be given but may be {@code null}: {@code value: null} is {@code Expected(null)}, an absent
     * key is a {@code null} {@code Expected}.
     *
     * @param value the text, or null
     */
    record Expected(String value) {
    }

    /** @return the YAML key of this action */
    default String kind() {
        return kind(getClass());
    }

    /**
     * @param type an action record
     * @return its YAML key
     */
    static String kind(Class<?> type) {
        return type.getAnnotation(JsonTypeName.class).value();
    }

    /** @return every action type by YAML key ({@code expect} included), from the sealed type's records */
    static Map<String, Class<? extends Action>> types() {
        Map<String, Class<? extends Action>> out = new LinkedHashMap<>();
        for (Class<?> c : Action.class.getPermittedSubclasses()) {
            out.put(kind(c), c.asSubclass(Action.class));
        }
        return out;
    }

    /**
     * @return {@code l}, checked to hold no null (which {@code List.copyOf} would refuse with a bare
     *         NullPointerException)
     * @throws Bad naming the field, the position and what it should hold
     */
    private static <T> List<T> noNulls(List<T> l, String field, String what) {
        if (l != null) {
            for (int i = 0; i < l.size(); i++) {
                if (l.get(i) == null) {
                    throw new Bad(field, "item " + i + " is null: " + what);
                }
            }
        }
        return l;
    }

    /**
     * @return {@code m}, checked to hold no null key or value
     * @throws Bad naming the field, the key and what its value should be
     */
    private static <V> Map<String, V> noNullValues(Map<String, V> m, String field, String what) {
        if (m != null) {
            for (Map.Entry<String, V> e : m.entrySet()) {
                if (e.getKey() == null || e.getValue() == null) {
                    throw new Bad(field, "'" + e.getKey() + "' has no value: " + what);
                }
            }
        }
        return m;
    }

    private static <T> T required(T v, String field, String what) {
        if (v == null) {
            throw new Bad(field, "is missing (" + what + ")");
        }
        return v;
    }

    /** The largest number of seconds the CRD schema allows for a drain's and a deadline's seconds (365 days). */
    int CRD_MAX_SECONDS = 31_536_000;

    /** A Kubernetes qualified name: an optional DNS subdomain prefix and '/', then a name of 1 to 63 characters. */
    java.util.regex.Pattern QUALIFIED_NAME = java.util.regex.Pattern.compile(
            "(([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

    /**
     * @param key an annotation key of a scenario
     * @param field the YAML key it was given under, for the message
     * @throws Bad when it is not a Kubernetes qualified name (the API server would refuse it)
     */
    private static void checkQualifiedName(String key, String field) {
        checkQualifiedName(key, field, "annotation key");
    }

    /** A label value: empty, or 1 to 63 characters [A-Za-z0-9_.-] beginning and ending alphanumeric. */
    java.util.regex.Pattern LABEL_VALUE = java.util.regex.Pattern.compile(
            "([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

    /**
     * @param key a key of a scenario
     * @param field the YAML key it was given under
     * @param what {@code annotation key} or {@code label key}, for the message
     * @throws Bad when it is not a Kubernetes qualified name
     */
    private static void checkQualifiedName(String key, String field, String what) {
        if (key != null) {
            checkQualifiedNames(List.of(key), field, what);
        }
    }

    /**
     * @param keys annotation keys of a scenario, in the order given
     * @param field the YAML key they were given under, for the message
     * @throws Bad naming every key that is not a Kubernetes qualified name (the API server would refuse them)
     */
    private static void checkQualifiedNames(java.util.Collection<String> keys, String field) {
        checkQualifiedNames(keys, field, "annotation key");
    }

    private static void checkQualifiedNames(java.util.Collection<String> keys, String field, String what) {
        List<String> bad = new java.util.ArrayList<>();
        for (String key : keys) {
            if (key == null) {
                continue;
            }
            int slash = key.indexOf('/');
            String prefix = slash < 0 ? "" : key.substring(0, slash);
            String name = slash < 0 ? key : key.substring(slash + 1);
            if (!QUALIFIED_NAME.matcher(key).matches() || prefix.length() > 253 || name.length() > 63) {
                bad.add("'" + key + "'");
            }
        }
        if (!bad.isEmpty()) {
            throw new Bad(field, String.join(", ", bad) + (bad.size() == 1 ? " is not a Kubernetes " + what
                    : " are not Kubernetes " + what + "s") + ": an optional DNS subdomain prefix "
                    + "(at most 253 characters) and '/', then a name of 1 to 63 characters [A-Za-z0-9_.-], beginning "
                    + "and ending with a letter or digit, e.g. npu.openfuyao.com/approve-reboot");
        }
    }

    private static void checkRange(Integer v, String field, int min, int max) {
        if (v != null && (v < min || v > max)) {
            throw new Bad(field, v + " is outside " + min + ".." + max);
        }
    }

    /** The CR's own grammar ({@link io.npulifecycle.api.upgrade.spec.SpecGrammar}: the CRD's and the reader's). */
    private static String checkVersion(String v, String field) {
        if (v != null && !io.npulifecycle.api.upgrade.spec.SpecGrammar.isVersion(v)) {
            throw new Bad(field, "'" + v + "' is not a driver version ("
                    + io.npulifecycle.api.upgrade.spec.SpecGrammar.VERSION_EXPECTED + ")");
        }
        return v;
    }

    // ---- chips ----

    /** Wedges a chip (it stops answering {@code npu-smi} as a healthy chip does). */
    @JsonTypeName("wedge")
    record Wedge(String node, Integer npu, Integer chip) implements Action, OnChip {
        public Wedge {
            required(node, "node", "a node name");
            required(npu, "npu", "an NPU id");
            required(chip, "chip", "a chip of the NPU");
        }
    }

    /** Recovers a wedged chip. */
    @JsonTypeName("recover")
    record Recover(String node, Integer npu, Integer chip) implements Action, OnChip {
        public Recover {
            required(node, "node", "a node name");
            required(npu, "npu", "an NPU id");
            required(chip, "chip", "a chip of the NPU");
        }
    }

    /** Makes a chip's fault survive reboots. */
    @JsonTypeName("persistent")
    record Persistent(String node, Integer npu, Integer chip) implements Action, OnChip {
        public Persistent {
            required(node, "node", "a node name");
            required(npu, "npu", "an NPU id");
            required(chip, "chip", "a chip of the NPU");
        }
    }

    /** Puts a chip into a simulator state ({@link #STATES}). */
    @JsonTypeName("setChip")
    record SetChip(String node, Integer npu, Integer chip, String state) implements Action, OnChip {
        public SetChip {
            required(node, "node", "a node name");
            required(npu, "npu", "an NPU id");
            required(chip, "chip", "a chip of the NPU");
            state = required(state, "state", "one of " + new TreeSet<>(STATES)).toLowerCase(Locale.ROOT);
            if (!STATES.contains(state)) {
                throw new Bad("state", "'" + state + "' is not one of " + new TreeSet<>(STATES));
            }
        }
    }

    // ---- node agents and approvals ----

    /** Writes {@code approve-reboot=true} on a node. */
    @JsonTypeName("approve")
    record Approve(String node) implements Action, OnNode {
        public Approve {
            required(node, "node", "a node name");
        }
    }

    /** Sets (or, with {@code value: null}, removes) an annotation of a node. */
    @JsonTypeName("annotate")
    record Annotate(String node, String key, Expected value) implements Action, OnNode {
        public Annotate {
            required(node, "node", "a node name");
            required(key, "key", "the annotation key");
            checkQualifiedName(key, "key");
            required(value, "value", "null removes the annotation");
        }
    }

    /**
     * Sets (or, with {@code value: null}, removes) a label of a node, as {@code kubectl label node --overwrite} does:
     * e.g. an operator retrying an {@code upgrade-failed} node with {@code npu.openfuyao.com/driver-upgrade-state:
     * upgrade-required}.
     */
    @JsonTypeName("label")
    record Label(String node, String key, Expected value) implements Action, OnNode {
        public Label {
            required(node, "node", "a node name");
            required(key, "key", "the label key");
            required(value, "value", "null removes the label");
            checkQualifiedName(key, "key", "label key");
            if (value.value() != null && !LABEL_VALUE.matcher(value.value()).matches()) {
                throw new Bad("value", "'" + value.value() + "' is not a label value: at most 63 characters "
                        + "[A-Za-z0-9_.-], beginning and ending with a letter or digit, or empty");
            }
        }
    }

    /** Kills a node agent (SIGKILL); the DaemonSet controller starts it again. */
    @JsonTypeName("killAgent")
    record KillAgent(String node) implements Action, OnNode {
        public KillAgent {
            required(node, "node", "a node name");
        }
    }

    /** Makes a node's marker folder read-only ({@code on: true}) or writable again. */
    @JsonTypeName("markersReadOnly")
    record MarkersReadOnly(String node, Boolean on) implements Action, OnNode {
        public MarkersReadOnly {
            required(node, "node", "a node name");
            required(on, "on", "true or false");
        }
    }

    /** Fills a node's marker folder ({@code on: true}) or frees it again. */
    @JsonTypeName("markersFull")
    record MarkersFull(String node, Boolean on) implements Action, OnNode {
        public MarkersFull {
            required(node, "node", "a node name");
            required(on, "on", "true or false");
        }
    }

    /**
     * Moves the wall clock of a node's runtime or of the control plane by {@code by} ({@code -1h}, {@code +5m}).
     *
     * @param node a node name or {@code control-plane}
     * @param by the jump, negative = back
     */
    @JsonTypeName("clockJump")
    record ClockJump(String node, @JsonDeserialize(using = ScenarioMapper.SignedDurationDeserializer.class) Duration by)
            implements Action {
        /** {@link #node()} of the control plane's clock. */
        static final String CONTROL_PLANE = "control-plane";

        public ClockJump {
            required(node, "node", "a node or control-plane");
            required(by, "by", "a duration like -1h or +5m");
        }
    }

    // ---- control plane ----

    /**
     * Kills control-plane runtimes.
     *
     * @param replica {@code 0}, {@code 1}, {@code leader} or {@code all} (default {@code 0})
     * @param restart whether they are started again (default true)
     */
    @JsonTypeName("killControlPlane")
    record KillControlPlane(String replica, Boolean restart) implements Action {
        public KillControlPlane {
            replica = replica == null ? "0" : replica;
            restart = restart == null || restart;
        }
    }

    /** @param replica {@code 0} or {@code 1} (default {@code 0}) */
    @JsonTypeName("startControlPlane")
    record StartControlPlane(String replica) implements Action {
        public StartControlPlane {
            replica = replica == null ? "0" : replica;
        }
    }

    // ---- API server ----

    /**
     * Every API request is answered 503 for {@code duration} (simulated time): on a real server, the runtimes' front
     * proxy closes their connections and answers each request {@code 503 Service Unavailable}; on the embedded mock,
     * the mock answers every client 503.
     */
    @JsonTypeName("apiOutage")
    record ApiOutage(Duration duration) implements Action {
        public ApiOutage {
            required(duration, "duration", "e.g. 60s");
        }
    }

    /** The API server refuses connections for {@code duration} (simulated time). */
    @JsonTypeName("apiUnreachable")
    record ApiUnreachable(Duration duration) implements Action {
        public ApiUnreachable {
            required(duration, "duration", "e.g. 60s");
        }
    }

    /**
     * The API server compacted its history. On the embedded mock every open watch ends with 410 Expired and the next
     * {@code failNext} watch requests are answered 410 Gone (default 5). On a real server etcd is compacted and the
     * runtimes' connections are closed: each watch resuming from an older resourceVersion is answered 410 Gone by
     * etcd ({@code failNext} does not apply; the scenario's server serves watches from etcd).
     */
    @JsonTypeName("apiGone")
    record ApiGone(Integer failNext) implements Action {
        public ApiGone {
            failNext = failNext == null ? 5 : failNext;
            checkRange(failNext, "failNext", 0, 1000);
        }
    }

    // ---- workloads and scheduling ----

    /** Controllers a {@code pod:} step may give its pod ({@code none}: a bare pod, which only {@code force} deletes). */
    List<String> CONTROLLERS = List.of("ReplicaSet", "StatefulSet", "DaemonSet", "mirror", "none");

    /** An RFC 1123 DNS label (a namespace, a PDB or pod name part). */
    String DNS_LABEL = "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?";

    private static String checkName(String v, String field) {
        if (v != null && !v.matches(DNS_LABEL)) {
            throw new Bad(field, "'" + v + "' is not a lower-case DNS label (a-z, 0-9, '-', at most 63)");
        }
        return v;
    }

    private static void checkLabels(Map<String, String> labels, String field) {
        if (labels == null) {
            return;
        }
        for (Map.Entry<String, String> e : labels.entrySet()) {
            if (e.getValue() == null
                    || !e.getKey().matches("([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
                    || !e.getValue().matches("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")) {
                throw new Bad(field, "'" + e.getKey() + ": " + e.getValue() + "' is not a Kubernetes label");
            }
        }
    }

    /**
     * A workload pod bound to a node (Running and Ready once the kubelet emulation sees it).
     *
     * @param node the node
     * @param name the pod's name
     * @param namespace its namespace (default {@code default}, created when absent)
     * @param npu how many {@code huawei.com/Ascend910} it requests (default 0)
     * @param labels its labels
     * @param controller {@link #CONTROLLERS}, default {@code ReplicaSet}: a ReplicaSet or StatefulSet object of one
     *        replica owns it (no controller runs to recreate it; a PodDisruptionBudget's {@code maxUnavailable}
     *        counts its replicas); {@code DaemonSet}: owned by a DaemonSet; {@code mirror}: a static pod's mirror
     * @param emptyDir whether it mounts an emptyDir volume (default false)
     * @param ready whether it becomes Ready (default true); a pod that is not Ready is unhealthy to its budget
     * @param finalizers finalizers it is created with (qualified names such as {@code example.com/hold}): deleted, it
     *        stays Terminating until {@code removeFinalizers}
     */
    @JsonTypeName("pod")
    record PodStep(String node, String name, String namespace, Integer npu, Map<String, String> labels,
            String controller, Boolean emptyDir, Boolean ready, List<String> finalizers) implements Action, OnNode {
        public PodStep {
            required(node, "node", "a node name");
            checkName(required(name, "name", "the pod's name"), "name");
            namespace = checkName(namespace == null ? "default" : namespace, "namespace");
            if (namespace.equals(DaemonSetController.NAMESPACE)) {
                throw new Bad("namespace", "'" + namespace + "' is the operator's own namespace, whose DaemonSets "
                        + "the harness runs as the driver's: give a workload's namespace");
            }
            npu = npu == null ? 0 : npu;
            checkRange(npu, "npu", 0, 64);
            labels = labels == null ? Map.of() : Map.copyOf(noNullValues(labels, "labels", "a label value such as "
                    + "train"));
            checkLabels(labels, "labels");
            controller = controller == null ? "ReplicaSet" : controller;
            if (!CONTROLLERS.contains(controller)) {
                throw new Bad("controller", "'" + controller + "' is not one of " + CONTROLLERS);
            }
            emptyDir = emptyDir != null && emptyDir;
            ready = ready == null || ready;
            finalizers = finalizers == null ? List.of() : List.copyOf(noNulls(finalizers, "finalizers",
                    "a finalizer such as example.com/hold"));
            for (String f : finalizers) {
                if (f == null || !f.contains("/") || !QUALIFIED_NAME.matcher(f).matches()) {
                    throw new Bad("finalizers", "'" + f + "' is not a finalizer: a qualified name with a domain "
                            + "prefix, e.g. example.com/hold");
                }
            }
        }

        /** A Ready pod without finalizers. */
        PodStep(String node, String name, String namespace, Integer npu, Map<String, String> labels, String controller,
                Boolean emptyDir) {
            this(node, name, namespace, npu, labels, controller, emptyDir, null, null);
        }
    }

    /**
     * A PodDisruptionBudget ({@code policy/v1}); exactly one of {@code minAvailable} and {@code maxUnavailable}, each
     * a number of pods or a percentage like {@code 50%}.
     *
     * @param name its name
     * @param namespace its namespace (default {@code default})
     * @param selector the {@code matchLabels} of its selector (required, not empty)
     * @param minAvailable pods that must stay available
     * @param maxUnavailable pods that may be unavailable
     * @param unhealthyPodEvictionPolicy {@code IfHealthyBudget} (the API server's default) or {@code AlwaysAllow}: may
     *        a pod that is Running but not Ready be evicted when the budget allows no disruption
     */
    @JsonTypeName("pdb")
    record Pdb(String name, String namespace, Map<String, String> selector, Object minAvailable,
            Object maxUnavailable, String unhealthyPodEvictionPolicy) implements Action {
        public Pdb {
            checkName(required(name, "name", "the budget's name"), "name");
            namespace = checkName(namespace == null ? "default" : namespace, "namespace");
            if (required(selector, "selector", "matchLabels of the pods it guards").isEmpty()) {
                throw new Bad("selector", "is empty: a budget must select its pods");
            }
            selector = Map.copyOf(noNullValues(selector, "selector", "a label value such as train"));
            checkLabels(selector, "selector");
            if ((minAvailable == null) == (maxUnavailable == null)) {
                throw new Bad(minAvailable == null ? "minAvailable" : "maxUnavailable",
                        "needs exactly one of minAvailable and maxUnavailable");
            }
            checkPodCount(minAvailable, "minAvailable");
            checkPodCount(maxUnavailable, "maxUnavailable");
            if (unhealthyPodEvictionPolicy != null && !List.of("IfHealthyBudget", "AlwaysAllow")
                    .contains(unhealthyPodEvictionPolicy)) {
                throw new Bad("unhealthyPodEvictionPolicy", "'" + unhealthyPodEvictionPolicy
                        + "' is not IfHealthyBudget or AlwaysAllow");
            }
        }

        /** A budget with the API server's default {@code unhealthyPodEvictionPolicy}. */
        Pdb(String name, String namespace, Map<String, String> selector, Object minAvailable, Object maxUnavailable) {
            this(name, namespace, selector, minAvailable, maxUnavailable, null);
        }
    }

    private static void checkPodCount(Object v, String field) {
        if (v == null || v instanceof Integer i && i >= 0 && i <= 100_000) {
            return;
        }
        if (!(v instanceof String s) || !s.matches("(100|[1-9]?[0-9])%")) {
            throw new Bad(field, "must be a number of pods (0..100000) or a percentage like 50%, got " + v);
        }
    }

    /** Deletes a PodDisruptionBudget (absent: nothing happens). */
    @JsonTypeName("deletePdb")
    record DeletePdb(String name, String namespace) implements Action {
        public DeletePdb {
            checkName(required(name, "name", "the budget's name"), "name");
            namespace = checkName(namespace == null ? "default" : namespace, "namespace");
        }
    }

    /** Cordons a node as an administrator does ({@code kubectl cordon}: {@code spec.unschedulable: true}). */
    @JsonTypeName("cordon")
    record Cordon(String node) implements Action, OnNode {
        public Cordon {
            required(node, "node", "a node name");
        }
    }

    /** Uncordons a node as an administrator does ({@code kubectl uncordon}). */
    @JsonTypeName("uncordon")
    record Uncordon(String node) implements Action, OnNode {
        public Uncordon {
            required(node, "node", "a node name");
        }
    }

    /**
     * Deletes a node's Node object ({@code kubectl delete node}), as an administrator or a cluster autoscaler does; its
     * node agent runs on. Nothing re-creates it until {@code registerNode}.
     */
    @JsonTypeName("deleteNode")
    record DeleteNode(String node) implements Action, OnNode {
        public DeleteNode {
            required(node, "node", "a node name");
        }
    }

    /**
     * Creates a node's Node object again as its kubelet registers it after a restart: the labels and status a kubelet
     * writes (hostname, OS, the NPU node's labels), none of ours, schedulable, no taints; refused by the API server
     * when the Node exists.
     */
    @JsonTypeName("registerNode")
    record RegisterNode(String node) implements Action, OnNode {
        public RegisterNode {
            required(node, "node", "a node name");
        }
    }

    /**
     * The node's kubelet goes silent (crashed, hung, cut off from the API server while the node runs): no Lease
     * renewal and no status, so kube-controller-manager's node-lifecycle controller marks the Node {@code Ready=Unknown}
     * and taints it {@code node.kubernetes.io/unreachable} after its grace period (8 s of wall clock); its pods get no
     * status and their deletions do not end; the node agent's container runs on. Real API server only.
     */
    @JsonTypeName("nodeNotReady")
    record NodeNotReady(String node) implements Action, OnNode {
        public NodeNotReady {
            required(node, "node", "a node name");
        }
    }

    /** The node's kubelet speaks again: its Lease renewed and {@code Ready=True} posted; the controller lifts the taints. */
    @JsonTypeName("nodeReady")
    record NodeReady(String node) implements Action, OnNode {
        public NodeReady {
            required(node, "node", "a node name");
        }
    }

    /**
     * Deletes a pod as {@code kubectl delete pod} does (its own grace period, or {@code gracePeriodSeconds}); a pod of
     * the same name may then be created again, on any node, with {@code pod:}.
     *
     * @param name the pod
     * @param namespace its namespace (default {@code default})
     * @param gracePeriodSeconds seconds (0 to 31,536,000), or null for the pod's own
     */
    @JsonTypeName("deletePod")
    record DeletePod(String name, String namespace, Integer gracePeriodSeconds) implements Action {
        public DeletePod {
            checkName(required(name, "name", "the pod's name"), "name");
            namespace = checkName(namespace == null ? "default" : namespace, "namespace");
            checkRange(gracePeriodSeconds, "gracePeriodSeconds", 0, CRD_MAX_SECONDS);
        }
    }

    /**
     * Makes a workload pod Ready or not Ready (its readiness probe passing or failing), through the kubelet
     * emulation; a pod that is not Ready is an unhealthy pod to its PodDisruptionBudget.
     *
     * @param name the pod
     * @param namespace its namespace (default {@code default})
     * @param ready its {@code Ready} condition
     */
    @JsonTypeName("setPodReady")
    record SetPodReady(String name, String namespace, Boolean ready) implements Action {
        public SetPodReady {
            checkName(required(name, "name", "the pod's name"), "name");
            namespace = checkName(namespace == null ? "default" : namespace, "namespace");
            required(ready, "ready", "true or false");
        }
    }

    /**
     * Removes every finalizer of a pod ({@code kubectl patch pod --type=merge -p '{"metadata":{"finalizers":null}}'}),
     * which ends a deletion the finalizers held.
     *
     * @param name the pod
     * @param namespace its namespace (default {@code default})
     */
    @JsonTypeName("removeFinalizers")
    record RemoveFinalizers(String name, String namespace) implements Action {
        public RemoveFinalizers {
            checkName(required(name, "name", "the pod's name"), "name");
            namespace = checkName(namespace == null ? "default" : namespace, "namespace");
        }
    }

    // ---- the NPUOperatorCtl ----

    /** Patches {@code spec.driver} of the NPUOperatorCtl with a policy (the shorthand of the file's {@code policy:}). */
    @JsonTypeName("setPolicy")
    record SetPolicy(Policy policy) implements Action {
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        public SetPolicy {
        }
    }

    /** Sets {@code spec.driver.version} of the NPUOperatorCtl. */
    @JsonTypeName("setVersion")
    record SetVersion(String version) implements Action {
        public SetVersion {
            checkVersion(required(version, "version", "a driver version like 25.5.0"), "version");
        }
    }

    /**
     * Deletes the NPUOperatorCtl ({@code kubectl delete npuoperatorctl}, written {@code deleteCr: {}}): the control
     * plane's finalizer undoes what the rollout and recovery wrote before the API server removes it. The step returns
     * once the deletion is requested; {@code expect: {npuOperatorCtl: absent}} waits for its end.
     */
    @JsonTypeName("deleteCr")
    record DeleteCr() implements Action {
    }

    /**
     * Creates the NPUOperatorCtl again ({@code kubectl apply} of the operator's file, written {@code createCr: {}}):
     * its {@code spec} as the scenario left it when a {@code deleteCr} step deleted it (the install's CR, the file's
     * {@code policy:} and every {@code setPolicy}/{@code setVersion} since, merged as they were patched in), without
     * status, finalizers or annotations. Refused, naming the CR, while one exists (terminating or not: wait for the
     * deletion's end with {@code expect: {npuOperatorCtl: absent, within: D}} first) and when no {@code deleteCr}
     * came before it; {@code --api real} only, as {@code deleteCr}.
     */
    @JsonTypeName("createCr")
    record CreateCr() implements Action {
    }

    // ---- the API server ----

    /**
     * kube-apiserver killed (SIGKILL) and started again with the same command line (the same port, certificates and
     * flags), etcd and its data kept: every connection and watch ends, and requests are refused until it is ready
     * again; the step returns once it answers {@code /readyz}, and the run prints how long it was away. Written
     * {@code restartApiServer: {}}; {@code --api real} only.
     */
    @JsonTypeName("restartApiServer")
    record RestartApiServer() implements Action {
    }

    // ---- expectations ----

    /**
     * What must hold on a node (or {@code all} nodes): checked at once, or polled until {@code within}, then
     * checked until {@code holdFor}. Every check is optional; at least one is given.
     *
     * @param node a node name or {@code all} (default)
     * @param labels label key to value, null = absent
     * @param annotations annotation key to value, null = absent
     * @param events Events that must have been written on the node
     * @param reboots reboots of the node since the scenario started
     * @param markers the node's marker files
     * @param driverVersion the {@code driver-version} label
     * @param upgradeState the {@code driver-upgrade-state} label, {@code Expected(null)} = no state
     * @param status NPUOperatorCtl status paths ({@code conditions[type=Complete].status}) to value, null = absent
     * @param violations drivers unloaded in a running kernel (the simulator counts them)
     * @param mbean an MBean attribute of the node's runtime
     * @param unschedulable the node's {@code spec.unschedulable} (absent counts as false)
     * @param taints taint key to value, null = no taint with that key
     * @param pods pods that must exist (not terminating), pods that must be gone, pods that must be terminating
     * @param metrics samples of the node agent's {@code /metrics}
     * @param apiRequests requests the API server received (its audit log; real API server only)
     * @param npuOperatorCtl {@code present} or {@code absent}: whether the NPUOperatorCtl exists (a terminating one
     *        still exists)
     * @param within how long to poll (simulated time), or null to check once
     * @param holdFor how long it must then go on holding (simulated time), or null
     */
    @JsonTypeName("expect")
    record Expect(String node, Map<String, String> labels, Map<String, String> annotations, List<EventCheck> events,
            Integer reboots, MarkerCheck markers, String driverVersion, Expected upgradeState,
            Map<String, String> status, Integer violations, MBeanCheck mbean, Boolean unschedulable,
            Map<String, String> taints, PodsCheck pods, List<MetricCheck> metrics, List<RequestCheck> apiRequests,
            String npuOperatorCtl, Duration within, Duration holdFor) implements Action {
        /** {@link #node()} of an expectation on every node. */
        static final String ALL = "all";

        public Expect {
            node = node == null ? ALL : node;
            checkRange(reboots, "reboots", 0, 10_000);
            checkRange(violations, "violations", 0, 10_000);
            checkVersion(driverVersion, "driverVersion");
            if (annotations != null) {
                checkQualifiedNames(annotations.keySet(), "annotations");
            }
            if (npuOperatorCtl != null && !List.of("present", "absent").contains(npuOperatorCtl)) {
                throw new Bad("npuOperatorCtl", "'" + npuOperatorCtl + "' is not present or absent");
            }
            metrics = metrics == null ? null : List.copyOf(noNulls(metrics, "metrics", "a metric check"));
            apiRequests = apiRequests == null ? null : List.copyOf(noNulls(apiRequests, "apiRequests",
                    "a request check"));
            if (metrics != null && metrics.isEmpty()) {
                throw new Bad("metrics", "is empty: give at least one check, or leave it out");
            }
            if (apiRequests != null && apiRequests.isEmpty()) {
                throw new Bad("apiRequests", "is empty: give at least one check, or leave it out");
            }
            if (labels == null && annotations == null && events == null && reboots == null && markers == null
                    && driverVersion == null && upgradeState == null && status == null && violations == null
                    && mbean == null && unschedulable == null && taints == null && pods == null && metrics == null
                    && apiRequests == null && npuOperatorCtl == null) {
                throw new Bad(null, "nothing to check");
            }
        }
    }

    /**
     * @param present pods ({@code namespace/name}) that must exist and not be terminating
     * @param absent pods that must not exist (a terminating pod still exists)
     * @param terminating pods that must exist with a {@code deletionTimestamp} (held by a finalizer, or in their grace
     *        period)
     */
    record PodsCheck(List<String> present, List<String> absent, List<String> terminating) {
        public PodsCheck {
            present = present == null ? List.of() : List.copyOf(noNulls(present, "present", "namespace/name"));
            absent = absent == null ? List.of() : List.copyOf(noNulls(absent, "absent", "namespace/name"));
            terminating = terminating == null ? List.of() : List.copyOf(noNulls(terminating, "terminating",
                    "namespace/name"));
            for (String p : present) {
                checkPodRef(p, "present");
            }
            for (String p : absent) {
                checkPodRef(p, "absent");
            }
            for (String p : terminating) {
                checkPodRef(p, "terminating");
            }
            if (present.isEmpty() && absent.isEmpty() && terminating.isEmpty()) {
                throw new Bad(null, "needs present, absent or terminating pods");
            }
        }
    }

    /** A Prometheus metric name: letters, digits, '_' and ':', not beginning with a digit. */
    java.util.regex.Pattern METRIC_NAME = java.util.regex.Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");

    /**
     * Samples of the node agent's {@code /metrics} (the Prometheus text format), with exactly one test: the sum of the
     * values of every sample of {@code name} whose labels include {@code labels} (so {@code labels: {}} sums the
     * family's samples).
     *
     * @param name the sample's name as exposed, e.g. {@code npu_lifecycle_reboots_total}
     * @param labels labels the samples must carry (others are allowed), or null for none
     * @param equalTo the sum must be this number ({@code equals:})
     * @param atLeast the sum must be at least this
     * @param atMost the sum must be at most this
     */
    record MetricCheck(String name, Map<String, String> labels, @JsonProperty("equals") Double equalTo, Double atLeast,
            Double atMost) {
        public MetricCheck {
            required(name, "name", "a metric name such as npu_lifecycle_reboots_total");
            if (!METRIC_NAME.matcher(name).matches()) {
                throw new Bad("name", "'" + name + "' is not a Prometheus metric name");
            }
            labels = labels == null ? Map.of() : Map.copyOf(noNullValues(labels, "labels", "the label's value"));
            for (String l : labels.keySet()) {
                if (!l.matches("[a-zA-Z_][a-zA-Z0-9_]*")) {
                    throw new Bad("labels", "'" + l + "' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)");
                }
            }
            int tests = (equalTo != null ? 1 : 0) + (atLeast != null ? 1 : 0) + (atMost != null ? 1 : 0);
            if (tests != 1) {
                throw new Bad(null, "needs exactly one of equals, atLeast, atMost");
            }
            for (Double bound : java.util.Arrays.asList(equalTo, atLeast, atMost)) {
                if (bound != null && !(bound >= 0)) {
                    throw new Bad(equalTo != null ? "equals" : atLeast != null ? "atLeast" : "atMost",
                            "must be a number from 0 (a sample of npu-lifecycle's is never negative), got " + bound);
                }
            }
        }

        /** @return the check as the file gives it, for a failure */
        String yaml() {
            return "{name: " + name + (labels.isEmpty() ? "" : ", labels: " + labels) + (equalTo != null ? ", equals: "
                    + equalTo : atLeast != null ? ", atLeast: " + atLeast : ", atMost: " + atMost) + "}";
        }
    }

    /** The verbs of kube-apiserver's audit events. */
    List<String> AUDIT_VERBS = List.of("get", "list", "watch", "create", "update", "patch", "delete",
            "deletecollection");

    /**
     * Requests the API server received, from kube-apiserver's audit log (each request once, at its
     * {@code ResponseComplete} stage), with exactly one count test and an optional pacing test; every filter is
     * optional but {@code verb} and {@code resource}.
     *
     * @param verb the audit verb ({@link #AUDIT_VERBS}), e.g. {@code create} for an eviction
     * @param resource e.g. {@code pods}, {@code nodes}
     * @param subresource e.g. {@code eviction}, {@code status}; null matches requests without one
     * @param namespace the object's namespace, or null for any
     * @param name the object's name, or null for any
     * @param user the requesting user, e.g. {@code system:serviceaccount:npu-operator:npu-lifecycle-control-plane}, or
     *        null for any
     * @param code the HTTP status of the answer (e.g. 429: a budget refused an eviction), or null for any
     * @param count exactly this many
     * @param atLeast at least this many
     * @param atMost at most this many
     * @param minIntervalSeconds simulated seconds at least between two consecutive matching requests (the wall-clock
     *        gap times the time scale), e.g. the backoff of refused evictions
     */
    record RequestCheck(String verb, String resource, String subresource, String namespace, String name, String user,
            Integer code, Integer count, Integer atLeast, Integer atMost, Double minIntervalSeconds) {
        public RequestCheck {
            required(verb, "verb", "an audit verb: " + AUDIT_VERBS);
            if (!AUDIT_VERBS.contains(verb)) {
                throw new Bad("verb", "'" + verb + "' is not one of " + AUDIT_VERBS);
            }
            checkName(required(resource, "resource", "a resource such as pods or nodes"), "resource");
            if (resource.equals("leases") || resource.equals("events")) {
                throw new Bad("resource", "'" + resource + "' is not recorded: the audit policy leaves Leases and "
                        + "Events out (many, and not what a scenario checks)");
            }
            if (user != null && user.isBlank()) {
                throw new Bad("user", "is empty: give a user name such as "
                        + "system:serviceaccount:npu-operator:npu-lifecycle-control-plane, or leave it out");
            }
            checkName(subresource, "subresource");
            checkName(namespace, "namespace");
            checkRange(code, "code", 100, 599);
            checkRange(count, "count", 0, 1_000_000);
            checkRange(atLeast, "atLeast", 0, 1_000_000);
            checkRange(atMost, "atMost", 0, 1_000_000);
            int tests = (count != null ? 1 : 0) + (atLeast != null ? 1 : 0) + (atMost != null ? 1 : 0);
            if (tests != 1) {
                throw new Bad(null, "needs exactly one of count, atLeast, atMost");
            }
            if (minIntervalSeconds != null && !(minIntervalSeconds >= 0)) {
                throw new Bad("minIntervalSeconds", "must be a number of seconds from 0, got " + minIntervalSeconds);
            }
        }

        /** @return the check as the file gives it, for a failure */
        String yaml() {
            StringBuilder b = new StringBuilder("{verb: " + verb + ", resource: " + resource);
            if (subresource != null) {
                b.append(", subresource: ").append(subresource);
            }
            if (namespace != null) {
                b.append(", namespace: ").append(namespace);
            }
            if (name != null) {
                b.append(", name: ").append(name);
            }
            if (user != null) {
                b.append(", user: ").append(user);
            }
            if (code != null) {
                b.append(", code: ").append(code);
            }
            b.append(count != null ? ", count: " + count : atLeast != null ? ", atLeast: " + atLeast
                    : ", atMost: " + atMost);
            if (minIntervalSeconds != null) {
                b.append(", minIntervalSeconds: ").append(minIntervalSeconds);
            }
            return b.append('}').toString();
        }
    }

    private static void checkPodRef(String ref, String field) {
        if (ref == null || !ref.matches(DNS_LABEL + "/" + DNS_LABEL)) {
            throw new Bad(field, "'" + ref + "' is not namespace/name");
        }
    }

    /**
     * @param reason the Event's reason
     * @param messageContains text its message contains, or null
     * @param count how many such Events exactly, or null for at least one
     */
    record EventCheck(String reason, String messageContains, Integer count) {
        public EventCheck {
            required(reason, "reason", "the Event's reason");
            checkRange(count, "count", 0, 10_000);
        }

        /** @return the check as a scenario file gives it: {@code {reason: RebootRequired, count: 1}} */
        String yaml() {
            Map<String, YamlTree.Node> m = new LinkedHashMap<>();
            m.put("reason", new YamlTree.Node(reason, 0));
            if (messageContains != null) {
                m.put("messageContains", new YamlTree.Node(messageContains, 0));
            }
            if (count != null) {
                m.put("count", new YamlTree.Node(count, 0));
            }
            return YamlTree.flow(new YamlTree.Node(m, 0));
        }
    }

    /**
     * @param driverReady whether the driver-ready marker is present, or null
     * @param rebootRequired the reboot-required marker's reason ({@code recovery}, {@code upgrade}),
     *        {@code Expected(null)} = absent, null = not checked
     */
    record MarkerCheck(@JsonProperty("driver-ready") Boolean driverReady,
            @JsonProperty("reboot-required") Expected rebootRequired) {
        public MarkerCheck {
            if (rebootRequired != null && rebootRequired.value() != null
                    && !List.of("recovery", "upgrade").contains(rebootRequired.value())) {
                throw new Bad("reboot-required", "must be recovery, upgrade or null, got " + rebootRequired.value());
            }
        }
    }

    /**
     * An MBean attribute of the runtime, read through Jolokia, with exactly one test.
     *
     * @param name an {@code io.npulifecycle:} or {@code java.lang:} object name
     * @param attribute the attribute
     * @param equalTo the attribute's text must be this ({@code equals:})
     * @param contains the attribute's text must contain this
     * @param atLeast the attribute must be a number of at least this
     */
    record MBeanCheck(String name, String attribute, @JsonProperty("equals") String equalTo, String contains,
            Integer atLeast) {
        public MBeanCheck {
            required(name, "name", "an MBean object name");
            if (!name.startsWith("io.npulifecycle:") && !name.startsWith("java.lang:")) {
                throw new Bad("name", "'" + name + "' is not an io.npulifecycle: or java.lang: object name");
            }
            required(attribute, "attribute", "the attribute to read");
            checkRange(atLeast, "atLeast", 0, Integer.MAX_VALUE);
            int tests = (equalTo != null ? 1 : 0) + (contains != null ? 1 : 0) + (atLeast != null ? 1 : 0);
            if (tests != 1) {
                throw new Bad(null, "needs exactly one of equals, contains, atLeast");
            }
        }
    }

    // ---- the policy shorthand ----

    /**
     * The policy shorthand of {@code policy:} and {@code setPolicy:}: the fields of {@code spec.driver.upgradePolicy}
     * and {@code spec.driver.recoveryPolicy} at the top, or those two maps themselves, plus {@code version} and
     * {@code registry}. Every value is checked here, so that a typo is rejected with its line rather than reaching
     * the control plane.
     */
    record Policy(Boolean autoUpgrade, Integer maxParallelUpgrades, Object maxUnavailable, Boolean autoRecover,
            Integer maxReboots, String window, String version, String registry, UpgradePolicy upgradePolicy,
            RecoveryPolicy recoveryPolicy) {
        public Policy {
            checkRange(maxParallelUpgrades, "maxParallelUpgrades", 0, 100_000);
            checkMaxUnavailable(maxUnavailable);
            checkRange(maxReboots, "maxReboots", 0, 1000);
            checkWindow(window);
            checkVersion(version, "version");
        }

        /** @return the {@code spec.driver} fields this policy sets, for a JSON merge patch */
        Map<String, Object> driver() {
            Map<String, Object> d = new LinkedHashMap<>();
            Map<String, Object> up = new LinkedHashMap<>();
            Map<String, Object> rp = new LinkedHashMap<>();
            put(up, "autoUpgrade", autoUpgrade);
            put(up, "maxParallelUpgrades", maxParallelUpgrades);
            put(up, "maxUnavailable", maxUnavailable);
            put(rp, "autoRecover", autoRecover);
            put(rp, "maxReboots", maxReboots);
            put(rp, "window", window);
            put(d, "version", version);
            put(d, "registry", registry);
            if (upgradePolicy != null) {
                up.putAll(upgradePolicy.fields());
            }
            if (recoveryPolicy != null) {
                rp.putAll(recoveryPolicy.fields());
            }
            if (!up.isEmpty()) {
                d.put("upgradePolicy", up);
            }
            if (!rp.isEmpty()) {
                d.put("recoveryPolicy", rp);
            }
            return d;
        }
    }

    /** {@code spec.driver.upgradePolicy}. */
    record UpgradePolicy(Boolean autoUpgrade, Integer maxParallelUpgrades, Object maxUnavailable, Deadlines deadlines,
            Drain drain, @JsonDeserialize(using = ScenarioMapper.WindowDeserializer.class)
            Map<String, Object> maintenanceWindow, String blockingPodSelector, Boolean holdNodesWithNpuWorkloads) {
        public UpgradePolicy {
            checkSelector(blockingPodSelector, "blockingPodSelector");
            checkRange(maxParallelUpgrades, "maxParallelUpgrades", 0, 100_000);
            checkMaxUnavailable(maxUnavailable);
        }

        Map<String, Object> fields() {
            Map<String, Object> m = new LinkedHashMap<>();
            put(m, "autoUpgrade", autoUpgrade);
            put(m, "maxParallelUpgrades", maxParallelUpgrades);
            put(m, "maxUnavailable", maxUnavailable);
            if (deadlines != null) {
                m.put("deadlines", deadlines.fields());
            }
            if (drain != null) {
                m.put("drain", drain.fields());
            }
            // checked by the controller (InvalidSpec), as the CRD schema and SpecReader check them; REMOVE_WINDOW
            // (maintenanceWindow: null) is a null in the merge patch, which removes the key
            putWindow(m, maintenanceWindow);
            put(m, "blockingPodSelector", blockingPodSelector);
            put(m, "holdNodesWithNpuWorkloads", holdNodesWithNpuWorkloads);
            return m;
        }
    }

    /**
     * {@code spec.driver.upgradePolicy.drain} or {@code recoveryPolicy.drain} (docs/upgrade.md "Drain"), checked as
     * the CRD schema checks it; the pod selector's syntax is the controller's to judge ({@code InvalidSpec}), so a
     * scenario can show that too. {@code force} admits pods without a controller (still evicted);
     * {@code disableEviction} deletes instead of evicting.
     */
    record Drain(Boolean enable, String scope, String podSelector, Integer timeoutSeconds, Integer gracePeriodSeconds,
            Boolean deleteEmptyDirData, Boolean force, Boolean disableEviction, String onTimeout) {
        public Drain {
            checkSelector(podSelector, "podSelector");
            if (scope != null && !scope.equals("all") && !scope.equals("npu")) {
                throw new Bad("scope", "'" + scope + "' is not all or npu");
            }
            checkRange(timeoutSeconds, "timeoutSeconds", 1, CRD_MAX_SECONDS);
            checkRange(gracePeriodSeconds, "gracePeriodSeconds", -1, CRD_MAX_SECONDS);
            if (onTimeout != null && !onTimeout.equals("fail") && !onTimeout.equals("reboot")) {
                throw new Bad("onTimeout", "'" + onTimeout + "' is not fail or reboot");
            }
        }

        Map<String, Object> fields() {
            Map<String, Object> m = new LinkedHashMap<>();
            put(m, "enable", enable);
            put(m, "scope", scope);
            put(m, "podSelector", podSelector);
            put(m, "timeoutSeconds", timeoutSeconds);
            put(m, "gracePeriodSeconds", gracePeriodSeconds);
            put(m, "deleteEmptyDirData", deleteEmptyDirData);
            put(m, "force", force);
            put(m, "disableEviction", disableEviction);
            put(m, "onTimeout", onTimeout);
            return m;
        }
    }

    /**
     * {@code spec.driver.recoveryPolicy}; {@code drain}, {@code maxUnavailable}, {@code maintenanceWindow} (with
     * {@code enforce}) and {@code blockingPodSelector} as docs/upgrade.md "Recovery drain"; the selector and the
     * window are the controller's to judge ({@code InvalidSpec}), as in {@code upgradePolicy}.
     */
    record RecoveryPolicy(Boolean autoRecover, Integer maxReboots, String window, Drain drain, Object maxUnavailable,
            @JsonDeserialize(using = ScenarioMapper.WindowDeserializer.class) Map<String, Object> maintenanceWindow,
            String blockingPodSelector) {
        public RecoveryPolicy {
            checkSelector(blockingPodSelector, "blockingPodSelector");
            checkRange(maxReboots, "maxReboots", 0, 1000);
            checkWindow(window);
            checkMaxUnavailable(maxUnavailable);
        }

        Map<String, Object> fields() {
            Map<String, Object> m = new LinkedHashMap<>();
            put(m, "autoRecover", autoRecover);
            put(m, "maxReboots", maxReboots);
            put(m, "window", window);
            if (drain != null) {
                m.put("drain", drain.fields());
            }
            put(m, "maxUnavailable", maxUnavailable);
            // checked by the controller (InvalidSpec), as the CRD schema and SpecReader check them; REMOVE_WINDOW
            // (maintenanceWindow: null) is a null in the merge patch, which removes the key
            putWindow(m, maintenanceWindow);
            put(m, "blockingPodSelector", blockingPodSelector);
            return m;
        }
    }

    /** {@code spec.driver.upgradePolicy.deadlines}, in seconds. */
    record Deadlines(Integer podRestartSeconds, Integer rebootRequiredSeconds, Integer rebootingSeconds,
            Integer validationSeconds) {
        public Deadlines {
            checkRange(podRestartSeconds, "podRestartSeconds", 0, CRD_MAX_SECONDS);
            checkRange(rebootRequiredSeconds, "rebootRequiredSeconds", 0, CRD_MAX_SECONDS);
            checkRange(rebootingSeconds, "rebootingSeconds", 0, CRD_MAX_SECONDS);
            checkRange(validationSeconds, "validationSeconds", 0, CRD_MAX_SECONDS);
        }

        Map<String, Object> fields() {
            Map<String, Object> m = new LinkedHashMap<>();
            put(m, "podRestartSeconds", podRestartSeconds);
            put(m, "rebootRequiredSeconds", rebootRequiredSeconds);
            put(m, "rebootingSeconds", rebootingSeconds);
            put(m, "validationSeconds", validationSeconds);
            return m;
        }
    }

    /**
     * {@code maintenanceWindow: null} of the shorthand ({@code upgradePolicy} or {@code recoveryPolicy}): the window
     * removed (a null in the JSON merge patch); an absent key is a null field and leaves the window as it is. Compared
     * by identity.
     */
    Map<String, Object> REMOVE_WINDOW = java.util.Collections.unmodifiableMap(new LinkedHashMap<>());

    private static void putWindow(Map<String, Object> m, Map<String, Object> window) {
        if (window == REMOVE_WINDOW) {
            m.put("maintenanceWindow", null);
        } else {
            put(m, "maintenanceWindow", window);
        }
    }

    private static void put(Map<String, Object> m, String key, Object v) {
        if (v != null) {
            m.put(key, v);
        }
    }

    /**
     * An empty selector is refused here (the CRD's {@code minLength: 1}); what a non-empty one means is the
     * controller's to judge ({@code InvalidSpec}), so a scenario can show that too.
     */
    private static void checkSelector(String v, String field) {
        if (v != null && v.isBlank()) {
            throw new Bad(field, "is empty: a label selector in kubectl -l syntax such as app=train (the CRD "
                    + "refuses an empty one), or leave it out");
        }
    }

    private static void checkMaxUnavailable(Object v) {
        if (v == null || v instanceof Integer i && i >= 0 && i <= 100_000) {
            return;
        }
        if (!(v instanceof String s) || !s.matches("(100|[1-9]?[0-9])%")) {
            throw new Bad("maxUnavailable", "must be a number of nodes (0..100000) or a percentage like 25%, got "
                    + v);
        }
    }

    /** The CR's own grammar ({@link io.npulifecycle.api.upgrade.spec.SpecGrammar}: the CRD's and the reader's). */
    private static void checkWindow(String v) {
        if (v != null && io.npulifecycle.api.upgrade.spec.SpecGrammar.duration(v) == null) {
            throw new Bad("window", "'" + v + "' is not " + io.npulifecycle.api.upgrade.spec.SpecGrammar.DURATION_EXPECTED);
        }
    }
}
