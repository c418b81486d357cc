package io.npulifecycle.security.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;


import io.npulifecycle.security.tool.Role;

/**
 * Adds to a Jolokia {@code list} answer what the caller may invoke, as Hawtio reads it: {@code "canInvoke": false} on
 * an MBean makes Hawtio show it locked, on an operation it disables that operation's <em>Execute</em> button. Only
 * the role rules decide here (a viewer invokes nothing; an operator invokes the operations of
 * {@value RoleRestrictor#PRODUCT_DOMAIN} MBeans only): they are hints for consoles, the filter and the restrictor
 * still decide every request. Jolokia's {@code list} shapes: without a path, {@code domain -> properties -> info};
 * with the path {@code domain}, {@code properties -> info}; with {@code domain/properties}, the info itself (an info
 * holds {@code op}, {@code attr}, {@code desc}); deeper paths are left as they are.
 */
final class ListHints {

    private ListHints() {
    }

    /**
     * @param jolokiaAnswer Jolokia's answer (one response object, or an array of them for a bulk), as text
     * @param role the caller's role
     * @return the answer with the hints in every successful {@code list} response, or {@code jolokiaAnswer} itself
     *         when it has no such response or is not JSON
     */
    static String decorate(String jolokiaAnswer, Role role) {
        return JolokiaAnswers.eachResponse(jolokiaAnswer, r -> decorateResponse(r, role));
    }

    private static boolean decorateResponse(Object response, Role role) {
        if (!(response instanceof Map<?, ?> r) || !(r.get("request") instanceof Map<?, ?> request)
                || !"list".equals(request.get("type")) || !(r.get("value") instanceof Map<?, ?> value)
                || !Long.valueOf(200).equals(number(r.get("status")))) {
            return false;
        }
        List<String> path = path(request.get("path"));
        switch (path.size()) {
            case 0:
                for (Map.Entry<?, ?> domain : value.entrySet()) {
                    if (domain.getValue() instanceof Map<?, ?> mbeans) {
                        mbeans.values().forEach(info -> mark(info, may(role, String.valueOf(domain.getKey()))));
                    }
                }
                return true;
            case 1:
                value.values().forEach(info -> mark(info, may(role, path.get(0))));
                return true;
            case 2:
                mark(value, may(role, path.get(0)));
                return true;
            default:
                return false;
        }
    }

    /** @return whether {@code role} may invoke operations of MBeans in {@code domain} */
    static boolean may(Role role, String domain) {
        return role == Role.OPERATOR && RoleRestrictor.PRODUCT_DOMAIN.equals(domain);
    }

    @SuppressWarnings("unchecked")
    private static void mark(Object info, boolean canInvoke) {
        if (!(info instanceof Map<?, ?> mbean) || !(mbean.containsKey("op") || mbean.containsKey("attr")
                || mbean.containsKey("desc"))) {
            return;
        }
        ((Map<String, Object>) mbean).put("canInvoke", canInvoke);
        if (mbean.get("op") instanceof Map<?, ?> ops) {
            for (Object op : ops.values()) {
                // an overloaded operation is a list of signatures
                for (Object signature : op instanceof List<?> overloads ? overloads : List.of(op)) {
                    if (signature instanceof Map<?, ?> s) {
                        ((Map<String, Object>) s).put("canInvoke", canInvoke);
                    }
                }
            }
        }
    }

    private static Long number(Object o) {
        return o instanceof Number n ? n.longValue() : null;
    }

    /** Jolokia's path: segments split at {@code /}, {@code !} escaping the next character. */
    static List<String> path(Object path) {
        List<String> out = new ArrayList<>();
        if (path instanceof List<?> list) {
            list.forEach(p -> out.add(String.valueOf(p)));
            return out;
        }
        if (!(path instanceof String s) || s.isEmpty()) {
            return out;
        }
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '!' && i + 1 < s.length()) {
                cur.append(s.charAt(++i));
            } else if (c == '/') {
                if (cur.length() > 0) {
                    out.add(cur.toString());
                }
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (cur.length() > 0) {
            out.add(cur.toString());
        }
        return out;
    }
}
