package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Dictionary;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

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
import org.osgi.service.event.Event;
import org.osgi.service.event.EventAdmin;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;
import org.apache.felix.hc.api.HealthCheck;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.management.ConfigDefaults;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.Mbeans;
import io.npulifecycle.api.management.RefusalReporter;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.HealthWatchMXBean;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.api.time.TimeSource;

/**
 * The health-watch component, PID {@value WatchConfig#PID}: runs {@link HealthWatchEngine} on one probe thread,
 * registers the {@code io.npulifecycle:type=HealthWatch} MBean and one {@code io.npulifecycle:type=Chip,name=npuN-chipM}
 * MBean per expected chip, and posts the engine's events through EventAdmin. An invalid configuration (at
 * activation or {@code @Modified}) is logged with the PID, the configuration file ({@code felix.fileinstall.filename})
 * and the key, and the previous (or, at activation, the default) one is kept. A {@code method} that is neither
 * {@code npu-smi}, {@code dcmi} nor the method of a registered {@link ChipProbe} service is such an invalid
 * configuration (a misspelt method such as {@code npu_smi} would otherwise judge no chip at all); when a ChipProbe
 * service with that method registers later, the rejected configuration is applied then.
 *
 * <p>Registers the Felix Health Check {@value HealthWatchCheck#NAME} (tag {@code ready}, {@link HealthWatchCheck}).
 *
 * <p>A {@link ChipProbe} service whose {@link ChipProbe#method()} equals the configured {@code method} (e.g. the
 * simulator's) replaces the built-in npu-smi / DCMI probes.
 */
@Component(configurationPid = WatchConfig.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = HealthWatchComponent.Config.class)
public class HealthWatchComponent {

    private static final System.Logger LOG = System.getLogger(HealthWatchComponent.class.getName());
    /** Property of a configuration read by Felix FileInstall naming its file. */
    static final String FILE_PROPERTY = "felix.fileinstall.filename";

    /** Health-watch configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle health-watch", description = "Chip probing, wedge detection and recovery markers.")
    public @interface Config {
        /** @return seconds */
        @AttributeDefinition(name = "Probe interval (seconds)", description = "Probe period in seconds.")
        double interval() default 60;

        /** @return seconds */
        @AttributeDefinition(name = "Probe timeout (seconds)", description = "Hard timeout of one probe in seconds; must be below interval. On expiry the npu-smi process tree is killed.")
        double timeout() default 20;

        /** @return count */
        @AttributeDefinition(name = "Failure threshold", description = "Consecutive failures that make a chip wedged.")
        int failureThreshold() default 3;

        /** @return count */
        @AttributeDefinition(name = "Probe error threshold", description = "Probe errors in a row that raise probe-degraded (never a reboot).")
        int probeErrorThreshold() default 3;

        /** @return method */
        @AttributeDefinition(name = "Probe method", description = "Probe method: npu-smi or dcmi (or the method of a registered ChipProbe "
                + "service, e.g. the simulator's). Any other value is rejected and the previous configuration kept.",
                options = {@Option(label = "npu-smi", value = "npu-smi"), @Option(label = "dcmi", value = "dcmi")})
        String method() default "npu-smi";

        /** @return command */
        @AttributeDefinition(name = "npu-smi command", description = "npu-smi command and arguments.")
        String[] npuSmiCommand() default {"/var/lib/Ascend/driver/tools/npu-smi", "info"};

        /** @return env */
        @AttributeDefinition(name = "npu-smi environment", description = "Environment of npu-smi, KEY=VALUE elements.")
        String[] npuSmiEnvironment() default {"LD_LIBRARY_PATH=/var/lib/Ascend/driver/lib64/driver:/var/lib/Ascend/driver/lib64/common"};

        /** @return path */
        @AttributeDefinition(name = "DCMI library", description = "Path of libdcmi.so for method=dcmi.")
        String dcmiLibrary() default "/var/lib/Ascend/driver/lib64/driver/libdcmi.so";

        /** @return chips */
        @AttributeDefinition(name = "Expected chips", description = "Expected chips npu:chip,... ; empty = the chips seen at the first good probe of the boot.")
        String expectedChips() default "";

