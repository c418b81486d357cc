package io.npulifecycle.upgrade.internal.preflight;

import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;
import io.npulifecycle.upgrade.internal.plan.WhiteListState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.npulifecycle.simulator.cluster.ImageWhiteLists;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;

/**
 * {@link ImagePreflight} reading the ImageWhiteList from an API server (the embedded one): discovery finds the kind
 * or not, the object is read at the configured namespace and name, malformed objects and a missing one are states
 * (never exceptions), a changed whitelist is read again after {@link ImagePreflight#BAD_TTL} and a newly needed tag
 * at once.
 */
class ImageWhiteListPreflightTest {

    static final String OLD_TAG = "24.1.0-910b-6.6.0-145.0.4.135-oe2403sp3";
    static final String NEW_TAG = "25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3";
    static final String NEW_IMAGE = "registry.local/mlops/ascend-driver:" + NEW_TAG;
    static final String OLD_IMAGE = "registry.local/mlops/ascend-driver:" + OLD_TAG;
    static final Duration WAIT = Duration.ofSeconds(20);

    ClusterFixture c;
    ScaledTestClock time;
    ImagePreflight preflight;
    final AtomicInteger results = new AtomicInteger();

    @AfterEach
    void close() {
        if (preflight != null) {
            preflight.close();
        }
        if (c != null) {
            c.close();
        }
    }

    /** @param scale simulated seconds per wall second (1000: {@link ImagePreflight#BAD_TTL} is 30 ms) */
    ImagePreflight preflight(double scale, boolean check, String namespace, String name) {
        c = c != null ? c : ClusterFixture.startEmbedded();
        time = c.own(new ScaledTestClock(scale));
        ControllerConfig d = ControllerConfig.defaults();
        ControllerConfig cfg = new ControllerConfig(d.namespace(), d.resourceName(), false, "http", "",
                d.reconcileDelay(), d.resync(), d.statusInterval(), false, d.leaseName(), d.leaseDuration(),
                d.renewDeadline(), d.retryPeriod(), "t").withImageWhiteList(check, namespace, name);
        preflight = new ImagePreflight(c.client("npu-controller"), time, cfg.preflight(), null, results::incrementAndGet,
                Executors.newSingleThreadExecutor());
        return preflight;
    }

    ImagePreflight preflight() {
        return preflight(1, true, WhiteListState.DEFAULT_NAMESPACE, WhiteListState.DEFAULT_NAME);
    }

    /** Requests the images until the whitelist's state is {@code status}, as the reconciles do. */
    WhiteListState await(List<String> images, WhiteListState.Status status) {
        Waits.until("the whitelist " + status, WAIT, () -> {
            preflight.request(images, time.monotonicNanos());
            return preflight.whiteList().status() == status;
        });
        return preflight.whiteList();
    }

    void cluster() {
        c = ClusterFixture.startEmbedded();
    }

    @Test
    void withoutTheKindTheCheckDoesNotApply() {
        preflight();
        assertEquals(WhiteListState.Status.NOT_CHECKED, preflight.whiteList().status());
        assertFalse(preflight.whiteList().verdict(List.of(NEW_IMAGE)).ok(), "held until read");
        WhiteListState s = await(List.of(NEW_IMAGE), WhiteListState.Status.NOT_SERVED);
        WhiteListState.Verdict v = s.verdict(List.of(NEW_IMAGE));
        assertTrue(v.ok());
        assertEquals("ImageWhiteList check does not apply: the cluster serves no ImageWhiteList kind", v.message());
        // the result is published first, then the reconcile asked for (ImagePreflight.readWhiteList)
        Waits.untilAsserted("the result's reconcile asked for", WAIT,
                () -> assertTrue(results.get() >= 1, "a result asks for a reconcile"));
    }

    @Test
    void listedAndMissingTagsAndTheFixReadAgain() {
        cluster();
        ImageWhiteLists.installCrd(c.backend());
        ImageWhiteLists.seed(c.backend(), List.of(OLD_TAG));
        preflight(1000, true, WhiteListState.DEFAULT_NAMESPACE, WhiteListState.DEFAULT_NAME);
        WhiteListState s = await(List.of(OLD_IMAGE, NEW_IMAGE), WhiteListState.Status.LISTED);
        assertEquals("imagewhitelists.cpaas.io/v1", s.resource(), "found by discovery");
        WhiteListState.Verdict v = s.verdict(List.of(OLD_IMAGE, NEW_IMAGE));
        assertEquals(List.of(NEW_TAG), v.notListed(), v.message());
        ImageWhiteLists.addTags(c.admin(), List.of(NEW_TAG));
        Waits.until("the added tag seen after BAD_TTL", WAIT, () -> {
            preflight.request(List.of(OLD_IMAGE, NEW_IMAGE), time.monotonicNanos());
            return preflight.whiteList().verdict(List.of(OLD_IMAGE, NEW_IMAGE)).ok();
        });
    }

