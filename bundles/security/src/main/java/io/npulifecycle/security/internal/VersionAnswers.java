package io.npulifecycle.security.internal;

import java.util.Map;


/**
 * Takes the agent's configuration out of Jolokia's {@code version} answers. Jolokia puts every configuration value
 * in {@code value.config} (the access policy's path, the authentication mode, the agent context, ...); a console
 * needs only {@code agent}, {@code protocol}, {@code id}, {@code details} and {@code info}, and no role of this
 * runtime may learn how the agent is configured (docs/security.md, Roles). The {@code config} request type, which
 * answers the agent's identity and security settings, is refused by {@link AccessFilter} for every role.
 */
final class VersionAnswers {

    private VersionAnswers() {
    }

    /**
     * @param jolokiaAnswer Jolokia's answer (one response object, or an array of them for a bulk), as text
     * @return the answer without {@code value.config} in every {@code version} response, or {@code jolokiaAnswer}
     *         itself when it has none or is not JSON
     */
    static String redact(String jolokiaAnswer) {
        return JolokiaAnswers.eachResponse(jolokiaAnswer, VersionAnswers::redactResponse);
    }

    private static boolean redactResponse(Object response) {
        if (!(response instanceof Map<?, ?> r) || !(r.get("request") instanceof Map<?, ?> request)
                || !"version".equals(request.get("type")) || !(r.get("value") instanceof Map<?, ?> value)) {
            return false;
        }
        return value.remove("config") != null;
    }
}
