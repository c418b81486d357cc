package io.npulifecycle.security.internal;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;

import org.jolokia.server.core.osgi.security.Authenticator;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.servlet.context.ServletContextHelper;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Authenticates every Jolokia request with HTTP Basic credentials against the {@link UserStore}.
 *
 * <p>Jolokia runs with {@code org.jolokia.authMode=service-all}: its {@code ServiceAuthenticationServletContextHelper}
 * calls every {@link Authenticator} service in {@code handleSecurity} and answers 401 when there is none or one
 * refuses (verified in the jolokia-server-core 2.6.0 bytecode), so a missing or broken security bundle fails closed.
 * That 401 carries no {@code WWW-Authenticate} header (the helper only calls {@code sendError(401)}), so browsers
 * show no login dialog: clients must send credentials pre-emptively (docs/security.md, "Jolokia").
 *
 * <p>Configuration is read from framework properties only, never from ConfigAdmin (an {@code etc/*.cfg} must not be
 * able to weaken authentication, DESIGN.md "Known traps"): {@value #USERS_PROPERTY} (the users file) and
 * {@value #OPERATOR_PROPERTY} (the runtime's operator, {@code <user>=operator:<hash>}).
 */
@Component(service = Authenticator.class, immediate = true)
public class JolokiaAuthenticator implements Authenticator {

    /** Framework property: absolute path of the users file. */
    public static final String USERS_PROPERTY = "npu.lifecycle.jolokia.users";
    /** Framework property: the runtime's operator user as a users-file line (hashed password). */
    public static final String OPERATOR_PROPERTY = "npu.lifecycle.jolokia.operator";

    private UserStore store;

    @Activate
    void activate(BundleContext context) {
        String file = context.getProperty(USERS_PROPERTY);
        store = new UserStore(file == null || file.isBlank() ? null : Path.of(file), context.getProperty(
                OPERATOR_PROPERTY));
    }

    /** For tests. */
    void setStore(UserStore s) {
        this.store = s;
    }

    @Override
    public boolean authenticate(HttpServletRequest request) {
        String remote = request.getRemoteAddr();
        String header = request.getHeader("Authorization");
        if (header == null) {
            Audit.loginFailed(null, remote, "no credentials");
            return false;
        }
        if (!header.regionMatches(true, 0, "Basic ", 0, 6)) {
            Audit.loginFailed(null, remote, "not Basic authentication");
            return false;
        }
        char[] decoded;
        try {
            byte[] raw = Base64.getDecoder().decode(header.substring(6).trim());
            CharBuffer cb = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw));
            Arrays.fill(raw, (byte) 0);
            decoded = new char[cb.remaining()];
            cb.get(decoded);
        } catch (IllegalArgumentException | CharacterCodingException e) {
            Audit.loginFailed(null, remote, "malformed Authorization header");
            return false;
        }
        int colon = -1;
        for (int i = 0; i < decoded.length; i++) {
            if (decoded[i] == ':') {
                colon = i;
                break;
            }
        }
        if (colon < 0) {
            Arrays.fill(decoded, '\0');
            Audit.loginFailed(null, remote, "malformed Authorization header");
            return false;
        }
        String user = new String(decoded, 0, colon);
        char[] password = Arrays.copyOfRange(decoded, colon + 1, decoded.length);
        Arrays.fill(decoded, '\0');
        try {
            UserStore.Result r = store.authenticate(user, password);
            if (r.caller == null) {
                Audit.loginFailed(user, remote, r.failure);
                return false;
            }
            request.setAttribute(Caller.USER_ATTRIBUTE, r.caller.user());
            request.setAttribute(Caller.ROLE_ATTRIBUTE, r.caller.role());
            request.setAttribute(ServletContextHelper.REMOTE_USER, r.caller.user());
            request.setAttribute(ServletContextHelper.AUTHENTICATION_TYPE, "Basic");
            return true;
        } finally {
            Arrays.fill(password, '\0');
        }
    }
}
