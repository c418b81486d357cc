package io.npulifecycle.rebooter.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.npulifecycle.api.markers.Marker;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.NodePolicy;

/** The first reboot guard (what authorises a request) and the second (the re-check), from facts alone. */
class AuthorisationTest {

    private static final String BOOT = "boot-1";
    private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    private static final String LIMIT = "3 recovery reboots in the last PT24H (limit 3)";

    private static final NodePolicy MANUAL = policy(false, false);
    private static final NodePolicy AUTO_RECOVER = policy(true, false);
    private static final NodePolicy AUTO_UPGRADE = policy(false, true);
    private static final NodePolicy UNKNOWN = NodePolicy.unknown("no NpuNodePolicy matches the node");

    private static final ApprovalState NONE = new ApprovalState(true, false, null, "1");
    private static final ApprovalState APPROVED = new ApprovalState(true, true, "true", "1");
    private static final ApprovalState NOT_TRUE = new ApprovalState(true, true, "yes", "1");
    private static final ApprovalState NOT_READ = new ApprovalState(false, false, null, null);

    private static final RebooterState.Step THIS_BOOT = new RebooterState.Step(BOOT, "recovery", T0, "approval");
    private static final RebooterState.Step OTHER_BOOT = new RebooterState.Step("boot-0", "recovery", T0, "approval");

    private static final Authorisation WAITING_RECOVERY = new Authorisation.Held("reason=recovery: waiting for "
            + "npu.openfuyao.com/approve-reboot=true (autoRecover is false)", null);
    private static final Authorisation CONSUME_APPROVAL = new Authorisation.Consume("valid approval", false);

    private static NodePolicy policy(boolean autoRecover, boolean autoUpgrade) {
        return new NodePolicy(true, "25.5.0", autoUpgrade, autoRecover, null, null, null, "7");
    }

    /** Facts of one request; every field but the one a row changes is "nothing special". */
    private record Facts(String reason, RebooterState.Step consumed, RebooterState.Step intent, NodePolicy policy,
            ApprovalState approval, boolean armed, String limit) {

        static Facts recovery() {
            return new Facts("recovery", null, null, MANUAL, NONE, true, null);
        }

        static Facts upgrade() {
            return new Facts("upgrade", null, null, MANUAL, NONE, true, null);
        }

        Facts consumed(RebooterState.Step s) {
            return new Facts(reason, s, intent, policy, approval, armed, limit);
        }

        Facts intent(RebooterState.Step s) {
            return new Facts(reason, consumed, s, policy, approval, armed, limit);
        }

        Facts policy(NodePolicy p) {
            return new Facts(reason, consumed, intent, p, approval, armed, limit);
        }

        Facts approval(ApprovalState a) {
            return new Facts(reason, consumed, intent, policy, a, armed, limit);
        }

        Facts unarmed() {
            return new Facts(reason, consumed, intent, policy, approval, false, limit);
        }

        Facts limitReached() {
            return new Facts(reason, consumed, intent, policy, approval, armed, LIMIT);
        }

        Authorisation authorise() {
            return Authorisation.authorise(new Authorisation.Request(BOOT, reason, "0:0,4:0", consumed, intent, policy,
                    approval, armed, "dryRun=true (PID io.npulifecycle.rebooter)", limit));
        }
    }

