package io.npulifecycle.simulator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.List;

import javax.management.MBeanOperationInfo;
import javax.management.MBeanParameterInfo;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.DescribedMBean;
import io.npulifecycle.api.management.Description;

class SimulatorMXBeanDescriptionTest {

    /** What a console shows for Simulator.wedge: named, described parameters, not p0, p1. */
    @Test
    void everyAttributeOperationAndParameterIsDescribedAndNamed() {
        List<String> missing = new ArrayList<>();
        if (SimulatorMXBean.class.getAnnotation(Description.class) == null) {
            missing.add("SimulatorMXBean");
        }
        for (Method m : SimulatorMXBean.class.getMethods()) {
            if (m.getAnnotation(Description.class) == null) {
                missing.add(m.getName());
            }
            for (Parameter p : m.getParameters()) {
                if (p.getAnnotation(Description.class) == null || !p.isNamePresent()) {
                    missing.add(m.getName() + "(" + p.getName() + ")");
                }
            }
        }
        assertEquals(List.of(), missing);

        SimulatorMXBean stub = (SimulatorMXBean) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {SimulatorMXBean.class}, (p, m, a) -> null);
        MBeanOperationInfo wedge = null;
        for (MBeanOperationInfo op : new DescribedMBean(stub, SimulatorMXBean.class).getMBeanInfo().getOperations()) {
            if (op.getName().equals("wedge")) {
                wedge = op;
            }
        }
        List<String> params = new ArrayList<>();
        for (MBeanParameterInfo p : wedge.getSignature()) {
            params.add(p.getName() + ": " + p.getDescription());
        }
        assertEquals(List.of("npu: NPU id, as npu-smi numbers it (0 to the emulated node's npus - 1).",
                "chip: Chip id on that NPU, as npu-smi numbers it (0 for a single-chip NPU)."), params);
    }
}
