package io.npulifecycle.security.internal;

import io.npulifecycle.security.tool.Role;

/**
 * The authenticated user of the Jolokia request being handled on this thread.
 *
 * <p>{@link JolokiaAuthenticator} puts the user and role in request attributes; {@link AccessFilter} copies them into
 * {@link #CURRENT} around Jolokia's servlet (set, chain, clear in {@code finally}); {@link RoleRestrictor} reads it.
 * No caller on the thread means the filter did not run: the restrictor then denies everything (fail closed).
 */
public final class Caller {

    /** Request attribute holding the user name (a String). */
    public static final String USER_ATTRIBUTE = "io.npulifecycle.security.user";
    /** Request attribute holding the {@link Role}. */
    public static final String ROLE_ATTRIBUTE = "io.npulifecycle.security.role";

    private static final ThreadLocal<Caller> CURRENT = new ThreadLocal<>();

    private final String user;
    private final Role role;

    /**
     * @param user the user name
     * @param role the role
     */
    public Caller(String user, Role role) {
        this.user = user;
        this.role = role;
    }

    /** @return the caller of this thread's request, or {@code null} outside {@link AccessFilter} */
    public static Caller current() {
        return CURRENT.get();
    }

    static void set(Caller c) {
        CURRENT.set(c);
    }

    static void clear() {
        CURRENT.remove();
    }

    /** @return the user name */
    public String user() {
        return user;
    }

    /** @return the role */
    public Role role() {
        return role;
    }
}
