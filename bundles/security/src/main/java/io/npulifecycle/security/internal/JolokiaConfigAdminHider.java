package io.npulifecycle.security.internal;

import java.util.Collection;
import java.util.Iterator;
import java.util.Map;

import org.osgi.annotation.bundle.Header;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.hooks.service.EventListenerHook;
import org.osgi.framework.hooks.service.FindHook;
import org.osgi.framework.hooks.service.ListenerHook.ListenerInfo;

/**
 * Hides the ConfigurationAdmin service from the Jolokia agent bundle ({@value #JOLOKIA}), with OSGi service hooks
 * registered by this bundle's activator (start level 3, before Jolokia at 4).
 *
 * <p>Why: Jolokia 2.6.0 ({@code OsgiAgentActivator.start}) opens its ConfigAdmin tracker, whose ManagedService gets
 * {@code updated} on ConfigAdmin's thread, <em>before</em> it creates its {@code DelegatingRestrictor}; when the update
 * wins that race a first servlet is registered without the restrictor service and is never unregistered (it serves,
 * the correct second one is shadowed). The integration tests hit it often. Without ConfigAdmin Jolokia registers no
 * ManagedService: one servlet, registered by {@code start} with the restrictor. It also means an
 * {@code org.jolokia.osgi} configuration can never override the security framework properties. {@link
 * JolokiaServletGuard} still checks that there is exactly one Jolokia servlet.
 */
@Header(name = Constants.BUNDLE_ACTIVATOR, value = "${@class}")
public class JolokiaConfigAdminHider implements BundleActivator, FindHook, EventListenerHook {

    /** Symbolic name of the Jolokia agent bundle. */
    static final String JOLOKIA = "org.jolokia.server.core";
    static final String CONFIG_ADMIN = "org.osgi.service.cm.ConfigurationAdmin";

    private ServiceRegistration<?> registration;

    @Override
    public void start(BundleContext context) {
        registration = context.registerService(new String[] {FindHook.class.getName(),
            EventListenerHook.class.getName()}, this, null);
    }

    @Override
    public void stop(BundleContext context) {
        if (registration != null) {
            registration.unregister();
            registration = null;
        }
    }

    static boolean isJolokia(BundleContext c) {
        try {
            return c != null && JOLOKIA.equals(c.getBundle().getSymbolicName());
        } catch (IllegalStateException e) {
            return false;
        }
    }

    static boolean isConfigAdmin(ServiceReference<?> ref) {
        Object classes = ref.getProperty(Constants.OBJECTCLASS);
        if (classes instanceof String[]) {
            for (String c : (String[]) classes) {
                if (CONFIG_ADMIN.equals(c)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public void find(BundleContext context, String name, String filter, boolean allServices,
            Collection<ServiceReference<?>> references) {
        if (isJolokia(context)) {
            references.removeIf(JolokiaConfigAdminHider::isConfigAdmin);
        }
    }

    @Override
    public void event(ServiceEvent event, Map<BundleContext, Collection<ListenerInfo>> listeners) {
        if (!isConfigAdmin(event.getServiceReference())) {
            return;
        }
        for (Iterator<BundleContext> it = listeners.keySet().iterator(); it.hasNext();) {
            if (isJolokia(it.next())) {
                it.remove();
            }
        }
    }
}
