package io.npulifecycle.api.management;

import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.management.DynamicMBean;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/**
 * Publishes an MXBean the way every npu-lifecycle bundle does: the implementation wrapped in a
 * {@link DescribedMBean} (a {@link StandardMBean} showing the interface's {@link Description}s and parameter names)
 * for its MXBean interface, registered as an OSGi service of type {@link DynamicMBean} with
 * the service property {@value Mbeans#OBJECT_NAME_PROPERTY} set to its object name. The management bundle's JMX
 * whiteboard puts it in the platform MBeanServer (and so in Jolokia) while the service exists. Other bundles can
 * find it as a {@code DynamicMBean} service with the filter {@code (jmx.objectname=<name>)}.
 */
public final class MBeanRegistrations {

    private MBeanRegistrations() {
    }

    /**
     * Registers {@code implementation} as the MBean {@code objectName} in {@code context}'s bundle.
     *
     * @param <T> the MXBean interface
     * @param context the bundle context of the publishing component
     * @param mxbeanInterface the MXBean interface, e.g. {@code HealthWatchMXBean.class}; its methods are the MBean's
     *        attributes and operations
     * @param implementation the object the MBean calls, e.g. the component's engine
     * @param objectName the object name, e.g. {@code io.npulifecycle:type=HealthWatch} (see {@link Mbeans})
     * @return the registration; {@link Registration#unregister()} removes the MBean
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code objectName} is not a valid JMX object name, or
     *         {@code mxbeanInterface} does not follow the MXBean rules (both named in the message)
     * @throws IllegalStateException if {@code context} is no longer valid (its bundle stopped)
     */
    public static <T> Registration register(BundleContext context, Class<T> mxbeanInterface, T implementation,
            String objectName) {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(mxbeanInterface, "mxbeanInterface");
        Objects.requireNonNull(implementation, "implementation");
        Objects.requireNonNull(objectName, "objectName");
        try {
            new ObjectName(objectName);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("MBean object name '" + objectName + "' is not a JMX object name: "
                    + e.getMessage(), e);
        }
        StandardMBean mbean;
        try {
            mbean = new DescribedMBean(implementation, mxbeanInterface);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("MBean " + objectName + ": " + mxbeanInterface.getName()
                    + " is not a valid MXBean interface: " + e.getMessage(), e);
        }
        Dictionary<String, Object> props = new Hashtable<>();
        props.put(Mbeans.OBJECT_NAME_PROPERTY, objectName);
        return new Registration(context.registerService(DynamicMBean.class, mbean, props), objectName);
    }

    /** A published MBean. Thread-safe. */
    public static final class Registration implements AutoCloseable {

        private final ServiceRegistration<DynamicMBean> service;
        private final String objectName;
        private final AtomicBoolean registered = new AtomicBoolean(true);

        Registration(ServiceRegistration<DynamicMBean> service, String objectName) {
            this.service = service;
            this.objectName = objectName;
        }

        /** @return the MBean's object name */
        public String objectName() {
            return objectName;
        }

        /**
         * Removes the MBean. Idempotent: later calls do nothing, and a registration the framework already removed
         * (its bundle stopped) is not an error.
         */
        public void unregister() {
            if (!registered.compareAndSet(true, false)) {
                return;
            }
            try {
                service.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the framework removed it with its bundle: the MBean is gone, which is what was asked
            }
        }

        /** Same as {@link #unregister()}. */
        @Override
        public void close() {
            unregister();
        }

        @Override
        public String toString() {
            return "MBean " + objectName + (registered.get() ? "" : " (unregistered)");
        }
    }
}
