package io.npulifecycle.security.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Filter;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * Watches the Jolokia servlet registrations and fails closed when there is not exactly one.
 *
 * <p>Found by the integration tests (jolokia-server-core 2.6.0 bytecode): {@code OsgiAgentActivator.start} opens its
 * ConfigAdmin tracker (which registers a ManagedService) <em>before</em> it creates the {@code DelegatingRestrictor};
 * when ConfigAdmin calls {@code updated} in that window, a first servlet is registered with no restrictor (Jolokia
 * then builds one from {@code policyLocation}), and {@code start} registers a second one without unregistering the
 * first. The first one (lower service id) serves the requests, bypassing the role restrictor. While more than one
 * Jolokia servlet is registered, {@link AccessFilter} refuses every request, and this guard restarts the Jolokia
 * bundle (up to {@value #MAX_RESTARTS} times), which unregisters every service of it and starts it again.
 */
@Component(service = JolokiaServletGuard.class, immediate = true)
public class JolokiaServletGuard implements ServiceListener {

    static final String FILTER = "(&(objectClass=jakarta.servlet.Servlet)(osgi.http.whiteboard.servlet.name=jolokia))";
    /**
     * Jolokia's request handlers as OSGi services: jolokia-service-jmx registers the one that serves read, write,
     * exec, list and search. A Jolokia servlet without it answers {@code Internal error: No request handler found}.
     */
    static final String HANDLER_FILTER = "(objectClass=org.jolokia.server.core.service.request.RequestHandler)";
    /** The answer (HTTP 503) while Jolokia cannot serve: no servlet yet, or no request handler yet. */
    static final String NOT_SERVING = "Jolokia is not serving yet (the runtime is starting, or restarting after a"
            + " reboot): retry in a few seconds";
    static final int MAX_RESTARTS = 5;

    private static final Logger LOG = System.getLogger(JolokiaServletGuard.class.getName());
    private static volatile JolokiaServletGuard active;

    private BundleContext context;
    private Filter filter;
    private volatile int count;
    private volatile int handlers;
    private int restarts;
    private boolean restarting;

    @Activate
    void activate(BundleContext ctx) throws InvalidSyntaxException {
        this.context = ctx;
        this.filter = ctx.createFilter(FILTER);
        ctx.addServiceListener(this, "(|" + FILTER + HANDLER_FILTER + ")");
        recount();
        active = this;
    }

    @Deactivate
    void deactivate() {
        active = null;
        context.removeServiceListener(this);
    }

    /** @return whether exactly one Jolokia servlet is registered (or the guard is not running: then no) */
    static boolean singleServlet() {
        JolokiaServletGuard g = active;
        return g != null && g.count == 1;
    }

    /** @return whether a Jolokia request handler service (jolokia-service-jmx) is registered */
    static boolean requestHandler() {
        JolokiaServletGuard g = active;
        return g != null && g.handlers > 0;
    }

    @Override
    public void serviceChanged(ServiceEvent event) {
        recount();
    }

    private void recount() {
        ServiceReference<?>[] refs;
        try {
            ServiceReference<?>[] h = context.getAllServiceReferences(null, HANDLER_FILTER);
            handlers = h == null ? 0 : h.length;
            refs = context.getAllServiceReferences(null, FILTER);
        } catch (InvalidSyntaxException | IllegalStateException e) {
            count = 0;
            handlers = 0;
            return;
        }
        int n = refs == null ? 0 : refs.length;
        count = n;
        if (n > 1) {
            restartJolokia(refs[0].getBundle());
        }
    }

    private synchronized void restartJolokia(Bundle jolokia) {
        if (restarting) {
            return;
        }
        if (jolokia == null || restarts >= MAX_RESTARTS) {
            if (restarts >= MAX_RESTARTS) {
                Audit.problem(count + " Jolokia servlets registered after " + MAX_RESTARTS + " restarts of "
                        + "Jolokia: every Jolokia request is refused");
            }
            return;
        }
        restarts++;
        restarting = true;
        LOG.log(Level.WARNING, "{0} Jolokia servlets registered (Jolokia start-up race): restarting {1} so that "
                + "only the one with the role restrictor serves; requests are refused meanwhile", count,
                jolokia.getSymbolicName());
        Thread t = new Thread(() -> {
            try {
                jolokia.stop(Bundle.STOP_TRANSIENT);
                jolokia.start(Bundle.START_TRANSIENT);
            } catch (BundleException | IllegalStateException e) {
                Audit.problem("cannot restart " + jolokia.getSymbolicName() + ": " + e);
            } finally {
                synchronized (this) {
                    restarting = false;
                }
                recount();
            }
        }, "npu-lifecycle-jolokia-restart");
        t.setDaemon(true);
        t.start();
    }
}
