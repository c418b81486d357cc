package io.npulifecycle.kube.internal;

import static io.npulifecycle.api.node.NodeKeys.APPROVE_REBOOT;
import static io.npulifecycle.api.node.NodeKeys.REBOOTING_FROM_BOOT_ID;
import static io.npulifecycle.kube.internal.MockNode.NODE;
import static io.npulifecycle.kube.internal.MockNode.NODE_PATH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.ConsumeResult;
import io.npulifecycle.api.node.NodeKeys;

/**
 * The approval protocol alone against the mock API server: consumed exactly once, put back only with the proof of a
 * consumption for the same boot, 409s retried within a bound, anything but {@code true} never an approval.
 */
class NodeApprovalsTest {

    @RegisterExtension
    final MockNode mock = new MockNode();
    final NodeApi api = mock.api();
    final DesiredNodeState desired = new DesiredNodeState();
    final NodeApprovals approvals = new NodeApprovals(api, desired);



    @Test
    void anApprovalIsConsumedExactlyOnce() {
        mock.annotate(APPROVE_REBOOT, "true");

        assertEquals(ConsumeResult.CONSUMED, approvals.consumeApproval("boot-a"));
        assertNull(mock.annotation(APPROVE_REBOOT), "removed");
        assertEquals("boot-a", mock.annotation(REBOOTING_FROM_BOOT_ID), "in the same write as the removal");
        assertEquals(1, mock.requests("PUT", NODE_PATH), "one write");

        assertEquals(ConsumeResult.ALREADY_CONSUMED, approvals.consumeApproval("boot-a"), "after a runtime restart");
        assertEquals(ConsumeResult.NOT_APPROVED, approvals.consumeApproval("boot-b"),
                "a consumption for another boot authorises nothing");
        assertEquals(1, mock.requests("PUT", NODE_PATH), "asking again writes nothing");
    }

    @Test
    void theMarkOfTheConsumptionStaysOnTheNodeUntilTheReboot() {
        mock.annotate(APPROVE_REBOOT, "true");
        approvals.consumeApproval("boot-a");
        mock.annotate(REBOOTING_FROM_BOOT_ID, null);
        mock.informerDelivers(api);

        desired.reconcile(api);

        assertEquals("boot-a", mock.annotation(REBOOTING_FROM_BOOT_ID), "the desired state asserts it again");
    }

    /**
     * A node that gave its rollout slot to another node (label {@code driver-upgrade-state=reboot-deferred}) keeps
     * its approval unused, decided on the Node read right before the write (the agent's cache has not seen the label
     * here); the same holds while the control plane cordons and drains it ({@code cordon-required},
     * {@code drain-required}: a staged node given its slot back would otherwise reboot before its pods are evicted);
     * once the node holds a slot past its drain the same approval is consumed.
     */
    @ParameterizedTest
    @ValueSource(strings = {"reboot-deferred", "cordon-required", "drain-required"})
    void anApprovalIsNotUsedWhileTheNodeGaveItsSlotUpOrIsBeingDrained(String state) {
        setUpgradeState(state);
        mock.annotate(APPROVE_REBOOT, "true");
        mock.cluster.requestLog().clearRequests();

        assertEquals(ConsumeResult.NOT_APPROVED, approvals.consumeApproval("boot-a"));
        assertEquals("true", mock.annotation(APPROVE_REBOOT), "kept for later");
        assertNull(mock.annotation(REBOOTING_FROM_BOOT_ID));
        assertEquals(0, mock.requests("PUT", NODE_PATH), "nothing written");

        setUpgradeState("reboot-required");
        assertEquals(ConsumeResult.CONSUMED, approvals.consumeApproval("boot-a"));
        assertNull(mock.annotation(APPROVE_REBOOT));
    }

