package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.ImageStatus;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.Progress;

import io.npulifecycle.api.upgrade.spec.UpgradeState;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import static io.npulifecycle.upgrade.internal.rollout.PlanRows.COMBO;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.NOW;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.OLD;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.REMOVED;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.T;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.UNCHANGED;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.ago;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.expect;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.given;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.image;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.node;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.progress;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.POD_RESTART_REQUIRED;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.REBOOTING;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.REBOOT_DEFERRED;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.REBOOT_REQUIRED;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.UPGRADE_FAILED;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.UPGRADE_REQUIRED;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.VALIDATION_REQUIRED;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.Condition;
import io.npulifecycle.api.upgrade.model.NodeIssue;
import io.npulifecycle.api.upgrade.model.NpuOperatorCtlStatus;

/**
 * The rules of docs/upgrade.md as rows of the pure {@link Reconciler#plan}: one row = the observed nodes, pods, spec,
 * registry answers, previous status and time → the next state of each node, its patch, the pod deletions, the Events
 * and the status fields. Target {@value PlanRows#T}; the nodes start on {@value PlanRows#OLD}; the spec has the CRD's
 * defaults (maxParallelUpgrades 1, maxUnavailable 25 %, no autoUpgrade, deadlines 900/86400/1800/900 s) unless a row
 * sets a key; every image is present unless a row says otherwise.
 */
class ReconcilerPlanTest {

    private static final String PRR = POD_RESTART_REQUIRED.label();
    private static final String FAILED = NodeKeys.EVENT_DRIVER_UPGRADE_FAILED;
    private static final String STARTED = NpuOperatorCtlType.EVENT_ROLLOUT_STARTED;
    private static final String COMPLETE = NpuOperatorCtlType.EVENT_ROLLOUT_COMPLETE;
    private static final String NODE_FAILED = NpuOperatorCtlType.EVENT_NODE_UPGRADE_FAILED;

