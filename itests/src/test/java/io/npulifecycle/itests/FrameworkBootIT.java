package io.npulifecycle.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.Version;
import org.osgi.framework.namespace.PackageNamespace;
import org.osgi.framework.wiring.BundleWire;
import org.osgi.framework.wiring.BundleWiring;

/**
 * Boots Felix 7.0.5 with SCR, ConfigAdmin, EventAdmin, FileInstall and Felix HTTP Jetty 12 from bundle files
 * ({@code target/bundles/bundles.list}), and proves what the real integration tests rely on.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FrameworkBootIT extends FelixTestSupport {

    static final String HTTP_PORT = "org.osgi.service.http.port";
    static final String SAMPLE_BSN = "io.npulifecycle.itests.sample";
    static final Duration TIMEOUT = Duration.ofSeconds(20);

    /** Runs in the failsafe JVM, before the framework exists. */
    @Configuration
    public Option[] config() {
        return once(FrameworkBootIT.class, FrameworkBootIT::runtime);
    }

    static Option[] runtime() {
        Path dir = bundlesDir();
        List<BundleSpec> bundles = readBundlesList(dir.resolve("bundles.list"), dir, "node");

        Map<String, String> props = new LinkedHashMap<>();
        props.put(HTTP_PORT, String.valueOf(freePort()));
        props.put("org.apache.felix.http.host", "127.0.0.1");
        props.put(FILEINSTALL_DIR, newWorkDir("deploy").toString());
        props.put("felix.fileinstall.poll", "200");
        props.put("felix.fileinstall.noInitialDelay", "true");
        // only *.jar: a copy in progress named x.jar.tmp is never picked up
        props.put("felix.fileinstall.filter", ".*\\.jar");
        props.put("felix.fileinstall.log.level", "2");

        // like the launcher: slf4j (2.x) of the class path is exported by the system bundle; Jetty 12 imports it
        return felixOptions(bundles, props, "org.slf4j;version=" + slf4jVersion());
    }

    @Test
    public void bootsInsideFelixWithEveryBundleActive() {
        System.out.println("[FrameworkBootIT] bundles:\n" + bundleTable());
        assertRunningInsideFelix();
        assertEquals(new Version(7, 0, 5), bundleContext.getBundle(0).getVersion());
        for (String bsn : new String[] {"org.apache.felix.scr", "org.apache.felix.configadmin",
                "org.apache.felix.eventadmin", "org.apache.felix.fileinstall", "org.apache.felix.http.jetty12",
                "org.apache.felix.http.servlet-api", "org.apache.commons.commons-fileupload",
                "org.apache.commons.commons-io"}) {
            assertNotNull("bundle " + bsn + " is not installed\n" + bundleTable(), findBundle(bsn));
        }
        assertAllBundlesActive();
        // start levels from bundles.list were applied (jetty at 8 > Pax Exam's default framework level 5)
        assertEquals(8, findBundle("org.apache.felix.http.jetty12")
                .adapt(org.osgi.framework.startlevel.BundleStartLevel.class).getStartLevel());
    }

    @Test
    public void jdkHttpClientReachesJetty() throws Exception {
        // Jetty is started asynchronously: wait for its runtime service rather than for the bundle state
        awaitService("org.osgi.service.servlet.runtime.HttpServiceRuntime", null, TIMEOUT);
        int port = Integer.parseInt(property(HTTP_PORT));
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1) // no h2c upgrade attempt
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
                .timeout(Duration.ofSeconds(10)).GET().build();
        HttpResponse<String> rsp = client.send(get, HttpResponse.BodyHandlers.ofString());
        System.out.println("[FrameworkBootIT] GET / -> " + rsp.statusCode() + " " + rsp.headers().map() + "\n"
                + rsp.body());
        assertEquals("nothing is registered at /, Jetty answers 404; body: " + rsp.body(), 404, rsp.statusCode());
        assertTrue("Jetty's error page: " + rsp.body(), rsp.body().contains("HTTP ERROR 404"));
        // the class came from the JDK (java.* is always parent-delegated), the test class from the probe bundle
        assertNull(FrameworkUtil.getBundle(HttpClient.class));
    }

    @Test
    public void fileInstallInstallsThenHotUpdatesTheSameBundle() throws Exception {
        Path deploy = Paths.get(property(FILEINSTALL_DIR));

        // 1. a copy in progress (x.jar.tmp) is ignored: write it, then drop a marker bundle; once FileInstall has
        //    installed the marker it has scanned the folder with the .tmp file in it, so it must have ignored it
        Path sample = deploy.resolve("sample.jar");
        Path sampleTmp = deploy.resolve("sample.jar.tmp");
        writeBundle(sampleTmp, SAMPLE_BSN, "1.0.0");
        Path markerTmp = deploy.resolve("marker.jar.tmp");
        writeBundle(markerTmp, SAMPLE_BSN + ".marker", "1.0.0");
        Files.move(markerTmp, deploy.resolve("marker.jar"), StandardCopyOption.ATOMIC_MOVE);
        await("marker bundle ACTIVE", TIMEOUT, () -> isActive(findBundle(SAMPLE_BSN + ".marker")), this::bundleTable);
        assertNull("FileInstall picked up a .tmp file\n" + bundleTable(), findBundle(SAMPLE_BSN));

        // 2. atomic rename: installed and started
        Files.move(sampleTmp, sample, StandardCopyOption.ATOMIC_MOVE);
        await(SAMPLE_BSN + " 1.0.0 ACTIVE", TIMEOUT, () -> isActive(findBundle(SAMPLE_BSN)), this::bundleTable);
        Bundle v1 = findBundle(SAMPLE_BSN);
        assertEquals(new Version(1, 0, 0), v1.getVersion());
        long id = v1.getBundleId();
        int bundleCount = bundleContext.getBundles().length;

        // 3. new version: copy to the excluded name, then rename over the deployed jar
        writeBundle(sampleTmp, SAMPLE_BSN, "2.0.0");
        Files.move(sampleTmp, sample, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        await(SAMPLE_BSN + " updated in place to 2.0.0", TIMEOUT, () -> {
            Bundle b = bundleContext.getBundle(id);
            return b != null && isActive(b) && new Version(2, 0, 0).equals(b.getVersion());
        }, this::bundleTable);
        assertEquals("update, not install of a second bundle\n" + bundleTable(), bundleCount,
                bundleContext.getBundles().length);
        assertEquals(id, findBundle(SAMPLE_BSN).getBundleId());
        System.out.println("[FrameworkBootIT] hot update: " + describe(bundleContext.getBundle(id)));
    }

    @Test
    public void slf4jComesFromTheSystemBundle() {
        // Jetty 12 imports org.slf4j;version="[2.0,3)": wired to the class path's slf4j 2 exported by the system bundle
        Version jettySlf4j = importedFrom(findBundle("org.apache.felix.http.jetty12"), "org.slf4j");
        assertEquals(new Version(slf4jVersion()), jettySlf4j);
        // most of Pax Exam's own bundles import org.slf4j [1.4,2) or [1.7,2): the compatibility export 1.7.36
        // (pax-exam itself imports version="1.5", i.e. [1.5,oo), and gets 2.x)
        assertEquals(new Version(1, 7, 36), importedFrom(findBundle("org.ops4j.pax.exam.extender.service"), "org.slf4j"));
        assertEquals(new Version(1, 7, 36), importedFrom(findBundle("org.ops4j.pax.swissbox.tracker"), "org.slf4j"));
    }

    /** Version of the package {@code pkg} that bundle {@code b} is wired to; asserts the system bundle exports it. */
    private static Version importedFrom(Bundle b, String pkg) {
        assertNotNull(b);
        for (BundleWire w : b.adapt(BundleWiring.class).getRequiredWires(PackageNamespace.PACKAGE_NAMESPACE)) {
            if (pkg.equals(w.getCapability().getAttributes().get(PackageNamespace.PACKAGE_NAMESPACE))) {
                assertEquals(pkg + " of " + b.getSymbolicName() + " comes from the system bundle", 0L,
                        w.getProvider().getBundle().getBundleId());
                return (Version) w.getCapability().getAttributes().get(PackageNamespace.CAPABILITY_VERSION_ATTRIBUTE);
            }
        }
        throw new AssertionError(b.getSymbolicName() + " has no wire for " + pkg);
    }

    private static boolean isActive(Bundle b) {
        return b != null && b.getState() == Bundle.ACTIVE;
    }

    /** A minimal bundle (manifest + one resource), built with java.util.jar. */
    static void writeBundle(Path file, String symbolicName, String version) throws IOException {
        Manifest mf = new Manifest();
        Attributes a = mf.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0"); // without it Manifest.write() writes NOTHING
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", symbolicName);
        a.putValue("Bundle-Version", version);
        a.putValue("Bundle-Name", symbolicName + " (built by FrameworkBootIT)");
        try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, mf)) {
            jar.putNextEntry(new JarEntry("sample/version.txt"));
            jar.write(version.getBytes(StandardCharsets.UTF_8));
            jar.closeEntry();
        }
    }
}
