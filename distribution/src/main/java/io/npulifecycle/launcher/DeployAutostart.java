package io.npulifecycle.launcher;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.startlevel.FrameworkStartLevel;

/**
 * Starts the bundles FileInstall has installed from {@code deploy/} as soon as the framework has passed their start
 * level ({@link BundleList#DEPLOY_START_LEVEL}), instead of at FileInstall's next poll.
 *
 * <p>FileInstall installs them in its first scan (at start level 2) and starts one only when the framework's active
 * start level is at least the bundle's; once the framework is there it waits for its next poll
 * ({@code felix.fileinstall.poll}, 1 s) to do so, and the levels above the product (HTTP, Jolokia, the Kubernetes
 * client) start first. This listener starts them on the framework's start-level thread when that thread starts the
 * first bundle of a level above the product's (every bundle up to the product's level is active by then:
 * management's configuration validation and the simulator included), in {@code conf/bundles.list} order, and once
 * more after the framework has started ({@link #startInstalled()}) for a runtime without a higher level. The start
 * is the persistent start FileInstall makes itself; FileInstall finds the bundles active at its next scan and keeps
 * managing them (updates, uninstalls). A bundle FileInstall has not installed yet is started by FileInstall, as
 * before. The listener is removed when the framework has started ({@link #close()}): later installs through
 * {@code deploy/} (hot deployment) are FileInstall's alone.
 */
final class DeployAutostart implements SynchronousBundleListener, AutoCloseable {

    private static final Logger LOG = Logger.getLogger(DeployAutostart.class.getName());

    private final BundleContext context;
    private final Path deploy;
    private final List<String> order;
    private volatile boolean done;

    private DeployAutostart(BundleContext context, Path deploy, List<String> order) {
        this.context = context;
        this.deploy = deploy.toAbsolutePath().normalize();
        this.order = order;
    }

    /**
     * @param context the system bundle's context of an initialised, not yet started framework
     * @param deploy the home's {@code deploy/} folder (FileInstall's bundle folder)
     * @param order symbolic names in the order to start them (the {@code deploy} lines of {@code conf/bundles.list});
     *        other bundles of {@code deploy/} start after these, by bundle id
     * @return the registered listener; {@link #close()} it once the framework has started
     */
    static DeployAutostart open(BundleContext context, Path deploy, List<String> order) {
        DeployAutostart l = new DeployAutostart(context, deploy, List.copyOf(order));
        context.addBundleListener(l);
        return l;
    }

    @Override
    public void bundleChanged(BundleEvent event) {
        if (done || event.getType() != BundleEvent.STARTING) {
            return;
        }
        if (event.getBundle().adapt(BundleStartLevel.class).getStartLevel() <= BundleList.DEPLOY_START_LEVEL) {
            return;
        }
        done = true;
        startInstalled();
    }

    /**
     * Starts every non-fragment bundle of {@code deploy/} that is installed or resolved and whose start level is at
     * most {@link BundleList#DEPLOY_START_LEVEL}, when the framework's active start level has reached that level
     * (otherwise nothing). Called on the start-level thread (from the listener) or once the
     * framework is active; a bundle that cannot start is left to FileInstall, which logs why at its next scan.
     */
    void startInstalled() {
        int active = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION).adapt(FrameworkStartLevel.class)
                .getStartLevel();
        if (active < BundleList.DEPLOY_START_LEVEL) {
            return; // not there yet: never before the levels below the product
        }
        List<Bundle> todo = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            if ((b.getState() & (Bundle.INSTALLED | Bundle.RESOLVED)) != 0 && inDeploy(b.getLocation())
                    && b.getHeaders().get(Constants.FRAGMENT_HOST) == null
                    && b.adapt(BundleStartLevel.class).getStartLevel() <= BundleList.DEPLOY_START_LEVEL) {
                todo.add(b);
            }
        }
        todo.sort(Comparator.comparingInt(this::rank).thenComparingLong(Bundle::getBundleId));
        for (Bundle b : todo) {
            try {
                b.start();
            } catch (BundleException | IllegalStateException e) {
                LOG.log(Level.FINE, "did not start " + b.getLocation() + "; FileInstall retries it", e);
            }
        }
    }

    private int rank(Bundle b) {
        int i = order.indexOf(b.getSymbolicName());
        return i < 0 ? order.size() : i;
    }

    /**
     * @param location a bundle location as FileInstall writes it ({@code file:/home/deploy/x.jar})
     * @return whether it names a file directly in {@code deploy/}
     */
    boolean inDeploy(String location) {
        if (location == null || !location.startsWith("file:")) {
            return false;
        }
        try {
            Path p = Path.of(URI.create(location)).toAbsolutePath().normalize();
            return deploy.equals(p.getParent());
        } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
            return false;
        }
    }

    /** Removes the listener (idempotent). */
    @Override
    public void close() {
        done = true;
        try {
            context.removeBundleListener(this);
        } catch (IllegalStateException stopped) {
            // the framework has already stopped: nothing is listening any more
        }
    }
}
