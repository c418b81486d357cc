package io.npulifecycle.management.internal;

import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

/** Liveness: the OSGi framework is ACTIVE (not stopping or being refreshed to death). */
@Component(service = HealthCheck.class, property = {
    HealthCheck.NAME + "=npu-lifecycle framework active",
    HealthCheck.TAGS + "=live"
})
public class FrameworkLiveCheck implements HealthCheck {

    private BundleContext context;

    @Activate
    void activate(BundleContext ctx) {
        this.context = ctx;
    }

    @Override
    public Result execute() {
        int state = context.getBundle(0).getState();
        return state == Bundle.ACTIVE
                ? new Result(Result.Status.OK, "Framework is ACTIVE")
                : new Result(Result.Status.CRITICAL, "Framework is " + Bundles.stateName(state));
    }
}
