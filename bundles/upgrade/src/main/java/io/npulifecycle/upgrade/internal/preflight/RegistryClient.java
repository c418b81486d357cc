package io.npulifecycle.upgrade.internal.preflight;

import io.npulifecycle.upgrade.internal.plan.ImageStatus;

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
 * With a mirror ({@link RegistrySettings#mirror()}) the image is checked there instead of at its own registry. Every
 * answer that is not "present" says what failed and, where the configuration can fix it, which key to set: a
 * certificate that no trusted CA signs names {@code registryCaBundle} (chart value {@code preflight.registryCABundle}) and
 * {@code registryInsecure}; refused credentials name the pull secret; a missing tag names the exact image reference.
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
    private final RegistrySettings settings;

    /**
     * @param http the HTTP client
     * @param scheme {@code https} (production) or {@code http} (a plain-HTTP registry, tests)
     * @param basicAuthByHost base64 {@code user:password} by registry host[:port], from a dockerconfigjson
     * @param timeout per request
     */
    public RegistryClient(HttpClient http, String scheme, Map<String, String> basicAuthByHost, Duration timeout) {
        this(http, scheme, basicAuthByHost, timeout, RegistrySettings.DEFAULT);
    }

    /**
     * @param http the HTTP client (its TLS context from {@link RegistrySettings#sslContext()})
     * @param scheme {@code https} (production) or {@code http} (a plain-HTTP registry, tests)
     * @param basicAuthByHost base64 {@code user:password} by registry host[:port], from a dockerconfigjson
     * @param timeout per request
     * @param settings the mirror, and what the messages say about the CA settings
     */
    public RegistryClient(HttpClient http, String scheme, Map<String, String> basicAuthByHost, Duration timeout,
            RegistrySettings settings) {
        this.http = http;
        this.scheme = scheme;
        this.basicAuthByHost = basicAuthByHost;
        this.timeout = timeout;
        this.settings = settings;
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
     * @return present, missing (404 / MANIFEST_UNKNOWN; the detail names {@code image} and where it was looked
     *         for) or an error with the detail (HTTP status, unreachable, TLS: what to configure)
     */
    public ImageStatus check(String image) {
        ImageStatus s = check(image, scheme);
        if (s.detail() != null && s.detail().startsWith(NOT_TLS) && settings.insecure() && "https".equals(scheme)) {
            // registryInsecure as Docker's insecure-registries: HTTPS without verification, else plain HTTP
            return check(image, "http");
        }
        return s;
    }

    /** Marks the answer of a registry that does not speak TLS (for the plain-HTTP retry of {@code insecure}). */
    private static final String NOT_TLS = "\u0000not-tls:";

    private ImageStatus check(String image, String scheme) {
        ImageStatus s = checkOnce(image, scheme);
        return s.detail() != null && s.detail().startsWith(NOT_TLS) && !(settings.insecure() && "https".equals(scheme))
                ? new ImageStatus(false, false, s.detail().substring(NOT_TLS.length())) : s;
    }

    private ImageStatus checkOnce(String image, String scheme) {
        int slash = image.indexOf('/');
        int colon = image.lastIndexOf(':');
        if (slash <= 0 || colon < slash) {
            return new ImageStatus(false, false, "not an image reference host/name:tag");
        }
        String host = image.substring(0, slash);
        String name = image.substring(slash + 1, colon);
        String tag = image.substring(colon + 1);
        String where = "registry " + host;
        if (settings.mirrorHost() != null) {
            where = "mirror " + settings.mirror() + " (registryMirror) of " + host;
            host = settings.mirrorHost();
            name = settings.mirrorPrefix().isEmpty() ? name : settings.mirrorPrefix() + "/" + name;
        }
        URI uri = URI.create(scheme + "://" + host + "/v2/" + name + "/manifests/" + tag);
        try {
            HttpResponse<Void> r = head(uri, null);
            if (r.statusCode() == 401) {
                String wa = r.headers().firstValue("WWW-Authenticate").orElse("");
                String basic = basicAuthByHost.get(host);
                if (wa.regionMatches(true, 0, "Bearer", 0, 6)) {
                    String token = token(wa, basic);
                    if (token == null) {
                        return new ImageStatus(false, false, where + " refused a token"
                                + (basic == null ? "" : " for the pull secret's credentials for " + host));
                    }
                    r = head(uri, "Bearer " + token);
                } else if (basic != null) {
                    r = head(uri, "Basic " + basic);
                    if (r.statusCode() == 401) {
                        return new ImageStatus(false, false, where + " refused the pull secret's credentials"
                                + " for " + host + " (HTTP 401): check the user and password of its entry " + host);
                    }
                } else {
                    return new ImageStatus(false, false,
                            where + " requires credentials and the pull secret has none for " + host
                                    + " (set pullSecret to a dockerconfigjson Secret with an entry for " + host + ")");
                }
            }
            return switch (r.statusCode()) {
                case 200 -> ImageStatus.PRESENT;
                case 404 -> new ImageStatus(false, true, "manifest unknown: " + image + " is not in "
                        + where + " (HEAD " + uri + " answered 404)");
                case 401, 403 -> new ImageStatus(false, false, where + " denied access to " + image
                        + " (HTTP " + r.statusCode() + ")");
                default -> new ImageStatus(false, false, where + " answered HTTP " + r.statusCode()
                        + " for " + image);
            };
        } catch (javax.net.ssl.SSLException e) {
            return new ImageStatus(false, false, tlsProblem(where, e));
        } catch (IOException e) {
            return new ImageStatus(false, false, where + " unreachable: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new ImageStatus(false, false, "interrupted");
        }
    }

    /**
     * @return what failed in a TLS handshake with the registry and what to configure: a certificate that no trusted
     *         CA signs, a certificate that does not name the host, a registry that does not speak TLS; fail closed
     *         (the image counts as unconfirmed)
     */
    private String tlsProblem(String where, javax.net.ssl.SSLException e) {
        StringBuilder chain = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            chain.append(t.getClass().getName()).append(": ").append(t.getMessage()).append(" / ");
        }
        String c = chain.toString();
        if (c.contains("PKIX path") || c.contains("CertPathBuilderException") || c.contains("unable to find valid certification path")) {
            return where + " presents a TLS certificate that no trusted CA signs (" + e.getMessage() + "): "
                    + (settings.caBundle().isEmpty() ? "set registryCaBundle (chart value preflight.registryCABundle) to the"
                            + " registry's CA certificate"
                            : "registryCaBundle " + settings.caBundle() + " does not hold the CA that signs it: add the"
                                    + " registry's CA certificate to it")
                    + ", or registryInsecure=true (preflight.insecure) to skip verification (test registries only)";
        }
        if (c.contains("No subject alternative") || c.contains("No name matching")) {
            return where + " presents a TLS certificate that does not name it (" + e.getMessage() + "): reissue the"
                    + " registry's certificate for the host name the images use, or registryInsecure=true"
                    + " (preflight.insecure) to skip verification (test registries only)";
        }
        if (c.contains("Unsupported or unrecognized SSL message") || c.contains("plaintext connection")) {
            return NOT_TLS + where + " does not speak TLS (" + e.getMessage() + "): set registryScheme=http, or"
                    + " registryInsecure=true (chart value preflight.insecure), for a plain-HTTP registry";
        }
        return where + ": TLS handshake failed: " + c.substring(0, c.length() - 3);
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
