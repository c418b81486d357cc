package io.npulifecycle.launcher;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The OSGi framework properties of a runtime. Used by the launcher and by the integration tests, so both boot the
 * same runtime.
 *
 * <p>Security-relevant Jolokia settings (authentication mode, restrictor service, users file, the operator's password
 * hash, policy) are given as framework properties, never through ConfigAdmin: Jolokia reads them when its servlet is
 * first registered, so there is no instant in which it answers without authentication or without the policy
 * (DESIGN.md, "Known traps"); the clear password never becomes a framework property.
 */
public final class FrameworkConfig {

    /** The Jolokia servlet context path. */
    public static final String JOLOKIA_CONTEXT = "/jolokia";

    /**
     * Packages the launcher's class path exports to bundles: SLF4J for the third-party bundles that log through it
     * (Jetty 12 imports {@code [2,3)}, Aries JMX whiteboard and Felix Health Checks {@code [1.7,2)}: the API is
     * exported under both versions, like the slf4j-api bundle itself does), with a JUL backend.
     */
    public static final String SYSTEM_PACKAGES_EXTRA = String.join(",",
            "org.slf4j;version=2.0.17", "org.slf4j.event;version=2.0.17", "org.slf4j.helpers;version=2.0.17",
            "org.slf4j.spi;version=2.0.17", "org.slf4j;version=1.7.36", "org.slf4j.helpers;version=1.7.36");

    /** Idle timeout of an HTTP connection (Jolokia, health), milliseconds. */
    public static final int HTTP_IDLE_TIMEOUT_MS = 10_000;

    private FrameworkConfig() {
    }

    /**
     * Thread pools sized for a node agent, which serves a few Jolokia and health requests a minute and delivers a
     * few events a minute (docs/benchmarks.md, node-agent footprint: each pool thread costs its stack and
     * allocation buffers in the resident memory of every NPU node): EventAdmin 4 threads (2 asynchronous delivery,
     * instead of 20 and 10), Jetty one acceptor and one selector in a pool of 8 (its default minimum; a pool of 4
     * measured no smaller), the Felix resolver in the calling thread instead of a pool of one thread per core.
     */
    private static void nodeThreads(Map<String, String> p) {
        p.put("org.apache.felix.eventadmin.ThreadPoolSize", "4");
        p.put("org.apache.felix.eventadmin.AsyncToSyncThreadRatio", "0.5");
        p.put("org.apache.felix.http.jetty.acceptors", "1");
        p.put("org.apache.felix.http.jetty.selectors", "1");
        p.put("org.apache.felix.http.jetty.threadpool.max", "8");
        p.put("felix.resolver.parallelism", "1");
    }

    /**
     * @param role {@code node} or {@code control-plane}
     * @param productVersion the product version
     * @param home the runtime home
     * @param install the installation folder
     * @param settings the validated runtime settings
     * @param credentials the Jolokia credentials
     * @param policy the Jolokia policy (the configured one or deny-all)
     * @return the framework properties, in a stable order
     */
    public static Map<String, String> properties(String role, String productVersion, RuntimeHome home,
            java.nio.file.Path install, RuntimeSettings settings, Credentials credentials, AccessPolicy policy) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("org.osgi.framework.storage", home.cache().resolve("osgi").toString());
        p.put("org.osgi.framework.storage.clean", "onFirstInit");
        p.put("org.osgi.framework.startlevel.beginning", String.valueOf(BundleList.FRAMEWORK_START_LEVEL));
        p.put("org.osgi.framework.system.packages.extra", SYSTEM_PACKAGES_EXTRA);
        p.put("felix.log.level", "1");
        p.put("npu.lifecycle.role", role);
        p.put("npu.lifecycle.version", productVersion);
        p.put("npu.lifecycle.home", home.root().toString());
        p.put("npu.lifecycle.install", install.toString());

