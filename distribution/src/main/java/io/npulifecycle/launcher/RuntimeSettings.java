package io.npulifecycle.launcher;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * Settings read before the framework starts: {@code etc/runtime.properties} of the runtime home, overridden by
 * environment variables. Every value is validated; a bad one stops the launch with a message naming the file (or
 * variable), the key and what was expected, so a typo never starts a runtime with surprising settings.
 */
public final class RuntimeSettings {

    /** File name under {@code etc/}. */
    public static final String FILE = "runtime.properties";
    static final Set<String> KEYS = Set.of("http.host", "http.port", "log.level", "jolokia.user", "jolokia.policy",
            "jolokia.users", "http.enable", "https.port", "https.keystore", "https.keystore.password",
            "https.keystore.type", "https.key.password", "metrics.host", "metrics.port");
    /** Default port of {@code /metrics} (the Prometheus exporters' registered default for a JVM). */
    public static final int METRICS_PORT = 9464;
    static final Set<String> LEVELS = Set.of("ERROR", "WARN", "INFO", "DEBUG", "TRACE");

    private final String httpHost;
    private final int httpPort;
    private final String logLevel;
    private final String jolokiaUser;
    private final Path jolokiaPolicy;
    private final String envUser;
    private final String envPassword;
    private Path jolokiaUsers;
    private boolean httpEnabled = true;
    private Tls tls;
    private String metricsHost;
    private int metricsPort;

    /**
     * TLS of the HTTP server (Felix HTTP Jetty {@code org.apache.felix.https.*}): on when {@code https.port} is set.
     */
    public static final class Tls {
        private final int port;
        private final Path keystore;
        private final String type;
        private final String password;
        private final String keyPassword;

        Tls(int port, Path keystore, String type, String password, String keyPassword) {
            this.port = port;
            this.keystore = keystore;
            this.type = type;
            this.password = password;
            this.keyPassword = keyPassword;
        }

        /** @return the HTTPS port, 1 to 65535 */
        public int port() {
            return port;
        }

        /** @return the keystore file (checked: it opens with the password) */
        public Path keystore() {
            return keystore;
        }

        /** @return the keystore type, {@code PKCS12} by default */
        public String type() {
            return type;
        }

        /** @return the keystore password (never log it) */
        public String password() {
            return password;
        }

        /** @return the key password (the keystore password unless {@code https.key.password} is set) */
        public String keyPassword() {
            return keyPassword;
        }
    }

    private RuntimeSettings(String httpHost, int httpPort, String logLevel, String jolokiaUser, Path jolokiaPolicy,
            String envUser, String envPassword) {
        this.httpHost = httpHost;
        this.httpPort = httpPort;
        this.logLevel = logLevel;
        this.jolokiaUser = jolokiaUser;
        this.jolokiaPolicy = jolokiaPolicy;
        this.envUser = envUser;
        this.envPassword = envPassword;
    }