    static Arguments row(String name, PlanRows.Given given, PlanRows.Expect expect) {
        return Arguments.of(name, given, expect);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource({"transitions", "deadlines", "slots", "yields", "preflight", "status"})
    void plan(String row, PlanRows.Given given, PlanRows.Expect expect) {
        assertFalse(expect.checks.isEmpty(), "a row expects something");
        Plan plan = Reconciler.plan(given.inputs());
        assertAll(expect.checks.stream().map(c -> () -> assertEquals(c.expected(), c.actual().apply(plan), c.what())));
    }

    static NpuOperatorCtlStatus previous(String target, String start, String completion, Condition... conditions) {
        NpuOperatorCtlStatus s = new NpuOperatorCtlStatus();
        s.setTargetVersion(target);
        s.setStartTime(start);
        s.setCompletionTime(completion);
        s.setConditions(new ArrayList<>(List.of(conditions)));
        return s;
    }

    static Condition condition(String type, String status, String since) {
        Condition c = new Condition();
        c.setType(type);
        c.setStatus(status);
        c.setLastTransitionTime(since);
        return c;
    }

    static String missed(UpgradeState s, long seconds, long sinceAgo, String detail) {
        return "missed the " + s.label() + " deadline of " + seconds + "s (since " + ago(sinceAgo) + "): " + detail;
    }

    // ---- states and transitions ----

    static Stream<Arguments> transitions() {
        return Stream.of(
                row("no label, not on the target, a slot free: straight to pod-restart-required, driver pod deleted",
                        given(node("n1").on(OLD)).driverPod("n1", image(OLD)),
                        expect().state("n1", POD_RESTART_REQUIRED).stateLabel("n1", PRR)
                                .progress("n1", progress(POD_RESTART_REQUIRED, NOW, "boot-1")).deletes("n1")
                                .wake(NOW.plusSeconds(900))),
                row("on the target and validated for the current boot, no label: upgraded, nothing written",
                        given(node("n1").done()),
                        expect().state("n1", "upgraded").noPatch("n1").condition("Complete", "True", "Complete")),
                row("pod-restart-required, the agent asks for the upgrade reboot: reboot-required, awaiting approval",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(120)).agentAsksReboot()),
                        expect().state("n1", REBOOT_REQUIRED).stateLabel("n1", REBOOT_REQUIRED.label())
                                .progress("n1", progress(REBOOT_REQUIRED, NOW, "boot-1")).awaiting("n1")),
                row("no label, on the target but the agent asks for an upgrade reboot (it staged a version of an "
                        + "earlier target): to be upgraded, its pod replaced at the target",
                        given(node("n1").on(T).agentAsksReboot()).driverPod("n1", image(OLD)),
                        expect().state("n1", POD_RESTART_REQUIRED).stateLabel("n1", PRR).deletes("n1")),
                row("pod-restart-required, the target loaded and the agent asking for another version: the request is "
                        + "not for the target, no reboot-required; the pod is replaced at the target",
                        given(node("n1").on(T).in(POD_RESTART_REQUIRED, ago(120)).agentAsksReboot())
                                .driverPod("n1", image(OLD)),
                        expect().state("n1", POD_RESTART_REQUIRED).deletes("n1")),
                row("pod-restart-required, a reboot request for recovery (not upgrade): nothing moves",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(120))
                                .label(NodeKeys.REBOOT_REQUIRED, "true").ann(NodeKeys.REBOOT_REASON, "recovery")),
                        expect().state("n1", POD_RESTART_REQUIRED).noPatch("n1")),
                row("reboot-required, the agent wrote rebooting-from-boot-id = boot-id: rebooting",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(300)).rebootingFrom("boot-1")),
                        expect().state("n1", REBOOTING).progress("n1", progress(REBOOTING, NOW, "boot-1"))),
                row("reboot-required, rebooting-from-boot-id of another boot: nothing moves",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(300)).rebootingFrom("boot-0")),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1")),
                row("pod-restart-required, the agent staged and started the reboot in between: rebooting",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(30)).agentAsksReboot().rebootingFrom("boot-1")),
                        expect().state("n1", REBOOTING).stateLabel("n1", REBOOTING.label())),
                row("rebooting, a new boot id: validation-required (the slot's boot id kept)",
                        given(node("n1").on(T).in(REBOOTING, ago(600)).boot("boot-2")),
                        expect().state("n1", VALIDATION_REQUIRED).progress("n1", progress(VALIDATION_REQUIRED, NOW, "boot-1"))),
                row("rebooting, the new boot reports validation in the same write: done, label and progress removed",
                        given(node("n1").in(REBOOTING, ago(600)).boot("boot-2").done()),
                        expect().state("n1", "upgraded").stateLabel("n1", REMOVED).progress("n1", REMOVED)),
                row("validation-required, driver-validated = <target>@<current boot>: done",
                        given(node("n1").in(VALIDATION_REQUIRED, ago(60)).boot("boot-2").done()),
                        expect().state("n1", "upgraded").stateLabel("n1", REMOVED).progress("n1", REMOVED).count("upgraded", 1)),
                // chaos seed 15 (1 day, embedded, 2026-12-06): a recovery reboot in flight when the node got its
                // slot was taken as the upgrade's reboot; after it the old driver was loaded and the agent, its pod at
                // the target, asked for the upgrade reboot, which validation-required never granted: upgrade-failed
                row("validation-required, the target not loaded, the agent asks for the upgrade reboot: reboot-required "
                        + "from this boot",
                        given(node("n1").on(OLD).in(VALIDATION_REQUIRED, ago(600)).boot("boot-2").agentAsksReboot()),
                        expect().state("n1", REBOOT_REQUIRED).progress("n1", progress(REBOOT_REQUIRED, NOW, "boot-2"))),
                row("rebooting, a new boot, the target not loaded, the agent asks for the upgrade reboot: reboot-required",
                        given(node("n1").on(OLD).in(REBOOTING, ago(600)).boot("boot-2").agentAsksReboot()),
                        expect().state("n1", REBOOT_REQUIRED).progress("n1", progress(REBOOT_REQUIRED, NOW, "boot-2"))),
                row("reboot-required granted from this boot, the agent starts the reboot: rebooting",
                        given(node("n1").on(OLD).state(REBOOT_REQUIRED).progress(REBOOT_REQUIRED, ago(60), "boot-2")
                                .boot("boot-2").agentAsksReboot().rebootingFrom("boot-2")),
                        expect().state("n1", REBOOTING).progress("n1", progress(REBOOTING, NOW, "boot-2"))),
                row("validation-required, the target loaded, a reboot request (recovery): still validation-required",
                        given(node("n1").on(T).in(VALIDATION_REQUIRED, ago(60)).boot("boot-2")
                                .label(NodeKeys.REBOOT_REQUIRED, "true").ann(NodeKeys.REBOOT_REASON, "recovery")),
                        expect().state("n1", VALIDATION_REQUIRED).noPatch("n1")),
                row("validation-required, validated for an earlier boot: not done",
                        given(node("n1").on(T).in(VALIDATION_REQUIRED, ago(60)).boot("boot-2").validated(T + "@boot-1")),
                        expect().state("n1", VALIDATION_REQUIRED).noPatch("n1")),
                row("any state to done: reboot-required reporting the target validated for its boot",
                        given(node("n1").in(REBOOT_REQUIRED, ago(60)).done()),
                        expect().state("n1", "upgraded").stateLabel("n1", REMOVED).progress("n1", REMOVED)),
                row("a label value that is not a state is overwritten with the computed one",
                        given(node("n1").on(OLD).label(NodeKeys.DRIVER_UPGRADE_STATE, "garbage")),
                        expect().state("n1", POD_RESTART_REQUIRED).stateLabel("n1", PRR)),
                row("a label value that is not a state, on a done node: removed",
                        given(node("n1").done().label(NodeKeys.DRIVER_UPGRADE_STATE, "garbage")),
                        expect().state("n1", "upgraded").stateLabel("n1", REMOVED)),
                row("no driver-version: unknown, not touched",
                        given(node("n1")),
                        expect().state("n1", "unknown").noPatch("n1").count("unknown", 1)
                                .condition("Complete", "False", "InProgress")),
                row("on the target, not validated, no label: unvalidated, not touched",
                        given(node("n1").on(T)),
                        expect().state("n1", "unvalidated").noPatch("n1").condition("Complete", "False", "InProgress")),
                row("the driver-combination label is written alone while the preflight passes",
                        given(node("n1").done().without(NodeKeys.DRIVER_COMBINATION)),
                        expect().label("n1", NodeKeys.DRIVER_COMBINATION, COMBO.key()).stateLabel("n1", UNCHANGED)),
                row("the driver-combination label is not written alone while the preflight holds",
                        given(node("n1").done().without(NodeKeys.DRIVER_COMBINATION), node("n2").on(OLD))
                                .targetImage(new ImageStatus(false, true, "404")),
                        expect().noPatch("n1").noPatch("n2")),
                row("in flight without a progress annotation: written, the deadline starts now",
                        given(node("n1").on(OLD).state(REBOOT_REQUIRED)),
                        expect().stateLabel("n1", UNCHANGED).progress("n1", progress(REBOOT_REQUIRED, NOW, "boot-1"))
                                .wake(NOW.plusSeconds(86400))),
                row("a malformed progress annotation: rewritten, the deadline starts now",
                        given(node("n1").on(OLD).state(REBOOT_REQUIRED)
                                .ann(NodeKeys.DRIVER_UPGRADE_PROGRESS, "state=rebooting,since=yesterday")),
                        expect().progress("n1", progress(REBOOT_REQUIRED, NOW, "boot-1"))),
                row("the progress of another state than the label (a person changed the label): restarts now",
                        given(node("n1").on(OLD).state(REBOOT_REQUIRED).progress(POD_RESTART_REQUIRED, ago(100), "boot-1")),
                        expect().state("n1", REBOOT_REQUIRED).progress("n1", progress(REBOOT_REQUIRED, NOW, "boot-1"))),
                row("upgrade-required without a progress annotation: written",
                        given(node("n1").on(OLD).state(UPGRADE_REQUIRED)).paused(),
                        expect().stateLabel("n1", UNCHANGED).progress("n1", progress(UPGRADE_REQUIRED, NOW, ""))));
    }

    // ---- deadlines and failures ----

    static Stream<Arguments> deadlines() {
        String noPod = missed(POD_RESTART_REQUIRED, 900, 900, "no driver pod on the node");
        return Stream.of(
                row("pod-restart-required at 900 s, no driver pod: upgrade-failed, Events on the Node and the CR",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(900))),
                        expect().state("n1", UPGRADE_FAILED).stateLabel("n1", UPGRADE_FAILED.label()).failure("n1", noPod)
                                .progress("n1", progress(UPGRADE_FAILED, NOW, "boot-1")).nodeEvents("n1", FAILED)
                                .crEvents(STARTED, NODE_FAILED).crEventMessage(1, "node n1: " + noPod)
                                .failed(new NodeIssue("n1", noPod)).count(UPGRADE_FAILED.label(), 1)
                                .condition("Degraded", "True", "NodesFailed").wake(null)),
                row("pod-restart-required past its deadline with a driver pod: the reason names the pod and its image",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(1000))).driverPod("n1", image(OLD)),
                        expect().failure("n1", missed(POD_RESTART_REQUIRED, 900, 1000, "driver pod npu-operator/driver-n1 (image "
                                + image(OLD) + ") did not request an upgrade reboot (" + NodeKeys.REBOOT_REQUIRED + ")"))
                                .deletes()),
                row("pod-restart-required at 899 s: not yet, a reconcile is due at the deadline",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(899))),
                        expect().state("n1", POD_RESTART_REQUIRED).noPatch("n1").wake(NOW.plusSeconds(1))),
                row("reboot-required at 86400 s, not approved",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(86400))),
                        expect().state("n1", UPGRADE_FAILED).failure("n1", missed(REBOOT_REQUIRED, 86400, 86400,
                                "reboot not approved (annotation " + NodeKeys.APPROVE_REBOOT + "=true missing)"))),
                row("reboot-required past its deadline, approved",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(86400)).approved()),
                        expect().failure("n1", missed(REBOOT_REQUIRED, 86400, 86400,
                                "approved but the node agent did not start the reboot"))),
                row("reboot-required past its deadline, autoUpgrade",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(86400))).autoUpgrade(),
                        expect().failure("n1", missed(REBOOT_REQUIRED, 86400, 86400,
                                "autoUpgrade is on but the node agent did not start the reboot"))),
                row("rebooting at 1800 s without a new boot id",
                        given(node("n1").on(OLD).in(REBOOTING, ago(1800))),
                        expect().state("n1", UPGRADE_FAILED).failure("n1", missed(REBOOTING, 1800, 1800,
                                "the node did not come back with a new boot id (" + NodeKeys.BOOT_ID + " still boot-1)"))),
                row("validation-required at 900 s: the reason names driver-validated, the expected value, driver, health",
                        given(node("n1").on(T).in(VALIDATION_REQUIRED, ago(900)).boot("boot-2").validated(T + "@boot-1")
                                .label(NodeKeys.NPU_HEALTH, "unhealthy")),
                        expect().state("n1", UPGRADE_FAILED).failure("n1", missed(VALIDATION_REQUIRED, 900, 900,
                                "not validated: " + NodeKeys.DRIVER_VALIDATED + " is '" + T + "@boot-1' (expected " + T
                                        + "@boot-2), loaded driver " + T + ", npu-health unhealthy"))),
                row("deadline 0 = none: reboot-required for 10 days waits on",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(864000))).deadline("rebootRequiredSeconds", 0),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1").wake(null)),
                row("the measured (monotonic) age decides: 2 h by the wall clock, 10 min measured, not failed",
                        given(node("n1").on(OLD).in(REBOOTING, ago(7200))).age("n1", Duration.ofMinutes(10)),
                        expect().state("n1", REBOOTING).noPatch("n1").wake(NOW.plusSeconds(1200))),
                row("the measured age past the deadline fails the node whatever the wall clock says",
                        given(node("n1").on(OLD).in(REBOOTING, ago(60))).age("n1", Duration.ofSeconds(1800)),
                        expect().state("n1", UPGRADE_FAILED)),
                row("a state entered in this plan is aged 0, not by the measured age of the old progress",
                        given(node("n1").on(OLD).state(REBOOT_REQUIRED)).age("n1", Duration.ofDays(3)),
                        expect().state("n1", REBOOT_REQUIRED).wake(NOW.plusSeconds(86400))),
                row("upgrade-required has no deadline",
                        given(node("n1").on(OLD).state(UPGRADE_REQUIRED).progress(UPGRADE_REQUIRED, ago(30L * 86400), ""))
                                .paused(),
                        expect().state("n1", UPGRADE_REQUIRED).noPatch("n1").wake(null)),
                row("upgrade-failed stays failed, is not granted, and uses a maxUnavailable unit",
                        given(node("n1").on(OLD).in(UPGRADE_FAILED, ago(60)).ann(NodeKeys.DRIVER_UPGRADE_FAILURE, "x"),
                                node("n2").on(OLD)).maxParallel(0).maxUnavailable(1),
                        expect().state("n1", UPGRADE_FAILED).noPatch("n1").state("n2", UPGRADE_REQUIRED)
                                .failed(new NodeIssue("n1", "x")).deletes()),
                row("a failed node reporting the target validated for its boot: done, failure annotation removed",
                        given(node("n1").in(UPGRADE_FAILED, ago(60)).ann(NodeKeys.DRIVER_UPGRADE_FAILURE, "x")
                                .boot("boot-2").done()),
                        expect().state("n1", "upgraded").stateLabel("n1", REMOVED).failure("n1", REMOVED)
                                .condition("Degraded", "False", "NoFailures")),
                row("retry: relabelled upgrade-required, it gets a slot and loses the failure annotation",
                        given(node("n1").on(OLD).state(UPGRADE_REQUIRED).progress(UPGRADE_FAILED, ago(60), "boot-1")
                                .ann(NodeKeys.DRIVER_UPGRADE_FAILURE, "x")),
                        expect().state("n1", POD_RESTART_REQUIRED).failure("n1", REMOVED)
                                .progress("n1", progress(POD_RESTART_REQUIRED, NOW, "boot-1"))),
                row("retry: the label removed, it is still not on the target: upgrade-required, then its slot",
                        given(node("n1").on(OLD).progress(UPGRADE_FAILED, ago(60), "boot-1")
                                .ann(NodeKeys.DRIVER_UPGRADE_FAILURE, "x")),
                        expect().state("n1", POD_RESTART_REQUIRED).stateLabel("n1", PRR).failure("n1", REMOVED)));
    }

    // ---- slots ----

    static Stream<Arguments> slots() {
        return Stream.of(
                row("maxParallelUpgrades 1: one of two waiting nodes, by name",
                        given(node("n1").on(OLD), node("n2").on(OLD)).maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", POD_RESTART_REQUIRED).state("n2", UPGRADE_REQUIRED)
                                .progress("n2", progress(UPGRADE_REQUIRED, NOW, ""))),
                row("maxParallelUpgrades counts the nodes already in flight",
                        given(node("n1").on(OLD).in(REBOOTING, ago(60)), node("n2").on(OLD)).maxParallel(1)
                                .maxUnavailable("100%"),
                        expect().state("n1", REBOOTING).noPatch("n1").state("n2", UPGRADE_REQUIRED).deletes()
                                .wake(NOW.plusSeconds(1740))),
                row("maxParallelUpgrades 0 = unlimited",
                        given(node("n1").on(OLD), node("n2").on(OLD), node("n3").on(OLD)).maxParallel(0)
                                .maxUnavailable("100%"),
                        expect().state("n1", POD_RESTART_REQUIRED).state("n2", POD_RESTART_REQUIRED)
                                .state("n3", POD_RESTART_REQUIRED)
                                .conditionMessage("Progressing", "0/3 upgraded, 3 in flight, 3/3 unavailable")),
                row("maxUnavailable as a count",
                        given(node("n1").on(OLD), node("n2").on(OLD), node("n3").on(OLD)).maxParallel(0).maxUnavailable(2),
                        expect().state("n1", POD_RESTART_REQUIRED).state("n2", POD_RESTART_REQUIRED)
                                .state("n3", UPGRADE_REQUIRED)),
                row("maxUnavailable as a percentage, rounded up: 25 % of 5 = 2",
                        given(node("n1").on(OLD), node("n2").on(OLD), node("n3").on(OLD), node("n4").on(OLD),
                                node("n5").on(OLD)).maxParallel(0).maxUnavailable("25%"),
                        expect().state("n1", POD_RESTART_REQUIRED).state("n2", POD_RESTART_REQUIRED)
                                .state("n3", UPGRADE_REQUIRED).state("n5", UPGRADE_REQUIRED)
                                .conditionMessage("Progressing", "0/5 upgraded, 2 in flight, 2/2 unavailable")),
                row("maxUnavailable 0 is an invalid spec (no node could ever be upgraded): no write, InvalidSpec names it",
                        given(node("n1").on(OLD)).maxUnavailable(0),
                        expect().noWrites().state("n1", "").condition("InvalidSpec", "True", "InvalidSpec")
                                .conditionMessage("InvalidSpec", "spec.driver.upgradePolicy.maxUnavailable: 0 lets no "
                                        + "NPU node be unavailable, so no node could ever be upgraded: give a count or "
                                        + "a percentage of at least 1 (the default is 25%)")),
                row("a cordoned node costs no extra unit and goes before the available ones",
                        given(node("n1").on(OLD), node("n2").on(OLD).cordoned()).maxParallel(0).maxUnavailable(1),
                        expect().state("n1", UPGRADE_REQUIRED).state("n2", POD_RESTART_REQUIRED)),
                row("a NotReady node that is not upgrading uses a unit",
                        given(node("n1").done().notReady(), node("n2").on(OLD)).maxParallel(0).maxUnavailable(1),
                        expect().state("n1", "upgraded").state("n2", UPGRADE_REQUIRED)),
                row("a node that does not fit is passed over; one already unavailable after it still gets its slot",
                        given(node("n1").on(OLD).approved(), node("n2").on(OLD).cordoned()).maxParallel(0).maxUnavailable(1),
                        expect().state("n1", UPGRADE_REQUIRED).state("n2", POD_RESTART_REQUIRED)),
                row("approved nodes first (no autoUpgrade)",
                        given(node("n1").on(OLD), node("n2").on(OLD).approved()).maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", UPGRADE_REQUIRED).state("n2", POD_RESTART_REQUIRED)),
                row("with autoUpgrade an approval changes no order: by name",
                        given(node("n1").on(OLD), node("n2").on(OLD).approved()).maxParallel(1).maxUnavailable("100%")
                                .autoUpgrade(),
                        expect().state("n1", POD_RESTART_REQUIRED).state("n2", UPGRADE_REQUIRED)));
    }

    // ---- manual mode: an approved node never waits for a slot behind an unapproved one ----

    /** An unapproved node staged and asking for its reboot, in reboot-required since 10 minutes. */
    static PlanRows.NodeSpec unapprovedStaged(String name) {
        return node(name).on(OLD).in(REBOOT_REQUIRED, ago(600)).agentAsksReboot();
    }

    /** An approved node waiting for a slot. */
    static PlanRows.NodeSpec approvedWaiting(String name) {
        return node(name).on(OLD).state(UPGRADE_REQUIRED).progress(UPGRADE_REQUIRED, ago(60), "").approved();
    }

    static NodeIssue yields(String node, UpgradeState from, String to) {
        return new NodeIssue(node, from.label() + ", not approved: yields its slot to " + to
                + " (approved, waiting); goes to reboot-deferred");
    }

    static Stream<Arguments> yields() {
        String deferred = REBOOT_DEFERRED.label();
        return Stream.of(
                row("maxParallelUpgrades 1: the unapproved slot holder yields to the approved node that waits; the "
                        + "approved node waits for the next plan (the yield is on the Node first)",
                        given(unapprovedStaged("n1"), approvedWaiting("n2")).driverPod("n2", image(OLD)).maxParallel(1)
                                .maxUnavailable("100%"),
                        expect().state("n1", REBOOT_DEFERRED).stateLabel("n1", deferred)
                                .progress("n1", progress(REBOOT_DEFERRED, NOW, "boot-1")).state("n2", UPGRADE_REQUIRED)
                                .noPatch("n2").deletes().awaiting("n1").slotHolders(yields("n1", REBOOT_REQUIRED, "n2"))
                                .conditionMessage("Progressing", "0/2 upgraded, 1 in flight, 1/2 unavailable, 1 awaiting approval")),
                row("the next plan: the reboot-deferred node holds no slot, the approved node gets it",
                        given(node("n1").on(OLD).in(REBOOT_DEFERRED, ago(1)).agentAsksReboot(), approvedWaiting("n2"))
                                .driverPod("n2", image(OLD)).maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", REBOOT_DEFERRED).noPatch("n1").state("n2", POD_RESTART_REQUIRED)
                                .deletes("n2").awaiting("n1").count(deferred, 1)),
                row("an unapproved node in pod-restart-required yields too (it stages later, and waits deferred)",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(30)), approvedWaiting("n2")).maxParallel(1)
                                .maxUnavailable("100%"),
                        expect().state("n1", REBOOT_DEFERRED).progress("n1", progress(REBOOT_DEFERRED, NOW, "boot-1"))
                                .state("n2", UPGRADE_REQUIRED).slotHolders(yields("n1", POD_RESTART_REQUIRED, "n2"))),
                row("a pre-approved node that got its slot first is not yielding: the approved one waits behind an approved one",
                        given(unapprovedStaged("n1").approved(), approvedWaiting("n2")).maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1").state("n2", UPGRADE_REQUIRED).noPatch("n2")),
                row("the agent consumed the approval between two plans (rebooting-from-boot-id, approval gone): "
                        + "rebooting, keeps its slot, nothing yields",
                        given(unapprovedStaged("n1").rebootingFrom("boot-1"), approvedWaiting("n2")).maxParallel(1)
                                .maxUnavailable("100%"),
                        expect().state("n1", REBOOTING).stateLabel("n1", REBOOTING.label()).state("n2", UPGRADE_REQUIRED)
                                .noPatch("n2").deletes()),
                row("approval withdrawn from a slot holder (approved when granted, not any more): it yields",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(7200)).agentAsksReboot(), approvedWaiting("n2"))
                                .maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", REBOOT_DEFERRED).state("n2", UPGRADE_REQUIRED)),
                row("reboot-deferred, rebooted anyway (the agent used an approval before it saw the label): counted in "
                        + "flight again as rebooting, the approved node waits",
                        given(node("n1").on(OLD).in(REBOOT_DEFERRED, ago(5)).agentAsksReboot().rebootingFrom("boot-1"),
                                approvedWaiting("n2")).maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", REBOOTING).progress("n1", progress(REBOOTING, NOW, "boot-1"))
                                .state("n2", UPGRADE_REQUIRED).noPatch("n2")),
                row("reboot-deferred after a new boot (a reboot of its own): validation-required like any other",
                        given(node("n1").on(T).in(REBOOT_DEFERRED, ago(5)).boot("boot-2")),
                        expect().state("n1", VALIDATION_REQUIRED).progress("n1", progress(VALIDATION_REQUIRED, NOW, "boot-1"))),
                row("reboot-deferred, approved, a slot free: straight back to reboot-required (staged: no pod restart)",
                        given(node("n1").on(OLD).in(REBOOT_DEFERRED, ago(600)).agentAsksReboot().approved())
                                .driverPod("n1", image(T)),
                        expect().state("n1", REBOOT_REQUIRED).progress("n1", progress(REBOOT_REQUIRED, NOW, "boot-1"))
                                .deletes().awaiting().wake(NOW.plusSeconds(86400))),
                row("reboot-deferred, approved, not staged yet (yielded during its pod restart): pod-restart-required, "
                        + "the pod already has the target image",
                        given(node("n1").on(OLD).in(REBOOT_DEFERRED, ago(600)).approved()).driverPod("n1", image(T)),
                        expect().state("n1", POD_RESTART_REQUIRED).deletes()),
                row("reboot-deferred, not approved, a slot free: stays (it has nothing to do in a slot), awaiting approval",
                        given(node("n1").on(OLD).in(REBOOT_DEFERRED, ago(600)).agentAsksReboot(), node("n2").on(OLD))
                                .maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", REBOOT_DEFERRED).noPatch("n1").state("n2", POD_RESTART_REQUIRED).awaiting("n1")),
                row("approved deferred nodes go before approved nodes that did not start",
                        given(approvedWaiting("n1"), node("n2").on(OLD).in(REBOOT_DEFERRED, ago(60)).agentAsksReboot().approved())
                                .maxParallel(1).maxUnavailable("100%"),
                        expect().state("n1", UPGRADE_REQUIRED).state("n2", REBOOT_REQUIRED)),
                row("reboot-deferred, approved, with an NPU workload: held like a node that did not start",
                        given(node("n1").on(OLD).in(REBOOT_DEFERRED, ago(60)).agentAsksReboot().approved())
                                .workload("n1", "team-a/train-0"),
                        expect().state("n1", REBOOT_DEFERRED).noPatch("n1")
                                .held(new NodeIssue("n1", PlannedNode.HELD_BY_WORKLOADS + "team-a/train-0"))),
                row("maxParallelUpgrades 2, two unapproved holders, two approved waiting: both yield, one each",
                        given(unapprovedStaged("n1"), unapprovedStaged("n2"), approvedWaiting("n3"), approvedWaiting("n4"))
                                .maxParallel(2).maxUnavailable("100%"),
                        expect().state("n1", REBOOT_DEFERRED).state("n2", REBOOT_DEFERRED).state("n3", UPGRADE_REQUIRED)
                                .state("n4", UPGRADE_REQUIRED)
                                .slotHolders(yields("n1", REBOOT_REQUIRED, "n3"), yields("n2", REBOOT_REQUIRED, "n4"))),
                row("maxParallelUpgrades 2, two unapproved holders, one approved waiting: only one yields (by name)",
                        given(unapprovedStaged("n1"), unapprovedStaged("n2"), approvedWaiting("n3")).maxParallel(2)
                                .maxUnavailable("100%"),
                        expect().state("n1", REBOOT_DEFERRED).state("n2", REBOOT_REQUIRED).noPatch("n2")
                                .awaiting("n1", "n2")),
                row("maxUnavailable 1 (parallelism unlimited): the unapproved holder's unit goes to the approved node",
                        given(unapprovedStaged("n1"), approvedWaiting("n2")).maxParallel(0).maxUnavailable(1),
                        expect().state("n1", REBOOT_DEFERRED).state("n2", UPGRADE_REQUIRED)),
                row("maxUnavailable 1, the unapproved holder is cordoned (down anyway): yielding frees no unit, no yield",
                        given(unapprovedStaged("n1").cordoned(), approvedWaiting("n2")).maxParallel(0).maxUnavailable(1),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1").state("n2", UPGRADE_REQUIRED)),
                row("an approved node that is held (NPU workloads) takes no slot from anyone",
                        given(unapprovedStaged("n1"), approvedWaiting("n2")).workload("n2", "team-a/train-0").maxParallel(1)
                                .maxUnavailable("100%"),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1")),
                row("paused: no grant, so no yield",
                        given(unapprovedStaged("n1"), approvedWaiting("n2")).maxParallel(1).maxUnavailable("100%").paused(),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1").noPatch("n2")),
                row("autoUpgrade: every node reboots by itself, nothing yields",
                        given(unapprovedStaged("n1"), approvedWaiting("n2")).maxParallel(1).maxUnavailable("100%").autoUpgrade(),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1").state("n2", UPGRADE_REQUIRED)),
                row("status.slotHolders names every node holding a slot and why",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(30)).approved(), unapprovedStaged("n2"),
                                node("n3").on(OLD).in(REBOOTING, ago(60)), node("n4").on(T).in(VALIDATION_REQUIRED, ago(60))
                                        .boot("boot-2"))
                                .maxParallel(0).maxUnavailable("100%"),
                        expect().slotHolders(
                                new NodeIssue("n1", "pod-restart-required, approved: the driver pod restarts with the target "
                                        + "image, then the node agent stages it"),
                                new NodeIssue("n2", "reboot-required, not approved: staged, waiting for "
                                        + NodeKeys.APPROVE_REBOOT + "=true (gives the slot up to an approved node that waits)"),
                                new NodeIssue("n3", "rebooting: leaving boot boot-1"),
                                new NodeIssue("n4", "validation-required: waiting for " + NodeKeys.DRIVER_VALIDATED + "="
                                        + T + "@boot-2"))));
    }

    // ---- preflight, pause, held nodes, driver pods, DaemonSets ----

    static Stream<Arguments> preflight() {
        String missingImage = "driver images missing from the registry: " + image(T);
        return Stream.of(
                row("images present, no NPU workloads: PreflightPassed",
                        given(node("n1").on(OLD)),
                        expect().condition("PreflightPassed", "True", "Passed").condition("Progressing", "True", "RollingOut")),
                row("a missing image holds the whole rollout: nodes without a label untouched, in-flight nodes go on",
                        given(node("n1").on(OLD), node("n2").on(T).in(REBOOTING, ago(600)).boot("boot-2"))
                                .targetImage(new ImageStatus(false, true, "404")),
                        expect().state("n1", "pending").noPatch("n1").state("n2", VALIDATION_REQUIRED).daemonSets()
                                .deletes().count("pending", 1).condition("PreflightPassed", "False", "ImageMissing")
                                .conditionMessage("PreflightPassed", missingImage)
                                .condition("Progressing", "False", "PreflightFailed").imagesToCheck(image(T))),
                row("a missing image: an upgrade-required node is not granted",
                        given(node("n1").on(OLD).state(UPGRADE_REQUIRED).progress(UPGRADE_REQUIRED, ago(60), ""))
                                .targetImage(new ImageStatus(false, true, "404")),
                        expect().state("n1", UPGRADE_REQUIRED).noPatch("n1").deletes()),
                row("an image not checked yet holds the rollout: ImageCheckFailed",
                        given(node("n1").on(OLD)).targetImage(null),
                        expect().state("n1", "pending").noPatch("n1").condition("PreflightPassed", "False", "ImageCheckFailed")
                                .conditionMessage("PreflightPassed", "driver images not confirmed: " + image(T)
                                        + " (not checked yet)")),
                row("a failed image check holds the rollout, with its detail",
                        given(node("n1").on(OLD)).targetImage(new ImageStatus(false, false, "HTTP 500")),
                        expect().state("n1", "pending").conditionMessage("PreflightPassed",
                                "driver images not confirmed: " + image(T) + " (HTTP 500)")),
                row("paused: no grant, a node without a label still becomes upgrade-required",
                        given(node("n1").on(OLD)).driverPod("n1", image(OLD)).paused(),
                        expect().state("n1", UPGRADE_REQUIRED).stateLabel("n1", UPGRADE_REQUIRED.label()).deletes()
                                .status("paused", true, NpuOperatorCtlStatus::getPaused)
                                .condition("Progressing", "False", "Paused")),
                row("paused: a node in flight finishes its step",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(60)).rebootingFrom("boot-1")).paused(),
                        expect().state("n1", REBOOTING)),
                row("NPU workloads hold that node in upgrade-required; the others go on",
                        given(node("n1").on(OLD), node("n2").on(OLD)).workload("n1", "team/train-0").maxParallel(1)
                                .maxUnavailable("100%"),
                        expect().state("n1", UPGRADE_REQUIRED).state("n2", POD_RESTART_REQUIRED)
                                .held(new NodeIssue("n1", "NPU workloads on the node: team/train-0"))
                                .condition("PreflightPassed", "False", "NpuWorkloadsPresent")),
                row("a node without a chip label is held with the reason, no combination label",
                        given(node("n1").on(OLD).without(NodeKeys.CHIP).without(NodeKeys.DRIVER_COMBINATION)),
                        expect().state("n1", UPGRADE_REQUIRED).label("n1", NodeKeys.DRIVER_COMBINATION, UNCHANGED)
                                .held(new NodeIssue("n1", "node n1: label " + NodeKeys.CHIP
                                        + " is missing (expected a chip family like 910b or 310p)"))
                                .condition("PreflightPassed", "False", "NodeInfoInvalid")),
                row("the DaemonSet of a combination follows the target once the preflight passed",
                        given(node("n1").on(OLD)).daemonSet(image(OLD)),
                        expect().daemonSets(COMBO.daemonSetName() + "=" + image(T))),
                row("a DaemonSet already on the target image is not written",
                        given(node("n1").on(OLD)).daemonSet(image(T)),
                        expect().daemonSets()),
                row("a driver pod already on the target image is not deleted",
                        given(node("n1").on(OLD)).driverPod("n1", image(T)),
                        expect().state("n1", POD_RESTART_REQUIRED).deletes()),
                row("a driver pod being deleted is not deleted again",
                        given(node("n1").on(OLD)).driverPod("n1", image(OLD), true),
                        expect().state("n1", POD_RESTART_REQUIRED).deletes()),
                row("a driver pod this controller deleted recently is not deleted again",
                        given(node("n1").on(OLD)).driverPod("n1", image(OLD)).recentlyDeleted("uid-n1"),
                        expect().state("n1", POD_RESTART_REQUIRED).deletes()),
                row("target changed: pod-restart-required whose pod has the older target's image, deleted again",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(60))).driverPod("n1", image("25.0.0")),
                        expect().state("n1", POD_RESTART_REQUIRED).noPatch("n1").deletes("n1")),
                row("target changed: a node that staged the older version goes on with it",
                        given(node("n1").on(OLD).state(REBOOT_REQUIRED).ann(NodeKeys.DRIVER_UPGRADE_PROGRESS,
                                new Progress(REBOOT_REQUIRED, ago(60), "25.0.0", "boot-1").format())),
                        expect().state("n1", REBOOT_REQUIRED).noPatch("n1")),
                row("target changed: the new boot validated the older version: upgraded again, never marked done",
                        given(node("n1").on("25.0.0").in(REBOOTING, ago(600)).boot("boot-2").validated("25.0.0@boot-2")),
                        expect().state("n1", POD_RESTART_REQUIRED).progress("n1", progress(POD_RESTART_REQUIRED, NOW, "boot-2"))
                                .count("upgraded", 0)),
                row("target changed, paused: the new boot validated the older version: back to upgrade-required",
                        given(node("n1").on("25.0.0").in(REBOOTING, ago(600)).boot("boot-2").validated("25.0.0@boot-2"))
                                .paused(),
                        expect().state("n1", UPGRADE_REQUIRED).progress("n1", progress(UPGRADE_REQUIRED, NOW, "boot-1"))));
    }

    // ---- status, conditions, CR Events, invalid spec, a new leader ----

    static Stream<Arguments> status() {
        String yesterday = "2026-11-29T00:00:00Z";
        String morning = "2026-11-30T06:00:00Z";
        return Stream.of(
                row("a rollout starts: RolloutStarted, startTime now",
                        given(node("n1").on(OLD)),
                        expect().crEvents(STARTED).crEventMessage(0, "driver rollout to " + T + " started: 1 of 1 NPU nodes to upgrade")
                                .status("startTime", NOW.toString(), NpuOperatorCtlStatus::getStartTime)
                                .status("targetVersion", T, NpuOperatorCtlStatus::getTargetVersion)
                                .status("progress", "0/1", NpuOperatorCtlStatus::getProgress)
                                .status("observedGeneration", 5L, NpuOperatorCtlStatus::getObservedGeneration)),
                row("the same target as the previous status: startTime kept, no Event",
                        given(node("n1").on(OLD)).previous(previous(T, yesterday, null)),
                        expect().crEvents().status("startTime", yesterday, NpuOperatorCtlStatus::getStartTime)),
                row("a new target: RolloutStarted again, startTime now, no completionTime",
                        given(node("n1").on(OLD)).previous(previous(OLD, yesterday, morning)),
                        expect().crEvents(STARTED).status("startTime", NOW.toString(), NpuOperatorCtlStatus::getStartTime)
                                .status("completionTime", null, NpuOperatorCtlStatus::getCompletionTime)),
                row("every node upgraded: RolloutComplete, completionTime now, Complete=True",
                        given(node("n1").done()).previous(previous(T, yesterday, null)),
                        expect().crEvents(COMPLETE).status("completionTime", NOW.toString(), NpuOperatorCtlStatus::getCompletionTime)
                                .condition("Complete", "True", "Complete").condition("Progressing", "False", "Complete")
                                .status("progress", "1/1", NpuOperatorCtlStatus::getProgress)),
                row("completion already recorded: completionTime kept, no Event",
                        given(node("n1").done()).previous(previous(T, yesterday, morning)),
                        expect().crEvents().status("completionTime", morning, NpuOperatorCtlStatus::getCompletionTime)),
                row("lastTransitionTime: kept while the condition's status holds, now when it changes",
                        given(node("n1").done()).previous(previous(T, yesterday, null, condition("Complete", "False", morning),
                                condition("Degraded", "False", morning))),
                        expect().conditionSince("Complete", NOW.toString()).conditionSince("Degraded", morning)),
                row("node counts, progress and the RollingOut message",
                        given(node("n1").done(), node("n2").on(OLD), node("n3"), node("n4").on(T), node("n5").on(OLD))
                                .maxUnavailable("100%"),
                        expect().count("upgraded", 1).count(PRR, 1).count("unknown", 1).count("unvalidated", 1)
                                .count(UPGRADE_REQUIRED.label(), 1).count("pending", 0)
                                .status("progress", "1/5", NpuOperatorCtlStatus::getProgress)
                                .condition("Progressing", "True", "RollingOut")
                                .conditionMessage("Progressing", "1/5 upgraded, 1 in flight, 1/5 unavailable")),
                row("reboot-required with the approval: not awaiting approval",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(60)).approved()),
                        expect().state("n1", REBOOT_REQUIRED).awaiting()),
                row("reboot-required with autoUpgrade: not awaiting approval",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(60))).autoUpgrade(),
                        expect().state("n1", REBOOT_REQUIRED).awaiting()),
                row("invalid spec: no write at all, InvalidSpec=True names the field, states are the labels",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(90000)), node("n2").on(OLD)).version("abc")
                                .previous(previous(OLD, yesterday, morning)),
                        expect().noWrites().wake(null).imagesToCheck().state("n1", REBOOT_REQUIRED).state("n2", "")
                                .count(REBOOT_REQUIRED.label(), 1).condition("InvalidSpec", "True", "InvalidSpec")
                                .conditionMessage("InvalidSpec",
                                        "spec.driver.version: 'abc' is not a driver version (expected digits like 25.5.0 or 24.1.rc3, at most "
                                        + "32 characters)")
                                .condition("Progressing", "False", "InvalidSpec")
                                .status("targetVersion", OLD, NpuOperatorCtlStatus::getTargetVersion)
                                .status("startTime", yesterday, NpuOperatorCtlStatus::getStartTime)),
                row("a valid spec: InvalidSpec=False",
                        given(node("n1").on(OLD)),
                        expect().condition("InvalidSpec", "False", "Valid")),
                row("a new leader carries on from the progress annotation: nothing written, due at since + 1800 s",
                        given(node("n1").on(OLD).in(REBOOTING, ago(600))),
                        expect().state("n1", REBOOTING).noPatch("n1").wake(NOW.plusSeconds(1200))),
                row("a new leader ages reboot-required by the wall clock at its first sight",
                        given(node("n1").on(OLD).in(REBOOT_REQUIRED, ago(86401))),
                        expect().state("n1", UPGRADE_FAILED)),
                row("a new leader's first sight of pod-restart-required is age 0: time without a leader fails nothing",
                        given(node("n1").on(OLD).in(POD_RESTART_REQUIRED, ago(5 * 3600))).age("n1", Duration.ZERO),
                        expect().state("n1", POD_RESTART_REQUIRED).noPatch("n1").wake(NOW.plusSeconds(900))));
    }
}
