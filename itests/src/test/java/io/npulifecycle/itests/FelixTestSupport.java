package io.npulifecycle.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.bootDelegationPackage;
import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.cleanCaches;
import static org.ops4j.pax.exam.CoreOptions.frameworkProperty;
import static org.ops4j.pax.exam.CoreOptions.frameworkStartLevel;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.mavenBundle;
import static org.ops4j.pax.exam.CoreOptions.systemPackage;
import static org.ops4j.pax.exam.CoreOptions.workingDirectory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import javax.inject.Inject;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.ops4j.pax.exam.Constants;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.startlevel.BundleStartLevel;

/**
 * Base class of the Pax Exam integration tests: boots a real Felix (native container, same JVM) from
 * <ol>
 * <li>a list of bundles with start levels ({@link BundleSpec}: file, Maven coordinates or any URL; or read from a
 * distribution's {@code conf/bundles.list} with {@link #readBundlesList}),</li>
 * <li>a map of framework properties (what the distribution's launcher computes),</li>
 * <li>an {@code org.osgi.framework.system.packages.extra} value,</li>
 * </ol>
 * through {@link #felixOptions(List, Map, String)}, which adds what Pax Exam itself needs.
 *
 * <p>Subclasses: {@code @RunWith(PaxExam.class) @ExamReactorStrategy(PerClass.class)}, a {@code @Configuration}
 * method returning {@code felixOptions(...)}, and {@code *IT} names (run by failsafe).
 *
 * <p>Two JVM sides, same classes: the {@code @Configuration} method runs in the failsafe JVM before the framework
 * exists (static state set there is NOT visible in the test methods: the probe bundle has its own class loader);
 * {@code @Test} methods run inside the framework. Pass values from one to the other as framework properties and read
 * them with {@link #property(String)}.
 */
public abstract class FelixTestSupport {

    /** Disarms the {@link FrameworkStopWatch} of the previous class: its framework stopped. */
    @org.junit.BeforeClass
    public static void frameworkOfThePreviousClassStopped() {
        FrameworkStopWatch.disarm();
    }

    /** Arms the {@link FrameworkStopWatch}: Pax Exam stops this class's framework next. */
    @org.junit.AfterClass
    public static void frameworkStopsNext() {
        FrameworkStopWatch.arm("the test class that just finished (" + Instant.now() + ")");
    }

    public static final String SYSTEM_PACKAGES_EXTRA = "org.osgi.framework.system.packages.extra";
    public static final String BOOT_DELEGATION = "org.osgi.framework.bootdelegation";
    public static final String BEGINNING_START_LEVEL = "org.osgi.framework.startlevel.beginning";
    public static final String STORAGE = "org.osgi.framework.storage";

    /**
     * Exported by the system bundle for Pax Exam's own bundles only (pax-exam, -inject, -extender-service,
     * -invoker-junit, swissbox import {@code org.slf4j;version="[1.4,2)"} or {@code [1.7,2)}). The classes are the
     * slf4j 2 API on the class path, which is binary compatible for those callers. The runtime's own bundles
     * (Jetty 12: {@code org.slf4j;version="[2.0,3)"}) get the 2.x export given in {@code systemPackagesExtra}.
     */
    public static final String PAX_EXAM_SUPPORT_PACKAGES = "org.slf4j;version=1.7.36";

    @Inject
    protected BundleContext bundleContext;

    // =====================================================================================================
    // Driver side: building the configuration (runs in the failsafe JVM, inside @Configuration)
    // =====================================================================================================

    /**
     * One bundle: a URL Felix can open, a start level, whether to start it, and whether it is a "deploy" bundle
     * (the launcher hands those to FileInstall through {@code <home>/deploy/} instead of installing them).
     */
    public static final class BundleSpec {
        public final String url;
        public final int startLevel;
        public final boolean start;
        public final boolean deploy;
        /** the file, for file-based specs; null otherwise */
        public final Path file;

        private BundleSpec(String url, Path file, int startLevel, boolean start, boolean deploy) {
            if (startLevel < 1) {
                throw new IllegalArgumentException("start level must be >= 1: " + startLevel + " for " + url);
            }
            this.url = Objects.requireNonNull(url);
            this.file = file;
            this.startLevel = startLevel;
            this.start = start;
            this.deploy = deploy;
        }

        public static BundleSpec file(Path jar, int startLevel) {
            if (!Files.isRegularFile(jar)) {
                throw new IllegalArgumentException("bundle file not found: " + jar.toAbsolutePath());
            }
            Path abs = jar.toAbsolutePath().normalize();
            return new BundleSpec(abs.toUri().toString(), abs, startLevel, true, false);
        }

        /** Resolved by pax-url-aether from the local repository (it must have been downloaded by the build). */
        public static BundleSpec maven(String groupId, String artifactId, String version, int startLevel) {
            return new BundleSpec("mvn:" + groupId + "/" + artifactId + "/" + version, null, startLevel, true, false);
        }

