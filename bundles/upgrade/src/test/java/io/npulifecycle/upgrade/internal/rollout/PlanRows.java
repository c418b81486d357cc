package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.Combination;
import io.npulifecycle.upgrade.internal.plan.EventSpec;
import io.npulifecycle.upgrade.internal.plan.ImageStatus;
import io.npulifecycle.upgrade.internal.plan.Inputs;
import io.npulifecycle.upgrade.internal.plan.NodePatch;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.PodDelete;
import io.npulifecycle.upgrade.internal.plan.Progress;
import io.npulifecycle.upgrade.internal.plan.WhiteListState;

import io.npulifecycle.api.upgrade.spec.Policy;
import io.npulifecycle.api.upgrade.spec.UpgradeState;
import io.npulifecycle.api.upgrade.spec.SpecReader;

import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.npulifecycle.api.upgrade.model.NodeIssue;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * The language of the rows of {@link ReconcilerPlanTest}: {@link Given} (nodes, pods, spec, registry answers, previous
 * status, time) → {@link Reconciler#plan} → {@link Expect} (each node's resulting state, its patch, pod deletions,
 * Events, status fields). Every node is a 910B on openEuler 24.03 SP3 (one combination, one image per version), Ready,
 * boot id {@code boot-1}, carrying its {@code driver-combination} label unless a row says otherwise.
 */
final class PlanRows {

    static final String T = "25.5.0";
    static final String OLD = "24.1.0";
    static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    static final Combination COMBO = new Combination("910b", "6.6.0-145.0.4.135", "oe2403sp3");
    /** A patch's key: not in the patch. */
    static final String UNCHANGED = "<unchanged>";
    /** A patch's key: removed (null in the merge patch). */
    static final String REMOVED = "<removed>";
    static final String NO_PATCH = "<no patch>";

    private PlanRows() {
    }

    /** @return the driver image of {@code version} for {@link #COMBO} */
    static String image(String version) {
        return Policy.DEFAULT_REGISTRY + "/mlops/ascend-driver:" + version + "-910b-6.6.0-145.0.4.135-oe2403sp3";
    }

    /** @return a progress annotation value for the target {@link #T} */
    static String progress(UpgradeState s, Instant since, String fromBootId) {
        return new Progress(s, since, T, fromBootId).format();
    }

    static Instant ago(long seconds) {
        return NOW.minusSeconds(seconds);
    }

    static NodeSpec node(String name) {
        return new NodeSpec(name);
    }

    static Given given(NodeSpec... nodes) {
        return new Given(nodes);
    }

    static Expect expect() {
        return new Expect();
    }

    /** One NPU node as the informer would hold it. */
    static final class NodeSpec {
        final String name;
        final Map<String, String> labels = new LinkedHashMap<>();
        final Map<String, String> ann = new LinkedHashMap<>();
        boolean cordoned;
        boolean notReady;
        boolean tainted;

        NodeSpec(String name) {
            this.name = name;
            labels.put(NodeKeys.NPU_PRESENT, "true");
            labels.put(NodeKeys.CHIP, "910b");
            labels.put(NodeKeys.DRIVER_COMBINATION, COMBO.key());
            ann.put(NodeKeys.BOOT_ID, "boot-1");
        }

        /** The loaded driver ({@code driver-version}). */
        NodeSpec on(String version) {
            labels.put(NodeKeys.DRIVER_VERSION, version);
            return this;
        }

        NodeSpec state(UpgradeState s) {
            labels.put(NodeKeys.DRIVER_UPGRADE_STATE, s.label());
            return this;
        }

        /** The progress annotation of {@code s} since {@code since}, fromBootId {@code from}, target {@link #T}. */
        NodeSpec progress(UpgradeState s, Instant since, String from) {
            ann.put(NodeKeys.DRIVER_UPGRADE_PROGRESS, PlanRows.progress(s, since, from));
            return this;
        }

        /** The state label with its progress annotation since {@code since}, got its slot on {@code boot-1}. */
        NodeSpec in(UpgradeState s, Instant since) {
            return state(s).progress(s, since, "boot-1");
        }

        NodeSpec boot(String id) {
            ann.put(NodeKeys.BOOT_ID, id);
            return this;
        }

        /** {@code driver-validated = <value>} ({@code <version>@<boot id>}). */
        NodeSpec validated(String value) {
            ann.put(NodeKeys.DRIVER_VALIDATED, value);
            return this;
        }

