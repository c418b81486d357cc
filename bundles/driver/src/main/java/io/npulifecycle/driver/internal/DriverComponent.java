package io.npulifecycle.driver.internal;

import io.npulifecycle.api.reboot.DriverMXBean;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import javax.management.DynamicMBean;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventConstants;
import org.osgi.service.event.EventHandler;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.management.ConfigDefaults;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.RefusalReporter;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.reboot.DriverLoader;
import io.npulifecycle.api.time.Loop;
import io.npulifecycle.api.time.TimeSource;

/**
 * The driver bundle's component, PID {@value #PID}: runs {@link DriverEngine#evaluate()} every
 * {@code checkIntervalSeconds} and on health-watch and marker events; reads the health-watch through its MBean
 * service ({@code jmx.objectname=io.npulifecycle:type=HealthWatch}, no code dependency on the probe bundle);
 * registers a command {@link DriverLoader} when {@code loaderCommand} is set and the {@code io.npulifecycle:type=Driver}
 * MBean.
 */
@Component(configurationPid = DriverComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true,
        service = EventHandler.class, property = {EventConstants.EVENT_TOPIC + "=io/npulifecycle/probe/*",
            EventConstants.EVENT_TOPIC + "=io/npulifecycle/markers/CHANGED"})
@Designate(ocd = DriverComponent.Config.class)
public class DriverComponent implements EventHandler {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.driver";
    private static final System.Logger LOG = System.getLogger(DriverComponent.class.getName());

    /** Configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle driver", description = "Load from a fresh boot, stage for the next boot, validate.")
    public @interface Config {
        /** @return version */
        @AttributeDefinition(name = "Driver version", description = "Driver version this pod carries; empty = the DRIVER_VERSION environment variable.")
        String driverVersion() default "";

        /** @return proc modules */
        @AttributeDefinition(name = "Kernel module list", description = "Path of the kernel's module list.")
        String procModules() default "/proc/modules";

        /** @return module names */
        @AttributeDefinition(name = "Driver modules", description = "Kernel modules that belong to the NPU driver (any one loaded = a driver is loaded).")
        String[] moduleNames() default {"drv_davinci_intf", "drv_devdrv", "drv_pcie_host", "drv_devmm", "drv_hdc_host", "ascend_event_sched"};

        /** @return state dir */
        @AttributeDefinition(name = "State folder", description = "Persistent host folder of driver-staged / driver-current.")
        String stateDir() default "/var/lib/npu-operator/";

        /** @return timeout */
        @AttributeDefinition(name = "Validation timeout (seconds)", description = "Seconds after the first round of a boot before a validation that has not passed is declared failed.", min = "1")
        int validationTimeoutSeconds() default 600;

        /** @return interval */
        @AttributeDefinition(name = "Check interval (seconds)", description = "Seconds between two rounds.", min = "1")
        int checkIntervalSeconds() default 30;

        /** @return loader */
        @AttributeDefinition(name = "Loader command", description = "Command that loads the modules of a version, run by the node agent once per fresh boot without NPU modules (managed mode only); {version} is replaced. An array, or one string split on whitespace (a plain .cfg line). Chart value driver.loader.command. Empty = no loader from this bundle (the simulator or another bundle may register one). docs/driver-images.md says what it runs.")
        String[] loaderCommand() default {};

        /**
         * @return {@code managed} or {@code host}; anything else is refused (the previous configuration is kept)
         */
        @AttributeDefinition(name = "Mode", description = "managed (default; the driver DaemonSet pod, chart driver.enabled=true): stage the pod's DRIVER_VERSION for the next boot, load it only from a fresh boot, validate. host (the node-agent DaemonSet, driver.enabled=false; drivers installed on the hosts by their administrator): never stage nor load, validate and report the loaded version.",
                options = {@org.osgi.service.metatype.annotations.Option(label = "managed", value = "managed"),
                    @org.osgi.service.metatype.annotations.Option(label = "host", value = "host")})
        String mode() default "managed";

