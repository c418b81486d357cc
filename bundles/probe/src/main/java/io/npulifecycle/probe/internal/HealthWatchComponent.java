package io.npulifecycle.probe.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import javax.management.DynamicMBean;
import javax.management.StandardMBean;

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

import io.npulifecycle.api.management.Mbeans;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.probe.ChipProbe;
import io.npulifecycle.api.probe.HealthWatchMXBean;
import io.npulifecycle.api.probe.ProbeResult;
import io.npulifecycle.api.time.TimeSource;

/**
 * The health-watch component, PID {@value WatchConfig#PID}: runs {@link HealthWatchEngine} on one probe thread,
 * registers the {@code io.npulifecycle:type=HealthWatch} MBean and one {@code io.npulifecycle:type=Chip,npu=N,chip=M}
 * MBean per expected chip, and posts the engine's events through EventAdmin. An invalid configuration (at
 * activation or {@code @Modified}) is logged with the PID and key and the previous (or default) one is kept.
 *
 * <p>A {@link ChipProbe} service whose {@link ChipProbe#method()} equals the configured {@code method} (e.g. the
 * simulator's) replaces the built-in npu-smi / DCMI probes.
 */
@Component(configurationPid = WatchConfig.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = HealthWatchComponent.Config.class)
public class HealthWatchComponent {

    private static final System.Logger LOG = System.getLogger(HealthWatchComponent.class.getName());

    /** Health-watch configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle health-watch", description = "Chip probing, wedge detection and recovery markers.")
    public @interface Config {
        /** @return seconds */
        @AttributeDefinition(description = "Probe period in seconds.")
        double interval() default 60;

        /** @return seconds */
        @AttributeDefinition(description = "Hard timeout of one probe in seconds; must be below interval. On expiry the npu-smi process tree is killed.")
        double timeout() default 20;

        /** @return count */
        @AttributeDefinition(description = "Consecutive failures that make a chip wedged.")
        int failureThreshold() default 3;

        /** @return count */
        @AttributeDefinition(description = "Probe errors in a row that raise probe-degraded (never a reboot).")
        int probeErrorThreshold() default 3;

        /** @return method */
        @AttributeDefinition(description = "Probe method: npu-smi or dcmi.")
        String method() default "npu-smi";

        /** @return command */
        @AttributeDefinition(description = "npu-smi command and arguments.")
        String[] npuSmiCommand() default {"/var/lib/Ascend/driver/tools/npu-smi", "info"};

        /** @return env */
        @AttributeDefinition(description = "Environment of npu-smi, KEY=VALUE elements.")
        String[] npuSmiEnvironment() default {"LD_LIBRARY_PATH=/var/lib/Ascend/driver/lib64/driver:/var/lib/Ascend/driver/lib64/common"};

        /** @return path */
        @AttributeDefinition(description = "Path of libdcmi.so for method=dcmi.")
        String dcmiLibrary() default "/var/lib/Ascend/driver/lib64/driver/libdcmi.so";

        /** @return chips */
        @AttributeDefinition(description = "Expected chips npu:chip,... ; empty = the chips seen at the first good probe of the boot.")
        String expectedChips() default "";

        /** @return flag */
        @AttributeDefinition(description = "Health Alarm/Critical is a failure (strike) instead of degraded.")
        boolean alarmIsFailure() default false;

        /** @return flag */
        @AttributeDefinition(description = "A probe that times out is a strike for every expected chip (true) or a probe error (false).")
        boolean timeoutIsFailure() default true;