        /** On the target and validated for its current boot. */
        NodeSpec done() {
            return on(T).validated(T + "@" + ann.get(NodeKeys.BOOT_ID));
        }

        /** The node agent staged the driver and asks for the upgrade reboot. */
        NodeSpec agentAsksReboot() {
            labels.put(NodeKeys.REBOOT_REQUIRED, "true");
            ann.put(NodeKeys.REBOOT_REASON, Markers.REASON_UPGRADE);
            return this;
        }

        NodeSpec rebootingFrom(String bootId) {
            ann.put(NodeKeys.REBOOTING_FROM_BOOT_ID, bootId);
            return this;
        }

        NodeSpec approved() {
            ann.put(NodeKeys.APPROVE_REBOOT, "true");
            return this;
        }

        NodeSpec cordoned() {
            cordoned = true;
            return this;
        }

        NodeSpec notReady() {
            notReady = true;
            return this;
        }

        /** The recovery's taint {@code npu.openfuyao.com/npu-unhealthy=true:NoSchedule}. */
        NodeSpec tainted() {
            tainted = true;
            return this;
        }

        NodeSpec label(String key, String value) {
            labels.put(key, value);
            return this;
        }

        NodeSpec ann(String key, String value) {
            ann.put(key, value);
            return this;
        }

        NodeSpec without(String key) {
            labels.remove(key);
            ann.remove(key);
            return this;
        }

        Node build() {
            Node n = new NodeBuilder().withNewMetadata().withName(name).withResourceVersion("7").withLabels(labels)
                    .withAnnotations(ann).endMetadata()
                    .withNewSpec().withUnschedulable(cordoned ? Boolean.TRUE : null).endSpec()
                    .withNewStatus().withNewNodeInfo().withKernelVersion("6.6.0-145.0.4.135.oe2403sp3.aarch64")
                    .withOsImage("openEuler 24.03 (LTS-SP3)").endNodeInfo()
                    .addNewCondition().withType("Ready").withStatus(notReady ? "False" : "True").endCondition()
                    .endStatus().build();
            if (tainted) {
                n.getSpec().setTaints(List.of(new io.fabric8.kubernetes.api.model.TaintBuilder()
                        .withKey(NodeKeys.NPU_UNHEALTHY_TAINT).withValue(NodeKeys.NPU_UNHEALTHY_VALUE)
                        .withEffect(NodeKeys.NPU_UNHEALTHY_EFFECT).build()));
            }
            return n;
        }
    }

    /**
     * Everything a plan is computed from. Default: policy of the CRD's defaults but the drain
     * ({@code drain.enable: false}: these rows are the state machine without it; {@code DrainPlanTest} has the
     * drain's), every image present.
     */
    static final class Given {
        final List<NodeSpec> nodes;
        final Map<String, Object> upgradePolicy = new LinkedHashMap<>();
        final Map<String, Object> deadlines = new LinkedHashMap<>();
        Object version = T;
        boolean paused;
        NpuOperatorCtlStatus previous;
        Map<String, ImageStatus> images = allPresent();
        final Map<String, Pod> driverPods = new HashMap<>();
        final Map<String, List<String>> workloads = new HashMap<>();
        final Map<String, String> daemonSets = new HashMap<>();
        final Set<String> recentlyDeleted = new LinkedHashSet<>();
        final Map<String, Duration> ages = new HashMap<>();
        WhiteListState whiteList = WhiteListState.of(WhiteListState.Status.DISABLED, WhiteListState.DEFAULT_NAMESPACE,
                WhiteListState.DEFAULT_NAME, "", "");

        Given(NodeSpec... nodes) {
            this.nodes = List.of(nodes);
        }

        /** A key of {@code spec.driver.upgradePolicy}. */
        Given policy(String key, Object value) {
            upgradePolicy.put(key, value);
            return this;
        }

        Given maxParallel(int n) {
            return policy("maxParallelUpgrades", n);
        }

        Given maxUnavailable(Object v) {
            return policy("maxUnavailable", v);
        }

        Given autoUpgrade() {
            return policy("autoUpgrade", true);
        }

        /** A key of {@code spec.driver.upgradePolicy.deadlines}, seconds. */
        Given deadline(String key, int seconds) {
            deadlines.put(key, seconds);
            return this;
        }

        /** {@code spec.driver.version} as written (valid or not). */
        Given version(Object v) {
            version = v;
            return this;
        }

