package io.npulifecycle.metrics.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

import javax.management.DynamicMBean;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.Mbeans;

/**
 * The product's MXBeans as their bundles publish them: each a {@link DynamicMBean} OSGi service with the service
 * property {@value Mbeans#OBJECT_NAME_PROPERTY} ({@link MBeanRegistrations}), a {@link StandardMBean} wrapping the
 * object that implements the MXBean interface. A scrape calls that object's getters directly, the same ones Jolokia
 * reaches through the MBeanServer: no MBeanServer query, no proxy, no open-type conversion per attribute, which is
 * most of a scrape's cost otherwise. A missing MBean (its bundle not installed, stopped, or being updated) is
 * {@code null} or absent: its series are left out of that scrape. An MBean whose implementation is not of the asked
 * interface counts as missing. Thread-safe: the DS component adds and removes the services while scrapes read them.
 */
public final class MBeans {

    /** One published MBean: its parsed name and its service object. */
    private record Published(ObjectName name, DynamicMBean mbean) {
    }

    /** By canonical object name, so that {@link #all} lists the MBeans in a stable order. */
    private final Map<String, Published> byName = new ConcurrentSkipListMap<>();

    /**
     * Adds (or replaces) the MBean service of this object name.
     *
     * @param objectName the service's {@value Mbeans#OBJECT_NAME_PROPERTY}, e.g.
     *        {@code io.npulifecycle:type=Chip,name=npu0-chip0}
     * @param mbean the service object
     * @throws IllegalArgumentException if {@code objectName} is not a JMX object name (named in the message)
     */
    public void add(String objectName, DynamicMBean mbean) {
        ObjectName n = name(objectName);
        byName.put(n.getCanonicalName(), new Published(n, mbean));
    }

    /**
     * Removes the MBean service of this object name, if {@code mbean} is still the one added for it (a bundle being
     * updated can register its new service before the old one goes).
     *
     * @param objectName the service's {@value Mbeans#OBJECT_NAME_PROPERTY}
     * @param mbean the service object that goes away
     */
    public void remove(String objectName, DynamicMBean mbean) {
        ObjectName n;
        try {
            n = new ObjectName(objectName);
        } catch (MalformedObjectNameException e) {
            return; // never added
        }
        byName.computeIfPresent(n.getCanonicalName(), (k, p) -> p.mbean() == mbean ? null : p);
    }

    /**
     * @param <T> the MXBean interface
     * @param objectName object name, e.g. {@code io.npulifecycle:type=HealthWatch}
     * @param type MXBean interface
     * @return the object behind that MBean, or {@code null} when no such MBean is published now
     */
    <T> T get(String objectName, Class<T> type) {
        Published p = byName.get(objectName); // a name of one key is its canonical form
        if (p == null) {
            p = byName.get(name(objectName).getCanonicalName());
        }
        return p == null ? null : implementation(p.mbean(), type);
    }

    /**
     * @param <T> the MXBean interface
     * @param typeKey the value of the object names' {@code type} key, e.g. {@code Chip}
     * @param type MXBean interface
     * @return the objects behind the MBeans of the product's domain with that {@code type}, in canonical-name order
     */
    <T> List<T> all(String typeKey, Class<T> type) {
        List<T> out = new ArrayList<>();
        for (Published p : byName.values()) {
            if (typeKey.equals(p.name().getKeyProperty("type")) && Mbeans.DOMAIN.equals(p.name().getDomain())) {
                T impl = implementation(p.mbean(), type);
                if (impl != null) {
                    out.add(impl);
                }
            }
        }
        return out;
    }

    private static <T> T implementation(DynamicMBean mbean, Class<T> type) {
        Object impl = mbean instanceof StandardMBean s ? s.getImplementation() : mbean;
        return type.isInstance(impl) ? type.cast(impl) : null;
    }

    private static ObjectName name(String n) {
        try {
            return new ObjectName(n);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("object name '" + n + "': " + e.getMessage(), e);
        }
    }
}
