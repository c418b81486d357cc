package io.npulifecycle.itests.security;

import java.security.SecureRandom;

import io.npulifecycle.security.tool.PasswordHash;

/**
 * Users of the Jolokia security tests. Used from {@code @Configuration} methods only (outside the framework: the
 * security bundle's classes are not visible inside it).
 */
final class SecurityRuntime {

    static final String VIEWER = "alice";
    static final String VIEWER_PASSWORD = "alice-viewer-password";
    static final String OPERATOR = "carol";
    static final String OPERATOR_PASSWORD = "carol-operator-password";

    private SecurityRuntime() {
    }

    /** @return a users file with a viewer and an operator (besides the runtime's own operator) */
    static String usersFile() {
        SecureRandom r = new SecureRandom();
        return "# test users\n" + VIEWER + "=viewer:" + PasswordHash.create(VIEWER_PASSWORD.toCharArray(), r) + "\n"
                + OPERATOR + "=operator:" + PasswordHash.create(OPERATOR_PASSWORD.toCharArray(), r) + "\n";
    }
}
