package io.npulifecycle.security.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The audit log: logger {@value #LOGGER} (the launcher also writes it to {@code logs/audit.log}). One line per
 * {@code exec} or {@code write} decision, allowed or denied, and per failed login:
 *
 * <pre>
 * AUDIT exec user=alice role=operator mbean=io.npulifecycle:type=Rebooter operation=evaluateNow outcome=allowed
 * AUDIT write user=bob role=viewer mbean=java.lang:type=Memory operation=Verbose outcome=denied reason=...
 * AUDIT login user=mallory remote=127.0.0.1 outcome=denied reason=wrong password
 * </pre>
 *
 * Values are cleaned (anything outside printable ASCII, and spaces, become {@code _}; at most 200 characters) so that
 * a request cannot forge audit lines. Passwords are never logged.
 */
final class Audit {

    /** The audit logger name. */
    static final String LOGGER = "io.npulifecycle.audit";

    private static final Logger LOG = System.getLogger(LOGGER);

    private Audit() {
    }

    /**
     * An exec or write decision.
     *
     * @param action {@code exec} or {@code write}
     * @param caller the caller, or {@code null} (logged as unknown)
     * @param mbean the MBean name
     * @param member the operation or attribute
     * @param allowed the outcome
     * @param reason why it was denied, or {@code null}
     */
    static void decision(String action, Caller caller, String mbean, String member, boolean allowed, String reason) {
        StringBuilder sb = new StringBuilder("AUDIT ").append(clean(action))
                .append(" user=").append(caller == null ? "unknown" : clean(caller.user()))
                .append(" role=").append(caller == null ? "none" : caller.role().id())
                .append(" mbean=").append(clean(mbean))
                .append(" operation=").append(clean(member))
                .append(" outcome=").append(allowed ? "allowed" : "denied");
        if (reason != null) {
            sb.append(" reason=").append(reason.replaceAll("[^\\x20-\\x7e]", "_"));
        }
        LOG.log(allowed ? Level.INFO : Level.WARNING, sb.toString());
    }

    /**
     * A failed login.
     *
     * @param user the user name given, or {@code null}
     * @param remote the client address
     * @param reason why
     */
    static void loginFailed(String user, String remote, String reason) {
        LOG.log(Level.WARNING, "AUDIT login user=" + (user == null ? "none" : clean(user)) + " remote="
                + clean(remote) + " outcome=denied reason=" + reason);
    }

    /**
     * A request refused for its browser origin (CORS), also logged as a WARNING by the access filter's logger so it
     * shows in the runtime's log, not only in the audit log.
     *
     * @param caller the authenticated caller
     * @param origin the {@code Origin} (or the {@code Referer}'s origin), printable
     * @param fix what allows it
     */
    static void originRefused(Caller caller, String origin, String fix) {
        String line = "AUDIT origin user=" + clean(caller.user()) + " role=" + caller.role().id() + " origin="
                + clean(origin) + " outcome=denied reason=origin not in the access policy; " + fix;
        LOG.log(Level.WARNING, line);
        System.getLogger(AccessFilter.class.getName()).log(Level.WARNING, "Refused a request from browser origin "
                + clean(origin) + " (user " + clean(caller.user()) + "): " + fix);
    }

    /**
     * A problem of the access control itself (unreadable users file, missing filter...).
     *
     * @param message the message
     */
    static void problem(String message) {
        LOG.log(Level.ERROR, "AUDIT " + message.replaceAll("[\\r\\n]", " "));
    }

    static String clean(String s) {
        if (s == null) {
            return "-";
        }
        String c = s.replaceAll("[^\\x21-\\x7e]", "_");
        return c.length() > 200 ? c.substring(0, 200) + "..." : c;
    }
}
