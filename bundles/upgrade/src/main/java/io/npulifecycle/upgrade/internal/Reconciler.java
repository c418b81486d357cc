package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;
import io.npulifecycle.api.markers.Markers;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.npulifecycle.api.upgrade.model.NodeIssue;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * The rollout decision as a pure function of the observed Kubernetes objects and the time: no I/O, no clock, no
 * memory between calls (apart from what the caller passes back in). The controller applies the returned
 * {@link Plan}; because every decision is derived from the objects, a restarted or new leader carries on.
 * States and transitions: {@code docs/upgrade.md}.
 */
public final class Reconciler {

    private Reconciler() {
    }

    /** Result of a registry check of one image. {@code present=false} with a detail: missing, or an error. */
    public record ImageStatus(boolean present, boolean missing, String detail) {
        public static final ImageStatus PRESENT = new ImageStatus(true, false, "present");
    }

    /**
     * Everything observed.
     *
     * @param generation metadata.generation of the CR
     * @param spec the parsed spec
     * @param paused the CR carries annotation {@code npu.openfuyao.com/paused=true}
     * @param previous the last status written (or read from the CR); may be null
     * @param nodes the NPU nodes
     * @param driverPods the driver pod of each node (by node name), newest first wins
     * @param npuWorkloads pods other than driver pods requesting an NPU resource, by node name, as namespace/name
     * @param images results of the registry preflight by image reference; absent = not checked yet
     * @param daemonSetImages image of each existing driver DaemonSet by name
     * @param recentlyDeletedPods uids of driver pods this controller deleted recently (no second delete)
     * @param now the current time
     * @param stateAges per node name: how long the node has been in the state of its progress annotation, as the
     *        controller measured it with its monotonic clock ({@link DeadlineClock}); a node absent here is aged by the
     *        wall clock ({@code now - since}). The in-flight deadlines use it, so a step of the wall clock neither
     *        fires nor stretches them.
     */
    public record Inputs(Long generation, SpecParser.Result spec, boolean paused, NpuOperatorCtlStatus previous,
            Collection<Node> nodes, Map<String, Pod> driverPods, Map<String, List<String>> npuWorkloads,
            Map<String, ImageStatus> images, Map<String, String> daemonSetImages, Set<String> recentlyDeletedPods,
            Instant now, Map<String, Duration> stateAges) {

        /** The same inputs without measured state ages (every deadline by the wall clock). */
        public Inputs(Long generation, SpecParser.Result spec, boolean paused, NpuOperatorCtlStatus previous,
                Collection<Node> nodes, Map<String, Pod> driverPods, Map<String, List<String>> npuWorkloads,
                Map<String, ImageStatus> images, Map<String, String> daemonSetImages, Set<String> recentlyDeletedPods,
                Instant now) {
            this(generation, spec, paused, previous, nodes, driverPods, npuWorkloads, images, daemonSetImages,
                    recentlyDeletedPods, now, Map.of());
        }
    }

    /** An event to create. {@code kind} is {@code Node} or {@code NPUOperatorCtl} (name given by the caller). */
    public record EventSpec(String kind, String name, String type, String reason, String message) {
    }

    /**
     * One merge patch of a node's labels and annotations (a null value removes the key), guarded by the node's
     * resourceVersion, and the events to create once it succeeded.
     */
    public record NodePatch(String node, String resourceVersion, Map<String, String> labels,
            Map<String, String> annotations, String why, List<EventSpec> events) {
    }

    /** Delete one driver pod so that its OnDelete DaemonSet recreates it with the target image. */
    public record PodDelete(String namespace, String name, String uid, String node, String why) {
    }

    /** Create or update one driver DaemonSet. */
    public record DaemonSetApply(Combination combination, String name, String image, String version) {
    }

    /**
     * What to do.
     *
     * @param nodePatches node writes, at most one per node
     * @param podDeletes driver pod deletions
     * @param daemonSets DaemonSet creations/updates
     * @param crEvents events on the CR (start, completion)
     * @param imagesToCheck images the registry preflight must answer for
     * @param status the status to write (when it differs from the last one)
     * @param nodeStates the resulting state of each node ("" = none, "upgraded", "unknown", "pending"), for the MBean
     * @param nextWakeup earliest deadline among in-flight nodes, or null
     */
    public record Plan(List<NodePatch> nodePatches, List<PodDelete> podDeletes, List<DaemonSetApply> daemonSets,
            List<EventSpec> crEvents, Set<String> imagesToCheck, NpuOperatorCtlStatus status,
            Map<String, String> nodeStates, Instant nextWakeup) {
    }

