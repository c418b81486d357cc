package io.npulifecycle.management.internal;

import java.lang.management.ManagementFactory;
import java.util.Dictionary;
import java.util.Hashtable;

import javax.management.MBeanServer;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * Publishes the JVM's platform MBeanServer as an OSGi service of type {@link MBeanServer}.
 *
 * <p>Plain Felix registers no MBeanServer service. The Aries JMX whiteboard bundle tracks {@code MBeanServer}
 * services and registers every OSGi service carrying a {@code jmx.objectname} property in each of them, so this one
 * service is what makes bundle MBeans visible in the platform MBeanServer, to Jolokia and to jconsole.
 */
@Component(immediate = true, service = {})
public class MBeanServerPublisher {

    private ServiceRegistration<MBeanServer> registration;

    @Activate
    void activate(BundleContext context) {
        Dictionary<String, Object> props = new Hashtable<>();
        props.put("npu.lifecycle.mbeanserver", "platform");
        registration = context.registerService(MBeanServer.class, ManagementFactory.getPlatformMBeanServer(), props);
    }

    @Deactivate
    void deactivate() {
        if (registration != null) {
            registration.unregister();
            registration = null;
        }
    }
}
