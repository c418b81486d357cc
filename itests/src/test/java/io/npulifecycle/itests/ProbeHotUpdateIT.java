package io.npulifecycle.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Map;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;

import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.Markers;

/**
 * The health-watch keeps its strikes across a hot update of the probe bundle: two failed probes, the bundle is
 * replaced in {@code deploy/}, and the third failed probe still wedges the chips (markers as specified).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ProbeHotUpdateIT extends NodeRuntimeSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final String HEALTH_WATCH = "io.npulifecycle:type=HealthWatch";
    static final String CHIP_00 = "io.npulifecycle:type=Chip,name=npu0-chip0";

    @Configuration
    public Option[] config() {
        return once(ProbeHotUpdateIT.class, () -> {
            try {
                Path work = newWorkDir("probe-hot-update");
                Path markers = Files.createDirectories(work.resolve("markers"));
                Path bootId = Files.writeString(work.resolve("boot_id"), "aaaaaaaa-0000-0000-0000-000000000001\n");
                FakeNpuSmi npuSmi = FakeNpuSmi.create(work);
                return RuntimeOptions.runtime("node", "probe-hot-update-home", Map.of(
                        "io.npulifecycle.markers.cfg", "folder=" + markers + "\nbootIdPath=" + bootId + "\n",
                        // one probe at start, then only when the test asks (probeNow), so strikes are counted exactly
                        "io.npulifecycle.probe.cfg", "interval=3600\ntimeout=10\nnpuSmiCommand=" + npuSmi.script()
                                + "\nexpectedChips=0:0,1:0\n"),
                        Map.of("itest.npusmi.mode", npuSmi.modeFile().toString()));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    MBeanServer mbs() {
        return ManagementFactory.getPlatformMBeanServer();
    }

    Object attr(String name, String attribute) {
        try {
            ObjectName on = new ObjectName(name);
            return mbs().isRegistered(on) ? mbs().getAttribute(on, attribute) : null;
        } catch (Exception e) {
            return null;
        }
    }

    String probeNow() throws Exception {
        return String.valueOf(mbs().invoke(new ObjectName(HEALTH_WATCH), "probeNow", null, null));
    }

    /** Asks for one probe (probeNow is asynchronous) and waits until chip 0:0 has {@code failures} strikes. */
    void probeUntil(int failures) throws Exception {
        await("probe started", TIMEOUT, () -> {
            try {
                return "started".equals(probeNow());
            } catch (Exception e) {
                return false;
            }
        });
        await(failures + " consecutive failures of chip 0:0", TIMEOUT,
                () -> Integer.valueOf(failures).equals(attr(CHIP_00, "ConsecutiveFailures")),
                () -> "chip 0:0 failures " + attr(CHIP_00, "ConsecutiveFailures") + ", last error "
                        + attr(HEALTH_WATCH, "LastError"));
    }

    MarkerRead marker(String name) {
        ServiceReference<MarkerStore> ref = bundleContext.getServiceReference(MarkerStore.class);
        MarkerStore store = bundleContext.getService(ref);
        try {
            return store.read(name);
        } finally {
            bundleContext.ungetService(ref);
        }
    }

    @Test
    public void strikesSurviveAHotUpdateOfTheProbeBundleAndTheThirdStillWedges() throws Exception {
        FakeNpuSmi npuSmi = fake();
        await("health-watch healthy after its first probe", TIMEOUT,
                () -> "healthy".equals(attr(CHIP_00, "Classification")), this::bundleTable);
        ServiceReference<MarkerStore> ref = bundleContext.getServiceReference(MarkerStore.class);
        bundleContext.getService(ref).write(Markers.DRIVER_READY, Map.of("version", "25.2.0"), "itest");
        bundleContext.ungetService(ref);
        assertTrue(marker(Markers.DRIVER_READY).present());

        npuSmi.mode("dcmi-8005");
        probeUntil(1);
        probeUntil(2);
        assertFalse(marker(Markers.REBOOT_REQUIRED).present());

        // hot update: a new copy of the probe bundle renamed over deploy/io.npulifecycle.probe.jar
        Bundle probe = findBundle("io.npulifecycle.probe");
        long lastModified = probe.getLastModified();
        Path deployed = home().resolve("deploy/io.npulifecycle.probe.jar");
        Path part = deployed.resolveSibling("io.npulifecycle.probe.jar.part");
        Files.copy(deployed, part, StandardCopyOption.REPLACE_EXISTING);
        Files.setLastModifiedTime(part, FileTime.fromMillis(Files.getLastModifiedTime(deployed).toMillis() + 5000));
        Files.move(part, deployed, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        await("the probe bundle updated and ACTIVE again", TIMEOUT, () -> {
            Bundle b = findBundle("io.npulifecycle.probe");
            return b != null && b.getLastModified() != lastModified && b.getState() == Bundle.ACTIVE;
        }, this::bundleTable);
        await("the HealthWatch MBean back", TIMEOUT, () -> attr(HEALTH_WATCH, "FailureThreshold") != null);
        assertNotEquals(lastModified, findBundle("io.npulifecycle.probe").getLastModified());

        // The restarted health-watch probes once at start; either that probe or the next one is strike 3.
        await("the chip MBean back", TIMEOUT, () -> attr(CHIP_00, "ConsecutiveFailures") != null);
        Object failures = attr(CHIP_00, "ConsecutiveFailures");
        assertTrue("strikes were lost in the update: " + failures,
                Integer.valueOf(2).equals(failures) || Integer.valueOf(3).equals(failures));
        if (Integer.valueOf(2).equals(failures)) {
            probeUntil(3);
        }
        await("reboot-required written at the third strike", TIMEOUT,
                () -> marker(Markers.REBOOT_REQUIRED).present());
        MarkerRead rr = marker(Markers.REBOOT_REQUIRED);
        assertEquals(Markers.REASON_RECOVERY, rr.marker().content().get(Markers.KEY_REASON));
        assertEquals("0:0,1:0", rr.marker().content().get(Markers.KEY_CHIPS));
        assertFalse("driver-ready removed on a wedge", marker(Markers.DRIVER_READY).present());
        assertEquals(3, attr(CHIP_00, "ConsecutiveFailures"));
        assertEquals(Boolean.TRUE, attr(CHIP_00, "Wedged"));

        // false-positive suppression: the chips answer again before any reboot
        npuSmi.mode("ok");
        await("probe started", TIMEOUT, () -> {
            try {
                return "started".equals(probeNow());
            } catch (Exception e) {
                return false;
            }
        });
        // the health-watch removes reboot-required first, then writes driver-ready back (WedgeMarkers.suppress)
        await("recovery marker cleared, driver-ready restored", TIMEOUT,
                () -> !marker(Markers.REBOOT_REQUIRED).present() && marker(Markers.DRIVER_READY).present());
        assertTrue("driver-ready restored", marker(Markers.DRIVER_READY).present());
    }

    /**
     * A copy of the probe under another file name with a higher version is refused by the deploy guard (listed with
     * the installed file's name), never installed beside the running probe; removing it clears the refusal.
     */
    @Test
    public void aSecondCopyOfTheProbeUnderAnotherNameIsRefusedAndNeverInstalled() throws Exception {
        await("the probe bundle ACTIVE", TIMEOUT, () -> {
            Bundle b = findBundle("io.npulifecycle.probe");
            return b != null && b.getState() == Bundle.ACTIVE;
        }, this::bundleTable);
        Path deployed = home().resolve("deploy/io.npulifecycle.probe.jar");
        Path part = deployed.resolveSibling("my-new-probe.jar.part");
        Path copy = deployed.resolveSibling("my-new-probe.jar");
        try (java.util.jar.JarInputStream in = new java.util.jar.JarInputStream(Files.newInputStream(deployed))) {
            java.util.jar.Manifest m = in.getManifest();
            m.getMainAttributes().putValue("Bundle-Version", "99.0.0");
            try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(part), m)) {
                for (java.util.jar.JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
                    out.putNextEntry(new java.util.jar.JarEntry(e.getName()));
                    in.transferTo(out);
                    out.closeEntry();
                }
            }
        }
        Files.move(part, copy, StandardCopyOption.ATOMIC_MOVE);
        ObjectName deploy = new ObjectName("io.npulifecycle:type=Deploy");
        String expected = copy.toAbsolutePath().normalize() + ": Bundle-SymbolicName io.npulifecycle.probe is already "
                + "installed from " + deployed.toAbsolutePath().normalize() + " (bundle id ";
        await("the copy listed as refused", TIMEOUT, () -> {
            try {
                String[] rejected = (String[]) mbs().getAttribute(deploy, "RejectedFiles");
                return rejected.length == 1 && rejected[0].startsWith(expected);
            } catch (Exception e) {
                return false;
            }
        }, () -> {
            Object rejected = attr("io.npulifecycle:type=Deploy", "RejectedFiles");
            return "RejectedFiles: " + (rejected instanceof Object[] a ? java.util.Arrays.toString(a) : String.valueOf(rejected))
                    + "; expected one entry starting with " + expected;
        });
        // FileInstall polls every second: during three polls there is never a second copy
        org.awaitility.Awaitility.await("never two copies").during(Duration.ofSeconds(3)).atMost(TIMEOUT)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> java.util.Arrays.stream(bundleContext.getBundles())
                        .filter(b -> "io.npulifecycle.probe".equals(b.getSymbolicName())).count() == 1);
        Files.delete(copy);
        await("the refusal cleared", TIMEOUT, () -> {
            try {
                return ((String[]) mbs().getAttribute(deploy, "RejectedFiles")).length == 0;
            } catch (Exception e) {
                return false;
            }
        });
        assertEquals(Bundle.ACTIVE, findBundle("io.npulifecycle.probe").getState());
    }

    FakeNpuSmi fake() {
        return FakeNpuSmi.attach(Path.of(property("itest.npusmi.mode")));
    }
}
