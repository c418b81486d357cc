package io.npulifecycle.metrics.internal;

import java.util.Set;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * Reads the product's MXBeans from the MBeanServer (the same facts Jolokia shows), through typed MXBean proxies. A
 * missing MBean (its bundle not installed, stopped, or being updated) is {@code null}: its series are left out of
 * that scrape.
 */
public final class MBeans {

    private final MBeanServer server;

    /** @param server the platform MBeanServer (the management bundle's service) */
    public MBeans(MBeanServer server) {
        this.server = server;
    }

    /**
     * @param <T> the MXBean interface
     * @param name object name
     * @param type MXBean interface
     * @return a proxy, or {@code null} when no such MBean is registered now
     */
    <T> T get(String name, Class<T> type) {
        ObjectName on = name(name);
        return server.isRegistered(on) ? JMX.newMXBeanProxy(server, on, type) : null;
    }

    /**
     * @param pattern an object name pattern, e.g. {@code io.npulifecycle:type=Chip,*}
     * @return the registered names matching it
     */
    Set<ObjectName> query(String pattern) {
        return server.queryNames(name(pattern), null);
    }

    /**
     * @param <T> the MXBean interface
     * @param name a registered name
     * @param type MXBean interface
     * @return a proxy
     */
    <T> T proxy(ObjectName name, Class<T> type) {
        return JMX.newMXBeanProxy(server, name, type);
    }

    /**
     * Reads several attributes in one call (cheaper than one proxy call each).
     *
     * @param name a registered name
     * @param attributes attribute names
     * @return the values by attribute name; an attribute that cannot be read is absent
     * @throws javax.management.JMException when the MBean is gone
     */
    java.util.Map<String, Object> attributes(ObjectName name, String... attributes) throws javax.management.JMException {
        java.util.Map<String, Object> out = new java.util.HashMap<>();
        for (javax.management.Attribute a : server.getAttributes(name, attributes).asList()) {
            out.put(a.getName(), a.getValue());
        }
        return out;
    }

    private static ObjectName name(String n) {
        try {
            return new ObjectName(n);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("object name '" + n + "': " + e.getMessage(), e);
        }
    }
}
