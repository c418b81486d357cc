package io.npulifecycle.upgrade.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanOperationInfo;
import javax.management.StandardMBean;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;
import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;

/**
 * The MBean {@code io.npulifecycle:type=UpgradeOrchestrator} as JMX (and so Jolokia) sees it: the attribute and
 * operation names that clients and docs/architecture.md name, and an empty view while no controller runs.
 */
class UpgradeOrchestratorMBeanTest {

    @Test
    void theNamesClientsUseAndAnEmptyViewWithoutAController() throws Exception {
        StandardMBean m = new StandardMBean(new UpgradeOrchestratorMBean(() -> null, ControllerConfig::defaults,
                () -> "replica-1"), UpgradeOrchestratorMXBean.class, true);
        MBeanInfo info = m.getMBeanInfo();
        assertEquals(new TreeSet<>(Set.of("TargetVersion", "CountsPerState", "NodeStates", "AwaitingApproval",
                "SlotHolders", "DrainingNodes", "BlockedNodes", "WaitingForWindow", "RecoveringNodes", "FailedNodes",
                "Conditions", "Leader", "Identity", "Paused", "WriteCounts")),
                Arrays.stream(info.getAttributes()).map(MBeanAttributeInfo::getName)
                        .collect(Collectors.toCollection(TreeSet::new)));
        assertEquals(new TreeSet<>(Set.of("pause", "resume")), Arrays.stream(info.getOperations())
                .map(MBeanOperationInfo::getName).collect(Collectors.toCollection(TreeSet::new)));
        assertEquals("", m.getAttribute("TargetVersion"));
        assertEquals("replica-1", m.getAttribute("Identity"));
        assertEquals(false, m.getAttribute("Leader"));
        assertEquals(false, m.getAttribute("Paused"));
        assertEquals(0, ((String[]) m.getAttribute("FailedNodes")).length);
    }
}
