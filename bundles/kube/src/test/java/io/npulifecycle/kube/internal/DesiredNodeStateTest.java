package io.npulifecycle.kube.internal;

import static io.npulifecycle.kube.internal.MockNode.NODE_PATH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.npulifecycle.api.node.NodeKeys;

/** The node agent's desired labels and annotations: checked when set, reconciled onto the Node only when it differs. */
class DesiredNodeStateTest {

    @RegisterExtension
    final MockNode mock = new MockNode();
    final NodeApi api = mock.api();
    final DesiredNodeState desired = new DesiredNodeState();



    @Test
    void keysAndValuesAreCheckedWhenSet() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> desired.setLabel("kubernetes.io/hostname", "x"));
        assertTrue(e.getMessage().contains("'kubernetes.io/hostname' is not a key the node agent writes"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> desired.setAnnotation(NodeKeys.APPROVE_REBOOT, "true"),
                "the person's approval is never the node agent's to write");
        assertThrows(IllegalArgumentException.class, () -> desired.setLabel(NodeKeys.DRIVER_UPGRADE_STATE, "x"),
                "the control plane's key");
        for (String bad : new String[] {"-x", "x-", "a b", "x".repeat(64), "ü"}) {
            e = assertThrows(IllegalArgumentException.class, () -> desired.setLabel(NodeKeys.DRIVER_VERSION, bad), bad);
            assertTrue(e.getMessage().contains(NodeKeys.DRIVER_VERSION) && e.getMessage().contains("'" + bad + "'"),
                    e.getMessage());
        }
        e = assertThrows(IllegalArgumentException.class,
                () -> desired.setAnnotation(NodeKeys.DRIVER_VALIDATED, "two\nlines"));
        assertTrue(e.getMessage().contains(NodeKeys.DRIVER_VALIDATED), e.getMessage());
    }

    @Test
    void settingReportsWhetherTheDesiredStateChanged() {
        assertTrue(desired.setLabel(NodeKeys.DRIVER_VERSION, "25.5.0"));
        assertFalse(desired.setLabel(NodeKeys.DRIVER_VERSION, "25.5.0"));
        assertTrue(desired.setLabel(NodeKeys.DRIVER_VERSION, null));
        assertFalse(desired.setLabel(NodeKeys.DRIVER_VERSION, null));
        assertTrue(desired.setAnnotation(NodeKeys.DRIVER_VALIDATED, "25.5.0@boot-a"));
        assertFalse(desired.setAnnotation(NodeKeys.DRIVER_VALIDATED, "25.5.0@boot-a"));
    }

    @Test
    void theDesiredStateIsWrittenAndOthersKeysAreKept() {
        mock.annotate("example.com/person", "kept");
        desired.setLabel(NodeKeys.DRIVER_VERSION, "25.5.0");
        desired.setAnnotation(NodeKeys.DRIVER_VALIDATED, "25.5.0@boot-a");
        mock.informerDelivers(api);

        desired.reconcile(api);

        assertEquals("25.5.0", mock.label(NodeKeys.DRIVER_VERSION));
        assertEquals("25.5.0@boot-a", mock.annotation(NodeKeys.DRIVER_VALIDATED));
        assertEquals("kept", mock.annotation("example.com/person"));
        assertEquals("true", mock.label(NodeKeys.NPU_PRESENT), "labels the node agent does not manage are kept");
        assertTrue(desired.satisfiedBy(api.cached()), "the write is remembered");

        desired.reconcile(api);
        assertEquals(1, mock.requests("PUT", NODE_PATH), "nothing to write the second time");
    }

    @Test
    void aKeyDesiredAbsentIsRemoved() {
        desired.setLabel(NodeKeys.REBOOT_REQUIRED, "true");
        mock.informerDelivers(api);
        desired.reconcile(api);
        assertEquals("true", mock.label(NodeKeys.REBOOT_REQUIRED));

        desired.setLabel(NodeKeys.REBOOT_REQUIRED, null);
        desired.reconcile(api);

        assertNull(mock.label(NodeKeys.REBOOT_REQUIRED));
    }

    @Test
    void nothingIsWrittenBeforeTheNodeIsSeen() {
        desired.setLabel(NodeKeys.DRIVER_VERSION, "25.5.0");

        desired.reconcile(api);

        assertEquals(0, mock.requests("GET", NODE_PATH));
        assertFalse(desired.satisfiedBy(api.cached()));
    }

    @Test
    void aStaleCopyIsRefreshedWithoutAWrite() {
        desired.setLabel(NodeKeys.DRIVER_VERSION, "25.5.0");
        mock.informerDelivers(api);
        desired.reconcile(api);
        api.remember(new io.fabric8.kubernetes.api.model.NodeBuilder(mock.node()).editMetadata()
                .removeFromLabels(NodeKeys.DRIVER_VERSION).endMetadata().build()); // an older event arrives late

        desired.reconcile(api);

        assertEquals(1, mock.requests("PUT", NODE_PATH));
        assertTrue(desired.satisfiedBy(api.cached()), "the fresh read replaced the stale copy");
    }

    @Test
    void aReleasedAnnotationIsLeftAsItIs() {
        desired.manageAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, Optional.of("boot-a"));
        Optional<String> previous = desired.releaseAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID);
        assertEquals(Optional.of("boot-a"), previous);
        mock.annotate(NodeKeys.REBOOTING_FROM_BOOT_ID, "boot-other");
        mock.informerDelivers(api);

        assertFalse(desired.differs(api.cached()));
        desired.manageAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, previous);
        desired.reconcile(api);

        assertEquals("boot-a", mock.annotation(NodeKeys.REBOOTING_FROM_BOOT_ID));
        assertNull(desired.releaseAnnotation("npu.openfuyao.com/never-managed"));
    }
}
