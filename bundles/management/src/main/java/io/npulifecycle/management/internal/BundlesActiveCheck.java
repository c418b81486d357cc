package io.npulifecycle.management.internal;

import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.startlevel.FrameworkStartLevel;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

/**
 * Readiness: every bundle (except fragments and bundles above the framework's start level) is ACTIVE. A bundle
 * dropped into {@code deploy/} that cannot resolve makes the runtime not ready, so the operator sees it; the message
 * names its missing requirements ({@link ResolutionProblems}).
 */
@Component(service = HealthCheck.class, property = {
    HealthCheck.NAME + "=npu-lifecycle bundles active",
    HealthCheck.TAGS + "=ready"
})
public class BundlesActiveCheck implements HealthCheck {

    private BundleContext context;

    @Activate
    void activate(BundleContext ctx) {
        this.context = ctx;
    }

    @Override
    public Result execute() {
        FormattingResultLog log = new FormattingResultLog();
        FrameworkStartLevel fsl = context.getBundle(0).adapt(FrameworkStartLevel.class);
        int frameworkLevel = fsl == null ? Integer.MAX_VALUE : fsl.getStartLevel();
        int notActive = 0;
        Bundle[] all = context.getBundles();
        for (Bundle b : all) {
            if (b.getState() == Bundle.ACTIVE || Bundles.isFragment(b) || Bundles.startLevel(b) > frameworkLevel) {
                continue;
            }
            notActive++;
            if (b.getState() == Bundle.INSTALLED) {
                log.critical("Bundle {} {} (id {}) is INSTALLED, not resolved: {}", b.getSymbolicName(),
                        b.getVersion(), b.getBundleId(), ResolutionProblems.why(b, all));
            } else {
                log.critical("Bundle {} {} (id {}) is {}", b.getSymbolicName(), b.getVersion(), b.getBundleId(),
                        Bundles.stateName(b.getState()));
            }
        }
        if (notActive == 0) {
            log.info("All bundles are ACTIVE");
        }
        return new Result(log);
    }
}