        Given paused() {
            paused = true;
            return this;
        }

        Given previous(NpuOperatorCtlStatus s) {
            previous = s;
            return this;
        }

        /** The registry answers for the target image: {@code s}; null = not checked yet. */
        Given targetImage(ImageStatus s) {
            images = new HashMap<>();
            if (s != null) {
                images.put(image(T), s);
            }
            return this;
        }

        /** What the preflight last read of the ImageWhiteList (default: the check disabled). */
        Given whiteList(WhiteListState s) {
            whiteList = s;
            return this;
        }

        /** The driver pod of {@code node}, name {@code driver-<node>}, uid {@code uid-<node>}. */
        Given driverPod(String node, String image) {
            return driverPod(node, image, false);
        }

        Given driverPod(String node, String image, boolean deleting) {
            driverPods.put(node, new PodBuilder().withNewMetadata().withNamespace(NodeKeys.DRIVER_NAMESPACE)
                    .withName("driver-" + node).withUid("uid-" + node)
                    .withDeletionTimestamp(deleting ? "2026-11-30T11:59:00Z" : null).endMetadata()
                    .withNewSpec().withNodeName(node).addNewContainer().withImage(image).endContainer().endSpec().build());
            return this;
        }

        Given recentlyDeleted(String uid) {
            recentlyDeleted.add(uid);
            return this;
        }

        Given workload(String node, String pod) {
            workloads.computeIfAbsent(node, k -> new ArrayList<>()).add(pod);
            return this;
        }

        Given daemonSet(String image) {
            daemonSets.put(COMBO.daemonSetName(), image);
            return this;
        }

        /** The time the controller measured with its monotonic clock for the node's state. */
        Given age(String node, Duration d) {
            ages.put(node, d);
            return this;
        }

        Inputs inputs() {
            Map<String, Object> up = new LinkedHashMap<>(upgradePolicy);
            up.putIfAbsent("drain", Map.of("enable", false));
            if (!deadlines.isEmpty()) {
                up.put("deadlines", deadlines);
            }
            Map<String, Object> driver = new LinkedHashMap<>();
            driver.put("version", version);
            if (!up.isEmpty()) {
                driver.put("upgradePolicy", up);
            }
            return Inputs.builder().generation(5L).spec(SpecReader.parse(Map.of("driver", driver))).paused(paused)
                    .previous(previous).nodes(nodes.stream().map(NodeSpec::build).toList()).driverPods(driverPods)
                    .npuWorkloads(workloads).images(images).daemonSetImages(daemonSets)
                    .recentlyDeletedPods(recentlyDeleted).now(NOW).stateAges(ages).whiteList(whiteList).build();
        }

        private static Map<String, ImageStatus> allPresent() {
            return new HashMap<>() {
                private static final long serialVersionUID = 1L;

                @Override
                public ImageStatus get(Object key) {
                    return ImageStatus.PRESENT;
                }
            };
        }
    }

    /** One expected fact: what it is, its expected value and how to read it from the plan. */
    record Check(String what, Object expected, Function<Plan, Object> actual) {
    }

    /** The expected facts of a row. */
    static final class Expect {
        final List<Check> checks = new ArrayList<>();

        private Expect add(String what, Object expected, Function<Plan, Object> actual) {
            checks.add(new Check(what, expected, actual));
            return this;
        }

        /** The node's resulting state (a label, or upgraded, pending, unknown, unvalidated). */
        Expect state(String node, String s) {
            return add("state of " + node, s, p -> p.nodeStates().get(node));
        }

        Expect state(String node, UpgradeState s) {
            return state(node, s.label());
        }

        /** The value the node's patch gives a label ({@link #UNCHANGED}, {@link #REMOVED} or a value). */
        Expect label(String node, String key, String value) {
            return add("label " + key + " in the patch of " + node, value, p -> patched(p, node, key, true));
        }

        Expect annotation(String node, String key, String value) {
            return add("annotation " + key + " in the patch of " + node, value, p -> patched(p, node, key, false));
        }

        Expect stateLabel(String node, String value) {
            return label(node, NodeKeys.DRIVER_UPGRADE_STATE, value);
        }

        Expect progress(String node, String value) {
            return annotation(node, NodeKeys.DRIVER_UPGRADE_PROGRESS, value);
        }

        Expect failure(String node, String value) {
            return annotation(node, NodeKeys.DRIVER_UPGRADE_FAILURE, value);
        }

