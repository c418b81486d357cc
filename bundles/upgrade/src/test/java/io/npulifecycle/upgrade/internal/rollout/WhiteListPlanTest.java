package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.ImageStatus;
import io.npulifecycle.upgrade.internal.plan.NodePatch;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.WhiteListState;

import io.npulifecycle.api.upgrade.spec.UpgradeState;

import static io.npulifecycle.upgrade.internal.rollout.PlanRows.OLD;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.T;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.ago;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.expect;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.given;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.image;
import static io.npulifecycle.upgrade.internal.rollout.PlanRows.node;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.POD_RESTART_REQUIRED;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.REBOOTING;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.UPGRADE_REQUIRED;
import static io.npulifecycle.api.upgrade.spec.UpgradeState.VALIDATION_REQUIRED;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.Condition;

/**
 * The ImageWhiteList in the plan: a tag not listed, a malformed or unreadable whitelist hold the whole rollout before
 * any node is touched (as a missing image does), with the reason and the fixing command in {@code PreflightPassed};
 * listed tags, or a cluster without the kind, let it go and the status says which.
 */
class WhiteListPlanTest {

    static final String TAG = WhiteListState.tagOf(image(T));
    static final String TYPE = "imagewhitelists.cpaas.io/v1";

    static WhiteListState listing(String... tags) {
        return WhiteListState.parse(Map.of("spec", Map.of("repoList", List.of(tags))), "cpaas-system", "ascend-driver",
                TYPE, Set.of(TAG));
    }

    static WhiteListState of(WhiteListState.Status s, String detail) {
        return WhiteListState.of(s, "cpaas-system", "ascend-driver", TYPE, detail);
    }

    static Arguments row(String name, PlanRows.Given given, PlanRows.Expect expect) {
        return Arguments.of(name, given, expect);
    }