        /** @return bytes */
        @AttributeDefinition(description = "Largest npu-smi output read, bytes.")
        int maxOutputBytes() default 1048576;
    }

    @Reference
    private TimeSource time;

    @Reference
    private MarkerStore markers;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile EventAdmin eventAdmin;

    private final List<ChipProbe> serviceProbes = new CopyOnWriteArrayList<>();
    private final Map<ChipId, ServiceRegistration<DynamicMBean>> chipMbeans = new ConcurrentHashMap<>();
    private BundleContext context;
    private ExecutorService executor;
    private HealthWatchEngine engine;
    private ServiceRegistration<DynamicMBean> watchMbean;
    private DcmiProbe dcmi;

    @Reference(service = ChipProbe.class, cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void bindProbe(ChipProbe p) {
        serviceProbes.add(p);
    }

    void unbindProbe(ChipProbe p) {
        serviceProbes.remove(p);
    }

    @Activate
    void activate(BundleContext ctx, Config raw) {
        this.context = ctx;
        WatchConfig cfg = validate(raw);
        if (cfg == null) {
            LOG.log(Level.ERROR, "PID " + WatchConfig.PID + ": using the default configuration");
            cfg = defaults();
        }
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "npu-health-watch");
            t.setDaemon(true);
            return t;
        });
        engine = new HealthWatchEngine(time, markers, executor, this::post, this::syncChipMbeans, cfg, probeFor(cfg));
        Dictionary<String, Object> props = new Hashtable<>();
        props.put(Mbeans.OBJECT_NAME_PROPERTY, HealthWatchMXBean.OBJECT_NAME);
        watchMbean = ctx.registerService(DynamicMBean.class, new StandardMBean(engine, HealthWatchMXBean.class, true), props);
        engine.start();
        LOG.log(Level.INFO, "health-watch started: method " + cfg.method() + ", interval " + cfg.interval()
                + ", timeout " + cfg.timeout() + ", failureThreshold " + cfg.failureThreshold());
    }

    @Modified
    void modified(Config raw) {
        WatchConfig cfg = validate(raw);
        if (cfg == null) {
            return; // logged; previous configuration kept
        }
        engine.reconfigure(cfg, probeFor(cfg));
        LOG.log(Level.INFO, "health-watch reconfigured: method " + cfg.method() + ", interval " + cfg.interval());
    }

    @Deactivate
    void deactivate() {
        engine.stop();
        executor.shutdownNow();
        if (dcmi != null) {
            dcmi.close();
        }
        unregister(watchMbean);
        chipMbeans.values().forEach(HealthWatchComponent::unregister);
        chipMbeans.clear();
    }

    static WatchConfig validate(Config c) {
        try {
            return WatchConfig.validate(c.interval(), c.timeout(), c.failureThreshold(), c.probeErrorThreshold(),
                    c.method(), c.npuSmiCommand(), c.npuSmiEnvironment(), c.dcmiLibrary(), c.expectedChips(),
                    c.alarmIsFailure(), c.timeoutIsFailure(), c.maxOutputBytes());
        } catch (WatchConfig.Invalid e) {
            LOG.log(Level.ERROR, e.getMessage() + ": keeping the previous configuration");
            return null;
        }
    }

    static WatchConfig defaults() {
        try {
            return WatchConfig.validate(60, 20, 3, 3, "npu-smi",
                    new String[] {"/var/lib/Ascend/driver/tools/npu-smi", "info"},
                    new String[] {"LD_LIBRARY_PATH=/var/lib/Ascend/driver/lib64/driver:/var/lib/Ascend/driver/lib64/common"},
                    "/var/lib/Ascend/driver/lib64/driver/libdcmi.so", "", false, true, NpuSmiParser.DEFAULT_MAX_BYTES);
        } catch (WatchConfig.Invalid e) {
            throw new IllegalStateException(e);
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
                unregister(e.getValue());
                return true;
            }
            return false;
        });
        for (ChipState s : expected) {
            chipMbeans.computeIfAbsent(s.id(), id -> {
                Dictionary<String, Object> props = new Hashtable<>();
                props.put(Mbeans.OBJECT_NAME_PROPERTY,
                        Mbeans.objectName("Chip", "npu", String.valueOf(id.npu()), "chip", String.valueOf(id.chip())));
                return ctx.registerService(DynamicMBean.class, new StandardMBean(s, ChipMXBean.class, true), props);
            });
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