    /**
     * The node agent's check right before an upgrade reboot, from the Node as the informer last delivered it: none
     * before the Node was seen (or once it is deleted), none unless the control plane granted it
     * ({@code pod-restart-required}, {@code reboot-required}, {@code rebooting}: a slot, the drain done), none at or
     * after the close of the maintenance window the control plane wrote ({@code upgrade-reboot-before}), none on a
     * value that is not an instant.
     */
    @Test
    void anUpgradeRebootIsRefusedOutsideTheMaintenanceWindowAndWhileTheControlPlaneHoldsTheNode() {
        java.time.Instant now = java.time.Instant.parse("2026-12-01T04:59:59Z");
        String unseen = approvals.upgradeRebootRefusal(now);
        assertTrue(unseen != null && unseen.contains("is not known"), unseen);
        mock.informerDelivers(api);
        String none = approvals.upgradeRebootRefusal(now);
        assertTrue(none != null && none.contains("driver-upgrade-state is absent: the node holds no rollout slot"),
                "a driver staged outside the rollout (a Node registered again, a pod recreated): " + none);
        for (String held : List.of("upgrade-required", "cordon-required", "drain-required", "reboot-deferred",
                "upgrade-failed", "validation-required", "garbage")) {
            setUpgradeState(held);
            mock.informerDelivers(api);
            String why = approvals.upgradeRebootRefusal(now);
            assertTrue(why != null && why.contains("driver-upgrade-state=" + held), held + ": " + why);
        }
        for (String granted : List.of("pod-restart-required", "rebooting")) {
            setUpgradeState(granted);
            mock.informerDelivers(api);
            assertNull(approvals.upgradeRebootRefusal(now), granted);
        }
        setUpgradeState("reboot-required");
        mock.informerDelivers(api);
        assertNull(approvals.upgradeRebootRefusal(now), "no window, granted");
        mock.annotate(NodeKeys.UPGRADE_REBOOT_BEFORE, "2026-12-01T05:00:00Z");
        mock.informerDelivers(api);
        assertNull(approvals.upgradeRebootRefusal(now), "inside the window");
        String late = approvals.upgradeRebootRefusal(now.plusSeconds(1));
        assertTrue(late != null && late.startsWith("outside the maintenance window"), late);
        mock.annotate(NodeKeys.UPGRADE_REBOOT_BEFORE, "tomorrow");
        mock.informerDelivers(api);
        assertTrue(approvals.upgradeRebootRefusal(now).contains("is not an RFC 3339 instant"));
        setUpgradeState("reboot-deferred");
        mock.annotate(NodeKeys.UPGRADE_REBOOT_BEFORE, null);
        mock.informerDelivers(api);
        assertTrue(approvals.upgradeRebootRefusal(now).contains("driver-upgrade-state=reboot-deferred"));
    }

    private void setUpgradeState(String value) {
        mock.fixture.admin().nodes().withName(NODE).edit(n -> {
            n.getMetadata().getLabels().put(NodeKeys.DRIVER_UPGRADE_STATE, value);
            return n;
        });
    }

    @Test
    void aConsumptionOfAnEarlierRuntimeInTheSameBootIsRecognisedFromTheNode() {
        mock.annotate(APPROVE_REBOOT, "true");
        approvals.consumeApproval("boot-a");
        NodeApprovals restarted = new NodeApprovals(mock.api(), new DesiredNodeState());

        assertEquals(ConsumeResult.ALREADY_CONSUMED, restarted.consumeApproval("boot-a"));
    }

    @Test
    void anApprovalGivenAfterThePreviousBootsRebootIsConsumedForThisBoot() {
        mock.annotate(REBOOTING_FROM_BOOT_ID, "boot-old");
        assertEquals(ConsumeResult.NOT_APPROVED, approvals.consumeApproval("boot-new"), "the old mark alone");

        mock.annotate(APPROVE_REBOOT, "true");
        assertEquals(ConsumeResult.CONSUMED, approvals.consumeApproval("boot-new"));
        assertEquals("boot-new", mock.annotation(REBOOTING_FROM_BOOT_ID));
        assertNull(mock.annotation(APPROVE_REBOOT));
    }

    @Test
    void theMarkOfThisBootNextToAnApprovalIsNotAConsumption() {
        mock.annotate(REBOOTING_FROM_BOOT_ID, "boot-a");
        mock.annotate(APPROVE_REBOOT, "true");

        assertEquals(ConsumeResult.CONSUMED, approvals.consumeApproval("boot-a"));
        assertNull(mock.annotation(APPROVE_REBOOT));
    }

    @Test
    void anUnusedApprovalIsPutBack() {
        mock.annotate(APPROVE_REBOOT, "true");
        approvals.consumeApproval("boot-a");

        assertTrue(approvals.restoreApproval("boot-a"));

        assertEquals("true", mock.annotation(APPROVE_REBOOT));
        assertNull(mock.annotation(REBOOTING_FROM_BOOT_ID));
        mock.informerDelivers(api);
        assertFalse(desired.differs(api.cached()), "the mark is no longer asserted");
        assertEquals(ConsumeResult.CONSUMED, approvals.consumeApproval("boot-a"), "usable again");
    }

    @Test
    void withoutTheProofOfAConsumptionNothingIsPutBack() {
        assertTrue(approvals.restoreApproval("boot-a"), "nothing to put back is settled");
        assertNull(mock.annotation(APPROVE_REBOOT));
        assertEquals(0, mock.requests("PUT", NODE_PATH));

        mock.annotate(REBOOTING_FROM_BOOT_ID, "boot-old");
        assertTrue(approvals.restoreApproval("boot-new"));
        assertNull(mock.annotation(APPROVE_REBOOT), "a consumption for another boot is not this one's");

        mock.annotate(APPROVE_REBOOT, "true");
        approvals.consumeApproval("boot-a");
        mock.annotate(REBOOTING_FROM_BOOT_ID, null); // the person cleared the consumption
        assertTrue(approvals.restoreApproval("boot-a"));
        assertNull(mock.annotation(APPROVE_REBOOT), "an approval the person withdrew is not put back");
    }

