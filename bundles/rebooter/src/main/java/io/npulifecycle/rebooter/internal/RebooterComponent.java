package io.npulifecycle.rebooter.internal;

import io.npulifecycle.api.reboot.RebooterMXBean;

import java.lang.System.Logger.Level;
import java.util.EnumSet;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.osgi.framework.BundleContext;

import io.npulifecycle.api.faults.PlantedBug;
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

import io.npulifecycle.api.management.ConfigDefaults;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.RefusalReporter;
import io.npulifecycle.api.markers.MarkerListener;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.node.PolicySource;
import io.npulifecycle.api.reboot.RebootExecutor;
import io.npulifecycle.api.time.Loop;
import io.npulifecycle.api.time.TimeSource;

/**
 * The rebooter, PID {@value #PID}: runs {@link RebootEngine#evaluate()} every {@code pollIntervalSeconds} (TimeSource)
 * and at once when a marker changes or the Node's approval or the policy changes (EventAdmin topic
 * {@value NodeKeys#TOPIC_NODE_CHANGED}); registers the {@code io.npulifecycle:type=Rebooter} MBean. The Kubernetes
 * services and the executor are optional and dynamic: without them the policy is unknown, no approval can be used and
 * nothing reboots. An invalid configuration is logged naming the PID and the key; the previous one is kept.
 */
@Component(configurationPid = RebooterComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true,
        service = EventHandler.class, property = EventConstants.EVENT_TOPIC + "=" + NodeKeys.TOPIC_NODE_CHANGED)
@Designate(ocd = RebooterComponent.Config.class)
public class RebooterComponent implements EventHandler {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.rebooter";
    private static final System.Logger LOG = System.getLogger(RebooterComponent.class.getName());

    /** Configuration of the rebooter. */
    @ObjectClassDefinition(name = "npu-lifecycle rebooter", description = "The node reboot path: policy or approval, re-check, loop protection.")
    public @interface Config {
        /** @return poll interval */
        @AttributeDefinition(name = "Poll interval (seconds)", description = "Seconds between two evaluations (the rebooter is also woken at once by marker and node changes).", min = "1")
        int pollIntervalSeconds() default 30;

        /** @return state folder */
        @AttributeDefinition(name = "State folder", description = "Persistent host folder of rebooter.state (reboot history, consumed approvals); must outlive a reboot.")
        String stateDir() default RebootEngine.Settings.DEFAULT_STATE_DIR;

        /** @return max reboots */
        @AttributeDefinition(name = "Recovery reboot limit", description = "Most automatic recovery reboots per window (spec.driver.recoveryPolicy.maxReboots overrides).", min = "0")
        int recovery_maxReboots() default RebootEngine.Settings.DEFAULT_MAX_REBOOTS;

        /** @return window */
        @AttributeDefinition(name = "Recovery window", description = "Window of the recovery reboot limit, e.g. 24h, 90m (spec.driver.recoveryPolicy.window overrides).")
        String recovery_window() default RebootEngine.Settings.DEFAULT_WINDOW_HOURS + "h";

        /** @return dry run */
        @AttributeDefinition(name = "Dry run", description = "Log and record what would be done, never reboot and never consume an approval (first installs).")
        boolean dryRun() default false;

        /** @return flush timeout */
        @AttributeDefinition(name = "Flush timeout (seconds)", description = "Seconds to wait for the Node writes (Rebooting Event) before the reboot call.", min = "0")
        int flushTimeoutSeconds() default RebootEngine.Settings.DEFAULT_FLUSH_TIMEOUT_SECONDS;
    }

    private final MarkerStore markers;
    private final TimeSource time;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile PolicySource policySource;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile ApprovalService approvalService;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile NodeWriter nodeWriter;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile RebootExecutor executor;

    private RebootEngine engine;
    private Loop loop;
    private MBeanRegistrations.Registration mbean;
    private org.osgi.framework.ServiceRegistration<io.npulifecycle.api.metrics.MetricSource> metricSource;
    private final MarkerListener listener = c -> wake();

    /**
     * @param markers the marker store (read each round, and a listener wakes the rebooter on a change)
     * @param time the runtime clock
     */
    @Activate
    public RebooterComponent(@Reference(name = "markers") MarkerStore markers,
            @Reference(name = "time") TimeSource time) {
        this.markers = markers;
        this.time = time;
    }

    private void wake() {
        Loop l = loop;
        if (l != null) {
            l.wake();
        }
    }

