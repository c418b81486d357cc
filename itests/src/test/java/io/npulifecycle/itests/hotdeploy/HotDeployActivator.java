package io.npulifecycle.itests.hotdeploy;

import java.util.Hashtable;

import javax.management.DynamicMBean;
import javax.management.NotCompliantMBeanException;
import javax.management.StandardMBean;

import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;

/**
 * Activator of the test bundle built by {@link HotDeployBundle}: registers the MBean
 * {@value #OBJECT_NAME} as an OSGi service, so the management bundle's JMX whiteboard publishes it.
 */
public class HotDeployActivator implements BundleActivator {

    /** The test bundle's MBean. */
    public static final String OBJECT_NAME = "io.npulifecycle:type=HotDeployTest";

    @Override
    public void start(BundleContext context) throws NotCompliantMBeanException {
        String version = context.getBundle().getVersion().toString();
        HotDeployMBean impl = () -> version;
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("jmx.objectname", OBJECT_NAME);
        context.registerService(DynamicMBean.class, new StandardMBean(impl, HotDeployMBean.class), props);
    }

    @Override
    public void stop(BundleContext context) {
        // services are unregistered by the framework
    }
}
