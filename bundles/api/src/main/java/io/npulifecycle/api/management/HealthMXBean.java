package io.npulifecycle.api.management;

import java.util.List;

/**
 * Management interface of {@code io.npulifecycle:type=Health}: why the runtime is or is not ready, readable by every
 * authenticated Jolokia user (viewer included). {@code /health/ready} and {@code /health/live} say only the worst
 * status, without details, to anyone; this MBean says which check and why.
 */
@Description("Why the runtime is or is not ready (io.npulifecycle:type=Health): each Felix health check and each "
        + "unresolved bundle.")
public interface HealthMXBean {

    /** Object name. */
    String OBJECT_NAME = Mbeans.DOMAIN + ":type=Health";

    /**
     * @return the worst status of the checks tagged {@code ready}, what {@code /health/ready} answers: {@code OK},
     *         {@code WARN}, {@code TEMPORARILY_UNAVAILABLE}, {@code CRITICAL} or {@code HEALTH_CHECK_ERROR}
     */
    @Description("The worst status of the checks tagged ready, what /health/ready answers: OK, WARN, "
            + "TEMPORARILY_UNAVAILABLE, CRITICAL or HEALTH_CHECK_ERROR.")
    String getReadyStatus();

    /** @return the worst status of the checks tagged {@code live}, what {@code /health/live} answers */
    @Description("The worst status of the checks tagged live, what /health/live answers.")
    String getLiveStatus();

    /** @return every Felix health check of the runtime, evaluated now, by name */
    @Description("Every Felix health check of the runtime, evaluated now, by name.")
    List<HealthCheckState> getChecks();

    /**
     * @return each bundle that should be ACTIVE and is not resolved (not a fragment, at or below the framework's start
     *         level), as {@code <symbolic name> <version> (id <n>): <why>}, where why names the requirements no
     *         installed bundle provides, e.g. {@code missing requirement osgi.wiring.package;
     *         (&(osgi.wiring.package=com.example.missing)(version>=1.0.0))}; empty when every bundle resolved
     */
    @Description("Each bundle that should be ACTIVE and is not resolved (not a fragment, at or below the framework's start "
            + "level), as <symbolic name> <version> (id <n>): <why>, where why names the requirements no installed "
            + "bundle provides, e.g. missing requirement osgi.wiring.package; "
            + "(&(osgi.wiring.package=com.example.missing)(version>=1.0.0)); empty when every bundle resolved.")
    List<String> getUnresolvedBundles();
}