        /** @return flag */
        @AttributeDefinition(name = "Alarm is a failure", description = "Health Alarm/Critical is a failure (strike) instead of degraded.")
        boolean alarmIsFailure() default false;

        /**
         * Default {@code true} on purpose: a wedged driver makes npu-smi hang (the field symptom), and a hang must
         * be a strike so that such a wedge is recovered. This differs from the fixtures README, which calls a
         * time-out a probe error. Set {@code false} to follow the README (a hang then never leads to a reboot).
         *
         * @return flag
         */
        @AttributeDefinition(name = "Time-out is a failure", description = "A probe that times out is a strike for every expected chip (true, the "
                + "default) or a probe error (false). Default true because a wedged driver makes npu-smi hang, and a "
                + "hang that never strikes would leave a wedged node unrecovered; false follows the fixtures README, "
                + "which calls a time-out a probe error (a hang then never leads to a reboot).")
        boolean timeoutIsFailure() default true;

        /** @return bytes */
        @AttributeDefinition(name = "Largest npu-smi output (bytes)", description = "Largest npu-smi output read, bytes (4096 to 1048576). More is a probe "
                + "error 'npu-smi printed more than N bytes' and the process tree is killed at once.", min = "4096",
                max = "" + NpuSmiParser.DEFAULT_MAX_BYTES)
        int maxOutputBytes() default NpuSmiParser.DEFAULT_MAX_BYTES;

        /** @return path */
        @AttributeDefinition(name = "Kernel module list", description = "Kernel module list (/proc/modules on a host). When set, the chips are not "
                + "judged while none of driverModules is loaded (right after a boot, before the driver bundle loads "
                + "the driver): the probe is a probe error, never a strike. Empty = no check.")
        String driverModulesFile() default "";