    private static final class N {
        Node node;
        String name;
        Map<String, String> labels;
        Map<String, String> ann;
        Combination combo;
        String comboError;
        UpgradeState state;
        boolean badLabel;
        Progress progress;
        UpgradeState next;
        Progress nextProgress;
        String failure;
        String loaded;
        String bootId;
        boolean doneForT;
        boolean unavailable;
        boolean approved;
        boolean needsUpgrade;
        String held;
        List<EventSpec> events = new ArrayList<>();
    }

    /**
     * Computes the plan.
     *
     * @param in the observed objects and the time
     * @return the plan; with an invalid spec only a status (condition InvalidSpec) and no write to any node
     */
    public static Plan plan(Inputs in) {
        Instant now = in.now();
        List<N> ns = new ArrayList<>();
        for (Node node : in.nodes()) {
            ns.add(facts(node));
        }
        ns.sort(Comparator.comparing(n -> n.name));
        NpuOperatorCtlStatus prev = in.previous() == null ? new NpuOperatorCtlStatus() : in.previous();
        NpuOperatorCtlStatus st = new NpuOperatorCtlStatus();
        st.setObservedGeneration(in.generation());
        st.setPaused(in.paused());
        Map<String, String> nodeStates = new TreeMap<>();
        List<Condition> conds = new ArrayList<>();

        if (!in.spec().valid()) {
            st.setTargetVersion(prev.getTargetVersion());
            Map<String, Integer> counts = emptyCounts();
            for (N n : ns) {
                String s = n.state == null ? "" : n.state.label();
                nodeStates.put(n.name, s);
                if (n.state != null) {
                    counts.merge(s, 1, Integer::sum);
                }
            }
            st.setNodeCounts(counts);
            st.setProgress(prev.getProgress());
            st.setStartTime(prev.getStartTime());
            st.setCompletionTime(prev.getCompletionTime());
            conds.add(cond(prev, "InvalidSpec", "True", "InvalidSpec", String.join("; ", in.spec().problems()), now));
            conds.add(cond(prev, "Progressing", "False", "InvalidSpec", "nothing is touched until the spec is fixed", now));
            st.setConditions(conds);
            return new Plan(List.of(), List.of(), List.of(), List.of(), Set.of(), st, nodeStates, null);
        }

        Policy pol = in.spec().policy();
        String t = pol.version();
        Map<Combination, String> imageOf = new HashMap<>(); // a few combinations, thousands of nodes
        java.util.function.Function<Combination, String> image = c -> imageOf.computeIfAbsent(c, pol::image);
        // images the preflight must confirm: every combination of a node that is not on the target yet
        Map<Combination, String> comboImages = new LinkedHashMap<>();
        for (N n : ns) {
            n.doneForT = n.loaded != null && t.equals(n.loaded) && n.bootId != null
                    && (t + "@" + n.bootId).equals(n.ann.get(NodeKeys.DRIVER_VALIDATED));
            n.needsUpgrade = n.loaded != null && !t.equals(n.loaded) || n.state != null && !n.doneForT;
            if (n.combo != null) {
                comboImages.put(n.combo, image.apply(n.combo));
            }
        }
        Set<String> needed = new LinkedHashSet<>();
        for (N n : ns) {
            if (n.needsUpgrade && n.combo != null) {
                needed.add(image.apply(n.combo));
            }
        }
        List<String> missing = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        for (String img : needed) {
            ImageStatus s = in.images().get(img);
            if (s == null) {
                errors.add(img + " (not checked yet)");
            } else if (s.missing()) {
                missing.add(img);
            } else if (!s.present()) {
                errors.add(img + " (" + s.detail() + ")");
            }
        }
        boolean imagesOk = missing.isEmpty() && errors.isEmpty();

        // 1. transitions that do not need a slot
        Instant wake = null;
        for (N n : ns) {
            n.next = n.state;
            n.nextProgress = n.progress != null && n.progress.state() == n.state ? n.progress : null;
            String validated = n.ann.get(NodeKeys.DRIVER_VALIDATED);
            boolean rebooted = n.progress != null && !n.progress.fromBootId().isEmpty() && n.bootId != null
                    && !n.bootId.equals(n.progress.fromBootId());
            boolean validatedOther = n.loaded != null && !t.equals(n.loaded) && validated != null
                    && validated.equals(n.loaded + "@" + n.bootId);
            String rebootingFrom = n.ann.get(NodeKeys.REBOOTING_FROM_BOOT_ID);
            boolean agentRequested = "true".equals(n.labels.get(NodeKeys.REBOOT_REQUIRED))
                    && Markers.REASON_UPGRADE.equals(n.ann.get(NodeKeys.REBOOT_REASON));
            if (n.state == null) {
                if (n.needsUpgrade && imagesOk) {
                    enter(n, UpgradeState.UPGRADE_REQUIRED, t, "", now);
                }
            } else if (n.doneForT) {
                n.next = null;
                n.nextProgress = null;
            } else if (n.state == UpgradeState.UPGRADE_REQUIRED || n.state == UpgradeState.UPGRADE_FAILED) {
                if (n.nextProgress == null) {
                    enter(n, n.state, t, n.progress == null ? "" : n.progress.fromBootId(), now);
                }
            } else {
                String from = n.progress == null ? "" : n.progress.fromBootId();
                if (rebooted) {
                    enterIfNew(n, validatedOther ? UpgradeState.UPGRADE_REQUIRED : UpgradeState.VALIDATION_REQUIRED, t, from, now);
                } else if (rebootingFrom != null && rebootingFrom.equals(n.bootId)
                        && (n.state == UpgradeState.POD_RESTART_REQUIRED || n.state == UpgradeState.REBOOT_REQUIRED)) {
                    enterIfNew(n, UpgradeState.REBOOTING, t, from, now);
                } else if (n.state == UpgradeState.POD_RESTART_REQUIRED && agentRequested) {
                    enterIfNew(n, UpgradeState.REBOOT_REQUIRED, t, from, now);
                } else if (n.nextProgress == null) {
                    // a person changed the label, or the annotation is malformed: the deadline starts now
                    enter(n, n.state, t, n.bootId == null ? "" : n.bootId, now);
                }
                if (n.next != null && n.next.inFlight()) {
                    Duration d = pol.deadlines().getOrDefault(n.next, Duration.ZERO);
                    if (!d.isZero()) {
                        // the age as measured by the controller's monotonic clock when the progress is the observed
                        // one (a wall-clock step changes nothing), else by the wall clock (a state entered now: 0)
                        Duration measured = n.nextProgress == n.progress ? in.stateAges().get(n.name) : null;
                        Duration age = measured != null ? measured : Duration.between(n.nextProgress.since(), now);
                        Instant due = now.plus(d.minus(age));
                        if (age.compareTo(d) >= 0) {
                            fail(n, d, why(n, pol, in), now);
                        } else if (wake == null || due.isBefore(wake)) {
                            wake = due;
                        }
                    }
                }
            }
        }

        // preflight (b) per node: NPU workloads, combination
        for (N n : ns) {
            if (n.next == UpgradeState.UPGRADE_REQUIRED) {
                List<String> pods = in.npuWorkloads().getOrDefault(n.name, List.of());
                if (n.combo == null) {
                    n.held = n.comboError;
                } else if (!pods.isEmpty()) {
                    n.held = "NPU workloads on the node: " + String.join(", ", pods);
                }
            }
        }

        // 2. slots: maxParallelUpgrades and maxUnavailable both hold
        int total = ns.size();
        int inFlight = 0;
        int unavailable = 0;
        for (N n : ns) {
            boolean fl = n.next != null && n.next.inFlight();
            inFlight += fl ? 1 : 0;
            unavailable += fl || n.next == UpgradeState.UPGRADE_FAILED || n.unavailable ? 1 : 0;
        }
        int maxUnav = pol.maxUnavailableOf(total);
        boolean blocked = in.paused() || !imagesOk;
        if (!blocked) {
            List<N> cands = ns.stream().filter(n -> n.next == UpgradeState.UPGRADE_REQUIRED && n.held == null)
                    .sorted(Comparator.comparing((N n) -> pol.autoUpgrade() || !n.approved)
                            .thenComparing(n -> !n.unavailable).thenComparing(n -> n.name))
                    .toList();
            for (N n : cands) {
                if (pol.maxParallelUpgrades() > 0 && inFlight >= pol.maxParallelUpgrades()) {
                    break;
                }
                int add = n.unavailable ? 0 : 1;
                if (unavailable + add > maxUnav) {
                    continue;
                }
                inFlight++;
                unavailable += add;
                enter(n, UpgradeState.POD_RESTART_REQUIRED, t, n.bootId == null ? "" : n.bootId, now);
                Duration d = pol.deadlines().getOrDefault(UpgradeState.POD_RESTART_REQUIRED, Duration.ZERO);
                if (!d.isZero() && (wake == null || now.plus(d).isBefore(wake))) {
                    wake = now.plus(d);
                }
            }
        }

        // 3. writes
        List<NodePatch> patches = new ArrayList<>();
        List<PodDelete> deletes = new ArrayList<>();
        boolean touchNodes = imagesOk;
        for (N n : ns) {
            Map<String, String> lab = new LinkedHashMap<>();
            Map<String, String> ann = new LinkedHashMap<>();
            if (n.next != n.state || n.badLabel) {
                lab.put(NodeKeys.DRIVER_UPGRADE_STATE, n.next == null ? null : n.next.label());
            }
            String prog = n.nextProgress == null ? null : n.nextProgress.format();
            if (!Objects.equals(prog, n.ann.get(NodeKeys.DRIVER_UPGRADE_PROGRESS))) {
                ann.put(NodeKeys.DRIVER_UPGRADE_PROGRESS, prog);
            }
            String failure = n.next == UpgradeState.UPGRADE_FAILED
                    ? (n.failure != null ? n.failure : n.ann.get(NodeKeys.DRIVER_UPGRADE_FAILURE)) : null;
            if (!Objects.equals(failure, n.ann.get(NodeKeys.DRIVER_UPGRADE_FAILURE))) {
                ann.put(NodeKeys.DRIVER_UPGRADE_FAILURE, failure);
            }
            if (n.combo != null && !n.combo.key().equals(n.labels.get(NodeKeys.DRIVER_COMBINATION))
                    && (touchNodes || !lab.isEmpty() || !ann.isEmpty())) {
                lab.put(NodeKeys.DRIVER_COMBINATION, n.combo.key());
            }
            if (!lab.isEmpty() || !ann.isEmpty()) {
                patches.add(new NodePatch(n.name, n.node.getMetadata().getResourceVersion(), lab, ann,
                        (n.state == null ? "none" : n.state.label()) + " -> " + (n.next == null ? "none" : n.next.label()),
                        n.events));
            }
            if (n.next == UpgradeState.POD_RESTART_REQUIRED && n.combo != null) {
                Pod p = in.driverPods().get(n.name);
                String want = image.apply(n.combo);
                if (p != null && p.getMetadata().getDeletionTimestamp() == null
                        && !in.recentlyDeletedPods().contains(p.getMetadata().getUid()) && !want.equals(image(p))) {
                    deletes.add(new PodDelete(p.getMetadata().getNamespace(), p.getMetadata().getName(),
                            p.getMetadata().getUid(), n.name, "image " + image(p) + " -> " + want));
                }
            }
        }
        List<DaemonSetApply> dss = new ArrayList<>();
        if (imagesOk) {
            for (Map.Entry<Combination, String> e : comboImages.entrySet()) {
                if (!e.getValue().equals(in.daemonSetImages().get(e.getKey().daemonSetName()))) {
                    dss.add(new DaemonSetApply(e.getKey(), e.getKey().daemonSetName(), e.getValue(), t));
                }
            }
        }

        // 4. status
        Map<String, Integer> counts = emptyCounts();
        int upgraded = 0;
        List<String> awaiting = new ArrayList<>();
        List<NodeIssue> failed = new ArrayList<>();
        List<NodeIssue> held = new ArrayList<>();
        boolean complete = true;
        for (N n : ns) {
            String s;
            if (n.next != null) {
                s = n.next.label();
                complete = false;
            } else if (n.loaded == null) {
                s = "unknown";
                complete = false;
            } else if (n.doneForT) {
                s = "upgraded";
                upgraded++;
            } else if (n.needsUpgrade) {
                s = "pending";
                complete = false;
            } else {
                s = "unvalidated";
                complete = false;
            }
            counts.merge(s, 1, Integer::sum);
            nodeStates.put(n.name, s);
            if (n.next == UpgradeState.REBOOT_REQUIRED && !pol.autoUpgrade() && !n.approved) {
                awaiting.add(n.name);
            }
            if (n.next == UpgradeState.UPGRADE_FAILED) {
                failed.add(new NodeIssue(n.name, n.failure != null ? n.failure
                        : Objects.requireNonNullElse(n.ann.get(NodeKeys.DRIVER_UPGRADE_FAILURE), "upgrade-failed")));
            }
            if (n.held != null) {
                held.add(new NodeIssue(n.name, n.held));
            }
        }
        st.setTargetVersion(t);
        st.setNodeCounts(counts);
        st.setProgress(upgraded + "/" + total);
        st.setAwaitingApproval(awaiting);
        st.setFailedNodes(failed);
        st.setHeldNodes(held);
        List<EventSpec> crEvents = new ArrayList<>();
        boolean sameTarget = t.equals(prev.getTargetVersion());
        st.setStartTime(sameTarget && prev.getStartTime() != null ? prev.getStartTime() : now.toString());
        if (!sameTarget || prev.getStartTime() == null) {
            crEvents.add(new EventSpec(NpuOperatorCtlType.KIND, null, NodeKeys.NORMAL, NpuOperatorCtlType.EVENT_ROLLOUT_STARTED,
                    "driver rollout to " + t + " started: " + (total - upgraded) + " of " + total + " NPU nodes to upgrade"));
        }
        if (complete) {
            st.setCompletionTime(sameTarget && prev.getCompletionTime() != null ? prev.getCompletionTime() : now.toString());
            if (!sameTarget || prev.getCompletionTime() == null) {
                crEvents.add(new EventSpec(NpuOperatorCtlType.KIND, null, NodeKeys.NORMAL, NpuOperatorCtlType.EVENT_ROLLOUT_COMPLETE,
                        "driver " + t + " validated on all " + total + " NPU nodes"));
            }
        }
        for (N n : ns) {
            for (EventSpec e : n.events) {
                if ("Warning".equals(e.type())) {
                    crEvents.add(new EventSpec(NpuOperatorCtlType.KIND, null, NodeKeys.WARNING, NpuOperatorCtlType.EVENT_NODE_UPGRADE_FAILED,
                            "node " + n.name + ": " + e.message()));
                }
            }
        }
        conds.add(cond(prev, "InvalidSpec", "False", "Valid", "spec is valid", now));
        List<String> pf = new ArrayList<>();
        String pfReason = "Passed";
        if (!missing.isEmpty()) {
            pfReason = "ImageMissing";
            pf.add("driver images missing from the registry: " + String.join(", ", missing));
        }
        if (!errors.isEmpty()) {
            pfReason = missing.isEmpty() ? "ImageCheckFailed" : pfReason;
            pf.add("driver images not confirmed: " + String.join(", ", errors));
        }
        List<NodeIssue> workloadHeld = held.stream().filter(h -> h.getReason().startsWith("NPU workloads")).toList();
        if (!held.isEmpty()) {
            pfReason = pf.isEmpty() ? (workloadHeld.isEmpty() ? "NodeInfoInvalid" : "NpuWorkloadsPresent") : pfReason;
            pf.add("nodes held: " + held.stream().map(NodeIssue::toString).collect(Collectors.joining("; ")));
        }
        conds.add(cond(prev, "PreflightPassed", pf.isEmpty() ? "True" : "False", pfReason,
                pf.isEmpty() ? "driver images present for every combination; no NPU workloads on nodes to upgrade"
                        : String.join("; ", pf), now));
        String progReason;
        String progMsg;
        if (complete) {
            progReason = "Complete";
            progMsg = "every NPU node runs and validated " + t;
        } else if (in.paused()) {
            progReason = "Paused";
            progMsg = "paused (annotation " + NpuOperatorCtlType.PAUSED_ANNOTATION + "=true); nodes in flight finish their current step";
        } else if (!imagesOk) {
            progReason = "PreflightFailed";
            progMsg = "held: driver images are missing or not confirmed";
        } else {
            progReason = "RollingOut";
            progMsg = upgraded + "/" + total + " upgraded, " + inFlight + " in flight, " + unavailable + "/" + maxUnav
                    + " unavailable" + (awaiting.isEmpty() ? "" : ", " + awaiting.size() + " awaiting approval");
        }
        conds.add(cond(prev, "Progressing", !complete && !in.paused() && imagesOk ? "True" : "False", progReason, progMsg, now));
        conds.add(cond(prev, "Complete", complete ? "True" : "False", complete ? "Complete" : "InProgress",
                upgraded + "/" + total + " NPU nodes validated on " + t, now));
        conds.add(cond(prev, "Degraded", failed.isEmpty() ? "False" : "True", failed.isEmpty() ? "NoFailures" : "NodesFailed",
                failed.isEmpty() ? "no node failed" : failed.size() + " node(s) upgrade-failed: "
                        + failed.stream().map(NodeIssue::getName).collect(Collectors.joining(", ")), now));
        st.setConditions(conds);
        return new Plan(patches, deletes, dss, crEvents, needed, st, nodeStates, wake);
    }