        // HTTP (Felix HTTP Jetty 12): Jolokia and the health endpoints. Loopback unless configured; with TLS
        // (https.port + keystore in etc/runtime.properties) plain HTTP is off unless http.enable=true.
        p.put("org.apache.felix.http.enable", String.valueOf(settings.httpEnabled()));
        p.put("org.apache.felix.http.host", settings.httpHost());
        p.put("org.osgi.service.http.port", String.valueOf(settings.httpPort()));
        RuntimeSettings.Tls tls = settings.tls();
        p.put("org.apache.felix.https.enable", String.valueOf(tls != null));
        if (tls != null) {
            p.put("org.osgi.service.http.port.secure", String.valueOf(tls.port()));
            p.put("org.apache.felix.https.keystore", tls.keystore().toString());
            p.put("org.apache.felix.https.keystore.type", tls.type());
            p.put("org.apache.felix.https.keystore.password", tls.password());
            p.put("org.apache.felix.https.keystore.key.password", tls.keyPassword());
            p.put("org.apache.felix.https.jetty.protocols.included", "TLSv1.3,TLSv1.2");
        }
        p.put("org.apache.felix.http.jetty.sendServerHeader", "false");
        // Connection idle timeout (Felix default 60 s): a client that stalls inside a request body holds a Jetty
        // thread while the body is read (a node agent has 8); closed after this much time without a byte, it gives
        // the thread back. Headers are parsed without a thread, and a servlet busy on a request is not cut by it.
        p.put("org.apache.felix.http.timeout", String.valueOf(HTTP_IDLE_TIMEOUT_MS));
        // /metrics (bundle io.npulifecycle.metrics): its own listener, so Prometheus can scrape the pod IP while
        // Jolokia stays on loopback
        p.put("npu.lifecycle.metrics.host", settings.metricsHost());
        p.put("npu.lifecycle.metrics.port", String.valueOf(settings.metricsPort()));

        // Jolokia 2: authentication by the security bundle's Authenticator service (service-all: 401 when there is
        // none or one refuses), authorisation by its Restrictor service (useRestrictorService: deny when there is
        // none), which loads the policy file itself (policyLocation is ignored in that mode). No org.jolokia.user:
        // it would switch Jolokia back to its own single-user basic authentication. No discovery, no stack traces.
        p.put("org.jolokia.agentContext", JOLOKIA_CONTEXT);
        p.put("org.jolokia.authMode", "service-all");
        p.put("org.jolokia.useRestrictorService", "true");
        p.put("org.jolokia.realm", "npu-lifecycle");
        p.put("npu.lifecycle.jolokia.users", settings.jolokiaUsers().toAbsolutePath().toString());
        p.put("npu.lifecycle.jolokia.operator", credentials.operatorLine());
        p.put("npu.lifecycle.jolokia.policy", policy.file().toAbsolutePath().toString());
        // Ignored while Jolokia uses the restrictor service, but a servlet registered in Jolokia's start-up race
        // (see JolokiaServletGuard) builds its restrictor from it: never the allow-all of a missing classpath policy.
        p.put("org.jolokia.policyLocation", policy.file().toUri().toString());
        p.put("org.jolokia.discoveryEnabled", "false");
        p.put("org.jolokia.includeStackTrace", "false");
        // without it a request's own includeStackTrace=true or serializeException=true (query or "config") would
        // still get the stack trace or the serialised exception: error and error_type are always sent
        p.put("org.jolokia.allowErrorDetails", "false");
        p.put("org.jolokia.serializeException", "false");
        p.put("org.jolokia.allowDnsReverseLookup", "false");
        p.put("org.jolokia.debug", "false");

        // FileInstall: etc/ feeds ConfigAdmin, deploy/ installs, updates and uninstalls bundles.
        p.put("felix.fileinstall.dir", home.etc() + "," + home.deploy());
        // Jolokia is configured by the launcher only: an etc/org.jolokia.*.cfg could switch authentication off.
        p.put("felix.fileinstall.filter", "^(?!org\\.jolokia\\.).*\\.(cfg|config|jar)$");
        p.put("felix.fileinstall.poll", "1000");
        p.put("felix.fileinstall.noInitialDelay", "true");
        p.put("felix.fileinstall.enableConfigSave", "false");
        p.put("felix.fileinstall.log.default", "jul");
        p.put("felix.fileinstall.log.level", "3");
        p.put("felix.fileinstall.start.level", String.valueOf(BundleList.DEPLOY_START_LEVEL));
        p.put("felix.fileinstall.bundles.new.start", "true");
        p.put("felix.fileinstall.tmpdir", home.cache().resolve("fileinstall-tmp").toString());

        if ("node".equals(role)) {
            nodeThreads(p);
        }
        p.put("ds.loglevel", "warn");
        p.put("gosh.home", home.root().toString());
        return p;
    }
}