        public static BundleSpec url(String url, int startLevel) {
            return new BundleSpec(url, null, startLevel, true, false);
        }

        /** A bundle file that goes to the FileInstall folder (bundles.list start column {@code deploy}). */
        public static BundleSpec deploy(Path jar) {
            BundleSpec f = file(jar, DEPLOY_START_LEVEL);
            return new BundleSpec(f.url, f.file, DEPLOY_START_LEVEL, true, true);
        }

        /** Install only (fragments must not be started; or to start it from the test). */
        public BundleSpec noStart() {
            return new BundleSpec(url, file, startLevel, false, deploy);
        }

        @Override
        public String toString() {
            return (deploy ? "deploy" : String.valueOf(startLevel)) + (start ? "" : "(no start)") + " " + url;
        }
    }

    /**
     * Start level used for {@code deploy} bundles when no {@code felix.fileinstall.dir} is configured (they are then
     * installed like the others); the distribution's comment says "5: the product (through deploy/)".
     */
    public static final int DEPLOY_START_LEVEL = 5;

    public static final String FILEINSTALL_DIR = "felix.fileinstall.dir";

    /**
     * Reads a distribution's {@code conf/bundles.list}: one bundle per line, {@code <start> <roles> <fileName>};
     * {@code start} is a start level or {@code deploy}; {@code roles} a comma list ({@code node}, {@code
     * control-plane}, {@code shell}, ...) or {@code all}; blank lines and lines starting with {@code #} are skipped.
     *
     * @param role keep the bundles of this role (and those marked {@code all}); {@code null} keeps every line
     */
    public static List<BundleSpec> readBundlesList(Path bundlesList, Path bundlesDir, String role) {
        List<String> lines;
        try {
            lines = Files.readAllLines(bundlesList, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + bundlesList.toAbsolutePath(), e);
        }
        List<BundleSpec> specs = new ArrayList<>();
        int n = 0;
        for (String raw : lines) {
            n++;
            String line = raw.trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            if (f.length != 3) {
                throw new IllegalArgumentException(bundlesList + ":" + n + ": expected '<start> <roles> <fileName>': " + raw);
            }
            List<String> roles = Arrays.asList(f[1].split(","));
            if (role != null && !roles.contains(role) && !roles.contains("all")) {
                continue;
            }
            Path jar = bundlesDir.resolve(f[2]);
            if ("deploy".equals(f[0])) {
                specs.add(BundleSpec.deploy(jar));
                continue;
            }
            try {
                specs.add(BundleSpec.file(jar, Integer.parseInt(f[0])));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(bundlesList + ":" + n + ": bad start level: " + raw, e);
            }
        }
        if (specs.isEmpty()) {
            throw new IllegalArgumentException(bundlesList + ": no bundle for role " + role);
        }
        return specs;
    }