    private static Map<String, Integer> emptyCounts() {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (UpgradeState s : UpgradeState.values()) {
            m.put(s.label(), 0);
        }
        m.put("pending", 0);
        m.put("upgraded", 0);
        m.put("unvalidated", 0);
        m.put("unknown", 0);
        return m;
    }

    private static N facts(Node node) {
        N n = new N();
        n.node = node;
        n.name = node.getMetadata().getName();
        n.labels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        n.ann = node.getMetadata().getAnnotations() == null ? Map.of() : node.getMetadata().getAnnotations();
        try {
            n.combo = Combination.of(node);
        } catch (IllegalArgumentException e) {
            n.comboError = e.getMessage();
        }
        String raw = n.labels.get(NodeKeys.DRIVER_UPGRADE_STATE);
        n.state = UpgradeState.of(raw);
        n.badLabel = raw != null && n.state == null;
        n.progress = Progress.parse(n.ann.get(NodeKeys.DRIVER_UPGRADE_PROGRESS));
        n.loaded = emptyToNull(n.labels.get(NodeKeys.DRIVER_VERSION));
        n.bootId = emptyToNull(n.ann.get(NodeKeys.BOOT_ID));
        n.approved = "true".equals(n.ann.get(NodeKeys.APPROVE_REBOOT));
        boolean cordoned = node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
        boolean notReady = node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && !"True".equals(c.getStatus()));
        n.unavailable = cordoned || notReady;
        return n;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    private static void enter(N n, UpgradeState s, String target, String fromBootId, Instant now) {
        n.next = s;
        n.nextProgress = new Progress(s, now, target, fromBootId);
    }

