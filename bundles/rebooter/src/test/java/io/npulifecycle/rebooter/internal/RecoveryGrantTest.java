package io.npulifecycle.rebooter.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.NodePolicy;

/**
 * The recovery drain's part of the two reboot guards: with {@code recoveryPolicy.drain.enable} (or an unknown policy)
 * a recovery reboot waits for the control plane's grant naming this boot, before any approval is consumed, and the
 * re-check right before the reboot reads the grant again; with the drain disabled nothing changes.
 */
class RecoveryGrantTest {

    private static final String BOOT = "boot-1";
    private static final NodePolicy AUTO_DRAIN = new NodePolicy(true, "25.5.0", false, true, null, null, null, "7", true);
    private static final NodePolicy AUTO_NO_DRAIN = new NodePolicy(true, "25.5.0", false, true, null, null, null, "7",
            false);
    private static final NodePolicy MANUAL_DRAIN = new NodePolicy(true, "25.5.0", false, false, null, null, null, "7",
            true);
    private static final ApprovalState NONE = new ApprovalState(true, false, null, "1");
    private static final ApprovalState APPROVED = new ApprovalState(true, true, "true", "1");

    private static Authorisation.Request request(String reason, NodePolicy p, ApprovalState a, boolean granted) {
        return new Authorisation.Request(BOOT, reason, "0", null, null, p, a, true, "", null, granted);
    }

    private static MarkerRead marker(String reason) {
        Marker m = new Marker("reboot-required", BOOT, Instant.parse("2026-11-30T10:00:00Z"), "health-watch",
                Map.of("reason", reason));
        return new MarkerRead("reboot-required", Path.of("/run/npu-operator/reboot-required"), MarkerStatus.PRESENT, m,
                null);
    }

    @Test
    void anAutomaticRecoveryWaitsForTheGrantThenIsAllowed() {
        Authorisation a = Authorisation.authorise(request("recovery", AUTO_DRAIN, NONE, false));
        Authorisation.AwaitingDrain w = assertInstanceOf(Authorisation.AwaitingDrain.class, a);
        assertTrue(w.why().contains("npu.openfuyao.com/recovery-reboot-granted=" + BOOT), w.why());
        assertEquals(new Authorisation.Allowed("autoRecover=true", false),
                Authorisation.authorise(request("recovery", AUTO_DRAIN, NONE, true)));
    }

    @Test
    void anApprovalIsNotConsumedBeforeTheGrant() {
        assertInstanceOf(Authorisation.AwaitingDrain.class,
                Authorisation.authorise(request("recovery", MANUAL_DRAIN, APPROVED, false)));
        assertEquals(new Authorisation.Consume("valid approval", false),
                Authorisation.authorise(request("recovery", MANUAL_DRAIN, APPROVED, true)));
    }

    @Test
    void anUnknownPolicyRebootsOnlyOnAPersonsApprovalWithoutAGrant() {
        NodePolicy unknown = NodePolicy.unknown("spec.driver.recoveryPolicy.window must be a duration");
        assertFalse(unknown.recoveryNeedsGrant(), "the control plane drains nothing while the resource is malformed");
        assertEquals(new Authorisation.Consume("valid approval", false),
                Authorisation.authorise(request("recovery", unknown, APPROVED, false)));
        assertInstanceOf(Authorisation.Held.class, Authorisation.authorise(request("recovery", unknown, NONE, false)));
    }

    @Test
    void withTheDrainDisabledARecoveryRebootsAsWithoutIt() {
        assertEquals(new Authorisation.Allowed("autoRecover=true", false),
                Authorisation.authorise(request("recovery", AUTO_NO_DRAIN, NONE, false)));
        assertFalse(new NodePolicy(true, null, false, true, null, null, null, "1").recoveryNeedsGrant(),
                "the constructor without the drain flag is a policy without the recovery drain");
    }

    @Test
    void anUpgradeRebootNeedsNoRecoveryGrant() {
        NodePolicy autoUpgrade = new NodePolicy(true, "25.5.0", true, false, null, null, null, "7", true);
        assertEquals(new Authorisation.Allowed("autoUpgrade=true", false),
                Authorisation.authorise(request("upgrade", autoUpgrade, NONE, false)));
        assertNull(Authorisation.recheck(marker("upgrade"), "upgrade", "autoUpgrade=true", autoUpgrade, () -> false));
    }

    @Test
    void theRecheckReadsTheGrantAgainAndRefusesWithoutIt() {
        AtomicInteger reads = new AtomicInteger();
        assertNull(Authorisation.recheck(marker("recovery"), "recovery", "autoRecover=true", AUTO_DRAIN, () -> {
            reads.incrementAndGet();
            return true;
        }));
        assertEquals(1, reads.get());
        String refused = Authorisation.recheck(marker("recovery"), "recovery", "autoRecover=true", AUTO_DRAIN,
                () -> false);
        assertTrue(refused.contains("recovery-reboot-granted"), refused);
        assertNull(Authorisation.recheck(marker("recovery"), "recovery", "autoRecover=true", AUTO_NO_DRAIN, () -> {
            throw new AssertionError("no grant is read with the drain disabled");
        }));
    }
}
