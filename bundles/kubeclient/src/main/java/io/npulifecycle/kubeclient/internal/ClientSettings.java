package io.npulifecycle.kubeclient.internal;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The validated settings of the Kubernetes client, PID {@value #PID}, resolved from the configuration, the
 * environment and the framework properties.
 *
 * <p>Where the API server is, in this order:
 * <ol>
 * <li>environment variable {@value #ENV_MASTER} (set by the launcher and the simulator), else framework property
 * {@value #PROP_MASTER}, else the key {@code masterUrl}: an explicit {@code http://} or {@code https://} URL, no
 * credentials (for the simulator's embedded cluster, a {@code kubectl proxy}); combined with {@code kubeconfig}, the
 * URL overrides the kubeconfig's server;</li>
 * <li>the key {@code kubeconfig}: that kubeconfig file, its current context;</li>
 * <li>otherwise automatic, as fabric8's {@code Config.autoConfigure}: the pod's service account (environment
 * {@code KUBERNETES_SERVICE_HOST} and {@value #SERVICE_ACCOUNT_TOKEN}), else {@code $KUBECONFIG} or
 * {@code ~/.kube/config}. When none of them exists there is no cluster: {@link #mode()} is {@link Mode#NONE} and no
 * client is built.</li>
 * </ol>
 */
public final class ClientSettings {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.kube";
    /** Environment variable overriding {@code masterUrl}. */
    public static final String ENV_MASTER = "NPU_LIFECYCLE_KUBE_MASTER";
    /** Framework property overriding {@code masterUrl} (below the environment variable). */
    public static final String PROP_MASTER = "npu.lifecycle.kube.master";
    /** Token file of the pod's service account (in-cluster configuration). */
    public static final String SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    /** How the client finds the API server. */
    public enum Mode {
        /** an explicit URL (key, framework property or environment), optionally with a kubeconfig for credentials */
        MASTER_URL,
        /** the kubeconfig file of the {@code kubeconfig} key */
        KUBECONFIG,
        /** fabric8's automatic configuration (service account, {@code $KUBECONFIG}, {@code ~/.kube/config}) */
        AUTO,
        /** nothing configured and nothing found: no client */
        NONE
    }

    /**
     * An invalid setting; the message names the PID (or variable), the key, the value and what was expected, and
     * {@link #key()}, {@link #value()} and {@link #reason()} give them apart (for
     * {@link io.npulifecycle.api.management.ConfigurationRefusals}).
     */
    public static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;
        private final String key;
        private final transient Object value;
        private final String reason;

        /**
         * @param key the key at fault, e.g. {@code namespace}
         * @param value the refused value as configured
         * @param reason what was expected, without the key and the value
         * @param message the whole sentence: PID (or variable), key, value and reason
         */
        Invalid(String key, Object value, String reason, String message) {
            super(message);
            this.key = key;
            this.value = value;
            this.reason = reason;
        }

        /** @return the key at fault, e.g. {@code requestTimeoutSeconds} ({@code masterUrl} for a URL from anywhere) */
        public String key() {
            return key;
        }

        /** @return the refused value as configured, e.g. {@code 0} */
        public Object value() {
            return value;
        }

        /** @return what was expected, e.g. {@code is out of range (expected 1..3600)} */
        public String reason() {
            return reason;
        }
    }

    private final Mode mode;
    private final String masterUrl;
    private final String masterUrlSource;
    private final Path kubeconfig;
    private final String namespace;
    private final int requestTimeoutMs;
    private final int connectTimeoutMs;
    private final long watchReconnectIntervalMs;
    private final String autoSource;

    private ClientSettings(Mode mode, String masterUrl, String masterUrlSource, Path kubeconfig, String namespace,
            int requestTimeoutMs, int connectTimeoutMs, long watchReconnectIntervalMs, String autoSource) {
        this.mode = mode;
        this.masterUrl = masterUrl;
        this.masterUrlSource = masterUrlSource;
        this.kubeconfig = kubeconfig;
        this.namespace = namespace;
        this.requestTimeoutMs = requestTimeoutMs;
        this.connectTimeoutMs = connectTimeoutMs;
        this.watchReconnectIntervalMs = watchReconnectIntervalMs;
        this.autoSource = autoSource;
    }

    /**
     * Validates and resolves.
     *
     * @param masterUrl key {@code masterUrl}; empty = automatic
     * @param kubeconfig key {@code kubeconfig}: a file path; empty = none
     * @param namespace key {@code namespace}: a DNS-1123 label
     * @param requestTimeoutSeconds key {@code requestTimeoutSeconds}, 1..3600
     * @param connectTimeoutSeconds key {@code connectTimeoutSeconds}, 1..600
     * @param watchReconnectIntervalMs key {@code watchReconnectIntervalMs}, 100..600000
     * @param env the process environment ({@code System::getenv})
     * @param frameworkProperty framework properties ({@code BundleContext::getProperty}); may answer null
     * @param home the user's home folder (for {@code ~/.kube/config})
     * @return the settings; {@link #mode()} {@link Mode#NONE} when no cluster is configured or found
     * @throws Invalid a bad URL, an unreadable kubeconfig file, a bad namespace or an out-of-range number
     */
    public static ClientSettings resolve(String masterUrl, String kubeconfig, String namespace, int requestTimeoutSeconds,
            int connectTimeoutSeconds, long watchReconnectIntervalMs, Function<String, String> env,
            Function<String, String> frameworkProperty, Path home) throws Invalid {
        String ns = namespace == null ? "" : namespace.strip();
        if (!DNS_LABEL.matcher(ns).matches()) {
            String reason = "is not a Kubernetes namespace name (a DNS-1123 label: lower-case letters, digits and '-', "
                    + "at most 63 characters)";
            throw new Invalid("namespace", namespace, reason, key("namespace", namespace) + " " + reason);
        }
        range("requestTimeoutSeconds", requestTimeoutSeconds, 1, 3600);
        range("connectTimeoutSeconds", connectTimeoutSeconds, 1, 600);
        range("watchReconnectIntervalMs", watchReconnectIntervalMs, 100, 600_000);

        String url = null;
        String urlSource = null;
        String fromEnv = trimToNull(env.apply(ENV_MASTER));
        String fromProp = trimToNull(frameworkProperty.apply(PROP_MASTER));
        if (fromEnv != null) {
            url = fromEnv;
            urlSource = "environment variable " + ENV_MASTER;
        } else if (fromProp != null) {
            url = fromProp;
            urlSource = "framework property " + PROP_MASTER;
        } else if (trimToNull(masterUrl) != null) {
            url = masterUrl.strip();
            urlSource = "PID " + PID + " key masterUrl";
        }
        if (url != null) {
            url = checkUrl(urlSource, url);
        }

        Path kc = null;
        if (trimToNull(kubeconfig) != null) {
            kc = Paths.get(kubeconfig.strip());
            if (!Files.isRegularFile(kc) || !Files.isReadable(kc)) {
                String reason = "cannot be read: " + (Files.exists(kc) ? "not a readable file" : "no such file")
                        + " (expected the path of a kubeconfig file, or empty for automatic configuration)";
                throw new Invalid("kubeconfig", kubeconfig, reason, key("kubeconfig", kubeconfig) + " " + reason);
            }
        }

        int reqMs = requestTimeoutSeconds * 1000;
        int conMs = connectTimeoutSeconds * 1000;
        if (url != null) {
            return new ClientSettings(Mode.MASTER_URL, url, urlSource, kc, ns, reqMs, conMs, watchReconnectIntervalMs,
                    null);
        }
        if (kc != null) {
            return new ClientSettings(Mode.KUBECONFIG, null, null, kc, ns, reqMs, conMs, watchReconnectIntervalMs, null);
        }
        String auto = detectAutomatic(env, home);
        return new ClientSettings(auto == null ? Mode.NONE : Mode.AUTO, null, null, null, ns, reqMs, conMs,
                watchReconnectIntervalMs, auto);
    }

    /** @return what automatic configuration would use, or null when there is nothing */
    static String detectAutomatic(Function<String, String> env, Path home) {
        if (trimToNull(env.apply("KUBERNETES_SERVICE_HOST")) != null
                && Files.isReadable(Paths.get(SERVICE_ACCOUNT_TOKEN))) {
            return "the pod's service account (" + SERVICE_ACCOUNT_TOKEN + ")";
        }
        String kubeconfigEnv = trimToNull(env.apply("KUBECONFIG"));
        if (kubeconfigEnv != null) {
            for (String f : kubeconfigEnv.split(java.io.File.pathSeparator)) {
                if (!f.isBlank() && Files.isReadable(Paths.get(f))) {
                    return "$KUBECONFIG (" + kubeconfigEnv + ")";
                }
            }
        }
        if (home != null && Files.isReadable(home.resolve(".kube").resolve("config"))) {
            return home.resolve(".kube").resolve("config").toString();
        }
        return null;
    }

    private static String checkUrl(String source, String url) throws Invalid {
        String expected = " is not an http(s) URL of a Kubernetes API server (expected e.g. https://10.0.0.1:6443 "
                + "or http://127.0.0.1:8080, or empty for automatic configuration)";
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw invalidUrl(source, url, expected + ": " + e.getMessage());
        }
        String scheme = uri.getScheme();
        if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
                || uri.getHost() == null || uri.getHost().isEmpty() || uri.getQuery() != null
                || uri.getFragment() != null || uri.getUserInfo() != null) {
            throw invalidUrl(source, url, expected);
        }
        return url;
    }

    /** @return the refusal of {@code url} from {@code source} (key {@code masterUrl}, or what overrides it) */
    private static Invalid invalidUrl(String source, String url, String expected) {
        String reason = expected.strip();
        if (!source.endsWith("key masterUrl")) {
            reason = "(from the " + source + ", which overrides it) " + reason;
        }
        return new Invalid("masterUrl", url, reason, source + "='" + url + "'" + expected);
    }

    private static void range(String key, long value, long min, long max) throws Invalid {
        if (value < min || value > max) {
            String reason = "is out of range (expected " + min + ".." + max + ")";
            throw new Invalid(key, value, reason, key(key, String.valueOf(value)) + " " + reason);
        }
    }

    private static String key(String key, String value) {
        return "PID " + PID + " key " + key + "='" + value + "'";
    }

    private static String trimToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    /** @return how the API server is found */
    public Mode mode() {
        return mode;
    }

    /** @return the explicit API server URL, or null (kubeconfig / automatic) */
    public String masterUrl() {
        return masterUrl;
    }

    /** @return where {@link #masterUrl()} came from (environment variable, framework property or key), or null */
    public String masterUrlSource() {
        return masterUrlSource;
    }

    /** @return the kubeconfig file of the {@code kubeconfig} key, or null */
    public Path kubeconfig() {
        return kubeconfig;
    }

    /** @return the default namespace of the client */
    public String namespace() {
        return namespace;
    }

    /** @return request timeout, ms */
    public int requestTimeoutMs() {
        return requestTimeoutMs;
    }

    /** @return connection timeout, ms */
    public int connectTimeoutMs() {
        return connectTimeoutMs;
    }

    /** @return pause before a watch reconnects, ms */
    public long watchReconnectIntervalMs() {
        return watchReconnectIntervalMs;
    }

    /** @return for {@link Mode#AUTO}, what was found (service account, kubeconfig path); else null */
    public String autoSource() {
        return autoSource;
    }

    /** @return a one-line description for the log, without credentials */
    public String describe() {
        switch (mode) {
            case MASTER_URL:
                return masterUrl + " (from " + masterUrlSource + (kubeconfig == null ? "" : ", credentials from "
                        + kubeconfig) + "), namespace " + namespace;
            case KUBECONFIG:
                return "kubeconfig " + kubeconfig + ", namespace " + namespace;
            case AUTO:
                return "automatic configuration from " + autoSource + ", namespace " + namespace;
            default:
                return "no cluster";
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ClientSettings)) {
            return false;
        }
        ClientSettings s = (ClientSettings) o;
        return mode == s.mode && Objects.equals(masterUrl, s.masterUrl) && Objects.equals(kubeconfig, s.kubeconfig)
                && namespace.equals(s.namespace) && requestTimeoutMs == s.requestTimeoutMs
                && connectTimeoutMs == s.connectTimeoutMs && watchReconnectIntervalMs == s.watchReconnectIntervalMs
                && Objects.equals(autoSource, s.autoSource);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, masterUrl, kubeconfig, namespace, requestTimeoutMs, connectTimeoutMs,
                watchReconnectIntervalMs, autoSource);
    }

    @Override
    public String toString() {
        return describe();
    }
}
