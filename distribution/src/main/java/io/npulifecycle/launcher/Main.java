package io.npulifecycle.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;
import org.osgi.framework.startlevel.BundleStartLevel;

import io.npulifecycle.security.tool.HashPassword;
import io.npulifecycle.security.tool.UsersFile;

/**
 * Entry point of {@code bin/npu-lifecycle}: parses the command line, prepares the runtime home, and boots an Apache
 * Felix framework with the bundles of the requested role. See {@link LaunchOptions#USAGE}.
 */
public final class Main {

    private static final Logger LOG = Logger.getLogger(Main.class.getName());

    private final Map<String, String> env;
    private final PrintStream out;
    private final PrintStream err;
    private volatile Framework framework;

    /**
     * @param env the process environment
     * @param out standard output
     * @param err standard error
     */
    public Main(Map<String, String> env, PrintStream out, PrintStream err) {
        this.env = env;
        this.out = out;
        this.err = err;
    }

    /** The JDK HTTP server's TCP_NODELAY switch ({@code sun.net.httpserver.ServerConfig}), default false. */
    static final String HTTP_SERVER_NODELAY = "sun.net.httpserver.nodelay";

    /**
     * Runs the command and exits the JVM with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        // The JDK's HTTP server (the /metrics listener) leaves Nagle's algorithm on unless told otherwise: a scrape's
        // headers and body in separate writes then wait for the client's delayed ACK, about 40 ms a scrape. Read once,
        // when that server's configuration class loads; an explicit -D on the command line wins.
        if (System.getProperty(HTTP_SERVER_NODELAY) == null) {
            System.setProperty(HTTP_SERVER_NODELAY, "true");
        }
        int rc = new Main(System.getenv(), System.out, System.err).run(args);
        System.exit(rc);
    }

    /**
     * Runs a command. For {@code node} and {@code control-plane} this blocks until the framework stops.
     *
     * @param args the command line
     * @return the exit code: 0 success, 1 failed to start, 2 usage or configuration error, 3 unusable home
     */
    public int run(String[] args) {
        try {
            LaunchOptions o = LaunchOptions.parse(args, env);
            switch (o.command()) {
                case "help":
                    out.println(LaunchOptions.USAGE);
                    return 0;
                case "check-npu-smi":
                    return checkNpuSmi(o.rest());
                case "hash-password":
                    return HashPassword.run(o.rest(), System.console(), System.in, out, err);
                case "uninstall":
                    return uninstall(o.rest());
                case "demo":
                case "scenario":
                case "chaos":
                case "cluster":
                    return harness(o.rest());
                default:
                    return runRuntime(o);
            }
        } catch (LaunchException e) {
            err.println(e.getMessage());
            return e.exitCode();
        }
    }