    @Activate
    void activate(BundleContext ctx, Config config) {
        RebootEngine.Settings s = reported(config);
        Config running = config;
        if (s == null) {
            LOG.log(Level.ERROR, "PID " + PID + ": invalid configuration, using the defaults");
            running = ConfigDefaults.of(Config.class);
            s = settings(running, new ArrayList<>());
        }
        Duration poll = Duration.ofSeconds(running.pollIntervalSeconds());
        engine = new RebootEngine(markers, () -> policySource, () -> approvalService, () -> nodeWriter, () -> executor,
                time, s);
        engine.plant(PlantedBug.plantedIn(ctx.getProperty(PlantedBug.PROPERTY), "rebooter",
                EnumSet.of(PlantedBug.REBOOT_UNANNOUNCED, PlantedBug.REBOOT_UNAUTHORISED), LOG));
        loop = new Loop("npu-rebooter", time, poll, engine::evaluate);
        metricSource = ctx.registerService(io.npulifecycle.api.metrics.MetricSource.class,
                new RebootMeasurements(engine), null);
        markers.addListener(listener);
        try {
            mbean = MBeanRegistrations.register(ctx, RebooterMXBean.class, new RebooterMBean(engine),
                    RebooterMXBean.OBJECT_NAME);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "cannot register the Rebooter MBean", e);
        }
        LOG.log(Level.INFO, "rebooter active: poll every " + poll.toSeconds() + " s, state " + engine.getStateFile()
                + ", executor: " + engine.getExecutor() + (s.dryRun() ? ", dryRun" : ""));
        loop.start();
    }

    @Modified
    void modified(Config config) {
        RebootEngine.Settings s = reported(config);
        if (s == null) {
            LOG.log(Level.ERROR, "PID " + PID + ": keeping the previous configuration");
            return;
        }
        loop.period(Duration.ofSeconds(config.pollIntervalSeconds()));
        engine.reconfigure(s);
        LOG.log(Level.INFO, "rebooter reconfigured: poll every " + loop.period().toSeconds() + " s, state " + engine.getStateFile()
                + (s.dryRun() ? ", dryRun" : ""));
        wake();
    }

    @Deactivate
    void deactivate() {
        markers.removeListener(listener);
        loop.stop();
        if (mbean != null) {
            mbean.unregister();
        }
        if (metricSource != null) {
            try {
                metricSource.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping: the framework removed it
            }
        }
    }

    void setExecutor(RebootExecutor e) {
        this.executor = e;
    }

    @Override
    public void handleEvent(Event event) {
        wake();
    }

    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final RefusalReporter refusals = new RefusalReporter();

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        restarts the rebooter)
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
    RebootEngine.Settings reported(Config c) {
        return refusals.check(PID, refused -> settings(c, refused), LOG);
    }

    /**
     * @param c the configuration
     * @param refused receives every refused value, in the order of the keys checked
     * @return the settings, or {@code null} when a value is refused
     */
    static RebootEngine.Settings settings(Config c, List<ConfigurationRefusals.Refusal> refused) {
        Path dir = null;
        try {
            dir = Path.of(c.stateDir().trim());
            if (!dir.isAbsolute()) {
                refused.add(refusal("stateDir", c.stateDir(), "'" + c.stateDir() + "' must be an absolute path"));
            }
        } catch (InvalidPathException | NullPointerException e) {
            refused.add(refusal("stateDir", c.stateDir(), "'" + c.stateDir() + "' is not a path"));
        }
        if (c.pollIntervalSeconds() < 1) {
            refused.add(refusal("pollIntervalSeconds", c.pollIntervalSeconds(),
                    c.pollIntervalSeconds() + " must be at least 1"));
        }
        if (c.recovery_maxReboots() < 0) {
            refused.add(refusal("recovery.maxReboots", c.recovery_maxReboots(),
                    c.recovery_maxReboots() + " must be 0 or more"));
        }
        Duration w = parseDuration(c.recovery_window());
        if (w == null) {
            refused.add(refusal("recovery.window", c.recovery_window(),
                    "'" + c.recovery_window() + "' is not a duration like 24h, 1h30m or 90s"));
        }
        if (c.flushTimeoutSeconds() < 0) {
            refused.add(refusal("flushTimeoutSeconds", c.flushTimeoutSeconds(), "must be 0 or more"));
        }
        if (!refused.isEmpty()) {
            return null;
        }
        return RebootEngine.Settings.builder().stateDir(dir).maxReboots(c.recovery_maxReboots()).window(w)
                .dryRun(c.dryRun()).flushTimeoutMillis(c.flushTimeoutSeconds() * 1000L).build();
    }

    private static ConfigurationRefusals.Refusal refusal(String key, Object value, String reason) {
        return new ConfigurationRefusals.Refusal(key, value, reason);
    }

    /** @return a duration such as {@code 24h}, {@code 1h30m}, {@code 90s}, or {@code null} */
    static Duration parseDuration(String text) {
        if (text == null) {
            return null;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?:([0-9]{1,6})h)?(?:([0-9]{1,6})m)?(?:([0-9]{1,8})s)?")
                .matcher(text.trim());
        if (text.isBlank() || !m.matches()) {
            return null;
        }
        long s = (m.group(1) == null ? 0 : Long.parseLong(m.group(1)) * 3600)
                + (m.group(2) == null ? 0 : Long.parseLong(m.group(2)) * 60)
                + (m.group(3) == null ? 0 : Long.parseLong(m.group(3)));
        return s == 0 ? null : Duration.ofSeconds(s);
    }
}