    /**
     * Reads and validates the settings.
     *
     * @param etc the runtime's {@code etc/} folder; a missing {@code runtime.properties} means all defaults
     * @param env the process environment
     * @return the settings
     * @throws LaunchException ({@link LaunchException#USAGE}) naming the file or variable and the key on any invalid
     *         value or unknown key
     */
    public static RuntimeSettings load(Path etc, Map<String, String> env) throws LaunchException {
        Path file = etc.resolve(FILE);
        Properties p = new Properties();
        if (Files.exists(file)) {
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IOException | IllegalArgumentException e) {
                throw new LaunchException(LaunchException.USAGE, file + ": cannot be read as a properties file: "
                        + e.getMessage(), e);
            }
        }
        Set<String> unknown = new TreeSet<>(p.stringPropertyNames());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new LaunchException(LaunchException.USAGE, file + ": unknown key(s) " + unknown + "; known keys are "
                    + new TreeSet<>(KEYS));
        }
        String host = pick(env, "NPU_LIFECYCLE_HTTP_HOST", p, "http.host", "127.0.0.1");
        if (host.isBlank() || host.chars().anyMatch(Character::isWhitespace)) {
            throw new LaunchException(LaunchException.USAGE, source(env, "NPU_LIFECYCLE_HTTP_HOST", file)
                    + ": http.host='" + host + "' is not a host name or address");
        }
        String portText = pick(env, "NPU_LIFECYCLE_HTTP_PORT", p, "http.port", "8778");
        int port;
        try {
            port = Integer.parseInt(portText.trim());
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new LaunchException(LaunchException.USAGE, source(env, "NPU_LIFECYCLE_HTTP_PORT", file)
                    + ": http.port='" + portText + "' is not a TCP port (expected an integer from 1 to 65535)");
        }
        String level = pick(env, "NPU_LIFECYCLE_LOG_LEVEL", p, "log.level", "INFO").trim().toUpperCase();
        if (!LEVELS.contains(level)) {
            throw new LaunchException(LaunchException.USAGE, source(env, "NPU_LIFECYCLE_LOG_LEVEL", file)
                    + ": log.level='" + level + "' is not one of " + new TreeSet<>(LEVELS));
        }
        String user = p.getProperty("jolokia.user", "operator").trim();
        if (!user.matches("[A-Za-z0-9._@-]{1,64}")) {
            throw new LaunchException(LaunchException.USAGE, file + ": jolokia.user='" + user
                    + "' is not a user name (expected 1 to 64 of A-Z a-z 0-9 . _ @ -)");
        }
        Path policy = etc.resolve(p.getProperty("jolokia.policy", "jolokia-access.xml").trim());
        String envUser = blankToNull(env.get("NPU_LIFECYCLE_JOLOKIA_USER"));
        String envPassword = blankToNull(env.get("NPU_LIFECYCLE_JOLOKIA_PASSWORD"));
        if ((envUser == null) != (envPassword == null)) {
            throw new LaunchException(LaunchException.USAGE, (envUser == null
                    ? "NPU_LIFECYCLE_JOLOKIA_PASSWORD is set but NPU_LIFECYCLE_JOLOKIA_USER is not"
                    : "NPU_LIFECYCLE_JOLOKIA_USER is set but NPU_LIFECYCLE_JOLOKIA_PASSWORD is not")
                    + ": set both, or neither to use the generated credentials");
        }
        if (envUser != null && !envUser.matches("[A-Za-z0-9._@-]{1,64}")) {
            throw new LaunchException(LaunchException.USAGE, "NPU_LIFECYCLE_JOLOKIA_USER='" + envUser
                    + "' is not a user name (expected 1 to 64 of A-Z a-z 0-9 . _ @ -)");
        }
        RuntimeSettings s = new RuntimeSettings(host.trim(), port, level, user, policy, envUser, envPassword);
        s.jolokiaUsers = etc.resolve(p.getProperty("jolokia.users", "jolokia-users.properties").trim());
        s.tls = tls(etc, file, p, env);
        String httpEnable = p.getProperty("http.enable", s.tls == null ? "true" : "false").trim();
        if (!httpEnable.equals("true") && !httpEnable.equals("false")) {
            throw new LaunchException(LaunchException.USAGE, file + ": http.enable='" + httpEnable
                    + "' is not true or false");
        }
        s.httpEnabled = Boolean.parseBoolean(httpEnable);
        if (!s.httpEnabled && s.tls == null) {
            throw new LaunchException(LaunchException.USAGE, file + ": http.enable=false needs https.port and "
                    + "https.keystore (otherwise nothing would listen)");
        }
        if (s.tls != null && s.httpEnabled && s.tls.port() == port) {
            throw new LaunchException(LaunchException.USAGE, file + ": https.port and http.port are both " + port);
        }
        metrics(s, file, p, env);
        return s;
    }

    /**
     * Reads {@code metrics.host} (default: every address inside a pod, where Prometheus scrapes the pod IP, loopback
     * elsewhere; a pod is recognised as the Kubernetes client recognises it, by {@code KUBERNETES_SERVICE_HOST}) and
     * {@code metrics.port} (default {@value #METRICS_PORT}; {@code 0}: a free port chosen at start, for tests that
     * run many runtimes on one machine). Environment variables {@code NPU_LIFECYCLE_METRICS_HOST} and
     * {@code NPU_LIFECYCLE_METRICS_PORT} win.
     */
    private static void metrics(RuntimeSettings s, Path file, Properties p, Map<String, String> env)
            throws LaunchException {
        boolean inPod = env.get("KUBERNETES_SERVICE_HOST") != null && !env.get("KUBERNETES_SERVICE_HOST").isBlank();
        String host = pick(env, "NPU_LIFECYCLE_METRICS_HOST", p, "metrics.host", inPod ? "0.0.0.0" : "127.0.0.1").trim();
        if (host.isEmpty() || host.chars().anyMatch(Character::isWhitespace)) {
            throw new LaunchException(LaunchException.USAGE, source(env, "NPU_LIFECYCLE_METRICS_HOST", file)
                    + ": metrics.host='" + host + "' is not a host name or address");
        }
        String portText = pick(env, "NPU_LIFECYCLE_METRICS_PORT", p, "metrics.port", String.valueOf(METRICS_PORT));
        int port;
        try {
            port = Integer.parseInt(portText.trim());
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new LaunchException(LaunchException.USAGE, source(env, "NPU_LIFECYCLE_METRICS_PORT", file)
                    + ": metrics.port='" + portText + "' is not a TCP port (expected an integer from 1 to 65535, or 0 "
                    + "for a free port chosen at start)");
        }
        if (port != 0 && ((s.httpEnabled && port == s.httpPort) || (s.tls != null && port == s.tls.port()))) {
            throw new LaunchException(LaunchException.USAGE, source(env, "NPU_LIFECYCLE_METRICS_PORT", file)
                    + ": metrics.port=" + port + " is also the port of Jolokia (http.port or https.port): /metrics "
                    + "has its own listener");
        }
        s.metricsHost = host;
        s.metricsPort = port;
    }

    /** Reads and checks the TLS keys: {@code null} when {@code https.port} is not set. */
    private static Tls tls(Path etc, Path file, Properties p, Map<String, String> env) throws LaunchException {
        String portText = p.getProperty("https.port", "").trim();
        if (portText.isEmpty()) {
            for (String k : new String[] {"https.keystore", "https.keystore.password", "https.key.password"}) {
                if (p.getProperty(k) != null) {
                    throw new LaunchException(LaunchException.USAGE, file + ": " + k + " is set but https.port is "
                            + "not: set https.port to turn TLS on");
                }
            }
            return null;
        }
        int port;
        try {
            port = Integer.parseInt(portText);
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new LaunchException(LaunchException.USAGE, file + ": https.port='" + portText
                    + "' is not a TCP port (expected an integer from 1 to 65535)");
        }
        String ks = p.getProperty("https.keystore", "").trim();
        if (ks.isEmpty()) {
            throw new LaunchException(LaunchException.USAGE, file + ": https.port is set but https.keystore is not");
        }
        Path keystore = etc.resolve(ks).toAbsolutePath().normalize();
        String password = pick(env, "NPU_LIFECYCLE_HTTPS_KEYSTORE_PASSWORD", p, "https.keystore.password", "");
        String type = p.getProperty("https.keystore.type", "PKCS12").trim();
        String keyPassword = p.getProperty("https.key.password", password);
        if (!Files.isRegularFile(keystore)) {
            throw new LaunchException(LaunchException.USAGE, file + ": https.keystore " + keystore
                    + " does not exist or is not a file");
        }
        java.security.KeyStore k;
        try (java.io.InputStream in = Files.newInputStream(keystore)) {
            k = java.security.KeyStore.getInstance(type);
            k.load(in, password.toCharArray());
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new LaunchException(LaunchException.USAGE, file + ": https.keystore " + keystore + " (type " + type
                    + ") cannot be opened with https.keystore.password (or NPU_LIFECYCLE_HTTPS_KEYSTORE_PASSWORD): "
                    + e, e);
        }
        try {
            boolean hasKey = false;
            for (String alias : java.util.Collections.list(k.aliases())) {
                if (k.isKeyEntry(alias)) {
                    hasKey = true;
                    // Jetty recovers the key with the key password: a wrong one would stop Jetty after the start
                    // (no connector, nothing listening) while the runtime looked started; refuse it here instead
                    if (k.getKey(alias, keyPassword.toCharArray()) == null) {
                        throw new java.security.UnrecoverableKeyException("no key under alias " + alias);
                    }
                }
            }
            if (!hasKey) {
                throw new LaunchException(LaunchException.USAGE, file + ": https.keystore " + keystore
                        + " holds no private key");
            }
        } catch (java.security.GeneralSecurityException e) {
            throw new LaunchException(LaunchException.USAGE, file + ": the private key in https.keystore " + keystore
                    + " cannot be recovered with https.key.password (or, when it is not set, the keystore password): "
                    + e, e);
        }
        return new Tls(port, keystore, type, password, keyPassword);
    }

    private static String pick(Map<String, String> env, String var, Properties p, String key, String dflt) {
        String e = env.get(var);
        if (e != null && !e.isBlank()) {
            return e;
        }
        return p.getProperty(key, dflt);
    }

    private static String source(Map<String, String> env, String var, Path file) {
        String e = env.get(var);
        return e != null && !e.isBlank() ? "environment variable " + var : file.toString();
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /** @return the HTTP bind address */
    public String httpHost() {
        return httpHost;
    }

    /** @return the HTTP port, 1 to 65535 */
    public int httpPort() {
        return httpPort;
    }

    /** @return ERROR, WARN, INFO, DEBUG or TRACE */
    public String logLevel() {
        return logLevel;
    }

    /** @return the Jolokia user used with generated credentials */
    public String jolokiaUser() {
        return jolokiaUser;
    }

    /** @return the Jolokia access policy file */
    public Path jolokiaPolicy() {
        return jolokiaPolicy;
    }

    /** @return the Jolokia users file ({@code jolokia.users}, default {@code etc/jolokia-users.properties}) */
    public Path jolokiaUsers() {
        return jolokiaUsers;
    }

    /** @return whether plain HTTP listens ({@code http.enable}; default true, false when TLS is on) */
    public boolean httpEnabled() {
        return httpEnabled;
    }

    /** @return the address of the {@code /metrics} listener ({@code metrics.host}) */
    public String metricsHost() {
        return metricsHost;
    }

    /** @return the port of the {@code /metrics} listener ({@code metrics.port}), 0 = a free port chosen at start */
    public int metricsPort() {
        return metricsPort;
    }

    /**
     * @param port the port chosen for {@code metrics.port=0}
     */
    void chooseMetricsPort(int port) {
        this.metricsPort = port;
    }

    /** @return the TLS settings, or {@code null} when TLS is off */
    public Tls tls() {
        return tls;
    }

    /** @return the user from the environment, or {@code null} */
    public String envUser() {
        return envUser;
    }

    /** @return the password from the environment, or {@code null} */
    public String envPassword() {
        return envPassword;
    }
}
