package io.npulifecycle.api.management;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * How a component holds the {@link ConfigurationRefusals} service and reports to it: one per component, bound and
 * unbound by the component's DS event methods of an optional, dynamic reference, so that the service's arrival or
 * departure never restarts the component, and a test hands it a recording service the same way:
 *
 * <pre>
 * private final RefusalReporter refusals = new RefusalReporter();
 *
 * &#64;Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
 * void bindRefusals(ConfigurationRefusals r) { refusals.bind(r); }
 * void unbindRefusals(ConfigurationRefusals r) { refusals.unbind(r); }
 *
 * Settings s = refusals.check(PID, refused -&gt; settings(config, refused), LOG);
 * </pre>
 *
 * Thread-safe.
 */
public final class RefusalReporter {

    private volatile ConfigurationRefusals service;

    /** @param s the service now bound (DS bind method) */
    public synchronized void bind(ConfigurationRefusals s) {
        service = s;
    }

    /** @param s the service that goes away (DS unbind method); another one bound since is kept */
    public synchronized void unbind(ConfigurationRefusals s) {
        if (service == s) {
            service = null;
        }
    }

    /** @return the bound service, or {@code null} while there is none */
    public ConfigurationRefusals service() {
        return service;
    }

    /**
     * Runs one check of a configuration and reports its outcome with
     * {@link ConfigurationRefusals#report(ConfigurationRefusals, String, List, System.Logger)}: every refused value in
     * one ERROR line of {@code log} and to the service, or the configuration accepted.
     *
     * @param <S> what the check makes of an accepted configuration, e.g. the engine's settings
     * @param pid the configuration's PID, e.g. {@code io.npulifecycle.rebooter}
     * @param check the check: adds each refused value to the list it is given, in the order it checks the keys, and
     *        answers the result (anything, {@code null} included, once it refused a value)
     * @param log where a refusal is logged
     * @return the check's result, or {@code null} when it refused a value
     */
    public <S> S check(String pid, Function<List<ConfigurationRefusals.Refusal>, S> check, System.Logger log) {
        List<ConfigurationRefusals.Refusal> refused = new ArrayList<>();
        S result = check.apply(refused);
        ConfigurationRefusals.report(service, pid, refused, log);
        return refused.isEmpty() ? result : null;
    }

    /**
     * Reports one refused value to the service, when there is one, without logging it (for a component that logs its
     * refusals in its own words).
     *
     * @param pid the configuration's PID
     * @param key the key at fault
     * @param value the refused value as configured, or {@code null}
     * @param reason what was expected
     */
    public void refused(String pid, String key, Object value, String reason) {
        ConfigurationRefusals s = service;
        if (s != null) {
            s.refused(pid, null, key, value, reason);
        }
    }

    /**
     * Reports that the configuration of {@code pid} was accepted, when there is a service.
     *
     * @param pid the configuration's PID
     */
    public void accepted(String pid) {
        ConfigurationRefusals s = service;
        if (s != null) {
            s.accepted(pid);
        }
    }
}
