package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import org.apache.felix.framework.FrameworkFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.startlevel.FrameworkStartLevel;

class DeployAutostartTest {

    @TempDir
    Path dir;

    private Framework fw;

    @AfterEach
    void stop() throws Exception {
        if (fw != null) {
            fw.stop();
            fw.waitForStop(10_000);
        }
    }

    @Test
    void startsDeployBundlesInListOrderBeforeTheFirstBundleAboveTheirLevel() throws Exception {
        Path deploy = Files.createDirectories(dir.resolve("deploy"));
        fw = new FrameworkFactory().newFramework(Map.of("org.osgi.framework.storage", dir.resolve("cache").toString(),
                "org.osgi.framework.startlevel.beginning", "7"));
        fw.init();
        BundleContext ctx = fw.getBundleContext();
        // as FileInstall does: installed at the deploy level, not started (the framework is below that level)
        Bundle metrics = install(ctx, deploy.resolve("io.npulifecycle.metrics.jar"), "io.npulifecycle.metrics",
                BundleList.DEPLOY_START_LEVEL);
        Bundle probe = install(ctx, deploy.resolve("io.npulifecycle.probe.jar"), "io.npulifecycle.probe",
                BundleList.DEPLOY_START_LEVEL);
        Bundle http = install(ctx, dir.resolve("http.jar"), "http", 6);
        http.start();
        List<String> events = new CopyOnWriteArrayList<>();
        ctx.addBundleListener((SynchronousBundleListener) e -> {
            if (e.getType() == BundleEvent.STARTING) {
                events.add(e.getBundle().getSymbolicName() + "@"
                        + fw.adapt(FrameworkStartLevel.class).getStartLevel());
            }
        });
        try (DeployAutostart a = DeployAutostart.open(ctx, deploy,
                List.of("io.npulifecycle.probe", "io.npulifecycle.metrics"))) {
            fw.start();
            a.startInstalled();
        }
        assertEquals(Bundle.ACTIVE, probe.getState());
        assertEquals(Bundle.ACTIVE, metrics.getState());
        assertEquals(List.of("http@6", "io.npulifecycle.probe@6", "io.npulifecycle.metrics@6"), events.subList(0, 3),
                "the deploy bundles start on the start-level thread in list order, before the level-6 bundle's "
                        + "activator (its STARTING event is the trigger)");
    }

    @Test
    void startsNothingBelowTheDeployLevel() throws Exception {
        Path deploy = Files.createDirectories(dir.resolve("deploy"));
        fw = new FrameworkFactory().newFramework(Map.of("org.osgi.framework.storage", dir.resolve("cache").toString(),
                "org.osgi.framework.startlevel.beginning", "2"));
        fw.init();
        BundleContext ctx = fw.getBundleContext();
        Bundle probe = install(ctx, deploy.resolve("io.npulifecycle.probe.jar"), "io.npulifecycle.probe",
                BundleList.DEPLOY_START_LEVEL);
        try (DeployAutostart a = DeployAutostart.open(ctx, deploy, List.of())) {
            fw.start();
            a.startInstalled();
        }
        assertEquals(Bundle.INSTALLED, probe.getState(), "framework at level 2: the product must wait");
    }

    @Test
    void recognisesOnlyFilesDirectlyInDeploy() throws Exception {
        Path deploy = Files.createDirectories(dir.resolve("deploy"));
        fw = new FrameworkFactory().newFramework(Map.of("org.osgi.framework.storage", dir.resolve("cache").toString()));
        fw.init();
        try (DeployAutostart a = DeployAutostart.open(fw.getBundleContext(), deploy, List.of())) {
            assertTrue(a.inDeploy(deploy.resolve("x.jar").toFile().toURI().toString()));
            assertFalse(a.inDeploy(deploy.resolve("sub/x.jar").toUri().toString()));
            assertFalse(a.inDeploy(dir.resolve("x.jar").toUri().toString()));
            assertFalse(a.inDeploy("mvn:io.npulifecycle/x/1"));
            assertFalse(a.inDeploy(null));
        }
    }

    private static Bundle install(BundleContext ctx, Path jar, String bsn, int level) throws Exception {
        Manifest m = new Manifest();
        Attributes a = m.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", bsn);
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(out, m)) {
            j.flush();
        }
        Bundle b = ctx.installBundle(jar.toFile().toURI().toString());
        b.adapt(BundleStartLevel.class).setStartLevel(level);
        return b;
    }
}