    static Stream<Arguments> rows() {
        String notListed = listing().verdict(List.of(image(T))).message();
        return Stream.of(
                row("the target's tag listed: the rollout starts, the status says it was checked",
                        given(node("n1").on(OLD)).whiteList(listing(WhiteListState.tagOf(image(OLD)), TAG)),
                        expect().state("n1", POD_RESTART_REQUIRED).condition("PreflightPassed", "True", "Passed")
                                .conditionMessage("PreflightPassed", "driver images present for every combination; "
                                        + "no NPU workloads on nodes to upgrade; every driver image tag listed in "
                                        + "ImageWhiteList cpaas-system/ascend-driver spec.repoList")
                                .condition("Progressing", "True", "RollingOut")),
                row("the kind not served: the rollout starts, the status says the check does not apply",
                        given(node("n1").on(OLD)).whiteList(of(WhiteListState.Status.NOT_SERVED, "")),
                        expect().state("n1", POD_RESTART_REQUIRED).condition("PreflightPassed", "True", "Passed")
                                .conditionMessage("PreflightPassed", "driver images present for every combination; "
                                        + "no NPU workloads on nodes to upgrade; ImageWhiteList check does not apply: "
                                        + "the cluster serves no ImageWhiteList kind")),
                row("the target's tag not listed: no node touched, no DaemonSet, the tag and the command named",
                        given(node("n1").on(OLD), node("n2").on(T).in(REBOOTING, ago(600)).boot("boot-2"))
                                .whiteList(listing(WhiteListState.tagOf(image(OLD)))),
                        expect().state("n1", "pending").noPatch("n1").state("n2", VALIDATION_REQUIRED).daemonSets()
                                .deletes().condition("PreflightPassed", "False", "ImageNotWhitelisted")
                                .conditionMessage("PreflightPassed", notListed)
                                .condition("Progressing", "False", "PreflightFailed")
                                .conditionMessage("Progressing", "held: " + notListed)),
                row("an upgrade-required node is not granted while its tag is not listed",
                        given(node("n1").on(OLD).state(UPGRADE_REQUIRED).progress(UPGRADE_REQUIRED, ago(60), ""))
                                .whiteList(listing()),
                        expect().state("n1", UPGRADE_REQUIRED).noPatch("n1").deletes()
                                .condition("PreflightPassed", "False", "ImageNotWhitelisted")),
                row("a malformed whitelist: no node touched, the field named",
                        given(node("n1").on(OLD)).whiteList(WhiteListState.parse(Map.of("spec", Map.of("repoList", TAG)),
                                "cpaas-system", "ascend-driver", TYPE, Set.of(TAG))),
                        expect().state("n1", "pending").noPatch("n1").daemonSets().deletes()
                                .condition("PreflightPassed", "False", "ImageWhiteListInvalid")
                                .conditionMessage("PreflightPassed", "ImageWhiteList cpaas-system/ascend-driver is "
                                        + "malformed: spec.repoList is a string ('" + TAG + "'), expected a list of image "
                                        + "tags; fix it with kubectl edit imagewhitelist ascend-driver -n cpaas-system")),
                row("a whitelist without spec: no node touched",
                        given(node("n1").on(OLD)).whiteList(WhiteListState.parse(Map.of(), "cpaas-system",
                                "ascend-driver", TYPE, Set.of(TAG))),
                        expect().state("n1", "pending").noPatch("n1").daemonSets()
                                .condition("PreflightPassed", "False", "ImageWhiteListInvalid")),
                row("not read yet: held, as an image not checked yet",
                        given(node("n1").on(OLD)).whiteList(of(WhiteListState.Status.NOT_CHECKED, "")),
                        expect().state("n1", "pending").noPatch("n1").daemonSets()
                                .condition("PreflightPassed", "False", "ImageWhiteListCheckFailed")),
                row("the whitelist object missing: held, naming what to create",
                        given(node("n1").on(OLD)).whiteList(of(WhiteListState.Status.NOT_FOUND, "")),
                        expect().state("n1", "pending").noPatch("n1")
                                .condition("PreflightPassed", "False", "ImageWhiteListNotFound")),
                row("unreadable (403): held with the cause",
                        given(node("n1").on(OLD)).whiteList(of(WhiteListState.Status.FAILED, "forbidden (HTTP 403)")),
                        expect().state("n1", "pending").noPatch("n1")
                                .condition("PreflightPassed", "False", "ImageWhiteListCheckFailed")
                                .conditionMessage("PreflightPassed",
                                        "ImageWhiteList cpaas-system/ascend-driver could not be read: forbidden (HTTP 403)")),
                row("a missing image and a tag not listed: both named, the registry's reason first",
                        given(node("n1").on(OLD)).targetImage(new ImageStatus(false, true, "404"))
                                .whiteList(listing()),
                        expect().state("n1", "pending").noPatch("n1")
                                .condition("PreflightPassed", "False", "ImageMissing")
                                .conditionMessage("PreflightPassed", "driver images missing from the registry: "
                                        + image(T) + "; " + notListed)),
                row("every node on the target: nothing needed, the whitelist holds nothing",
                        given(node("n1").done()).whiteList(listing()),
                        expect().noPatch("n1").deletes().condition("PreflightPassed", "True", "Passed")
                                .conditionMessage("PreflightPassed", "driver images present for every combination; "
                                        + "no NPU workloads on nodes to upgrade")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void plan(String row, PlanRows.Given given, PlanRows.Expect expect) {
        assertFalse(expect.checks.isEmpty(), "a row expects something");
        Plan plan = Reconciler.plan(given.inputs());
        assertAll(expect.checks.stream().map(c -> () -> assertEquals(c.expected(), c.actual().apply(plan), c.what())));
    }

    @Test
    void theWhitelistDecidesAloneWhenTheRegistryCheckIsOff() {
        // PlanRows answers every image present, as ImagePreflight does with registryCheck=false
        Plan held = Reconciler.plan(given(node("n1").on(OLD)).whiteList(listing()).inputs());
        Plan goes = Reconciler.plan(given(node("n1").on(OLD)).whiteList(listing(TAG)).inputs());
        assertTrue(held.nodePatches().isEmpty(), held.nodePatches().toString());
        assertEquals(List.of("n1"), goes.nodePatches().stream().map(NodePatch::node).toList());
        Condition c = held.status().getConditions().stream().filter(k -> k.getType().equals("PreflightPassed"))
                .findFirst().orElseThrow();
        assertTrue(c.getMessage().contains(TAG) && c.getMessage().contains("kubectl edit imagewhitelist ascend-driver"),
                c.getMessage());
    }
}