    static Stream<Arguments> outcomes() {
        return Stream.of(
                Arguments.of("a consumption recorded for this boot stands, whatever else",
                        Facts.recovery().consumed(THIS_BOOT).limitReached().unarmed(),
                        new Authorisation.Allowed("approval consumed at " + T0 + " (before a runtime restart)", true)),
                Arguments.of("an interrupted consumption of this boot is finished, even unarmed",
                        Facts.upgrade().intent(THIS_BOOT).unarmed(),
                        new Authorisation.Consume("finishing a consumption interrupted by a restart", true)),
                Arguments.of("records of another boot count for nothing",
                        Facts.recovery().consumed(OTHER_BOOT).intent(OTHER_BOOT),
                        WAITING_RECOVERY),
                Arguments.of("autoRecover allows a recovery reboot",
                        Facts.recovery().policy(AUTO_RECOVER),
                        new Authorisation.Allowed("autoRecover=true", false)),
                Arguments.of("autoUpgrade allows an upgrade reboot",
                        Facts.upgrade().policy(AUTO_UPGRADE),
                        new Authorisation.Allowed("autoUpgrade=true", false)),
                Arguments.of("autoUpgrade does not allow a recovery reboot",
                        Facts.recovery().policy(AUTO_UPGRADE),
                        WAITING_RECOVERY),
                Arguments.of("loop protection refuses an automatic recovery past the limit",
                        Facts.recovery().policy(AUTO_RECOVER).limitReached(),
                        new Authorisation.Refused("recovery reboot limit reached: " + LIMIT + "; chips 0:0,4:0 still "
                                + "wedged: a person is needed (approve a reboot with "
                                + "npu.openfuyao.com/approve-reboot=true)")),
                Arguments.of("an approval overrides loop protection",
                        Facts.recovery().policy(AUTO_RECOVER).limitReached().approval(APPROVED),
                        CONSUME_APPROVAL),
                Arguments.of("loop protection does not apply to an upgrade",
                        Facts.upgrade().policy(AUTO_UPGRADE).limitReached(),
                        new Authorisation.Allowed("autoUpgrade=true", false)),
                Arguments.of("loop protection does not refuse what waits for a person anyway",
                        Facts.recovery().limitReached(),
                        WAITING_RECOVERY),
                Arguments.of("a valid approval is consumed",
                        Facts.upgrade().approval(APPROVED),
                        CONSUME_APPROVAL),
                Arguments.of("an approval wins over the policy: it is consumed",
                        Facts.recovery().policy(AUTO_RECOVER).approval(APPROVED),
                        CONSUME_APPROVAL),
                Arguments.of("a valid approval is not consumed when nothing can reboot",
                        Facts.upgrade().approval(APPROVED).unarmed(),
                        new Authorisation.DryRun("approval (not consumed: dryRun=true (PID io.npulifecycle.rebooter))")),
                Arguments.of("a policy still allows a dry run",
                        Facts.recovery().policy(AUTO_RECOVER).unarmed(),
                        new Authorisation.Allowed("autoRecover=true", false)),
                Arguments.of("a value other than true is no approval",
                        Facts.upgrade().approval(NOT_TRUE),
                        new Authorisation.Held("reason=upgrade: annotation npu.openfuyao.com/approve-reboot has the value"
                                + " 'yes', which is not an approval (only 'true' is)", "yes")),
                Arguments.of("an unknown policy authorises nothing",
                        Facts.upgrade().policy(UNKNOWN),
                        new Authorisation.Held("reason=upgrade: waiting for npu.openfuyao.com/approve-reboot=true "
                                + "(autoUpgrade is unknown: no NpuNodePolicy matches the node)", null)),
                Arguments.of("a Node not read yet is said so",
                        Facts.recovery().approval(NOT_READ),
                        new Authorisation.Held("reason=recovery: waiting for npu.openfuyao.com/approve-reboot=true "
                                + "(autoRecover is false); the Node has not been read yet", null)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outcomes")
    void authorise(String name, Facts facts, Authorisation expected) {
        assertEquals(expected, facts.authorise(), name);
    }

    @Test
    void onlyADecisionTakenAfreshClearsTheRecoveryBlockedLabel() {
        assertFalse(new Authorisation.Allowed("x", true).decidedAfresh());
        assertFalse(new Authorisation.Consume("x", true).decidedAfresh());
        assertFalse(new Authorisation.Refused("x").decidedAfresh(), "a refusal sets it");
        assertTrue(new Authorisation.Allowed("autoRecover=true", false).decidedAfresh());
        assertTrue(new Authorisation.Consume("valid approval", false).decidedAfresh());
        assertTrue(new Authorisation.DryRun("x").decidedAfresh());
        assertTrue(new Authorisation.Held("x", null).decidedAfresh());
    }

    private static MarkerRead marker(String reason) {
        Marker m = new Marker("reboot-required", BOOT, T0, "health-watch", Map.of("reason", reason));
        return new MarkerRead("reboot-required", Path.of("/run/npu-operator/reboot-required"), MarkerStatus.PRESENT, m,
                null);
    }

    private static final MarkerRead GONE = new MarkerRead("reboot-required",
            Path.of("/run/npu-operator/reboot-required"), MarkerStatus.ABSENT, null, null);

    @Test
    void theRecheckRefusesAGoneOrChangedRequest() {
        assertEquals("the reboot-required marker is gone or changed (ABSENT)",
                Authorisation.recheck(GONE, "recovery", "approval (CONSUMED)", AUTO_RECOVER));
        assertEquals("the reboot-required marker is gone or changed (PRESENT)",
                Authorisation.recheck(marker("upgrade"), "recovery", "autoRecover=true", AUTO_RECOVER));
    }

    @Test
    void theRecheckRefusesAnAutomaticRebootThePolicyStoppedAllowing() {
        assertNull(Authorisation.recheck(marker("recovery"), "recovery", "autoRecover=true", AUTO_RECOVER));
        assertEquals("the policy no longer allows it (auto=false)",
                Authorisation.recheck(marker("recovery"), "recovery", "autoRecover=true", AUTO_UPGRADE));
        assertEquals("the policy no longer allows it (no NpuNodePolicy matches the node)",
                Authorisation.recheck(marker("upgrade"), "upgrade", "autoUpgrade=true", UNKNOWN));
        assertNull(Authorisation.recheck(marker("upgrade"), "upgrade", "approval (CONSUMED)", MANUAL),
                "an approval does not depend on the policy");
    }

    @Test
    void annotationValuesAreQuotedEscapedAndCut() {
        assertEquals("(none)", Authorisation.quoteValue(null));
        assertEquals("'yes'", Authorisation.quoteValue("yes"));
        assertEquals("'true\\n\\u0000'", Authorisation.quoteValue("true\n\0"));
        assertEquals("'" + "x".repeat(64) + "...' (10240 characters)", Authorisation.quoteValue("x".repeat(10240)));
    }

    @Test
    void theGraceOfAPredecessorsCallStartsWhenItIsFirstSeen() {
        CallWatch w = new CallWatch();
        RebooterState.Step called = new RebooterState.Step(BOOT, "upgrade", T0, "autoUpgrade=true");
        long seen = Duration.ofHours(5).toNanos();
        assertTrue(w.waiting(called, BOOT, seen).contains("by the previous node agent"));
        assertTrue(w.waiting(called, BOOT, seen + CallWatch.GRACE.toNanos() - 1) != null, "still within the grace");
        assertNull(w.waiting(called, BOOT, seen + CallWatch.GRACE.toNanos()), "taken as not done");
        w.calling();
        assertTrue(w.waiting(called, BOOT, Long.MAX_VALUE).contains("never called twice"), "its own call: for good");
    }
}