        /**
         * @return an absolute folder, or empty
         */
        @AttributeDefinition(name = "Driver package folder", description = "Managed mode: the host folder the driver container copies its package into (<folder>/<version>/, complete once <folder>/<version>/.complete exists; docs/driver-images.md). When set, a version is neither staged (no reboot is requested) nor loaded before its package is complete there. Empty = no such check. Chart default /var/lib/npu-operator/driver-packages.")
        String packageDir() default "";
    }

    private final MarkerStore markers;
    private final TimeSource time;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile NodeWriter nodeWriter;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile DriverLoader loader;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY,
            target = "(jmx.objectname=io.npulifecycle:type=HealthWatch)")
    private volatile DynamicMBean healthWatch;

    private DriverEngine engine;
    private Loop loop;
    private BundleContext context;
    private MBeanRegistrations.Registration mbean;
    private ServiceRegistration<?> loaderReg;

    /**
     * @param markers the marker store
     * @param time the runtime clock
     */
    @Activate
    public DriverComponent(@Reference(name = "markers") MarkerStore markers,
            @Reference(name = "time") TimeSource time) {
        this.markers = markers;
        this.time = time;
    }

    @Activate
    void activate(BundleContext ctx, Config c) {
        context = ctx;
        DriverEngine.Settings s = reported(c);
        Config running = c;
        if (s == null) {
            LOG.log(Level.ERROR, "PID " + PID + ": invalid configuration, using the defaults");
            running = ConfigDefaults.of(Config.class);
            s = settings(running, new ArrayList<>());
        }
        Duration interval = Duration.ofSeconds(running.checkIntervalSeconds());
        engine = new DriverEngine(markers, () -> nodeWriter, () -> loader, this::healthView, time, s);
        engine.plant(PlantedBug.plantedIn(ctx.getProperty(PlantedBug.PROPERTY), "driver",
                EnumSet.of(PlantedBug.MODULE_RELOADED), LOG));
        registerLoader(c);
        try {
            mbean = MBeanRegistrations.register(ctx, DriverMXBean.class, new DriverMBean(engine),
                    DriverMXBean.OBJECT_NAME);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "cannot register the Driver MBean", e);
        }
        loop = new Loop("npu-driver", time, interval, engine::evaluate);
        loop.start();
    }

    @Modified
    void modified(Config c) {
        DriverEngine.Settings s = reported(c);
        if (s == null) {
            LOG.log(Level.ERROR, "PID " + PID + ": keeping the previous configuration");
            return;
        }
        loop.period(Duration.ofSeconds(c.checkIntervalSeconds()));
        engine.reconfigure(s);
        registerLoader(c);
        loop.wake();
    }

    @Deactivate
    void deactivate() {
        loop.stop();
        if (mbean != null) {
            mbean.unregister();
        }
        if (loaderReg != null) {
            try {
                loaderReg.unregister();
            } catch (IllegalStateException ignored) {
                // already unregistered with the bundle
            }
        }
    }

    @Override
    public void handleEvent(Event event) {
        loop.wake();
    }

    private HealthView healthView() {
        DynamicMBean mb = healthWatch;
        if (mb == null) {
            return null;
        }
        return new HealthView() {
            @Override
            public String verdict() {
                return attr("LastVerdict");
            }

            @Override
            public String expectedChips() {
                return attr("ExpectedChips");
            }

            @Override
            public String wedgedChips() {
                return attr("WedgedChips");
            }

            @Override
            public String driverVersion() {
                return attr("DriverVersion");
            }

            private String attr(String name) {
                try {
                    Object v = mb.getAttribute(name);
                    return v == null ? null : v.toString();
                } catch (Exception e) {
                    return null;
                }
            }
        };
    }

    private void registerLoader(Config c) {
        if (loaderReg != null) {
            try {
                loaderReg.unregister();
            } catch (IllegalStateException ignored) {
                // gone
            }
            loaderReg = null;
        }
        String[] cmd = c.loaderCommand();
        if ("host".equals(c.mode() == null ? "" : c.mode().trim())) {
            return; // mode=host: nothing is ever loaded by this agent
        }
        if (cmd == null || cmd.length == 0 || cmd[0].isBlank()) {
            return;
        }
        List<String> template = loaderArgs(cmd);
        loaderReg = context.registerService(DriverLoader.class, new DriverLoader() {
            @Override
            public String describe() {
                return "command " + String.join(" ", template);
            }

            @Override
            public void load(String version) throws IOException {
                List<String> args = new ArrayList<>();
                template.forEach(a -> args.add(a.replace("{version}", version)));
                Process p = new ProcessBuilder(args).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                        .redirectErrorStream(true).start();
                try {
                    if (!p.waitFor(300, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                        throw new IOException("driver loader " + args + " did not exit within 300 s");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
                if (p.exitValue() != 0) {
                    throw new IOException("driver loader " + args + " exited with " + p.exitValue() + ": "
                            + new String(p.getInputStream().readNBytes(2048), java.nio.charset.StandardCharsets.UTF_8).strip());
                }
            }
        }, null);
    }

    /**
     * @param cmd the {@code loaderCommand} value
     * @return its arguments: the elements of an array; a single value holding spaces split on whitespace (what a plain
     *         {@code .cfg} line {@code loaderCommand=nsenter -t 1 -m -- /path/{version}/load {version}} gives, since
     *         Felix File Install reads an array only from a file whose every value is typed); no quoting
     */
    static List<String> loaderArgs(String[] cmd) {
        if (cmd.length == 1 && cmd[0].strip().contains(" ")) {
            return List.of(cmd[0].strip().split("\\s+"));
        }
        return List.of(cmd);
    }

    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final RefusalReporter refusals = new RefusalReporter();

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        restarts the driver component)
     */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    void bindRefusals(ConfigurationRefusals r) {
        refusals.bind(r);
    }

    /** @param r the service that goes away */
    void unbindRefusals(ConfigurationRefusals r) {
        refusals.unbind(r);
    }

    /**
     * {@link #settings(Config, List)}, reporting every refused value (or the end of a refusal) to
     * the {@link ConfigurationRefusals} service and logging them in one ERROR line.
     *
     * @return the settings, or {@code null} when a value is refused
     */
    DriverEngine.Settings reported(Config c) {
        return refusals.check(PID, refused -> settings(c, refused), LOG);
    }

    /**
     * @param c the configuration
     * @param refused receives every refused value, in the order of the keys checked
     * @return the settings, or {@code null} when a value is refused
     */
    static DriverEngine.Settings settings(Config c, List<ConfigurationRefusals.Refusal> refused) {
        String v = c.driverVersion() == null || c.driverVersion().isBlank() ? System.getenv("DRIVER_VERSION") : c.driverVersion().trim();
        Path proc = null;
        Path state = null;
        try {
            proc = Path.of(c.procModules());
        } catch (RuntimeException e) {
            refused.add(refusal("procModules", c.procModules(), "not a path (" + e.getMessage() + ")"));
        }
        try {
            state = Path.of(c.stateDir());
            if (!state.isAbsolute()) {
                refused.add(refusal("stateDir", c.stateDir(), "'" + c.stateDir() + "' must be absolute"));
            }
        } catch (RuntimeException e) {
            refused.add(refusal("stateDir", c.stateDir(), "not a path (" + e.getMessage() + ")"));
        }
        if (c.moduleNames() == null || c.moduleNames().length == 0) {
            refused.add(refusal("moduleNames", null, "is empty (the kernel modules of the driver)"));
        }
        if (c.validationTimeoutSeconds() < 1) {
            refused.add(refusal("validationTimeoutSeconds", c.validationTimeoutSeconds(), "must be at least 1"));
        }
        if (c.checkIntervalSeconds() < 1) {
            refused.add(refusal("checkIntervalSeconds", c.checkIntervalSeconds(), "must be at least 1"));
        }
        Path packages = null;
        if (c.packageDir() != null && !c.packageDir().isBlank()) {
            try {
                packages = Path.of(c.packageDir().trim());
                if (!packages.isAbsolute()) {
                    refused.add(refusal("packageDir", c.packageDir(), "'" + c.packageDir() + "' must be absolute"));
                }
            } catch (RuntimeException e) {
                refused.add(refusal("packageDir", c.packageDir(), "not a path (" + e.getMessage() + ")"));
            }
        }
        String mode = c.mode() == null ? "" : c.mode().trim();
        if (!"managed".equals(mode) && !"host".equals(mode)) {
            refused.add(refusal("mode", c.mode(), "'" + c.mode() + "' (expected managed or host)"));
        }
        if (!refused.isEmpty()) {
            return null;
        }
        return new DriverEngine.Settings(v == null ? null : v.trim(), proc, Set.of(c.moduleNames()), state,
                Duration.ofSeconds(c.validationTimeoutSeconds()), "host".equals(mode), packages);
    }

    private static ConfigurationRefusals.Refusal refusal(String key, Object value,
            String reason) {
        return new ConfigurationRefusals.Refusal(key, value, reason);
    }
}
