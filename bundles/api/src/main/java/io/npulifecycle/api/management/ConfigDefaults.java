package io.npulifecycle.api.management;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * A component's configuration of its metatype defaults alone: what Declarative Services would hand the component for
 * an empty configuration. A component that refuses its configuration at activation runs on this instead, so each
 * default is stated once, in the {@code @AttributeDefinition}'s {@code default}, and not again in Java.
 */
public final class ConfigDefaults {

    private ConfigDefaults() {
    }

    /**
     * @param type the configuration annotation of a component ({@code @ObjectClassDefinition}); every method must
     *        have a {@code default}
     * @param <C> the configuration type
     * @return an instance whose methods answer their {@code default} (a fresh copy of an array each call);
     *         {@code annotationType()} answers {@code type}; {@code toString()}, {@code hashCode()} and
     *         {@code equals} are those of the proxy object
     * @throws IllegalArgumentException when {@code type} is not an annotation type, or one of its methods has no
     *         default (so the configuration cannot be built without a value)
     */
    public static <C> C of(Class<C> type) {
        if (!type.isAnnotation()) {
            throw new IllegalArgumentException(type.getName() + " is not an annotation type");
        }
        for (Method m : type.getDeclaredMethods()) {
            if (m.getDefaultValue() == null) {
                throw new IllegalArgumentException(type.getName() + "." + m.getName() + " has no default");
            }
        }
        Object proxy = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, m, args) -> {
            switch (m.getName()) {
                case "annotationType":
                    return type;
                case "toString":
                    return "defaults of " + type.getName();
                case "hashCode":
                    return System.identityHashCode(self);
                case "equals":
                    return self == args[0];
                default:
                    return copy(m.getDefaultValue());
            }
        });
        return type.cast(proxy);
    }

    private static Object copy(Object value) {
        if (value == null || !value.getClass().isArray()) {
            return value;
        }
        int n = Array.getLength(value);
        Object out = Array.newInstance(value.getClass().getComponentType(), n);
        System.arraycopy(value, 0, out, 0, n);
        return out;
    }
}
