package io.npulifecycle.upgrade.internal;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Registry preflight: does a driver image tag exist? OCI distribution API {@code HEAD /v2/<name>/manifests/<tag>}
 * (Accept: the OCI index/manifest and Docker manifest list/v2 media types). Authentication: anonymous first; on
 * {@code 401} with {@code WWW-Authenticate: Basic} the credentials of the pull secret; with {@code Bearer
 * realm=...,service=...,scope=...} a token from the realm (GET, with the credentials if any), then the HEAD again.
 */
public final class RegistryClient {

    static final String ACCEPT = String.join(", ", "application/vnd.oci.image.index.v1+json",
            "application/vnd.oci.image.manifest.v1+json",
            "application/vnd.docker.distribution.manifest.list.v2+json",
            "application/vnd.docker.distribution.manifest.v2+json");
    private static final Pattern PARAM = Pattern.compile("(\\w+)=\"([^\"]*)\"");

    private final HttpClient http;
    private final String scheme;
    private final Map<String, String> basicAuthByHost;
    private final Duration timeout;

    /**
     * @param http the HTTP client
     * @param scheme {@code https} (production) or {@code http} (a plain-HTTP registry, tests)
     * @param basicAuthByHost base64 {@code user:password} by registry host[:port], from a dockerconfigjson
     * @param timeout per request
     */
    public RegistryClient(HttpClient http, String scheme, Map<String, String> basicAuthByHost, Duration timeout) {
        this.http = http;
        this.scheme = scheme;
        this.basicAuthByHost = basicAuthByHost;
        this.timeout = timeout;
    }

    /**
     * Reads the credentials of a {@code kubernetes.io/dockerconfigjson} secret value.
     *
     * @param dockerConfigJson the decoded {@code .dockerconfigjson}
     * @return base64 {@code user:password} by registry host
     * @throws IllegalArgumentException naming what is malformed
     */
    public static Map<String, String> parseDockerConfig(String dockerConfigJson) {
        Map<String, String> out = new LinkedHashMap<>();
        Object root;
        try {
            root = new KubernetesSerialization().unmarshal(dockerConfigJson, Map.class);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("pull secret .dockerconfigjson is not JSON: " + e.getMessage());
        }
        if (!(root instanceof Map<?, ?> m) || !(m.get("auths") instanceof Map<?, ?> auths)) {
            throw new IllegalArgumentException("pull secret .dockerconfigjson: expected an object with \"auths\"");
        }
        for (Map.Entry<?, ?> e : auths.entrySet()) {
            String host = String.valueOf(e.getKey()).replaceFirst("^https?://", "").replaceFirst("/.*$", "");
            if (e.getValue() instanceof Map<?, ?> a) {
                if (a.get("auth") instanceof String s && !s.isBlank()) {
                    out.put(host, s);
                } else if (a.get("username") instanceof String u && a.get("password") instanceof String p) {
                    out.put(host, Base64.getEncoder().encodeToString((u + ":" + p).getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
        return out;
    }

    /**
     * @param image {@code host[:port]/path/name:tag}
     * @return present, missing (404 / MANIFEST_UNKNOWN) or an error with the detail (HTTP status, unreachable)
     */
    public Reconciler.ImageStatus check(String image) {
        int slash = image.indexOf('/');
        int colon = image.lastIndexOf(':');
        if (slash <= 0 || colon < slash) {
            return new Reconciler.ImageStatus(false, false, "not an image reference host/name:tag");
        }
        String host = image.substring(0, slash);
        String name = image.substring(slash + 1, colon);
        String tag = image.substring(colon + 1);
        URI uri = URI.create(scheme + "://" + host + "/v2/" + name + "/manifests/" + tag);
        try {
            HttpResponse<Void> r = head(uri, null);
            if (r.statusCode() == 401) {
                String wa = r.headers().firstValue("WWW-Authenticate").orElse("");
                String basic = basicAuthByHost.get(host);
                if (wa.regionMatches(true, 0, "Bearer", 0, 6)) {
                    String token = token(wa, basic);
                    if (token == null) {
                        return new Reconciler.ImageStatus(false, false, "registry " + host + " refused a token");
                    }
                    r = head(uri, "Bearer " + token);
                } else if (basic != null) {
                    r = head(uri, "Basic " + basic);
                } else {
                    return new Reconciler.ImageStatus(false, false,
                            "registry " + host + " requires credentials and the pull secret has none for it");
                }
            }
            return switch (r.statusCode()) {
                case 200 -> Reconciler.ImageStatus.PRESENT;
                case 404 -> new Reconciler.ImageStatus(false, true, "manifest unknown");
                case 401, 403 -> new Reconciler.ImageStatus(false, false, "registry " + host + " denied access (HTTP "
                        + r.statusCode() + ")");
                default -> new Reconciler.ImageStatus(false, false, "registry " + host + " answered HTTP " + r.statusCode());
            };
        } catch (IOException e) {
            return new Reconciler.ImageStatus(false, false, "registry " + host + " unreachable: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Reconciler.ImageStatus(false, false, "interrupted");
        }
    }

    private HttpResponse<Void> head(URI uri, String auth) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(timeout).method("HEAD", HttpRequest.BodyPublishers.noBody())
                .header("Accept", ACCEPT);
        if (auth != null) {
            b.header("Authorization", auth);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.discarding());
    }

    private String token(String wwwAuthenticate, String basic) throws IOException, InterruptedException {
        Map<String, String> p = new LinkedHashMap<>();
        Matcher m = PARAM.matcher(wwwAuthenticate);
        while (m.find()) {
            p.put(m.group(1), m.group(2));
        }
        String realm = p.get("realm");
        if (realm == null) {
            return null;
        }
        StringBuilder q = new StringBuilder(realm).append(realm.contains("?") ? "&" : "?");
        if (p.containsKey("service")) {
            q.append("service=").append(URLEncoder.encode(p.get("service"), StandardCharsets.UTF_8)).append('&');
        }
        if (p.containsKey("scope")) {
            q.append("scope=").append(URLEncoder.encode(p.get("scope"), StandardCharsets.UTF_8));
        }
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(q.toString())).timeout(timeout).GET();
        if (basic != null) {
            b.header("Authorization", "Basic " + basic);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            return null;
        }
        Object o = new KubernetesSerialization().unmarshal(r.body(), Map.class);
        if (o instanceof Map<?, ?> tm) {
            Object t = tm.get("token") != null ? tm.get("token") : tm.get("access_token");
            return t == null ? null : t.toString();
        }
        return null;
    }
}
