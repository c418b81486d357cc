package io.npulifecycle.management.internal;

import io.npulifecycle.api.management.BundleInfo;
import io.npulifecycle.api.management.DescribedMBean;

import io.npulifecycle.api.management.NpuRuntimeMXBean;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import javax.management.DynamicMBean;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

import io.npulifecycle.api.management.Mbeans;

/**
 * The MBean {@code io.npulifecycle:type=Runtime}, registered as an OSGi service and bridged into the platform
 * MBeanServer by the JMX whiteboard.
 */
@Component(service = DynamicMBean.class, property = Mbeans.OBJECT_NAME_PROPERTY + "=" + Mbeans.RUNTIME)
public class RuntimeMBean extends DescribedMBean implements NpuRuntimeMXBean {

    private BundleContext context;

    /** DS constructor. */
    public RuntimeMBean() {
        super(NpuRuntimeMXBean.class);
    }

    @Activate
    void activate(BundleContext ctx) {
        this.context = ctx;
    }

    @Override
    public String getRole() {
        return property(Mbeans.ROLE_PROPERTY, "unknown");
    }

    @Override
    public String getProductVersion() {
        return property(Mbeans.VERSION_PROPERTY, context.getBundle().getVersion().toString());
    }

    @Override
    public String getHome() {
        return property(Mbeans.HOME_PROPERTY, "");
    }

    @Override
    public long getUptimeSeconds() {
        return ManagementFactory.getRuntimeMXBean().getUptime() / 1000L;
    }

    @Override
    public List<BundleInfo> getBundles() {
        List<BundleInfo> out = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            out.add(Bundles.describe(b));
        }
        return out;
    }

    private String property(String key, String fallback) {
        String v = context.getProperty(key);
        return v == null || v.isBlank() ? fallback : v;
    }
}
