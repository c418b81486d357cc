package io.npulifecycle.testing.support;

import java.util.Map;

import org.osgi.util.converter.Converters;

/**
 * A component's configuration type (its {@code @ObjectClassDefinition} {@code Config} annotation) built in a test from
 * a map, the way Declarative Services builds it from a configuration: with the OSGi converter
 * ({@code Converters.standardConverter()}), so a test sees what the component sees at run time.
 * <ul>
 * <li>Keys are the configuration's keys, not the method names: method {@code recovery_window} reads key
 * {@code recovery.window} (the DS and converter key mapping: one {@code _} is a {@code .}).</li>
 * <li>A key absent from the map gives the method's {@code @AttributeDefinition} default (the metatype default), so a
 * test states only the values it is about.</li>
 * <li>Values are converted as DS converts them: {@code "5"} for an {@code int}, one {@code String} for a
 * {@code String[]} (an array of one element), a {@code Double} for an {@code int} (truncated).</li>
 * </ul>
 *
 * <pre>
 * RebooterComponent.Config c = Configs.of(RebooterComponent.Config.class, Map.of("recovery.window", "forever"));
 * </pre>
 */
public final class Configs {

    private Configs() {
    }

    /**
     * @param type the configuration annotation (or interface) of a component
     * @param properties the configuration's values by key; may be empty, must not be {@code null}
     * @param <C> the configuration type
     * @return the configuration: each method answers the converted value of its key, else its default
     * @throws org.osgi.util.converter.ConversionException when a value cannot be converted to its method's type, as
     *         DS would fail to (the method throws it when called)
     */
    public static <C> C of(Class<C> type, Map<String, ?> properties) {
        return Converters.standardConverter().convert(properties).to(type);
    }

    /**
     * @param type the configuration annotation (or interface) of a component
     * @param <C> the configuration type
     * @return the configuration of the metatype defaults alone ({@link #of} with no value)
     */
    public static <C> C defaults(Class<C> type) {
        return of(type, Map.of());
    }
}
