package io.npulifecycle.api.management;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Where a component reports the configuration values it refused although they pass their metatype (a cross-key
 * rule such as {@code timeout} below {@code interval}, a path that must be absolute), so that
 * {@code io.npulifecycle:type=Configuration} {@code Problems} lists them beside the values the metatype refuses.
 * Registered as an OSGi service by the management bundle; a component uses it when present (optional reference) and
 * logs the refusal either way. Implemented by the management bundle only ({@link ProviderType}).
 */
@ProviderType
public interface ConfigurationRefusals {

    /**
     * One refused value.
     *
     * @param key the key at fault, e.g. {@code timeout}
     * @param value the refused value as configured, or {@code null} when the reason names it (or it is absent)
     * @param reason what was expected, e.g. {@code must be below interval (60 s), got 100}
     */
    record Refusal(String key, Object value, String reason) {
    }

    /**
     * The component refused a configuration of {@code pid} because of each of {@code refused} (every value it found
     * wrong, in the order it checks them) and keeps its previous (or default) configuration. Replaces what was
     * reported before for {@code pid}.
     *
     * @param pid the configuration's PID, e.g. {@code io.npulifecycle.probe}
     * @param file the {@code felix.fileinstall.filename} of the configuration, or {@code null}
     * @param refused the refused values, at least one
     * @throws IllegalArgumentException when {@code refused} is empty
     */
    void refused(String pid, Object file, java.util.List<Refusal> refused);

    /**
     * The component refused a configuration of {@code pid} because of {@code key} alone and keeps its previous (or
     * default) configuration: {@link #refused(String, Object, java.util.List)} with one refusal. Replaces what was
     * reported before for {@code pid}.
     *
     * @param pid the configuration's PID, e.g. {@code io.npulifecycle.probe}
     * @param file the {@code felix.fileinstall.filename} of the configuration, or {@code null}
     * @param key the key at fault, e.g. {@code timeout}
     * @param value the refused value as configured, or {@code null} when the reason names it (or it is absent)
     * @param reason what was expected, e.g. {@code must be below interval (60 s), got 100}
     */
    default void refused(String pid, Object file, String key, Object value, String reason) {
        refused(pid, file, java.util.List.of(new Refusal(key, value, reason)));
    }

    /**
     * The component applied a configuration of {@code pid}: what it refused before is no longer a problem.
     *
     * @param pid the configuration's PID
     */
    void accepted(String pid);

    /**
     * Reports the outcome of one check of a configuration: with nothing refused, {@link #accepted}; otherwise every
     * refused value in one ERROR line of {@code log} ({@code PID <pid> key <key>: <reason>; key ...}) and
     * {@link #refused(String, Object, java.util.List)}.
     *
     * @param service the service, or {@code null} when it is absent (then only the log line)
     * @param pid the configuration's PID
     * @param refused the values refused by the check, empty when it accepted the configuration
     * @param log where the refusal is logged
     */
    static void report(ConfigurationRefusals service, String pid, java.util.List<Refusal> refused, System.Logger log) {
        if (refused.isEmpty()) {
            if (service != null) {
                service.accepted(pid);
            }
            return;
        }
        StringBuilder line = new StringBuilder("PID " + pid);
        for (int i = 0; i < refused.size(); i++) {
            line.append(i == 0 ? " key " : "; key ").append(refused.get(i).key()).append(": ")
                    .append(refused.get(i).reason());
        }
        log.log(System.Logger.Level.ERROR, line.toString());
        if (service != null) {
            service.refused(pid, null, refused);
        }
    }
}
