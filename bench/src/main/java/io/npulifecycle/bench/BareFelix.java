package io.npulifecycle.bench;

import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;

import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;

/**
 * The floor of the node-agent footprint benchmark: an Apache Felix framework (the product's version, from the
 * installation's {@code lib/}) started with a clean cache and no bundle. Prints {@link #STARTED} when active and runs
 * until killed. Usage: {@code BareFelix <cache folder>}.
 */
public final class BareFelix {

    /** Printed once the framework is active. */
    public static final String STARTED = "bare felix framework started";

    private BareFelix() {
    }

    /**
     * @param args the bundle cache folder
     * @throws Exception when the framework cannot start
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> props = new HashMap<>();
        props.put("org.osgi.framework.storage", args[0]);
        props.put("org.osgi.framework.storage.clean", "onFirstInit");
        Framework fw = ServiceLoader.load(FrameworkFactory.class).iterator().next().newFramework(props);
        fw.init();
        fw.start();
        System.out.println(STARTED + ": JVM uptime "
                + java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() + " ms");
        System.out.flush();
        fw.waitForStop(0);
    }
}
