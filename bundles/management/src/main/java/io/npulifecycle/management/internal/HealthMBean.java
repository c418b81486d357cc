package io.npulifecycle.management.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.management.DynamicMBean;

import org.apache.felix.hc.api.Result;
import org.apache.felix.hc.api.ResultLog;
import org.apache.felix.hc.api.execution.HealthCheckExecutionResult;
import org.apache.felix.hc.api.execution.HealthCheckExecutor;
import org.apache.felix.hc.api.execution.HealthCheckSelector;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.startlevel.FrameworkStartLevel;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

import io.npulifecycle.api.management.DescribedMBean;
import io.npulifecycle.api.management.HealthCheckState;
import io.npulifecycle.api.management.HealthMXBean;
import io.npulifecycle.api.management.Mbeans;
import io.npulifecycle.api.time.TimeSource;

/**
 * The MBean {@code io.npulifecycle:type=Health}: every Felix health check with its status, message and since when,
 * and the reason of each unresolved bundle ({@link ResolutionProblems}). The checks run on each read, and every
 * {@value #PERIOD_SECONDS} s (wall clock) so that "since" is known within that period even when nobody reads.
 */
@Component(service = DynamicMBean.class, property = Mbeans.OBJECT_NAME_PROPERTY + "=" + HealthMXBean.OBJECT_NAME)
public class HealthMBean extends DescribedMBean implements HealthMXBean {

    static final long PERIOD_SECONDS = 10;
    /** Longest message reported per check, characters. */
    static final int MAX_MESSAGE = 2000;

    @Reference
    private HealthCheckExecutor executor;
    @Reference
    private TimeSource time;

    private BundleContext context;
    private final StatusSince since = new StatusSince();
    private WallPeriod period;

    /** DS constructor. */
    public HealthMBean() {
        super(HealthMXBean.class);
    }

    @Activate
    void activate(BundleContext ctx) {
        this.context = ctx;
        period = new WallPeriod(time, PERIOD_SECONDS, () -> {
            try {
                getChecks();
            } catch (RuntimeException e) {
                // a failing executor is reported by the next read
            }
        });
        period.start();
    }

    @Deactivate
    void deactivate() {
        if (period != null) {
            period.stop();
        }
    }

    @Override
    public String getReadyStatus() {
        return worst("ready");
    }

    @Override
    public String getLiveStatus() {
        return worst("live");
    }

    private String worst(String tag) {
        Result.Status worst = null;
        for (HealthCheckState c : getChecks()) {
            if (c.getTags().contains(tag)) {
                Result.Status s = Result.Status.valueOf(c.getStatus());
                worst = worst == null || s.ordinal() > worst.ordinal() ? s : worst;
            }
        }
        // no check carries the tag: nothing has said the runtime is fine (as /health/*)
        return (worst == null ? Result.Status.CRITICAL : worst).name();
    }

    @Override
    public List<HealthCheckState> getChecks() {
        Map<String, HealthCheckExecutionResult> byName = new TreeMap<>();
        for (String tag : new String[] {"live", "ready"}) {
            for (HealthCheckExecutionResult r : executor.execute(HealthCheckSelector.tags(tag))) {
                byName.put(r.getHealthCheckMetadata().getName(), r);
            }
        }
        List<HealthCheckState> out = new ArrayList<>();
        Map<String, String> statuses = new LinkedHashMap<>();
        for (Map.Entry<String, HealthCheckExecutionResult> e : byName.entrySet()) {
            Result result = e.getValue().getHealthCheckResult();
            String status = result.getStatus().name();
            statuses.put(e.getKey(), status);
            out.add(new HealthCheckState(e.getKey(), e.getValue().getHealthCheckMetadata().getTags(), status,
                    message(result), null));
        }
        Map<String, java.time.Instant> when = since.update(statuses, time.now());
        List<HealthCheckState> dated = new ArrayList<>();
        for (HealthCheckState c : out) {
            dated.add(new HealthCheckState(c.getName(), c.getTags(), c.getStatus(), c.getMessage(),
                    when.get(c.getName()).toString()));
        }
        return dated;
    }

    /** @return the entries of the result's own status joined, else all of them */
    static String message(Result result) {
        List<String> worst = new ArrayList<>();
        List<String> all = new ArrayList<>();
        for (ResultLog.Entry entry : result) {
            if (entry.isDebug()) {
                continue;
            }
            all.add(entry.getMessage());
            if (entry.getStatus() == result.getStatus()) {
                worst.add(entry.getMessage());
            }
        }
        String m = String.join("; ", worst.isEmpty() ? all : worst);
        return m.length() > MAX_MESSAGE ? m.substring(0, MAX_MESSAGE) + "..." : m;
    }

    @Override
    public List<String> getUnresolvedBundles() {
        FrameworkStartLevel fsl = context.getBundle(0).adapt(FrameworkStartLevel.class);
        int frameworkLevel = fsl == null ? Integer.MAX_VALUE : fsl.getStartLevel();
        Bundle[] all = context.getBundles();
        List<String> out = new ArrayList<>();
        for (Bundle b : all) {
            if (b.getState() == Bundle.INSTALLED && !Bundles.isFragment(b) && Bundles.startLevel(b) <= frameworkLevel) {
                out.add(b.getSymbolicName() + " " + b.getVersion() + " (id " + b.getBundleId() + "): "
                        + ResolutionProblems.why(b, all));
            }
        }
        return out;
    }
}