    /** @return the installation folder (the parent of {@code lib/}) */
    static Path installDir() throws LaunchException {
        String prop = System.getProperty("npu.lifecycle.install");
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop).toAbsolutePath().normalize();
        }
        try {
            Path jar = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return jar.getParent().getParent().toAbsolutePath().normalize();
        } catch (URISyntaxException | RuntimeException e) {
            throw new LaunchException(LaunchException.FAILED, "cannot find the installation folder; set "
                    + "-Dnpu.lifecycle.install", e);
        }
    }

    static String productVersion() {
        try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    private int runRuntime(LaunchOptions o) throws LaunchException {
        Path install = installDir();
        RuntimeHome home = new RuntimeHome(o.home());
        home.prepare(install.resolve("conf").resolve("defaults"));
        if (o.role() == LaunchOptions.Role.NODE) {
            // a node that emulates its host (etc/io.npulifecycle.simulator.cfg) must never reboot the real machine:
            // refuse a real reboot executor before anything starts (exit 2, naming the file, key and value)
            SimulatedNodeGuard.check(home);
        }
        home.lock(role(o));
        RuntimeSettings settings = RuntimeSettings.load(home.etc(), env);
        String logProblem = LogSetup.configure(settings.logLevel(), home.logs(), out);
        if (logProblem != null) {
            LOG.warning(logProblem);
        }
        Credentials credentials = Credentials.resolve(settings, home.secrets(), new SecureRandom()).hashInBackground();
        AccessPolicy policy = AccessPolicy.choose(settings.jolokiaPolicy(), home.run());
        checkUsersFile(settings, credentials.user());
        List<BundleList.Entry> entries = BundleList.read(install.resolve("conf").resolve("bundles.list"),
                install.resolve("bundles"));
        boolean shell = !o.noShell() && System.console() != null;
        String role = o.role().id();
        boolean simulator = home.simulatorConfigured();
        checkPortFree(settings);
        checkMetricsPort(settings);
        if (simulator && o.role() == LaunchOptions.Role.NODE) {
            LOG.info("A simulator configuration is in " + home.etc() + ": this node runtime emulates its NPUs");
        }

        for (BundleList.Entry e : entries) {
            if (e.deploy() && e.appliesTo(role, shell, simulator) && home.placeInDeploy(e.file())) {
                LOG.info("Placed " + e.file().getFileName() + " in " + home.deploy() + " as "
                        + home.deployedFile(e.file()).getFileName());
            } else if (!e.deploy() && home.removeFromDeploy(e.file())) {
                LOG.info("Removed " + e.file().getFileName().toString().replaceAll("-[0-9].*", ".jar") + " from "
                        + home.deploy() + ": this installation starts it itself (start level " + e.startLevel() + ")");
            }
        }
        Map<String, String> props = FrameworkConfig.properties(role, productVersion(), home, install, settings,
                credentials, policy);
        Framework fw = newFramework(props);
        this.framework = fw;
        DeployAutostart autostart = null;
        try {
            fw.init();
            BundleContext ctx = fw.getBundleContext();
            List<String> deployOrder = new ArrayList<>();
            for (BundleList.Entry e : entries) {
                if (e.deploy()) {
                    deployOrder.add(e.file().getFileName().toString().replaceAll("-[0-9].*", ""));
                }
            }
            autostart = DeployAutostart.open(ctx, home.deploy(), deployOrder);
            List<Bundle> installed = new ArrayList<>();
            for (BundleList.Entry e : entries) {
                if (e.deploy() || !e.appliesTo(role, shell, simulator)) {
                    continue;
                }
                Bundle b = ctx.installBundle(e.file().toUri().toString());
                b.adapt(BundleStartLevel.class).setStartLevel(e.startLevel());
                installed.add(b);
            }
            for (Bundle b : installed) {
                if (b.getHeaders().get(Constants.FRAGMENT_HOST) == null) {
                    b.start();
                }
            }
            Runtime.getRuntime().addShutdownHook(new Thread(this::stopFramework, "npu-lifecycle-shutdown"));
            fw.start();
            autostart.startInstalled();
        } catch (BundleException | RuntimeException e) {
            stopFramework();
            throw new LaunchException(LaunchException.FAILED, "the " + role + " runtime failed to start: " + e, e);
        } finally {
            if (autostart != null) {
                autostart.close();
            }
        }
        LOG.info("Jolokia user '" + credentials.user() + "', credentials from " + credentials.source());
        if (policy.problem() != null) {
            LOG.severe(policy.problem() + ": every Jolokia request will be refused (deny-all policy " + policy.file()
                    + "). Fix the file and restart the runtime.");
        }
        String url = settings.httpEnabled()
                ? "http://" + hostForUrl(settings.httpHost()) + ":" + settings.httpPort() + FrameworkConfig.JOLOKIA_CONTEXT
                : "https://" + hostForUrl(settings.httpHost()) + ":" + settings.tls().port()
                        + FrameworkConfig.JOLOKIA_CONTEXT;
        out.println("npu-lifecycle " + role + " runtime " + productVersion() + " started: Jolokia " + url
                + " home " + home.root());
        LOG.info("Metrics http://" + hostForUrl(settings.metricsHost()) + ":" + settings.metricsPort() + "/metrics");
        out.flush();
        try {
            while (true) {
                FrameworkEvent ev = fw.waitForStop(0);
                if (ev.getType() != FrameworkEvent.STOPPED_UPDATE) {
                    return ev.getType() == FrameworkEvent.ERROR ? LaunchException.FAILED : 0;
                }
                // The system bundle was updated (e.g. the simulator's emulated reboot): Felix restarts itself in
                // the same JVM. Wait for it to come back, then keep waiting for the next stop.
                LOG.info("The framework is restarting (system bundle updated)");
                if (!awaitRestart(fw)) {
                    LOG.severe("The framework did not come back after a restart; exiting");
                    return LaunchException.FAILED;
                }
                LOG.info("The framework is running again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    /** Polls, up to 60 s, until a restarting framework is ACTIVE again. */
    private static boolean awaitRestart(Framework fw) throws InterruptedException {
        for (int i = 0; i < 600; i++) {
            if (fw.getState() == Bundle.ACTIVE) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    private static String role(LaunchOptions o) {
        return o.role().id();
    }

    private static String hostForUrl(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /**
     * Refuses to start with a users file that cannot be used as a whole (missing, unreadable, not UTF-8, too large) or
     * that defines the runtime's own operator user again. A malformed line is not fatal: the runtime skips it and
     * logs the file, the line and what was expected (the security bundle's user store), and the other users work.
     */
    static void checkUsersFile(RuntimeSettings settings, String operatorUser) throws LaunchException {
        java.util.Map<String, UsersFile.User> users;
        try {
            users = UsersFile.load(settings.jolokiaUsers()).users();
        } catch (UsersFile.UsersFileException e) {
            throw new LaunchException(LaunchException.USAGE, e.getMessage() + " (fix it; 'npu-lifecycle hash-password "
                    + "[--role viewer|operator] USER' prints valid lines)", e);
        }
        if (users.containsKey(operatorUser)) {
            // the runtime would refuse every request (a user defined twice): say it now, before the start
            throw new LaunchException(LaunchException.USAGE, settings.jolokiaUsers() + ": user '" + operatorUser
                    + "' is also the runtime's own operator user (NPU_LIFECYCLE_JOLOKIA_USER or "
                    + "secrets/jolokia-credentials); a user may be defined once: remove that line or rename the user");
        }
    }

    /**
     * Refuses an {@code http.port} (or, with TLS, {@code https.port}) that cannot be listened on: exit 2 naming the
     * key, as for {@code metrics.port}, since the fix is the same (another port in etc/runtime.properties or the
     * environment).
     */
    static void checkPortFree(RuntimeSettings settings) throws LaunchException {
        Map<Integer, String> ports = new java.util.LinkedHashMap<>();
        if (settings.httpEnabled()) {
            ports.put(settings.httpPort(), "http.port");
        }
        if (settings.tls() != null) {
            ports.putIfAbsent(settings.tls().port(), "https.port");
        }
        for (Map.Entry<Integer, String> port : ports.entrySet()) {
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(settings.httpHost(), port.getKey()));
            } catch (IOException | IllegalArgumentException e) {
                throw new LaunchException(LaunchException.USAGE, port.getValue() + ": cannot listen on "
                        + settings.httpHost() + ":" + port.getKey() + " for Jolokia and the health endpoints: "
                        + e.getMessage() + " (another runtime running? set http.port / https.port in "
                        + "etc/runtime.properties or NPU_LIFECYCLE_HTTP_PORT)");
            }
        }
    }

    /**
     * Refuses a {@code metrics.port} that cannot be listened on (exit 2 naming the key); {@code 0} takes a free port
     * now. The metrics bundle binds it a moment later: probing and reboots never wait for it.
     */
    static void checkMetricsPort(RuntimeSettings settings) throws LaunchException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(settings.metricsHost(), settings.metricsPort()));
            if (settings.metricsPort() == 0) {
                settings.chooseMetricsPort(s.getLocalPort());
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new LaunchException(LaunchException.USAGE, "metrics.port: cannot listen on " + settings.metricsHost()
                    + ":" + settings.metricsPort() + " for /metrics: " + e.getMessage() + " (set metrics.port / "
                    + "metrics.host in etc/runtime.properties or NPU_LIFECYCLE_METRICS_PORT)");
        }
    }

    private static Framework newFramework(Map<String, String> props) throws LaunchException {
        for (FrameworkFactory f : ServiceLoader.load(FrameworkFactory.class, Main.class.getClassLoader())) {
            return f.newFramework(props);
        }
        throw new LaunchException(LaunchException.FAILED, "broken installation: no OSGi framework in lib/");
    }

    private void stopFramework() {
        Framework fw = framework;
        if (fw == null || (fw.getState() & (Bundle.STARTING | Bundle.ACTIVE)) == 0) {
            return;
        }
        try {
            fw.stop();
            fw.waitForStop(30_000);
        } catch (BundleException | RuntimeException e) {
            LOG.log(Level.WARNING, "stopping the framework failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * {@code demo}, {@code scenario} and {@code cluster}: runs the simulator harness ({@code lib/harness/}: the embedded Kubernetes API,
     * fabric8, Jackson) in its own class loader, so the runtimes' class path stays minimal.
     */
    private int harness(List<String> args) throws LaunchException {
        Path install = installDir();
        Path dir = install.resolve("lib").resolve("harness");
        List<URL> urls = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.jar")) {
            for (Path p : ds) {
                urls.add(p.toUri().toURL());
            }
        } catch (IOException e) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: cannot read " + dir + ": " + e, e);
        }
        System.setProperty("npu.lifecycle.install", install.toString());
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader cl = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
            Thread.currentThread().setContextClassLoader(cl);
            Class<?> c = Class.forName("io.npulifecycle.simulator.harness.HarnessMain", true, cl);
            Method run = c.getMethod("run", String[].class, PrintStream.class, PrintStream.class);
            return (Integer) run.invoke(null, args.toArray(new String[0]), out, err);
        } catch (InvocationTargetException e) {
            throw new LaunchException(LaunchException.FAILED, args.get(0) + " failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException | IOException e) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: the simulator harness is missing "
                    + "from " + dir + ": " + e, e);
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    /**
     * {@code uninstall}: runs the upgrade bundle's {@code UninstallCommand} on a plain class path, without an OSGi
     * framework (a one-shot job: no hot deploy, MBeans, ports or runtime home): the upgrade and API bundles of the
     * installation, and the fabric8, Jackson and snakeyaml jars the kubeclient bundle embeds ({@code lib/*.jar} on its
     * {@code Bundle-ClassPath}), copied to a temporary folder under {@code java.io.tmpdir} (an emptyDir in a pod with
     * a read-only root) and deleted afterwards.
     */
    private int uninstall(List<String> args) throws LaunchException {
        Path bundles = installDir().resolve("bundles");
        List<URL> urls = new ArrayList<>();
        Path kubeclient = null;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(bundles,
                "{io.npulifecycle.upgrade-*.jar,io.npulifecycle.api-*.jar,io.npulifecycle.kubeclient-*.jar}")) {
            for (Path p : ds) {
                if (p.getFileName().toString().startsWith("io.npulifecycle.kubeclient-")) {
                    kubeclient = p;
                } else {
                    urls.add(p.toUri().toURL());
                }
            }
        } catch (IOException e) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: cannot read " + bundles + ": " + e,
                    e);
        }
        if (kubeclient == null || urls.size() != 2) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: the upgrade, api and kubeclient "
                    + "bundles are not all in " + bundles);
        }
        Path tmp;
        try {
            tmp = Files.createTempDirectory("npu-lifecycle-uninstall-");
            urls.addAll(EmbeddedJars.extract(kubeclient, tmp));
        } catch (IOException e) {
            throw new LaunchException(LaunchException.FAILED, "cannot unpack the Kubernetes client of " + kubeclient
                    + " into java.io.tmpdir (" + System.getProperty("java.io.tmpdir") + "): " + e + " (give the "
                    + "process a writable temporary folder, e.g. an emptyDir at /tmp)", e);
        }
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader cl = new URLClassLoader(urls.toArray(new URL[0]), Main.class.getClassLoader())) {
            // fabric8 fills its kind registry through ServiceLoader on the context class loader
            Thread.currentThread().setContextClassLoader(cl);
            Class<?> c = Class.forName("io.npulifecycle.upgrade.internal.cluster.UninstallCommand", true, cl);
            Method run = c.getMethod("run", String[].class, PrintStream.class, PrintStream.class);
            return (Integer) run.invoke(null, args.toArray(new String[0]), out, err);
        } catch (InvocationTargetException e) {
            throw new LaunchException(LaunchException.FAILED, "uninstall failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException | IOException e) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: the uninstall command is missing "
                    + "from " + bundles + ": " + e, e);
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
            EmbeddedJars.delete(tmp);
        }
    }

    /**
     * {@code check-npu-smi}: runs the probe bundle's offline checker on a plain class path made of the probe, API and
     * JSON bundles of the installation (no OSGi framework).
     */
    private int checkNpuSmi(List<String> args) throws LaunchException {
        Path bundles = installDir().resolve("bundles");
        List<URL> urls = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(bundles,
                "{io.npulifecycle.probe-*.jar,io.npulifecycle.api-*.jar,jolokia-json-*.jar}")) {
            for (Path p : ds) {
                urls.add(p.toUri().toURL());
            }
        } catch (IOException e) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: cannot read " + bundles + ": " + e,
                    e);
        }
        try (URLClassLoader cl = new URLClassLoader(urls.toArray(new URL[0]), Main.class.getClassLoader())) {
            Class<?> c = Class.forName("io.npulifecycle.probe.check.CheckNpuSmi", true, cl);
            Method run = c.getMethod("run", String[].class, PrintStream.class, PrintStream.class);
            return (Integer) run.invoke(null, args.toArray(new String[0]), out, err);
        } catch (InvocationTargetException e) {
            throw new LaunchException(LaunchException.FAILED, "check-npu-smi failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException | IOException e) {
            throw new LaunchException(LaunchException.FAILED, "broken installation: the npu-smi checker is missing from "
                    + bundles + ": " + e, e);
        }
    }
}
