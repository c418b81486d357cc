package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;
import org.jolokia.json.parser.ParseException;

/**
 * A small Jolokia client (GET read/exec over loopback with basic authentication), as a CI pipeline or an operator's
 * curl would use it.
 */
public final class Jolokia {

    private final String base;
    private final String authorization;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    /**
     * @param port the runtime's HTTP port on 127.0.0.1
     * @param user Jolokia user
     * @param password Jolokia password
     */
    public Jolokia(int port, String user, String password) {
        this.base = "http://127.0.0.1:" + port + "/jolokia";
        this.authorization = "Basic " + Base64.getEncoder()
                .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /** @return the Jolokia URL */
    public String url() {
        return base;
    }

    /**
     * Reads one attribute.
     *
     * @return the value, or {@code null} when the runtime does not answer or the MBean is not (yet) there
     */
    public Object read(String mbean, String attribute) {
        JSONObject r = call("/read/" + path(mbean) + "/" + path(attribute));
        return r != null && Long.valueOf(200).equals(number(r.get("status"))) ? r.get("value") : null;
    }

    /**
     * Executes an operation.
     *
     * @return the whole JSON answer (status, value or error), or {@code null} when the runtime does not answer
     */
    public JSONObject exec(String mbean, String operation, Object... args) {
        StringBuilder p = new StringBuilder("/exec/").append(path(mbean)).append('/').append(path(operation));
        for (Object a : args) {
            p.append('/').append(path(String.valueOf(a)));
        }
        return call(p.toString());
    }

    private static Long number(Object o) {
        return o instanceof Number ? ((Number) o).longValue() : null;
    }

    private static String path(String s) {
        // Jolokia's GET path escaping: '!' escapes '/' and '!' itself; then URL-encode
        return URLEncoder.encode(s.replace("!", "!!").replace("/", "!/"), StandardCharsets.UTF_8)
                .replace("+", "%20");
    }

    private JSONObject call(String path) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + path))
                    .header("Authorization", authorization).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return null;
            }
            Object o = new JSONParser().parse(r.body());
            return o instanceof JSONObject ? (JSONObject) o : null;
        } catch (IOException | ParseException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