    @Test
    void aTagNeededForTheFirstTimeIsReadAtOnceNotAfterTheTtl() {
        cluster();
        ImageWhiteLists.installCrd(c.backend());
        ImageWhiteLists.seed(c.backend(), List.of(OLD_TAG));
        preflight(); // scale 1: the TTLs are minutes
        await(List.of(OLD_IMAGE), WhiteListState.Status.LISTED);
        ImageWhiteLists.addTags(c.admin(), List.of(NEW_TAG));
        WhiteListState.Verdict before = preflight.whiteList().verdict(List.of(NEW_IMAGE));
        assertEquals(List.of("ImageWhiteListCheckFailed", List.of()), List.of(before.reason(), before.notListed()),
                "not read for that tag: not confirmed, not reported missing");
        Waits.until("read again for the new tag", WAIT, () -> {
            preflight.request(List.of(NEW_IMAGE), time.monotonicNanos());
            return preflight.whiteList().verdict(List.of(NEW_IMAGE)).ok();
        });
    }

    @Test
    void theNamespaceAndNameComeFromTheConfiguration() {
        cluster();
        ImageWhiteLists.installCrd(c.backend());
        ImageWhiteLists.seed(c.backend(), List.of()); // the default one lists nothing
        ImageWhiteLists.put(c.backend(), "platform", "npu-drivers", Map.of("repoList", List.of(NEW_TAG)));
        preflight(1, true, "platform", "npu-drivers");
        WhiteListState s = await(List.of(NEW_IMAGE), WhiteListState.Status.LISTED);
        assertEquals(List.of("platform", "npu-drivers"), List.of(s.namespace(), s.name()));
        assertTrue(s.verdict(List.of(NEW_IMAGE)).ok(), s.toString());
    }

    @Test
    void aMissingObjectIsNotFound() {
        cluster();
        ImageWhiteLists.installCrd(c.backend());
        preflight();
        WhiteListState s = await(List.of(NEW_IMAGE), WhiteListState.Status.NOT_FOUND);
        assertEquals("ImageWhiteListNotFound", s.verdict(List.of(NEW_IMAGE)).reason());
    }

    @Test
    void malformedObjectsAreStatesNamingTheField() {
        cluster();
        ImageWhiteLists.installCrd(c.backend());
        ImageWhiteLists.put(c.backend(), ImageWhiteLists.NAMESPACE, ImageWhiteLists.NAME, null);
        preflight(1000, true, WhiteListState.DEFAULT_NAMESPACE, WhiteListState.DEFAULT_NAME);
        assertEquals("no spec (expected spec.repoList, a list of image tags)",
                await(List.of(NEW_IMAGE), WhiteListState.Status.INVALID).detail());
        ImageWhiteLists.put(c.backend(), ImageWhiteLists.NAMESPACE, ImageWhiteLists.NAME, Map.of("repoList", NEW_TAG));
        Waits.until("repoList not a list", WAIT, () -> {
            preflight.request(List.of(NEW_IMAGE), time.monotonicNanos());
            return preflight.whiteList().detail().startsWith("spec.repoList is a string");
        });
        ImageWhiteLists.put(c.backend(), ImageWhiteLists.NAMESPACE, ImageWhiteLists.NAME,
                Map.of("repoList", List.of(NEW_TAG, 7)));
        Waits.until("an entry of the wrong type", WAIT, () -> {
            preflight.request(List.of(NEW_IMAGE), time.monotonicNanos());
            return preflight.whiteList().detail().equals("spec.repoList[1] is a number (7), expected an image tag (a string)");
        });
        assertEquals("ImageWhiteListInvalid", preflight.whiteList().verdict(List.of(NEW_IMAGE)).reason());
    }

    @Test
    void disabledNeverReads() {
        cluster();
        ImageWhiteLists.installCrd(c.backend());
        preflight(1000, false, WhiteListState.DEFAULT_NAMESPACE, WhiteListState.DEFAULT_NAME);
        for (int i = 0; i < 20; i++) {
            preflight.request(List.of(NEW_IMAGE), time.monotonicNanos());
        }
        assertEquals(WhiteListState.Status.DISABLED, preflight.whiteList().status());
        assertTrue(preflight.whiteList().verdict(List.of(NEW_IMAGE)).ok());
        assertEquals(0, results.get(), "nothing was read");
        assertEquals(0, c.requestsOf("npu-controller")[0], "no request sent");
    }

    @Test
    void nothingNeededNothingRead() {
        cluster();
        preflight();
        preflight.request(List.of(), time.monotonicNanos());
        assertEquals(WhiteListState.Status.NOT_CHECKED, preflight.whiteList().status());
        assertEquals(0, results.get());
    }
}
