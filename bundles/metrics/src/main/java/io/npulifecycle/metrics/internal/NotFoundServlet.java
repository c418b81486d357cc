package io.npulifecycle.metrics.internal;

import java.io.IOException;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Every path of the {@code /metrics} listener but {@value MetricsEndpoint#PATH}, with any method: a 404. It replaces
 * Jetty's default servlet, which inherits the servlet API's {@code OPTIONS} and {@code TRACE} answers (a 200, and
 * for {@code TRACE} the request's headers echoed back).
 */
final class NotFoundServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.sendError(HttpServletResponse.SC_NOT_FOUND, "only " + MetricsEndpoint.PATH + " is served here");
    }
}