    private static void enterIfNew(N n, UpgradeState s, String target, String fromBootId, Instant now) {
        if (n.progress != null && n.progress.state() == s && s == n.state) {
            n.next = s;
            n.nextProgress = n.progress;
        } else {
            enter(n, s, target, fromBootId, now);
        }
    }

    private static void fail(N n, Duration d, String detail, Instant now) {
        UpgradeState missed = n.next;
        String reason = "missed the " + missed.label() + " deadline of " + d.toSeconds() + "s (since "
                + n.nextProgress.since() + "): " + detail;
        n.failure = reason.length() > 1000 ? reason.substring(0, 1000) : reason;
        n.events.add(new EventSpec("Node", n.name, NodeKeys.WARNING, NodeKeys.EVENT_DRIVER_UPGRADE_FAILED, n.failure));
        n.next = UpgradeState.UPGRADE_FAILED;
        n.nextProgress = new Progress(UpgradeState.UPGRADE_FAILED, now, n.nextProgress.target(),
                n.nextProgress.fromBootId());
    }

    private static String why(N n, Policy pol, Inputs in) {
        switch (n.next) {
            case POD_RESTART_REQUIRED: {
                Pod p = in.driverPods().get(n.name);
                return p == null ? "no driver pod on the node"
                        : "driver pod " + p.getMetadata().getNamespace() + "/" + p.getMetadata().getName() + " (image "
                                + image(p) + ") did not request an upgrade reboot (" + NodeKeys.REBOOT_REQUIRED + ")";
            }
            case REBOOT_REQUIRED:
                return pol.autoUpgrade() ? "autoUpgrade is on but the node agent did not start the reboot"
                        : n.approved ? "approved but the node agent did not start the reboot"
                                : "reboot not approved (annotation " + NodeKeys.APPROVE_REBOOT + "=true missing)";
            case REBOOTING:
                return "the node did not come back with a new boot id (" + NodeKeys.BOOT_ID + " still " + n.bootId + ")";
            case VALIDATION_REQUIRED:
                return "not validated: " + NodeKeys.DRIVER_VALIDATED + " is '" + n.ann.getOrDefault(NodeKeys.DRIVER_VALIDATED, "")
                        + "' (expected " + pol.version() + "@" + n.bootId + "), loaded driver " + n.loaded
                        + ", npu-health " + n.labels.getOrDefault(NodeKeys.NPU_HEALTH, "unknown");
            default:
                return n.next.label();
        }
    }

