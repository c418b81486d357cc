package io.npulifecycle.management.internal;

import java.io.IOException;
import java.util.List;

import org.apache.felix.hc.api.Result;
import org.apache.felix.hc.api.execution.HealthCheckExecutionResult;
import org.apache.felix.hc.api.execution.HealthCheckExecutor;
import org.apache.felix.hc.api.execution.HealthCheckSelector;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.servlet.whiteboard.HttpWhiteboardConstants;

import jakarta.servlet.Servlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Kubernetes probe endpoints, unauthenticated and without details: {@code GET /health/live} and
 * {@code GET /health/ready} answer {@code 200 {"status":"OK"}} (or WARN) when every Felix health check tagged
 * {@code live} / {@code ready} passes, else {@code 503 {"status":"CRITICAL"}} (or the worst status seen). Any
 * other path under {@code /health/} is 404; any method but GET and HEAD is 405. The details of each check are
 * available to authenticated users through {@code io.npulifecycle:type=Health} ({@link HealthMBean}), never here.
 */
@Component(service = Servlet.class, property = {
    HttpWhiteboardConstants.HTTP_WHITEBOARD_SERVLET_PATTERN + "=/health/*",
    HttpWhiteboardConstants.HTTP_WHITEBOARD_SERVLET_NAME + "=npu-lifecycle-health"
})
public class HealthServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Reference
    private HealthCheckExecutor executor;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String method = req.getMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            resp.setHeader("Allow", "GET, HEAD");
            resp.sendError(HttpServletResponse.SC_METHOD_NOT_ALLOWED);
            return;
        }
        String path = req.getPathInfo();
        String tag;
        if ("/live".equals(path)) {
            tag = "live";
        } else if ("/ready".equals(path)) {
            tag = "ready";
        } else {
            resp.sendError(HttpServletResponse.SC_NOT_FOUND);
            return;
        }
        Result.Status status = evaluate(tag);
        boolean ok = status == Result.Status.OK || status == Result.Status.WARN;
        resp.setStatus(ok ? HttpServletResponse.SC_OK : HttpServletResponse.SC_SERVICE_UNAVAILABLE);
        resp.setContentType("application/json");
        resp.setCharacterEncoding("UTF-8");
        resp.setHeader("Cache-Control", "no-store");
        if ("GET".equals(method)) {
            resp.getWriter().write("{\"status\":\"" + status.name() + "\"}");
        }
    }

    /**
     * @param tag {@code live} or {@code ready}
     * @return the worst status of the checks carrying the tag; CRITICAL when no check carries it (nothing has
     *         said the runtime is fine) or the executor fails
     */
    Result.Status evaluate(String tag) {
        try {
            List<HealthCheckExecutionResult> results = executor.execute(HealthCheckSelector.tags(tag));
            if (results.isEmpty()) {
                return Result.Status.CRITICAL;
            }
            Result.Status worst = Result.Status.OK;
            for (HealthCheckExecutionResult r : results) {
                Result.Status s = r.getHealthCheckResult().getStatus();
                if (s.ordinal() > worst.ordinal()) {
                    worst = s;
                }
            }
            return worst;
        } catch (RuntimeException e) {
            return Result.Status.HEALTH_CHECK_ERROR;
        }
    }
}
