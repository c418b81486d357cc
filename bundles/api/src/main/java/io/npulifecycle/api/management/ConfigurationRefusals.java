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
}