    /** @return the image of the pod's first container, or "" */
    static String image(Pod p) {
        if (p.getSpec() == null || p.getSpec().getContainers() == null || p.getSpec().getContainers().isEmpty()) {
            return "";
        }
        return Objects.requireNonNullElse(p.getSpec().getContainers().get(0).getImage(), "");
    }

    private static Condition cond(NpuOperatorCtlStatus prev, String type, String status, String reason, String msg,
            Instant now) {
        Condition c = new Condition();
        c.setType(type);
        c.setStatus(status);
        c.setReason(reason);
        c.setMessage(msg.length() > 4000 ? msg.substring(0, 4000) + "..." : msg);
        c.setLastTransitionTime(now.toString());
        if (prev.getConditions() != null) {
            for (Condition p : prev.getConditions()) {
                if (type.equals(p.getType()) && status.equals(p.getStatus()) && p.getLastTransitionTime() != null) {
                    c.setLastTransitionTime(p.getLastTransitionTime());
                }
            }
        }
        return c;
    }

    /** Helper for callers: NPU workloads (namespace/name) by node. */
    public static Map<String, List<String>> workloads(Collection<Pod> pods) {
        Map<String, List<String>> m = new HashMap<>();
        for (Pod p : pods) {
            if (isNpuWorkload(p)) {
                m.computeIfAbsent(p.getSpec().getNodeName(), k -> new ArrayList<>())
                        .add(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName());
            }
        }
        m.values().forEach(l -> l.sort(null));
        return m;
    }