        /** @return module names */
        @AttributeDefinition(name = "Driver modules", description = "NPU driver kernel modules; any one of them loaded = a driver is loaded.")
        String[] driverModules() default {"drv_davinci_intf", "drv_devdrv"};
    }

    @Reference
    private TimeSource time;

    @Reference
    private MarkerStore markers;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile EventAdmin eventAdmin;

    private final List<ChipProbe> serviceProbes = new CopyOnWriteArrayList<>();
    private final Map<ChipId, MBeanRegistrations.Registration> chipMbeans = new ConcurrentHashMap<>();
    private BundleContext context;
    private ExecutorService executor;
    private volatile HealthWatchEngine engine;
    private MBeanRegistrations.Registration watchMbean;
    private DcmiProbe dcmi;
    private ServiceRegistration<HealthCheck> healthCheck;
    private ServiceRegistration<io.npulifecycle.api.metrics.MetricSource> metricSource;
    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final RefusalReporter refusals = new RefusalReporter();
    /** A configuration rejected only for its method, applied when a ChipProbe service with that method registers. */
    private Config pendingRaw;
    private Map<String, Object> pendingProps;

    @Reference(service = ChipProbe.class, cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void bindProbe(ChipProbe p) {
        serviceProbes.add(p);
        Config raw;
        Map<String, Object> props;
        synchronized (this) {
            raw = pendingRaw;
            props = pendingProps;
        }
        if (raw != null && engine != null && p.method().equals(raw.method().trim())) {
            LOG.log(Level.INFO, "PID " + WatchConfig.PID + ": a ChipProbe service for method '" + p.method()
                    + "' registered; applying the configuration rejected for it");
            modified(raw, props);
        }
    }

    void unbindProbe(ChipProbe p) {
        serviceProbes.remove(p);
    }

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        restarts the health-watch)
     */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    void bindRefusals(ConfigurationRefusals r) {
        refusals.bind(r);
    }

    /** @param r the service that goes away */
    void unbindRefusals(ConfigurationRefusals r) {
        refusals.unbind(r);
    }

    @Activate
    void activate(BundleContext ctx, Config raw, Map<String, Object> props) {
        this.context = ctx;
        WatchConfig cfg = validate(raw, props, "using the default configuration");
        if (cfg == null) {
            cfg = defaults();
        }
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "npu-health-watch");
            t.setDaemon(true);
            return t;
        });
        engine = new HealthWatchEngine(time, markers, executor, this::post, this::syncChipMbeans, cfg, probeFor(cfg));
        engine.driverLoaded(driverCheck(raw));
        engine.plant(PlantedBug.plantedIn(ctx.getProperty(PlantedBug.PROPERTY), "health-watch",
                EnumSet.of(PlantedBug.MEMORY_LEAK), LOG));
        watchMbean = MBeanRegistrations.register(ctx, HealthWatchMXBean.class, new HealthWatchMBean(engine),
                HealthWatchMXBean.OBJECT_NAME);
        Dictionary<String, Object> hc = new Hashtable<>();
        hc.put(HealthCheck.NAME, HealthWatchCheck.NAME);
        hc.put(HealthCheck.TAGS, HealthWatchCheck.TAGS);
        healthCheck = ctx.registerService(HealthCheck.class, new HealthWatchCheck(() -> engine, this::hasProbe), hc);
        metricSource = ctx.registerService(io.npulifecycle.api.metrics.MetricSource.class, engine.measurements(), null);
        engine.start();
        LOG.log(Level.INFO, "health-watch started: method " + cfg.method() + ", interval " + cfg.interval()
                + ", timeout " + cfg.timeout() + ", failureThreshold " + cfg.failureThreshold());
    }

    @Modified
    synchronized void modified(Config raw, Map<String, Object> props) {
        WatchConfig cfg = validate(raw, props, "keeping the previous configuration");
        if (cfg == null) {
            return; // logged; previous configuration kept
        }
        engine.reconfigure(cfg, probeFor(cfg));
        engine.driverLoaded(driverCheck(raw));
        LOG.log(Level.INFO, "health-watch reconfigured: method " + cfg.method() + ", interval " + cfg.interval());
    }

    /**
     * @return {@code null} when no module file is configured, else whether an NPU driver module is loaded now
     *         ({@code null} too when the file cannot be read: the check never blocks probing by itself)
     */
    static java.util.function.Supplier<String> driverCheck(Config raw) {
        String file = raw.driverModulesFile() == null ? "" : raw.driverModulesFile().trim();
        if (file.isEmpty()) {
            return () -> null;
        }
        java.util.List<String> names = java.util.Arrays.asList(raw.driverModules());
        return () -> {
            try {
                for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of(file))) {
                    int sp = line.indexOf(' ');
                    if (names.contains(sp < 0 ? line.trim() : line.substring(0, sp))) {
                        return null;
                    }
                }
                return "no NPU driver module (" + String.join(", ", names) + ") is loaded per " + file
                        + ": the chips are not judged until the driver is loaded";
            } catch (java.io.IOException | RuntimeException e) {
                return null;
            }
        };
    }

    @Deactivate
    void deactivate() {
        engine.stop();
        executor.shutdownNow();
        if (dcmi != null) {
            dcmi.close();
        }
        unregister(healthCheck);
        unregister(metricSource);
        watchMbean.unregister();
        chipMbeans.values().forEach(MBeanRegistrations.Registration::unregister);
        chipMbeans.clear();
    }

    /**
     * Validates a configuration; an invalid one is logged at ERROR as {@code PID io.npulifecycle.probe
     * (file:/x/etc/io.npulifecycle.probe.cfg) key timeout: must be below interval (60 s), got 90; keeping the
     * previous configuration}.
     *
     * @param c the configuration
     * @param props the component properties ({@code felix.fileinstall.filename} names the file), may be {@code null}
     * @param fallback what the caller does on rejection, for the log line
     * @return the configuration, or {@code null} when invalid (logged)
     */
    WatchConfig validate(Config c, Map<String, Object> props, String fallback) {
        Object file = props == null ? null : props.get(FILE_PROPERTY);
        try {
            WatchConfig cfg = parse(c);
            WatchConfig.checkMethod(cfg.method(), registeredMethods());
            synchronized (this) {
                pendingRaw = null;
                pendingProps = null;
            }
            refusals.accepted(WatchConfig.PID);
            return cfg;
        } catch (WatchConfig.Invalid e) {
            ConfigurationRefusals r = refusals.service();
            if (r != null) {
                List<ConfigurationRefusals.Refusal> all = new java.util.ArrayList<>();
                for (String[] p : e.problems()) {
                    all.add(new ConfigurationRefusals.Refusal(p[0], props == null ? null : props.get(p[0]), p[1]));
                }
                r.refused(WatchConfig.PID, file, all);
            }
            if (e.problems().size() == 1 && "method".equals(e.key())) {
                synchronized (this) {
                    pendingRaw = c;
                    pendingProps = props;
                }
            }
            LOG.log(Level.ERROR, e.message(file) + "; " + fallback);
            return null;
        }
    }

    private List<String> registeredMethods() {
        List<String> out = new java.util.ArrayList<>();
        for (ChipProbe p : serviceProbes) {
            out.add(p.method());
        }
        return out;
    }

    /**
     * @param method a configured method
     * @return whether a probe serves it: built in or a registered ChipProbe service
     */
    boolean hasProbe(String method) {
        return WatchConfig.BUILT_IN_METHODS.contains(method) || registeredMethods().contains(method);
    }

    /**
     * @param c a configuration
     * @return it checked, key by key and across keys ({@link WatchConfig#validate}); the method is not checked
     *         against the registered probes here
     * @throws WatchConfig.Invalid every refused value
     */
    static WatchConfig parse(Config c) throws WatchConfig.Invalid {
        return WatchConfig.validate(c.interval(), c.timeout(), c.failureThreshold(), c.probeErrorThreshold(),
                c.method(), c.npuSmiCommand(), c.npuSmiEnvironment(), c.dcmiLibrary(), c.expectedChips(),
                c.alarmIsFailure(), c.timeoutIsFailure(), c.maxOutputBytes());
    }

    /**
     * @return the configuration of the metatype defaults ({@link ConfigDefaults}), what runs when the configuration
     *         is refused at activation
     * @throws IllegalStateException when the defaults themselves are refused (a defect of this class)
     */
    static WatchConfig defaults() {
        try {
            return parse(ConfigDefaults.of(Config.class));
        } catch (WatchConfig.Invalid e) {
            throw new IllegalStateException("the metatype defaults of " + WatchConfig.PID + " are refused: "
                    + e.message(null), e);
        }
    }

    private ChipProbe probeFor(WatchConfig cfg) {
        ChipProbe builtIn;
        if ("dcmi".equals(cfg.method())) {
            if (dcmi != null) {
                dcmi.close();
            }
            dcmi = new DcmiProbe(cfg.dcmiLibrary(), cfg.options());
            builtIn = dcmi;
        } else {
            builtIn = new NpuSmiProbe(cfg.command(), cfg.environment(), cfg.maxOutputBytes(), cfg.options());
        }
        String method = cfg.method();
        return new ChipProbe() {
            @Override
            public String method() {
                return method;
            }

            @Override
            public ProbeResult probe(Duration timeout) {
                for (ChipProbe p : serviceProbes) {
                    if (method.equals(p.method())) {
                        return p.probe(timeout);
                    }
                }
                if (!"npu-smi".equals(method) && !"dcmi".equals(method)) {
                    return ProbeResult.whole(io.npulifecycle.api.probe.Classification.PROBE_ERROR,
                            "no ChipProbe service for method '" + method + "'", null);
                }
                return builtIn.probe(timeout);
            }
        };
    }

    private void syncChipMbeans(List<ChipState> expected) {
        BundleContext ctx = context;
        if (ctx == null) {
            return;
        }
        Map<ChipId, ChipState> want = new HashMap<>();
        expected.forEach(s -> want.put(s.id(), s));
        chipMbeans.entrySet().removeIf(e -> {
            if (!want.containsKey(e.getKey())) {
                e.getValue().unregister();
                return true;
            }
            return false;
        });
        for (ChipState s : expected) {
            chipMbeans.computeIfAbsent(s.id(), id -> MBeanRegistrations.register(ctx, ChipMXBean.class,
                    new ChipMBean(s), Mbeans.chipObjectName(id.npu(), id.chip())));
        }
    }

    private void post(String topic, Map<String, Object> props) {
        EventAdmin ea = eventAdmin;
        if (ea != null) {
            ea.postEvent(new Event(topic, props));
        }
    }

    private static void unregister(ServiceRegistration<?> r) {
        if (r == null) {
            return;
        }
        try {
            r.unregister();
        } catch (IllegalStateException ignored) {
            // already unregistered with the bundle
        }
    }
}
