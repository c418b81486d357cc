package io.npulifecycle.api.management;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanParameterInfo;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.kube.KubernetesClientMXBean;
import io.npulifecycle.api.markers.MarkersMXBean;
import io.npulifecycle.api.node.NodeSyncMXBean;
import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.probe.HealthWatchMXBean;
import io.npulifecycle.api.reboot.DriverMXBean;
import io.npulifecycle.api.reboot.RebooterMXBean;
import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;

class DescribedMBeanTest {

    /** An MXBean for the test, with an overload told apart by its parameter types. */
    @Description("A test gauge.")
    public interface GaugeMXBean {
        @Description("The level, in bytes.")
        long getLevel();

        @Description("Sets the level.")
        void setLevel(long level);

        @Description("Whether the gauge is on.")
        boolean isOn();

        @Description("Adds bytes.")
        long add(@Description("How many bytes to add.") long bytes);

        @Description("Adds a named amount.")
        long add(@Description("The amount's name.") String name, @Description("The amount, in bytes.") long bytes);

        @Description("Adds a number of units.")
        long add(@Description("The unit.") int unit, @Description("How many units.") long count);

        long undescribed(int x);
    }

    static final class Gauge implements GaugeMXBean {
        long level;

        @Override public long getLevel() {
            return level;
        }

        @Override public void setLevel(long level) {
            this.level = level;
        }

        @Override public boolean isOn() {
            return true;
        }

        @Override public long add(long bytes) {
            return level += bytes;
        }

        @Override public long add(String name, long bytes) {
            return level += bytes;
        }

        @Override public long add(int unit, long count) {
            return level += unit * count;
        }

        @Override public long undescribed(int x) {
            return x;
        }
    }

    @Test
    void theMBeanInfoCarriesTheDescriptionsAndTheParameterNamesOfTheInterface() {
        MBeanInfo info = new DescribedMBean(new Gauge(), GaugeMXBean.class).getMBeanInfo();
        assertEquals("A test gauge.", info.getDescription());
        Map<String, String> attributes = new TreeMap<>();
        for (MBeanAttributeInfo a : info.getAttributes()) {
            attributes.put(a.getName(), a.getDescription());
        }
        assertEquals(Map.of("Level", "The level, in bytes.", "On", "Whether the gauge is on."), attributes);

        List<String> ops = new ArrayList<>();
        for (MBeanOperationInfo op : info.getOperations()) {
            StringBuilder sb = new StringBuilder(op.getName()).append(": ").append(op.getDescription());
            for (MBeanParameterInfo p : op.getSignature()) {
                sb.append(" | ").append(p.getName()).append(' ').append(p.getType()).append(": ")
                        .append(p.getDescription());
            }
            ops.add(sb.toString());
        }
        ops.sort(null);
        assertEquals(List.of(
                "add: Adds a named amount. | name java.lang.String: The amount's name. | bytes long: The amount, in bytes.",
                "add: Adds a number of units. | unit int: The unit. | count long: How many units.",
                "add: Adds bytes. | bytes long: How many bytes to add.",
                "undescribed: undescribed | x int: p0"), ops,
                "each overload its own texts; an element without @Description keeps the JMX default");
    }

    /**
     * Every attribute, operation and operation parameter of every product MXBean interface of the API has a
     * description, and so has the interface: what a console shows instead of a bare name.
     */
    @Test
    void everyProductMXBeanDescribesItselfItsAttributesOperationsAndParameters() {
        List<Class<?>> mxbeans = List.of(ChipMXBean.class, HealthWatchMXBean.class, NodeSyncMXBean.class,
                MarkersMXBean.class, HealthMXBean.class, NpuRuntimeMXBean.class, ConfigurationMXBean.class,
                DeployMXBean.class, UpgradeOrchestratorMXBean.class, KubernetesClientMXBean.class,
                RebooterMXBean.class, DriverMXBean.class);
        List<String> missing = new ArrayList<>();
        for (Class<?> c : mxbeans) {
            missing.addAll(undescribed(c));
        }
        assertEquals(List.of(), missing);
    }

    /**
     * The elements of an MXBean interface without a {@link Description}: the interface itself, each abstract method
     * and each of their parameters, as {@code Interface.method(parameter)}; also used by other modules' tests.
     *
     * @param mxbeanInterface the interface
     * @return the undescribed elements, empty when every one is described
     */
    static List<String> undescribed(Class<?> mxbeanInterface) {
        List<String> missing = new ArrayList<>();
        String name = mxbeanInterface.getSimpleName();
        if (mxbeanInterface.getAnnotation(Description.class) == null) {
            missing.add(name);
        }
        for (Method m : mxbeanInterface.getMethods()) {
            if (Modifier.isStatic(m.getModifiers()) || m.isDefault()) {
                continue;
            }
            if (m.getAnnotation(Description.class) == null) {
                missing.add(name + "." + m.getName());
            }
            for (Parameter p : m.getParameters()) {
                if (p.getAnnotation(Description.class) == null) {
                    missing.add(name + "." + m.getName() + "(" + p.getName() + ")");
                }
                assertTrue(p.isNamePresent(), "compiled with -parameters: " + Arrays.toString(m.getParameters()));
            }
        }
        return missing;
    }
}
