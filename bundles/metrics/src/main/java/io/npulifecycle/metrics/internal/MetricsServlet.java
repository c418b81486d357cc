package io.npulifecycle.metrics.internal;

import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import io.prometheus.metrics.exporter.servlet.jakarta.PrometheusMetricsServlet;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The Prometheus client's {@link PrometheusMetricsServlet} over one registry, with the protobuf format taken out of
 * the negotiation: the runtime installs the client's text writers only ({@code exposition-textformats}), and the
 * client picks its protobuf writer for any {@code Accept} that names {@code application/vnd.google.protobuf} (what
 * Prometheus sends first with native histograms on, or with {@code scrape_protocols} starting with
 * {@code PrometheusProto}) and then fails the scrape with a 500. So those media ranges are removed from
 * {@code Accept} before the client reads it: Prometheus gets OpenMetrics or text, which it asks for next, with the
 * {@code Content-Type} that says which. A {@code ?debug=} other than {@code text} or {@code openmetrics} (the
 * client's debug views), {@code prometheus-protobuf} included, is a 400 naming the values served (the client answers
 * a 500).
 *
 * <p>{@code GET} and {@code HEAD} only; any other method is a 405 ({@link #service}). Paths other than
 * {@value MetricsEndpoint#PATH} are {@link NotFoundServlet}'s.
 */
final class MetricsServlet extends PrometheusMetricsServlet {

    private static final long serialVersionUID = 1L;
    /** The media type of the client's protobuf format (its {@code PrometheusProtobufWriter}). */
    static final String PROTOBUF = "application/vnd.google.protobuf";

    /** @param registry what each scrape collects */
    MetricsServlet(PrometheusRegistry registry) {
        super(registry);
    }

    /**
     * {@code GET} and {@code HEAD} go to the client's servlet; every other method, those the servlet API knows
     * ({@code OPTIONS}, {@code TRACE}, which would echo the request's headers) and any other, is a 405 with
     * {@code Allow: GET, HEAD}.
     */
    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws IOException, ServletException {
        String m = request.getMethod();
        if ("GET".equals(m) || "HEAD".equals(m)) {
            super.service(request, response);
            return;
        }
        response.setHeader("Allow", "GET, HEAD");
        response.sendError(HttpServletResponse.SC_METHOD_NOT_ALLOWED, "GET or HEAD " + MetricsEndpoint.PATH + " only");
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String debug = request.getParameter("debug");
        if (debug != null && !"text".equals(debug) && !"openmetrics".equals(debug)) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST, "debug=" + shortened(debug)
                    + ": expected debug=text or debug=openmetrics (the protobuf format is not served here)");
            return;
        }
        super.doGet(new TextOnly(request), response);
    }

    private static String shortened(String v) {
        return v.length() <= 40 ? v : v.substring(0, 40) + "...";
    }

    /**
     * An {@code Accept} value without its protobuf media ranges.
     *
     * @param accept the header as sent, or {@code null}
     * @return the remaining ranges joined by {@code ","}, or {@code null} when none remains (the client's default,
     *         the text format)
     */
    static String withoutProtobuf(String accept) {
        if (accept == null || !accept.toLowerCase(Locale.ROOT).contains(PROTOBUF)) {
            return accept;
        }
        String rest = Stream.of(accept.split(","))
                .filter(range -> !range.toLowerCase(Locale.ROOT).contains(PROTOBUF))
                .collect(Collectors.joining(","));
        return rest.isBlank() ? null : rest.strip();
    }

    /** The request with {@link #withoutProtobuf(String)} applied to its {@code Accept} header. */
    private static final class TextOnly extends HttpServletRequestWrapper {

        TextOnly(HttpServletRequest request) {
            super(request);
        }

        @Override
        public String getHeader(String name) {
            String v = super.getHeader(name);
            return "accept".equalsIgnoreCase(name) ? withoutProtobuf(v) : v;
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            if (!"accept".equalsIgnoreCase(name)) {
                return super.getHeaders(name);
            }
            String v = getHeader(name);
            return Collections.enumeration(v == null ? List.of() : List.of(v));
        }
    }
}