    /**
     * @param p a pod
     * @return whether it is bound to a node, not finished, not a driver pod, and requests or limits an NPU resource
     *         ({@code huawei.com/Ascend910*}, {@code huawei.com/Ascend310P*}) in any container or init container
     */
    public static boolean isNpuWorkload(Pod p) {
        if (p.getSpec() == null || p.getSpec().getNodeName() == null) {
            return false;
        }
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
            return false;
        }
        if (NodeKeys.DRIVER_NAMESPACE.equals(p.getMetadata().getNamespace()) && p.getMetadata().getLabels() != null
                && NodeKeys.DRIVER_APP.equals(p.getMetadata().getLabels().get(NodeKeys.DRIVER_APP_LABEL))) {
            return false;
        }
        List<io.fabric8.kubernetes.api.model.Container> cs = new ArrayList<>();
        if (p.getSpec().getContainers() != null) {
            cs.addAll(p.getSpec().getContainers());
        }
        if (p.getSpec().getInitContainers() != null) {
            cs.addAll(p.getSpec().getInitContainers());
        }
        for (var c : cs) {
            if (c.getResources() == null) {
                continue;
            }
            for (var m : java.util.Arrays.asList(c.getResources().getRequests(), c.getResources().getLimits())) {
                if (m != null && m.keySet().stream().anyMatch(k -> NodeKeys.NPU_RESOURCE_PREFIXES.stream().anyMatch(k::startsWith))) {
                    return true;
                }
            }
        }
        return false;
    }
}
