package io.npulifecycle.upgrade.internal.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shape of an ImageWhiteList ({@link WhiteListState#parse}) and the verdict on the tags a rollout needs
 * ({@link WhiteListState#verdict}): listed, missing (with the command that lists them), not asked yet, the kind not
 * served, disabled, not found, unreadable, malformed in every way the seed's shape can be broken.
 */
class WhiteListStateTest {

    static final String TAG_910B = "25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3";
    static final String TAG_310P = "25.5.0-310p-6.6.0-145.0.4.135-oe2403sp3";
    static final String IMG_910B = "registry.local:5000/mlops/ascend-driver:" + TAG_910B;
    static final String IMG_310P = "registry.local:5000/mlops/ascend-driver:" + TAG_310P;
    static final String NS = "cpaas-system";
    static final String NAME = "ascend-driver";
    static final String TYPE = "imagewhitelists.cpaas.io/v1";

    static Map<String, Object> object(Object spec) {
        Map<String, Object> o = new HashMap<>();
        o.put("spec", spec);
        return o;
    }

    static Map<String, Object> spec(Object repoList) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("repoList", repoList);
        return s;
    }

    static WhiteListState listed(String... tags) {
        return WhiteListState.parse(object(spec(List.of(tags))), NS, NAME, TYPE, Set.of(TAG_910B, TAG_310P));
    }

    @Test
    void theTagOfAnImageIsWhatFollowsTheLastColonAfterTheLastSlash() {
        assertEquals(TAG_910B, WhiteListState.tagOf(IMG_910B));
        assertEquals("", WhiteListState.tagOf("registry.local:5000/mlops/ascend-driver"));
        assertEquals(List.of(TAG_910B, TAG_310P), List.copyOf(WhiteListState.tagsOf(List.of(IMG_910B, IMG_310P,
                IMG_910B))));
    }

    @Test
    void everyTagListedPasses() {
        WhiteListState s = listed(TAG_310P, "24.1.0-910b-6.6.0-145.0.4.135-oe2403sp3", TAG_910B);
        assertEquals(WhiteListState.Status.LISTED, s.status());
        WhiteListState.Verdict v = s.verdict(List.of(IMG_910B, IMG_310P));
        assertTrue(v.ok(), v.toString());
        assertEquals("every driver image tag listed in ImageWhiteList cpaas-system/ascend-driver spec.repoList",
                v.message());
    }

    @Test
    void aMissingTagIsNamedWithTheRunbooksCommandAndAPatchThatAddsExactlyTheMissingOnes() {
        WhiteListState.Verdict v = listed(TAG_310P).verdict(List.of(IMG_910B, IMG_310P));
        assertFalse(v.ok());
        assertEquals("ImageNotWhitelisted", v.reason());
        assertEquals(List.of(TAG_910B), v.notListed());
        assertEquals("driver image tags not in ImageWhiteList cpaas-system/ascend-driver spec.repoList: " + TAG_910B
                + "; add each under spec.repoList: kubectl edit imagewhitelist ascend-driver -n cpaas-system (or "
                + "kubectl patch imagewhitelist ascend-driver -n cpaas-system --type=json -p "
                + "'[{\"op\":\"add\",\"path\":\"/spec/repoList/-\",\"value\":\"" + TAG_910B + "\"}]')", v.message());
    }

    @Test
    void anEmptyListMissesEveryTag() {
        WhiteListState.Verdict v = listed().verdict(List.of(IMG_910B, IMG_310P));
        assertEquals(List.of(TAG_910B, TAG_310P), v.notListed());
        assertTrue(v.message().contains("\"value\":\"" + TAG_910B + "\"},{\"op\":\"add\""), v.message());
    }

    @Test
    void aTagTheWhitelistWasNotReadForIsNotConfirmedRatherThanMissing() {
        WhiteListState s = WhiteListState.parse(object(spec(List.of(TAG_310P))), NS, NAME, TYPE, Set.of(TAG_310P));
        WhiteListState.Verdict v = s.verdict(List.of(IMG_910B));
        assertFalse(v.ok());
        assertEquals("ImageWhiteListCheckFailed", v.reason());
        assertEquals(List.of(), v.notListed());
        assertEquals("ImageWhiteList cpaas-system/ascend-driver not checked yet for " + TAG_910B, v.message());
    }

    @Test
    void theNamesInTheMessageAndTheCommandAreTheConfiguredOnes() {
        WhiteListState s = WhiteListState.parse(object(spec(List.of())), "platform", "npu-drivers", TYPE,
                Set.of(TAG_910B));
        WhiteListState.Verdict v = s.verdict(List.of(IMG_910B));
        assertTrue(v.message().startsWith("driver image tags not in ImageWhiteList platform/npu-drivers spec.repoList"),
                v.message());
        assertTrue(v.message().contains("kubectl edit imagewhitelist npu-drivers -n platform"), v.message());
        assertTrue(v.message().contains("kubectl patch imagewhitelist npu-drivers -n platform"), v.message());
    }

    @Test
    void theKindNotServedMeansTheCheckDoesNotApply() {
        WhiteListState.Verdict v = WhiteListState.of(WhiteListState.Status.NOT_SERVED, NS, NAME, "", "")
                .verdict(List.of(IMG_910B));
        assertTrue(v.ok());
        assertEquals("ImageWhiteList check does not apply: the cluster serves no ImageWhiteList kind", v.message());
        WhiteListState.Verdict skipped = WhiteListState.of(WhiteListState.Status.NOT_SERVED, NS, NAME, "",
                "discovery failed for metrics.k8s.io/v1beta1: HTTP 503").verdict(List.of(IMG_910B));
        assertTrue(skipped.ok());
        assertTrue(skipped.message().endsWith("(discovery failed for metrics.k8s.io/v1beta1: HTTP 503)"),
                skipped.message());
    }

    @Test
    void disabledPassesAndSaysSo() {
        WhiteListState.Verdict v = WhiteListState.of(WhiteListState.Status.DISABLED, NS, NAME, "", "")
                .verdict(List.of(IMG_910B));
        assertTrue(v.ok());
        assertEquals("ImageWhiteList check disabled (imageWhiteListCheck=false)", v.message());
    }

    @Test
    void nothingNeededHoldsNothingAndSaysNothing() {
        for (WhiteListState.Status st : WhiteListState.Status.values()) {
            WhiteListState.Verdict v = WhiteListState.of(st, NS, NAME, TYPE, "x").verdict(List.of());
            assertTrue(v.ok(), st.toString());
            assertEquals("", v.message(), st.toString());
        }
    }

    @Test
    void notCheckedNotFoundAndUnreadableHoldTheRollout() {
        WhiteListState.Verdict notChecked = WhiteListState.of(WhiteListState.Status.NOT_CHECKED, NS, NAME, "", "")
                .verdict(List.of(IMG_910B));
        assertEquals(List.of(false, "ImageWhiteListCheckFailed", "ImageWhiteList cpaas-system/ascend-driver not checked yet"),
                List.of(notChecked.ok(), notChecked.reason(), notChecked.message()));
        WhiteListState.Verdict notFound = WhiteListState.of(WhiteListState.Status.NOT_FOUND, NS, NAME, TYPE, "")
                .verdict(List.of(IMG_910B));
        assertEquals(List.of(false, "ImageWhiteListNotFound", List.of(TAG_910B)),
                List.of(notFound.ok(), notFound.reason(), notFound.notListed()));
        assertEquals("ImageWhiteList cpaas-system/ascend-driver not found (the cluster serves " + TYPE + "): create it "
                + "with spec.repoList listing " + TAG_910B + ", or set imageWhiteListNamespace / imageWhiteListName "
                + "of PID io.npulifecycle.upgrade", notFound.message());
        WhiteListState.Verdict failed = WhiteListState.of(WhiteListState.Status.FAILED, NS, NAME, TYPE,
                "forbidden (HTTP 403)").verdict(List.of(IMG_910B));
        assertEquals(List.of(false, "ImageWhiteListCheckFailed",
                "ImageWhiteList cpaas-system/ascend-driver could not be read: forbidden (HTTP 403)"),
                List.of(failed.ok(), failed.reason(), failed.message()));
    }

    static Stream<Arguments> malformed() {
        Map<String, Object> noRepoList = new LinkedHashMap<>();
        noRepoList.put("repos", List.of(TAG_910B));
        List<Object> mixed = new ArrayList<>(Arrays.asList(TAG_910B, 25, Map.of("tag", TAG_310P), null, List.of("x")));
        return Stream.of(
                Arguments.of("no spec", new HashMap<>(Map.of("metadata", Map.of())),
                        "no spec (expected spec.repoList, a list of image tags)"),
                Arguments.of("spec a string", object("repoList: " + TAG_910B),
                        "spec is a string ('repoList: " + TAG_910B + "'), expected an object with repoList, a list of image tags"),
                Arguments.of("spec a list", object(List.of(TAG_910B)),
                        "spec is a list, expected an object with repoList, a list of image tags"),
                Arguments.of("no spec.repoList", object(noRepoList), "no spec.repoList (expected a list of image tags)"),
                Arguments.of("spec.repoList null", object(spec(null)), "no spec.repoList (expected a list of image tags)"),
                Arguments.of("spec.repoList a string", object(spec(TAG_910B)),
                        "spec.repoList is a string ('" + TAG_910B + "'), expected a list of image tags"),
                Arguments.of("spec.repoList an object", object(spec(Map.of("ascend-driver", List.of(TAG_910B)))),
                        "spec.repoList is an object, expected a list of image tags"),
                Arguments.of("spec.repoList a number", object(spec(3)),
                        "spec.repoList is a number (3), expected a list of image tags"),
                Arguments.of("entries of the wrong type", object(spec(mixed)),
                        "spec.repoList[1] is a number (25), spec.repoList[2] is an object, spec.repoList[3] is null, "
                                + "spec.repoList[4] is a list, expected an image tag (a string)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void aMalformedWhitelistIsAPreflightFailureNamingTheField(String what, Map<String, Object> object, String problem) {
        WhiteListState s = WhiteListState.parse(object, NS, NAME, TYPE, Set.of(TAG_910B));
        assertEquals(WhiteListState.Status.INVALID, s.status());
        assertEquals(problem, s.detail());
        WhiteListState.Verdict v = s.verdict(List.of(IMG_910B));
        assertFalse(v.ok());
        assertEquals("ImageWhiteListInvalid", v.reason());
        assertEquals("ImageWhiteList cpaas-system/ascend-driver is malformed: " + problem
                + "; fix it with kubectl edit imagewhitelist ascend-driver -n cpaas-system", v.message());
    }

    @Test
    void aNullObjectIsMalformedNotACrash() {
        assertEquals(WhiteListState.Status.INVALID, WhiteListState.parse(null, NS, NAME, TYPE, Set.of()).status());
    }
}