    @Test
    void anyValueButTrueIsInvalidAndNeverConsumed() {
        for (String value : new String[] {"yes", "TRUE", "", " true"}) {
            mock.annotate(APPROVE_REBOOT, value);
            mock.informerDelivers(api);

            ApprovalState a = approvals.approval();
            assertTrue(a.invalid(), value);
            assertFalse(a.approved(), value);
            assertEquals(value, a.value(), "the value is shown as it is, for the ApprovalInvalid Event");
            assertEquals(ConsumeResult.NOT_APPROVED, approvals.consumeApproval("boot-a"), value);
            assertEquals(value, mock.annotation(APPROVE_REBOOT), "left as the person wrote it");
        }
        assertEquals(0, mock.requests("PUT", NODE_PATH));
    }

    @Test
    void theApprovalIsUnknownUntilTheNodeIsSeen() {
        assertFalse(approvals.approval().known());
        mock.annotate(APPROVE_REBOOT, "true");
        mock.informerDelivers(api);
        ApprovalState a = approvals.approval();
        assertTrue(a.approved());
        assertEquals(mock.node().getMetadata().getResourceVersion(), a.resourceVersion());
    }

    @Test
    void aConcurrentEditIsRetriedAndKept() {
        mock.annotate(APPROVE_REBOOT, "true");
        mock.annotate("example.com/person", "edited");
        mock.fail("PUT", NODE_PATH, 409, 1); // someone wrote between our read and our write
        mock.cluster.requestLog().clearRequests();

        assertEquals(ConsumeResult.CONSUMED, approvals.consumeApproval("boot-a"));

        assertEquals(2, mock.requests("PUT", NODE_PATH));
        assertEquals(2, mock.requests("GET", NODE_PATH), "read again after the 409");
        assertEquals("edited", mock.annotation("example.com/person"));
        assertEquals("boot-a", mock.annotation(REBOOTING_FROM_BOOT_ID));
    }

    @Test
    void conflictsPastTheBudgetChangeNothing() {
        mock.annotate(APPROVE_REBOOT, "true");
        mock.fail("PUT", NODE_PATH, 409, -1);

        assertEquals(ConsumeResult.CONFLICT, approvals.consumeApproval("boot-a"));

        assertEquals(NodeApi.ATTEMPTS, mock.requests("PUT", NODE_PATH));
        assertEquals("true", mock.annotation(APPROVE_REBOOT));
        mock.cluster.faults().clearFaults();
        mock.informerDelivers(api);
        desired.reconcile(api);
        assertNull(mock.annotation(REBOOTING_FROM_BOOT_ID), "the failed consumption left no mark to assert");
    }

    @Test
    void anUnreachableApiServerUsesNoApproval() {
        mock.annotate(APPROVE_REBOOT, "true");
        mock.fail("GET", NODE_PATH, 503, 1);
        assertEquals(ConsumeResult.UNREACHABLE, approvals.consumeApproval("boot-a"));
        assertFalse(mock.health.ok());
        assertTrue(mock.health.lastError().contains(NODE), mock.health.lastError());

        mock.fail("PUT", NODE_PATH, 500, 1);
        assertEquals(ConsumeResult.UNREACHABLE, approvals.consumeApproval("boot-a"));
        assertEquals("true", mock.annotation(APPROVE_REBOOT), "approval not used");
        assertNull(mock.annotation(REBOOTING_FROM_BOOT_ID));

        approvals.consumeApproval("boot-a");
        mock.fail("PUT", NODE_PATH, 500, 1);
        assertFalse(approvals.restoreApproval("boot-a"), "not settled: call again later");
        assertEquals("boot-a", mock.annotation(REBOOTING_FROM_BOOT_ID), "the proof is kept for the next call");
        assertTrue(approvals.restoreApproval("boot-a"));
        assertEquals("true", mock.annotation(APPROVE_REBOOT));
    }

    @Test
    void aMissingNodeHasNoApproval() {
        NodeApprovals other = new NodeApprovals(new NodeApi(mock.agent, "no-such-node", mock.time, mock.health),
                new DesiredNodeState());
        assertEquals(ConsumeResult.NOT_APPROVED, other.consumeApproval("boot-a"));
        assertFalse(other.restoreApproval("boot-a"));
    }

    @Test
    void onlyAChangeOfTheApprovalIsAnnounced() {
        Node plain = new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build();
        Node approved = new NodeBuilder(plain).editMetadata().addToAnnotations(APPROVE_REBOOT, "true").endMetadata()
                .build();
        Node relabelled = new NodeBuilder(approved).editMetadata().addToLabels("x", "y").endMetadata().build();
        Node empty = new NodeBuilder(plain).editMetadata().addToAnnotations(APPROVE_REBOOT, "").endMetadata().build();

        assertTrue(NodeApprovals.approvalChanged(null, plain), "the first sight");
        assertTrue(NodeApprovals.approvalChanged(plain, approved));
        assertFalse(NodeApprovals.approvalChanged(approved, relabelled));
        assertTrue(NodeApprovals.approvalChanged(approved, plain));
        assertTrue(NodeApprovals.approvalChanged(plain, empty), "an empty value is present");
    }
}
