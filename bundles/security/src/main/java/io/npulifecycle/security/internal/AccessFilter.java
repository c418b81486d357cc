package io.npulifecycle.security.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.osgi.service.component.annotations.Component;
import org.osgi.service.servlet.whiteboard.HttpWhiteboardConstants;

import io.npulifecycle.security.tool.Role;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Whiteboard filter on Jolokia's servlet context ({@code jolokia}): the first guard of the role rules, the
 * {@link RoleRestrictor} being the second.
 *
 * <p>It runs after {@link JolokiaAuthenticator} (the context's {@code handleSecurity} comes before filters), reads the
 * caller from the request attributes, classifies the request ({@link RequestClassifier}) and refuses it, naming the
 * reason in a JSON body, when:
 * <ul>
 * <li>any request of it carries a JSR-160 proxy {@code target} (or a {@code target} query parameter);</li>
 * <li>a request type is not allowed for the caller's role (a viewer's exec or write);</li>
 * <li>an exec or write names an MBean outside {@code io.npulifecycle} (or no valid name);</li>
 * <li>any request names an MBean nobody may reach (JFR, DiagnosticCommand, HotSpotDiagnostic, MLet loaders);</li>
 * <li>its {@code Origin} (or {@code Referer}) matches no {@code <allow-origin>} of the policy (strict CORS): audited
 * and logged with the origin and the line that would allow it;</li>
 * <li>there is no authenticated caller, or no restrictor with a loaded policy (fail closed); 503 while more than
 * one Jolokia servlet is registered ({@link JolokiaServletGuard}), and while Jolokia's request handler is not (the
 * runtime is starting).</li>
 * </ul>
 * The role and MBean refusals are per request, answered as Jolokia answers a failed request: HTTP 200 with a Jolokia
 * error entry of status 403, which jolokia.js hands to its error callback (a POST bulk's other items are served, see
 * {@link PartialBulk}); an element of a bulk that is not an object, or that Jolokia cannot build, gets a 400 entry of
 * its own, the other items served ({@link #errors}); an empty bulk is answered {@code []}. A proxy {@code target}, a
 * foreign origin, no caller or no policy refuse the whole request with HTTP 403. A POST body that is not JSON, or
 * neither an object nor an array, gets 400, and so does a processing parameter Jolokia reads as a number that is not
 * one, in a request's {@code config} or the query string ({@link RequestShape#parameterProblem}). Otherwise it puts the caller on the thread for the restrictor
 * ({@link Caller}), passes the (buffered, at most {@value #MAX_BODY_BYTES} bytes) request on, and clears the caller in
 * {@code finally}.
 */
@Component(service = Filter.class, property = {
    HttpWhiteboardConstants.HTTP_WHITEBOARD_FILTER_PATTERN + "=/*",
    HttpWhiteboardConstants.HTTP_WHITEBOARD_FILTER_NAME + "=npu-lifecycle-jolokia-access",
    HttpWhiteboardConstants.HTTP_WHITEBOARD_CONTEXT_SELECT + "=(" + HttpWhiteboardConstants.HTTP_WHITEBOARD_CONTEXT_NAME
            + "=jolokia)"
})
public class AccessFilter implements Filter {

    /** Largest POST body read, bytes (the management bundle's RequestSizeFilter has the same limit). */
    static final int MAX_BODY_BYTES = 1024 * 1024;
    /**
     * Most items of one bulk request. Jolokia builds the whole answer in memory and one {@code list} answer is about
     * 70 KB: 3,000 of them in a 48 KB request ran the node agent (128 MiB heap) out of memory. Hawtio and jolokia.js
     * send bulks of tens of items; more are refused with a 400 entry that says to split them.
     */
    static final int MAX_BULK_ITEMS = 100;

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse res = (HttpServletResponse) response;
        Object user = req.getAttribute(Caller.USER_ATTRIBUTE);
        Object role = req.getAttribute(Caller.ROLE_ATTRIBUTE);
        if (!(user instanceof String) || !(role instanceof Role)) {
            Audit.problem("request to " + req.getRequestURI() + " without an authenticated caller: refused");
            send(req, res, 403, "no authenticated caller");
            return;
        }
        Caller caller = new Caller((String) user, (Role) role);
        RoleRestrictor.reloadIfChanged();
        if (!RoleRestrictor.ready()) {
            send(req, res, 403, "the Jolokia access policy is not loaded: every request is refused (see the log)");
            return;
        }
        if (!JolokiaServletGuard.singleServlet()) {
            send(req, res, 503, "Jolokia is restarting (more than one Jolokia servlet was registered); retry");
            return;
        }
        if (!JolokiaServletGuard.requestHandler()) {
            res.setHeader("Retry-After", "1");
            send(req, res, 503, JolokiaServletGuard.NOT_SERVING);
            return;
        }
        String origin = req.getHeader("Origin") != null ? req.getHeader("Origin") : originOf(req.getHeader("Referer"));
        if (origin != null && !RoleRestrictor.originAllowed(origin)) {
            String shown = origin.replaceAll("[^\\x20-\\x7e]", "?");
            String fix = "to allow it, add <allow-origin>" + shown + "</allow-origin> to the <cors> element of "
                    + RoleRestrictor.policyFile() + " (re-read when it changes)";
            Audit.originRefused(caller, shown, fix);
            send(req, res, 403, "origin " + shown + " is not allowed to call this agent; " + fix);
            return;
        }
        if (jsonp(req.getQueryString())) {
            Audit.problem("JSONP request to " + req.getRequestURI() + " by " + caller.user() + ": refused");
            send(req, res, 403, "JSONP (the query parameter callback) is not served: a script element sends no Origin "
                    + "header, so the origin policy could not apply; send the request with fetch or XMLHttpRequest");
            return;
        }
        String badParameter = queryParameterProblem(req.getQueryString());
        if (badParameter != null) {
            send(req, res, 400, badParameter);
            return;
        }
        String method = req.getMethod().toUpperCase(Locale.ROOT);
        if ("POST".equals(method)) {
            post(req, res, chain, caller);
            return;
        }
        List<RequestClassifier.Op> ops = new ArrayList<>();
        if ("GET".equals(method)) {
            ops.add(RequestClassifier.fromPath(req.getPathInfo()));
            String p = req.getParameter("p");
            if (p != null) {
                ops.add(RequestClassifier.fromPath(p));
            }
            if (req.getParameter("target") != null) {
                ops.add(new RequestClassifier.Op("proxy", null, null, true));
            }
        }
        for (RequestClassifier.Op op : ops) {
            String reason = refusal(caller, op);
            if (reason != null && op.proxy) {
                send(req, res, 403, reason);
                return;
            }
            if (reason != null) {
                // as Jolokia answers a failed request (jolokia.js sends a single request as a GET)
                java.util.Map<String, Object> echo = new java.util.LinkedHashMap<>();
                echo.put("type", op.type);
                if (op.mbean != null) {
                    echo.put("mbean", op.mbean);
                }
                if (op.member != null) {
                    echo.put("exec".equals(op.type) ? "operation" : "attribute", op.member);
                }
                sendJson(res, 200, PartialBulk.json(PartialBulk.refusal(reason, echo)));
                return;
            }
        }
        passWithHints(req, res, chain, caller, ops);
    }

    /**
     * A POST: one request or a bulk. A refused request is answered as Jolokia answers a failed one (HTTP 200, a
     * Jolokia error entry with status 403, which jolokia.js hands to its error callback); in a bulk only the refused
     * items are refused, the others are served; an empty bulk is answered {@code []}. A proxy {@code target} anywhere
     * refuses the whole request (HTTP 403).
     */
    private void post(HttpServletRequest req, HttpServletResponse res, FilterChain chain, Caller caller)
            throws IOException, ServletException {
        byte[] body = readBody(req);
        if (body == null) {
            send(req, res, 413, "request body larger than " + MAX_BODY_BYTES + " bytes");
            return;
        }
        Charset cs = charset(req);
        RequestClassifier.Parsed parsed;
        try {
            parsed = RequestClassifier.parse(new String(body, cs));
        } catch (RequestClassifier.BadRequest e) {
            send(req, res, 400, e.getMessage());
            return;
        }
        if (parsed.bulk() && parsed.items().isEmpty()) {
            sendJson(res, 200, "[]");
            return;
        }
        if (parsed.bulk() && parsed.items().size() > MAX_BULK_ITEMS) {
            send(req, res, 400, "a bulk request of " + parsed.items().size() + " items: at most " + MAX_BULK_ITEMS
                    + " per request (send several requests)");
            return;
        }
        for (RequestClassifier.Op op : parsed.ops()) {
            if (op.proxy) {
                send(req, res, 403, refusal(caller, op));
                return;
            }
        }
        List<java.util.Map<String, Object>> errors = errors(caller, parsed);
        if (errors.stream().allMatch(e -> e == null)) {
            passWithHints(new BufferedRequest(req, body, cs), res, chain, caller, parsed.ops());
        } else if (!parsed.bulk()) {
            // a refusal is Jolokia's answer to a failed request (HTTP 200); a malformed request is a 400, as
            // Jolokia answers one it cannot build
            int status = ((Number) errors.get(0).get("status")).intValue() == 400 ? 400 : 200;
            sendJson(res, status, PartialBulk.json(errors.get(0)));
        } else if (errors.stream().noneMatch(e -> e == null)) {
            sendJson(res, 200, PartialBulk.merge(parsed.items(), errors, null));
        } else {
            byte[] served = PartialBulk.served(parsed.items(), errors).getBytes(StandardCharsets.UTF_8);
            PartialBulk.Captured captured = new PartialBulk.Captured(res);
            pass(new BufferedRequest(req, served, StandardCharsets.UTF_8), captured, chain, caller);
            String jolokia = captured.text();
            String merged = PartialBulk.merge(parsed.items(), errors, jolokia);
            String answer = merged == null ? jolokia : merged;
            answer = decorate(answer, parsed.ops(), caller.role());
            byte[] out = answer.getBytes(StandardCharsets.UTF_8);
            res.setContentLength(out.length);
            res.getOutputStream().write(out);
        }
    }

    /**
     * The items of a POST answered here rather than by Jolokia: an element of a bulk that is not an object and an item
     * Jolokia cannot build ({@link RequestClassifier#jolokiaProblem}) get a 400 entry, a refused item a 403 entry. So
     * one bad item of a bulk gets an error for that item only, as Jolokia's protocol has it. A single request with a
     * field of the wrong JSON type ({@link RequestShape}) gets a 400 entry; any other single request Jolokia cannot
     * build is left to Jolokia (HTTP 400, made JSON by {@link JolokiaJsonErrors}).
     *
     * @return for each item, its error entry, or {@code null} when Jolokia is to serve it
     */
    static List<java.util.Map<String, Object>> errors(Caller caller, RequestClassifier.Parsed parsed) {
        List<java.util.Map<String, Object>> errors = new ArrayList<>();
        for (int i = 0; i < parsed.ops().size(); i++) {
            RequestClassifier.Op op = parsed.ops().get(i);
            Object item = parsed.items().get(i);
            java.util.Map<String, Object> error = null;
            if (op.invalid != null) {
                error = JsonError.entry(400, null, op.invalid, item);
            } else {
                String reason = refusal(caller, op);
                if (reason != null) {
                    error = PartialBulk.refusal(reason, item);
                } else if (parsed.bulk()) {
                    error = RequestClassifier.jolokiaProblem(item);
                } else if (item instanceof java.util.Map<?, ?> single && RequestShape.problem(single) != null) {
                    error = JsonError.entry(400, null, RequestShape.problem(single), item);
                }
            }
            errors.add(error);
        }
        return errors;
    }

    /**
     * @return why {@code caller} may not make the request {@code op} (audited when it changes something or is a
     *         proxy request), or {@code null}
     */
    private static String refusal(Caller caller, RequestClassifier.Op op) {
        String reason = null;
        if (op.proxy) {
            reason = "JSR-160 proxy requests (\"target\") are not allowed";
        } else if (op.type != null && !allowed(caller.role(), op.type)) {
            reason = "role " + caller.role().id() + " may not " + op.type;
            if (!op.changes()) {
                reason += ": the request types of role " + caller.role().id() + " are " + allowedTypes(caller.role());
            }
        } else if (!"search".equals(op.type) && forbiddenMBean(op.mbean)) {
            // (a search pattern such as *:* is fine: the restrictor hides the forbidden names from its result)
            reason = "this MBean is never reachable through Jolokia";
        } else if (op.changes() && !productMBean(op.mbean)) {
            reason = "exec and write are allowed only on " + RoleRestrictor.PRODUCT_DOMAIN + " MBeans";
        }
        if (reason != null && (op.changes() || op.proxy)) {
            Audit.decision(op.proxy ? "proxy" : op.type, caller, op.mbean, op.member, false, reason);
        }
        return reason;
    }

    private static boolean has(List<RequestClassifier.Op> ops, String type) {
        return ops.stream().anyMatch(op -> type.equals(op.type));
    }

    /**
     * @return Jolokia's answer to {@code ops} with the caller's {@link ListHints} in its {@code list} answers and
     *         without the agent's configuration in its {@code version} answers ({@link VersionAnswers})
     */
    private static String decorate(String answer, List<RequestClassifier.Op> ops, Role role) {
        String out = has(ops, "list") ? ListHints.decorate(answer, role) : answer;
        return has(ops, "version") ? VersionAnswers.redact(out) : out;
    }

    /**
     * Passes the request on; Jolokia's answer to a {@code list} or {@code version} is {@link #decorate decorated}.
     */
    private static void passWithHints(HttpServletRequest req, HttpServletResponse res, FilterChain chain,
            Caller caller, List<RequestClassifier.Op> ops) throws IOException, ServletException {
        if (!has(ops, "list") && !has(ops, "version")) {
            pass(req, res, chain, caller);
            return;
        }
        PartialBulk.Captured captured = new PartialBulk.Captured(res);
        pass(req, captured, chain, caller);
        byte[] out = decorate(captured.text(), ops, caller.role()).getBytes(StandardCharsets.UTF_8);
        res.setContentLength(out.length);
        res.getOutputStream().write(out);
    }

    private static void pass(HttpServletRequest req, ServletResponse res, FilterChain chain, Caller caller)
            throws IOException, ServletException {
        Caller.set(caller);
        try {
            chain.doFilter(req, res);
        } finally {
            Caller.clear();
        }
    }

    /**
     * @param query a request's query string, {@code null} when it has none
     * @return whether it names Jolokia's JSONP parameter {@code callback} (with or without a value), which makes
     *         Jolokia wrap its answer in a script that any page may load across origins
     */
    static boolean jsonp(String query) {
        if (query == null) {
            return false;
        }
        for (String pair : query.split("&")) {
            String name = pair.contains("=") ? pair.substring(0, pair.indexOf('=')) : pair;
            String decoded;
            try {
                decoded = java.net.URLDecoder.decode(name, java.nio.charset.StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) { // a bad %-escape: the name as sent
                decoded = name;
            }
            if ("callback".equals(decoded)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param query a request's query string, {@code null} when it has none
     * @return what is wrong with the first processing parameter of it that Jolokia would fail to parse
     *         ({@link RequestShape#parameterProblem}), or {@code null}; read from the query string itself, so that
     *         the body of a POST is never read as form parameters
     */
    static String queryParameterProblem(String query) {
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq));
            String p = RequestShape.parameterProblem("query", name, eq < 0 ? "" : decode(pair.substring(eq + 1)));
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    /** @return {@code s} URL-decoded, or as sent when it holds a bad %-escape */
    private static String decode(String s) {
        try {
            return java.net.URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }

    /** @return the origin ({@code scheme://host[:port]}) of a Referer URL, the value itself if it is not a URL */
    static String originOf(String referer) {
        if (referer == null) {
            return null;
        }
        try {
            java.net.URI u = new java.net.URI(referer.trim());
            if (u.getScheme() == null || u.getHost() == null) {
                return referer;
            }
            return u.getScheme() + "://" + u.getHost() + (u.getPort() < 0 ? "" : ":" + u.getPort());
        } catch (java.net.URISyntaxException e) {
            return referer;
        }
    }

    /** @return whether {@code mbean} is a valid name that nobody may reach (see {@link RoleRestrictor}) */
    static boolean forbiddenMBean(String mbean) {
        if (mbean == null) {
            return false;
        }
        try {
            return RoleRestrictor.forbiddenName(new javax.management.ObjectName(mbean));
        } catch (javax.management.MalformedObjectNameException e) {
            return false;
        }
    }

    /** @return whether {@code mbean} is a valid name in the product's domain (no pattern) */
    static boolean productMBean(String mbean) {
        try {
            javax.management.ObjectName n = new javax.management.ObjectName(mbean == null ? "" : mbean);
            return !n.isPattern() && RoleRestrictor.PRODUCT_DOMAIN.equals(n.getDomain());
        } catch (javax.management.MalformedObjectNameException e) {
            return false;
        }
    }

    static boolean allowed(Role role, String type) {
        switch (type) {
            case "read":
            case "list":
            case "search":
            case "version":
                return true;
            case "exec":
            case "write":
                return role == Role.OPERATOR;
            default:
                // Jolokia's other types, config (the agent's identity and security settings) and notification
                // (listeners the agent keeps): no role needs them, and no role may learn the agent's configuration.
                // A name Jolokia does not know is left to Jolokia for an operator (its 400 names the type).
                return role == Role.OPERATOR && !jolokiaType(type);
        }
    }

    /** @return whether {@code type} names one of Jolokia's request types */
    private static boolean jolokiaType(String type) {
        try {
            org.jolokia.server.core.util.RequestType.getTypeByName(type);
            return true;
        } catch (IllegalArgumentException unknown) {
            return false;
        }
    }

    /** @return the request types {@code role} may send, in the order the refusal names them */
    static String allowedTypes(Role role) {
        return role == Role.OPERATOR ? "read, list, search, version, exec, write" : "read, list, search, version";
    }

    private static Charset charset(HttpServletRequest req) {
        try {
            return req.getCharacterEncoding() == null ? StandardCharsets.UTF_8
                    : Charset.forName(req.getCharacterEncoding());
        } catch (RuntimeException e) {
            return StandardCharsets.UTF_8;
        }
    }

    /** @return the body, or {@code null} when larger than the limit */
    private static byte[] readBody(HttpServletRequest req) throws IOException {
        if (req.getContentLengthLong() > MAX_BODY_BYTES) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try (InputStream in = req.getInputStream()) {
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                if (out.size() > MAX_BODY_BYTES) {
                    return null;
                }
            }
        }
        return out.toByteArray();
    }

    /**
     * A refusal of the whole request: the rest of the body is discarded first ({@link UnreadBody}), then the Jolokia
     * error entry of {@code status} ({@link JsonError#type} gives its {@code error_type}).
     */
    private static void send(HttpServletRequest req, HttpServletResponse res, int status, String reason)
            throws IOException {
        UnreadBody.discard(req, res);
        sendJson(res, status, PartialBulk.json(JsonError.entry(status, null, reason, null)));
    }

    private static void sendJson(HttpServletResponse res, int status, String json) throws IOException {
        res.setStatus(status);
        res.setContentType("application/json");
        res.setCharacterEncoding("UTF-8");
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        res.setContentLength(b.length);
        res.getOutputStream().write(b);
    }
}