    /** Copies a file into {@code dir} the way FileInstall wants it: to an ignored name, then an atomic rename. */
    public static Path deployAtomically(Path jar, Path dir) {
        try {
            Files.createDirectories(dir);
            Path target = dir.resolve(jar.getFileName().toString());
            Path tmp = dir.resolve(jar.getFileName() + ".tmp");
            Files.copy(jar, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot deploy " + jar + " to " + dir, e);
        }
    }

    /**
     * The complete Pax Exam configuration of a Felix runtime.
     *
     * @param bundles the runtime's bundles, installed in this order with their start levels; {@code deploy} ones are
     *        copied into {@code felix.fileinstall.dir} before the framework starts when that property is given
     *        (FileInstall then installs them, like the launcher does), else installed at {@link #DEPLOY_START_LEVEL}
     * @param frameworkProperties framework properties (as the launcher computes them). {@code
     *        org.osgi.framework.system.packages.extra} and {@code org.osgi.framework.bootdelegation} found here are
     *        merged (NOT passed as framework properties: that would replace the packages Pax Exam exports itself
     *        and the probe could not start); {@code org.osgi.framework.storage} is dropped (Pax Exam owns it).
     * @param systemPackagesExtra value of {@code org.osgi.framework.system.packages.extra} (may be null/empty)
     */
    public static Option[] felixOptions(List<BundleSpec> bundles, Map<String, String> frameworkProperties,
            String systemPackagesExtra) {
        List<Option> options = new ArrayList<>();
        Map<String, String> props = new LinkedHashMap<>(frameworkProperties == null ? Map.of() : frameworkProperties);

        // system packages: ours + the caller's + any found in the properties
        List<String> extra = new ArrayList<>(splitPackageList(PAX_EXAM_SUPPORT_PACKAGES));
        extra.addAll(splitPackageList(systemPackagesExtra));
        extra.addAll(splitPackageList(props.remove(SYSTEM_PACKAGES_EXTRA)));
        for (String pkg : extra) {
            options.add(systemPackage(pkg));
        }
        for (String pkg : splitPackageList(props.remove(BOOT_DELEGATION))) {
            options.add(bootDelegationPackage(pkg));
        }
        props.remove(STORAGE);

        // the framework must go at least as high as the highest bundle, and as the test probe (5)
        int level = Constants.START_LEVEL_TEST_BUNDLE;
        for (BundleSpec b : bundles) {
            level = Math.max(level, b.startLevel);
        }
        String beginning = props.remove(BEGINNING_START_LEVEL);
        if (beginning != null && !beginning.isBlank()) {
            level = Math.max(level, Integer.parseInt(beginning.trim()));
        }
        options.add(frameworkStartLevel(level));

        for (Map.Entry<String, String> e : props.entrySet()) {
            options.add(frameworkProperty(e.getKey()).value(e.getValue()));
        }

        String fileInstallDir = props.get(FILEINSTALL_DIR);
        for (BundleSpec b : bundles) {
            if (b.deploy && fileInstallDir != null && b.file != null) {
                deployAtomically(b.file, Paths.get(fileInstallDir.split(",")[0].trim()));
                continue;
            }
            // file:, mvn: (pax-url-aether) and any other URL the JVM can open
            options.add(bundle(b.url).startLevel(b.startLevel).start(b.start));
        }

        // Pax Exam's JUnit 4 invoker inside the framework (+ junit, hamcrest bundles)
        options.add(junitBundles());
        // await(...) inside the framework: Awaitility and the hamcrest 2 it imports (beside junit's hamcrest 1.3)
        options.add(mavenBundle("org.hamcrest", "hamcrest", System.getProperty("itests.hamcrest.version", "2.1")));
        options.add(mavenBundle("org.awaitility", "awaitility", System.getProperty("itests.awaitility.version",
                "4.3.0")));
        // one folder per test JVM: Pax Exam keeps the framework's bundle cache there (org.osgi.framework.storage) and
        // cleans it at each start, and failsafe runs two test JVMs at once (itests/pom.xml, forkCount): in one folder
        // the second framework found the first one's bundles and refused the probe ("Bundle symbolic name and
        // version are not unique: org.ops4j.pax.exam:4.14.0")
        Path paxWork = workDir().resolve("pax-exam-" + ProcessHandle.current().pid());
        try {
            Files.createDirectories(paxWork);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        options.add(workingDirectory(paxWork.toString()));
        options.add(cleanCaches(true));
        return options.toArray(new Option[0]);
    }

    private static final Map<Class<?>, Option[]> CONFIGURATIONS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Computes the configuration of {@code testClass} once per JVM. Pax Exam calls a {@code @Configuration} method
     * more than once per class (the JUnit Platform discovers, then executes, and each builds a PaxExam runner):
     * without this, every call picks another free port and creates another work folder, and any side effect of the
     * configuration (copying deploy bundles) is repeated.
     */
    public static Option[] once(Class<?> testClass, Supplier<Option[]> configuration) {
        return CONFIGURATIONS.computeIfAbsent(testClass, c -> configuration.get()).clone();
    }

    /** Splits an OSGi package list on the commas that are not inside quotes ({@code version="[1,2)"}). */
    public static List<String> splitPackageList(String list) {
        if (list == null || list.isBlank()) {
            return Collections.emptyList();
        }
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (char c : list.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            }
            if (c == ',' && !quoted) {
                add(out, cur);
            } else {
                cur.append(c);
            }
        }
        add(out, cur);
        return out;
    }

    private static void add(List<String> out, StringBuilder cur) {
        String s = cur.toString().trim();
        if (!s.isEmpty()) {
            out.add(s);
        }
        cur.setLength(0);
    }


    /** The assembled distribution ({@code distribution/target/npu-lifecycle}; same property as RuntimeProcess). */
    public static Path distributionDir() {
        return requiredDirProperty("npu.distribution.dir");
    }

    /** {@code target/itest-work}. */
    public static Path workDir() {
        String dir = System.getProperty("itests.work.dir", "target/itest-work");
        return Paths.get(dir).toAbsolutePath().normalize();
    }

    /** A fresh folder under {@link #workDir()}. */
    public static Path newWorkDir(String prefix) {
        try {
            Files.createDirectories(workDir());
            return Files.createTempDirectory(workDir(), prefix + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** slf4j version on the test class path (export it as {@code org.slf4j;version=<this>}). */
    public static String slf4jVersion() {
        return System.getProperty("itests.slf4j.version", "2.0.17");
    }

    private static Path requiredDirProperty(String key) {
        String v = System.getProperty(key);
        if (v == null) {
            throw new IllegalStateException("system property " + key + " is not set (run through Maven failsafe)");
        }
        return Paths.get(v).toAbsolutePath().normalize();
    }

    // =====================================================================================================
    // Probe side: helpers for @Test methods (run inside the framework)
    // =====================================================================================================

    /** A framework property (or system property) as seen inside the framework; fails if absent. */
    protected String property(String key) {
        String v = bundleContext.getProperty(key);
        assertNotNull("framework property " + key, v);
        return v;
    }

    /** Fails listing every non-fragment bundle that is not ACTIVE, with its state. */
    protected void assertAllBundlesActive() {
        List<String> bad = new ArrayList<>();
        for (Bundle b : bundleContext.getBundles()) {
            if (b.getHeaders().get(org.osgi.framework.Constants.FRAGMENT_HOST) != null) {
                continue; // fragments are RESOLVED at best
            }
            if (b.getState() != Bundle.ACTIVE) {
                bad.add(describe(b));
            }
        }
        if (!bad.isEmpty()) {
            fail("bundles not ACTIVE:\n  " + String.join("\n  ", bad));
        }
    }

    /** One line per bundle: id, state, start level, symbolic name, version, location. */
    protected String bundleTable() {
        StringBuilder sb = new StringBuilder();
        for (Bundle b : bundleContext.getBundles()) {
            sb.append(describe(b)).append('\n');
        }
        return sb.toString();
    }

    public static String describe(Bundle b) {
        BundleStartLevel sl = b.adapt(BundleStartLevel.class);
        return String.format("%3d %-11s L%-3s %s %s (%s)", b.getBundleId(), stateName(b.getState()),
                sl == null ? "-" : String.valueOf(sl.getStartLevel()), b.getSymbolicName(), b.getVersion(),
                b.getLocation());
    }

    public static String stateName(int state) {
        switch (state) {
            case Bundle.UNINSTALLED: return "UNINSTALLED";
            case Bundle.INSTALLED: return "INSTALLED";
            case Bundle.RESOLVED: return "RESOLVED";
            case Bundle.STARTING: return "STARTING";
            case Bundle.STOPPING: return "STOPPING";
            case Bundle.ACTIVE: return "ACTIVE";
            default: return "state " + state;
        }
    }

    /** The bundle with this symbolic name (highest version if several), or null. */
    protected Bundle findBundle(String symbolicName) {
        Bundle found = null;
        for (Bundle b : bundleContext.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())
                    && (found == null || b.getVersion().compareTo(found.getVersion()) > 0)) {
                found = b;
            }
        }
        return found;
    }

    /** The bundle that holds this test class: non-null only when running inside a framework. */
    protected Bundle probeBundle() {
        return FrameworkUtil.getBundle(getClass());
    }

    /** How often {@link #await} polls its condition. */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(50);

    /**
     * Waits until {@code condition} holds (Awaitility, polled in the calling thread at once and then every 50 ms), and
     * fails with {@code what} and {@code diagnostics} after {@code timeout}. Inside the framework Awaitility and its
     * hamcrest are the bundles {@link #felixOptions} installs; io.npulifecycle.testing.support is not a bundle, so
     * the probe cannot use its {@code Waits}.
     */
    public static void await(String what, Duration timeout, BooleanSupplier condition, Supplier<String> diagnostics) {
        try {
            Awaitility.await(what).pollInSameThread().dontCatchUncaughtExceptions().pollDelay(Duration.ZERO)
                    .pollInterval(POLL_INTERVAL).atMost(timeout).until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            fail("timed out after " + timeout + " waiting for " + what
                    + (diagnostics == null ? "" : "\n" + diagnostics.get()));
        }
    }

    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        await(what, timeout, condition, null);
    }

    /** Waits for a service by interface name and optional LDAP filter; returns its reference. */
    protected ServiceReference<?> awaitService(String className, String filter, Duration timeout) {
        ServiceReference<?>[] holder = new ServiceReference<?>[1];
        await("service " + className + (filter == null ? "" : " " + filter), timeout, () -> {
            try {
                ServiceReference<?>[] refs = bundleContext.getServiceReferences(className, filter);
                holder[0] = refs == null || refs.length == 0 ? null : refs[0];
            } catch (org.osgi.framework.InvalidSyntaxException e) {
                throw new IllegalArgumentException(e);
            }
            return holder[0] != null;
        }, this::bundleTable);
        return holder[0];
    }

    /** Asserts the test runs inside Felix (not on the plain class path). */
    protected void assertRunningInsideFelix() {
        Bundle probe = probeBundle();
        assertNotNull("the test class was not loaded by an OSGi bundle: not running inside the framework", probe);
        assertEquals("org.apache.felix.framework", bundleContext.getBundle(0).getSymbolicName());
        assertEquals(bundleContext.getBundle(0), probe.getBundleContext().getBundle(0));
    }
}