        Expect noPatch(String node) {
            return add("patch of " + node, NO_PATCH, p -> patch(p, node) == null ? NO_PATCH : patch(p, node).toString());
        }

        /** The nodes whose driver pod is deleted, in order. */
        Expect deletes(String... nodes) {
            return add("pod deletions", List.of(nodes), p -> p.podDeletes().stream().map(PodDelete::node).toList());
        }

        /** The reasons of the Events created on the Node once its patch went through. */
        Expect nodeEvents(String node, String... reasons) {
            return add("Events on " + node, List.of(reasons), p -> patch(p, node) == null ? List.of()
                    : patch(p, node).events().stream().map(EventSpec::reason).toList());
        }

        /** The reasons of the Events on the CR, in order. */
        Expect crEvents(String... reasons) {
            return add("Events on the CR", List.of(reasons), p -> p.crEvents().stream().map(EventSpec::reason).toList());
        }

        Expect crEventMessage(int i, String message) {
            return add("message of CR Event " + i, message, p -> p.crEvents().get(i).message());
        }

        /** A condition's {@code status/reason}. */
        Expect condition(String type, String status, String reason) {
            return add("condition " + type, status + "/" + reason, p -> {
                Condition c = condition(p, type);
                return c == null ? null : c.getStatus() + "/" + c.getReason();
            });
        }

        Expect conditionMessage(String type, String message) {
            return add("message of condition " + type, message, p -> condition(p, type).getMessage());
        }

        Expect conditionSince(String type, String lastTransitionTime) {
            return add("lastTransitionTime of condition " + type, lastTransitionTime,
                    p -> condition(p, type).getLastTransitionTime());
        }

        Expect status(String field, Object expected, Function<NpuOperatorCtlStatus, Object> read) {
            return add("status." + field, expected, p -> read.apply(p.status()));
        }

        Expect count(String state, int n) {
            return status("nodeCounts[" + state + "]", n, s -> s.getNodeCounts().get(state));
        }

        Expect awaiting(String... nodes) {
            return status("awaitingApproval", List.of(nodes), NpuOperatorCtlStatus::getAwaitingApproval);
        }

        Expect failed(NodeIssue... issues) {
            return status("failedNodes", List.of(issues), NpuOperatorCtlStatus::getFailedNodes);
        }

        Expect slotHolders(NodeIssue... issues) {
            return status("slotHolders", List.of(issues), NpuOperatorCtlStatus::getSlotHolders);
        }

        Expect held(NodeIssue... issues) {
            return status("heldNodes", List.of(issues), NpuOperatorCtlStatus::getHeldNodes);
        }

        /** When the controller must reconcile again at the latest (the earliest deadline); null = none. */
        Expect wake(Instant at) {
            return add("nextWakeup", at, Plan::nextWakeup);
        }

        /** The images of the DaemonSets to create or update. */
        Expect daemonSets(String... images) {
            return add("DaemonSet writes", List.of(images),
                    p -> p.daemonSets().stream().map(d -> d.name() + "=" + d.image()).toList());
        }

        Expect imagesToCheck(String... images) {
            return add("images to check", List.of(images), p -> List.copyOf(p.imagesToCheck()));
        }

        /** No patch, no pod deletion, no DaemonSet, no Event. */
        Expect noWrites() {
            add("node patches", List.of(), Plan::nodePatches);
            add("pod deletions", List.of(), Plan::podDeletes);
            add("DaemonSet writes", List.of(), Plan::daemonSets);
            return add("Events on the CR", List.of(), Plan::crEvents);
        }

        private static NodePatch patch(Plan p, String node) {
            List<NodePatch> ps = p.nodePatches().stream().filter(x -> x.node().equals(node)).toList();
            if (ps.size() > 1) {
                throw new AssertionError("more than one patch of " + node + ": " + ps);
            }
            return ps.isEmpty() ? null : ps.get(0);
        }

        private static Object patched(Plan p, String node, String key, boolean label) {
            NodePatch np = patch(p, node);
            if (np == null) {
                return NO_PATCH;
            }
            Map<String, String> m = label ? np.labels() : np.annotations();
            return !m.containsKey(key) ? UNCHANGED : Objects.requireNonNullElse(m.get(key), REMOVED);
        }

        private static Condition condition(Plan p, String type) {
            return p.status().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
        }
    }
}
