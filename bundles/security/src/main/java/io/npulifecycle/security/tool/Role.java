package io.npulifecycle.security.tool;

import java.util.Locale;

/**
 * The roles of a Jolokia user: {@code viewer} reads, {@code operator} also executes and writes (docs/security.md).
 *
 * <ul>
 * <li>{@link #VIEWER}: {@code read}, {@code list}, {@code search}, {@code version} on every {@code io.npulifecycle}
 * MBean and the standard platform MBeans;</li>
 * <li>{@link #OPERATOR}: also {@code exec} and {@code write}, only on {@code io.npulifecycle} MBeans.</li>
 * </ul>
 */
public enum Role {
    /** Reads only. */
    VIEWER,
    /**
     * Reads, and drives the product through its MBeans (pause a rollout, probe or evaluate now, fault injection...).
     * Reboot approvals are not among them: they are Node annotations, made through the Kubernetes API.
     */
    OPERATOR;

    /** @return the name users type: {@code viewer} or {@code operator} */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param text {@code viewer} or {@code operator} (exact, lower case)
     * @return the role
     * @throws IllegalArgumentException naming the value and the accepted ones
     */
    public static Role parse(String text) {
        for (Role r : values()) {
            if (r.id().equals(text)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown role '" + text.replaceAll("[^\\x20-\\x7e]", "?")
                + "', expected viewer or operator");
    }
}
