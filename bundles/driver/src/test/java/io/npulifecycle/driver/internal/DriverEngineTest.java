package io.npulifecycle.driver.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.reboot.DriverLoader;
import io.npulifecycle.clock.testing.ManualTimeSource;
import io.npulifecycle.driver.testing.FakeHealthView;
import io.npulifecycle.markers.internal.FileMarkerStore;

/**
 * The driver engine on temp folders (a marker folder, a state folder, a {@code /proc/modules} file), with fakes for the
 * Node writer, the loader and the health-watch: load only into a kernel without a driver, stage a different version
 * for the next boot, validate the pod's version, refuse bad input with a clear reason.
 */
class DriverEngineTest {

    static final String POD = "25.5.0";
    static final String MODULE_LINE = "drv_davinci_intf 16384 0 - Live 0x0\n";
    static final Duration TIMEOUT = Duration.ofMinutes(10);

    @TempDir
    Path tmp;
    Path stateDir;
    Path procModules;
    final ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-12-01T10:00:00Z"));
    final FakeWriter writer = new FakeWriter();
    final FakeHealthView health = new FakeHealthView();
    final FakeLoader loader = new FakeLoader();
    FileMarkerStore markers;

    /** Records what the engine reports; refuses what a real NodeWriter refuses (invalid label values). */
    static final class FakeWriter implements NodeWriter {
        static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?");
        final Map<String, String> labels = new HashMap<>();
        final Map<String, String> annotations = new HashMap<>();
        final Map<String, String[]> events = new LinkedHashMap<>();

        @Override
        public String nodeName() {
            return "node-0";
        }

        @Override
        public boolean connected() {
            return true;
        }

        @Override
        public void setLabel(String key, String value) {
            if (value != null && !LABEL_VALUE.matcher(value).matches()) {
                throw new IllegalArgumentException("label " + key + ": '" + value + "' is not a label value");
            }
            put(labels, key, value);
        }

        @Override
        public void setAnnotation(String key, String value) {
            put(annotations, key, value);
        }

        private static void put(Map<String, String> m, String key, String value) {
            if (value == null) {
                m.remove(key);
            } else {
                m.put(key, value);
            }
        }

        @Override
        public void recordEvent(String key, String type, String reason, String message) {
            events.putIfAbsent(key, new String[] {type, reason, message});
        }

        @Override
        public boolean flush(long timeoutMillis) {
            return true;
        }

        List<String[]> events(String reason) {
            return events.values().stream().filter(e -> reason.equals(e[1])).toList();
        }
    }

    /** Loads by writing a module line; fails the test when a driver is loaded already (that would need an unload). */
    final class FakeLoader implements DriverLoader {
        final List<String> loads = new ArrayList<>();
        volatile IOException failure;
        volatile boolean takesEffect = true;

        @Override
        public String describe() {
            return "fake loader";
        }

        @Override
        public void load(String version) throws IOException {
            if (Files.readString(procModules).contains("drv_")) {
                fail("load(" + version + ") into a kernel that has a driver loaded");
            }
            loads.add(version);
            if (failure != null) {
                throw failure;
            }
            if (takesEffect) {
                Files.writeString(procModules, MODULE_LINE);
                health.version = version;
            }
        }
    }

    @BeforeEach
    void setUp() throws IOException {
        stateDir = tmp.resolve("var");
        procModules = tmp.resolve("modules");
        Files.writeString(procModules, MODULE_LINE);
        markers = boot("boot-a");
    }

    FileMarkerStore boot(String bootId) throws IOException {
        return new FileMarkerStore(Files.createDirectories(tmp.resolve("run")), bootId, time::now, null);
    }

    DriverEngine engine(String podVersion) {
        return engine(podVersion, procModules, loader);
    }

    DriverEngine engine(String podVersion, Path modules, DriverLoader driverLoader) {
        return new DriverEngine(markers, () -> writer, () -> driverLoader, () -> health, time,
                new DriverEngine.Settings(podVersion, modules, Set.of("drv_davinci_intf", "drv_devdrv"), stateDir,
                        TIMEOUT));
    }

    DriverEngine hostEngine(String podVersion) {
        return new DriverEngine(markers, () -> writer, () -> loader, () -> health, time,
                new DriverEngine.Settings(podVersion, procModules, Set.of("drv_davinci_intf", "drv_devdrv"), stateDir,
                        TIMEOUT, true));
    }

    /** A kernel without NPU modules and so without a loaded version: a fresh boot. */
    void freshKernel() throws IOException {
        Files.writeString(procModules, "");
        health.version = null;
    }

    String staged() throws IOException {
        Path p = stateDir.resolve(DriverStaging.STAGED);
        return Files.exists(p) ? Files.readString(p) : null;
    }

    // ---- a fresh boot: load, once ----

    @Test
    void aFreshBootLoadsThePodsVersionOnce() throws IOException {
        freshKernel();
        DriverEngine e = engine(POD);

        e.evaluate();
        assertEquals(List.of(POD), loader.loads);
        assertEquals("LOADING", e.getState());

        e.evaluate();
        assertEquals("VALIDATED", e.getState(), e.getStateReason());
        assertTrue(e.isModulesLoaded());
        assertEquals(POD, e.getLoadedVersion());
        assertEquals(1, loader.loads.size());
    }

    @Test
    void aLoadWithoutEffectIsNotRepeatedInTheSameBoot() throws IOException {
        freshKernel();
        loader.takesEffect = false;
        DriverEngine e = engine(POD);

        e.evaluate();
        e.evaluate();

        assertEquals(List.of(POD), loader.loads, "once per boot");
        assertEquals("LOADING", e.getState());
        assertTrue(e.getStateReason().contains("/proc/modules shows none yet"), e.getStateReason());
    }

    @Test
    void aFailedLoadIsReportedOnceAndNotRetriedInTheSameBoot() throws IOException {
        freshKernel();
        loader.failure = new IOException("insmod: ERROR: could not insert module");
        DriverEngine e = engine(POD);

        e.evaluate();
        e.evaluate();

        assertEquals(1, loader.loads.size());
        assertEquals("LOAD_FAILED", e.getState());
        assertTrue(e.getStateReason().contains("could not insert module"), e.getStateReason());
        List<String[]> failed = writer.events(NodeKeys.EVENT_DRIVER_VALIDATION_FAILED);
        assertEquals(1, failed.size());
        assertEquals(NodeKeys.WARNING, failed.get(0)[0]);
        assertTrue(failed.get(0)[2].contains(POD), failed.get(0)[2]);
    }

    @Test
    void withoutALoaderNothingIsLoadedAndTheReasonNamesTheSetting() throws IOException {
        freshKernel();
        DriverEngine e = engine(POD, procModules, null);

        e.evaluate();

        assertEquals("LOAD_FAILED", e.getState());
        assertTrue(e.getStateReason().contains("loaderCommand"), e.getStateReason());
        assertEquals("none configured", e.getLoader());
    }

    @Test
    void theVersionStagedInThePreviousBootBecomesCurrentAtTheFreshBoot() throws IOException {
        health.version = "25.2.0";
        engine(POD).evaluate();
        assertTrue(staged().contains("version=" + POD));

        markers = boot("boot-b");
        freshKernel();
        DriverEngine e = engine(POD);
        e.evaluate();

        assertNull(staged());
        String current = Files.readString(stateDir.resolve(DriverStaging.CURRENT));
        assertTrue(current.contains("version=" + POD) && current.contains("fromBootId=boot-a"), current);
        assertEquals(List.of(POD), loader.loads);
    }

    @Test
    void aVersionStagedInThisBootIsNotSwitched() throws IOException {
        health.version = "25.2.0";
        engine(POD).evaluate();
        freshKernel(); // modules gone, but it is the same boot (the runtime restarted)

        engine(POD).evaluate();

        assertTrue(staged().contains("fromBootId=boot-a"), "still waiting for the next boot");
        assertFalse(Files.exists(stateDir.resolve(DriverStaging.CURRENT)));
    }

    // ---- a different version loaded: stage, never load ----

    @Test
    void aDifferentLoadedVersionIsStagedForTheNextBootAndNeverReplacedInTheRunningKernel() throws IOException {
        health.version = "25.2.0";
        writer.setAnnotation(NodeKeys.DRIVER_VALIDATED, "25.2.0@boot-old");
        DriverEngine e = engine(POD);

        e.evaluate();

        assertTrue(loader.loads.isEmpty(), "nothing is loaded into a kernel with a driver");
        assertEquals(MODULE_LINE, Files.readString(procModules), "the loaded driver stays");
        assertEquals("STAGED", e.getState());
        String staged = staged();
        for (String line : new String[] {"version=" + POD, "fromBootId=boot-a", "replaces=25.2.0",
            "stagedAt=" + time.now()}) {
            assertTrue(staged.contains(line + "\n"), staged);
        }
        MarkerRead rr = markers.read(Markers.REBOOT_REQUIRED);
        assertTrue(rr.present());
        assertEquals(Markers.REASON_UPGRADE, rr.marker().reason());
        assertEquals("25.2.0", rr.marker().content().get("from"));
        assertEquals(POD, rr.marker().content().get("to"));
        assertEquals("25.2.0", writer.labels.get(NodeKeys.DRIVER_VERSION), "the loaded version is reported");
        assertNull(writer.annotations.get(NodeKeys.DRIVER_VALIDATED));
        assertFalse(markers.read(Markers.DRIVER_READY).present());
        assertTrue(e.getStaged().contains("version=" + POD), e.getStaged());

        time.advance(Duration.ofMinutes(1));
        e.evaluate();
        assertEquals(staged, staged(), "staged once per boot and version");
        assertTrue(loader.loads.isEmpty());
    }

    @Test
    void nothingIsStagedUntilTheLoadedVersionIsKnown() throws IOException {
        health.version = null;
        DriverEngine e = engine(POD);

        e.evaluate();

        assertEquals("WAITING_FOR_VERSION", e.getState());
        assertNull(staged());
        assertFalse(markers.read(Markers.REBOOT_REQUIRED).present());
        assertNull(e.getStaged());
    }

    // ---- the pod's version loaded: validate ----

    @Test
    void thePodsVersionOnHealthyChipsIsValidatedAndReportedOnce() throws IOException {
        DriverEngine e = engine(POD);

        e.evaluate();
        e.evaluate();

        assertEquals("VALIDATED", e.getState(), e.getStateReason());
        MarkerRead ready = markers.read(Markers.DRIVER_READY);
        assertTrue(ready.present());
        assertEquals(POD, ready.marker().content().get("version"));
        assertEquals("0:0,1:0", ready.marker().content().get("chips"));
        assertEquals(POD, writer.labels.get(NodeKeys.DRIVER_VERSION));
        assertEquals(POD + "@boot-a", writer.annotations.get(NodeKeys.DRIVER_VALIDATED));
        assertEquals("healthy", writer.labels.get(NodeKeys.NPU_HEALTH));
        assertEquals(1, writer.events(NodeKeys.EVENT_DRIVER_VALIDATED).size());
        assertTrue(loader.loads.isEmpty());
    }

    @Test
    void validationRemovesTheUpgradeRebootRequestButNotARecoveryOne() throws IOException {
        markers.write(Markers.REBOOT_REQUIRED, Map.of(Markers.KEY_REASON, Markers.REASON_UPGRADE), DriverEngine.WRITER);
        engine(POD).evaluate();
        assertFalse(markers.read(Markers.REBOOT_REQUIRED).present(), "the upgrade it asked for is done");

        markers.write(Markers.REBOOT_REQUIRED, Map.of(Markers.KEY_REASON, Markers.REASON_RECOVERY), "health-watch");
        engine(POD).evaluate();
        assertTrue(markers.read(Markers.REBOOT_REQUIRED).present(), "the health-watch's request is not ours");
    }

    @Test
    void validationWaitsForEveryExpectedChipThenFailsWithoutARebootRequest() throws IOException {
        health.expected = "";
        DriverEngine e = engine(POD);
        e.evaluate();
        assertEquals("VALIDATING", e.getState());
        assertTrue(e.getStateReason().contains("expected chips are not known yet"), e.getStateReason());

        health.expected = "0:0,1:0";
        health.wedged = "1:0";
        time.advance(TIMEOUT.minusSeconds(1));
        e.evaluate();
        assertEquals("VALIDATING", e.getState());
        assertTrue(e.getStateReason().contains("chips 1:0 are wedged"), e.getStateReason());
        assertEquals("wedged", writer.labels.get(NodeKeys.NPU_HEALTH));

        time.advance(Duration.ofSeconds(1));
        List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger(DriverEngine.class.getName());
        java.util.logging.Handler handler = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                logged.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        jul.addHandler(handler);
        try {
            e.evaluate();
            time.advance(Duration.ofSeconds(30));
            e.evaluate();
            time.advance(Duration.ofSeconds(30));
            e.evaluate();
        } finally {
            jul.removeHandler(handler);
        }
        // the waited seconds grow at each evaluation; the failure is logged once, not at every probe
        assertEquals(1, logged.stream().filter(m -> m.contains("validation failed")).count(), logged.toString());
        assertEquals("VALIDATION_FAILED", e.getState());
        List<String[]> failed = writer.events(NodeKeys.EVENT_DRIVER_VALIDATION_FAILED);
        assertEquals(1, failed.size());
        assertEquals(NodeKeys.WARNING, failed.get(0)[0]);
        assertTrue(failed.get(0)[2].contains("chips 1:0 are wedged"), failed.get(0)[2]);
        assertFalse(markers.read(Markers.DRIVER_READY).present());
        assertFalse(markers.read(Markers.REBOOT_REQUIRED).present(), "a failed validation asks for no reboot");
        assertNull(writer.annotations.get(NodeKeys.DRIVER_VALIDATED));
    }

    @Test
    void aProblemAfterTheValidationIsTheHealthWatchsToHandle() throws IOException {
        DriverEngine e = engine(POD);
        e.evaluate();
        health.verdict = "degraded";

        time.advance(TIMEOUT.plusMinutes(1));
        e.evaluate();

        assertEquals("VALIDATED", e.getState());
        assertTrue(e.getStateReason().contains("the last probe verdict is degraded"), e.getStateReason());
        assertEquals("degraded", writer.labels.get(NodeKeys.NPU_HEALTH));
        assertTrue(writer.events(NodeKeys.EVENT_DRIVER_VALIDATION_FAILED).isEmpty());
        assertTrue(markers.read(Markers.DRIVER_READY).present());
    }

    /**
     * A node agent restarted in a boot whose driver it validated, a chip wedged since before the restart: the new
     * engine finds the problem at once and keeps finding it past the validation timeout; the driver stays validated
     * (no DriverValidationFailed Event, the driver-validated annotation kept), the wedge being the health-watch's.
     */
    @Test
    void anAgentRestartedDuringAWedgeKeepsTheValidationOfItsBoot() throws IOException {
        DriverEngine before = engine(POD);
        before.evaluate();
        assertEquals("VALIDATED", before.getState(), before.getStateReason());
        health.wedged = "1:0";
        health.verdict = "wedged";
        before.evaluate();

        DriverEngine restarted = engine(POD);
        restarted.evaluate();
        assertTrue(restarted.getStateReason().contains("before this node agent started")
                && restarted.getStateReason().contains("chips 1:0 are wedged"), restarted.getStateReason());
        time.advance(TIMEOUT.plusMinutes(1));
        restarted.evaluate();

        assertEquals("VALIDATED", restarted.getState(), restarted.getStateReason());
        assertTrue(writer.events(NodeKeys.EVENT_DRIVER_VALIDATION_FAILED).isEmpty());
        assertEquals(POD + "@boot-a", writer.annotations.get(NodeKeys.DRIVER_VALIDATED));
    }

    /** The record is of one boot: in the next boot a wedge past the timeout is a failed validation again. */
    @Test
    void theValidationOfAnEarlierBootDoesNotCount() throws IOException {
        engine(POD).evaluate();
        assertTrue(Files.readString(stateDir.resolve(BootValidation.FILE)).contains("bootId=boot-a"));
        markers = boot("boot-b");
        health.wedged = "1:0";
        health.verdict = "wedged";
        DriverEngine e = engine(POD);
        e.evaluate();
        time.advance(TIMEOUT.plusMinutes(1));
        e.evaluate();

        assertEquals("VALIDATION_FAILED", e.getState(), e.getStateReason());
        assertEquals(1, writer.events(NodeKeys.EVENT_DRIVER_VALIDATION_FAILED).size());
    }

    /** A torn or foreign record counts as none: logged, the driver validated again, nothing thrown. */
    @Test
    void aMalformedValidationRecordIsIgnored() throws IOException {
        Files.createDirectories(stateDir);
        health.wedged = "1:0";
        health.verdict = "wedged";
        for (String text : List.of("version=25.5.0\n", "garbage\u0000\n", "")) {
            Files.writeString(stateDir.resolve(BootValidation.FILE), text);
            DriverEngine e = engine(POD);
            e.evaluate();
            assertEquals("VALIDATING", e.getState(), text + ": " + e.getStateReason());
        }
        health.wedged = "";
        health.verdict = "healthy";
        DriverEngine e = engine(POD);
        e.evaluate();
        assertEquals("VALIDATED", e.getState(), e.getStateReason());
        assertTrue(Files.readString(stateDir.resolve(BootValidation.FILE)).contains("version=25.5.0\nbootId=boot-a"));
    }

    @Test
    void healthIsReportedAsALabel() {
        DriverEngine e = engine(POD);
        health.verdict = null;
        e.evaluate();
        assertEquals("unknown", writer.labels.get(NodeKeys.NPU_HEALTH), "before the first probe");
        health.verdict = "probe-error";
        e.evaluate();
        assertEquals("unknown", writer.labels.get(NodeKeys.NPU_HEALTH));
        health.verdict = "failed";
        e.evaluate();
        assertEquals("degraded", writer.labels.get(NodeKeys.NPU_HEALTH));
    }

    @Test
    void aLoadedVersionThatIsNoLabelValueIsReportedSanitised() {
        assertEquals("25.5.0_build_7", DriverEngine.labelValue("25.5.0+build/7"));
        assertEquals(63, DriverEngine.labelValue("1".repeat(80)).length());
        assertEquals("25.5.0", DriverEngine.labelValue("(25.5.0)"));

        health.version = "25.2.0 (build 7)";
        engine(POD).evaluate();

        assertEquals("25.2.0__build_7", writer.labels.get(NodeKeys.DRIVER_VERSION), "alphanumeric at both ends");
    }

    // ---- bad input ----

    @Test
    void aMalformedPodVersionLoadsAndValidatesNothing() throws IOException {
        freshKernel();
        for (String bad : new String[] {null, "", "25", "latest", "v25.5.0", "25.5.0;reboot", "25.5.0\n"}) {
            DriverEngine e = engine(bad);

            e.evaluate();

            assertEquals("NO_DRIVER_VERSION", e.getState(), bad);
            assertTrue(e.getStateReason().contains("'" + bad + "'")
                    && e.getStateReason().contains("expected a driver version like 25.5.0"), e.getStateReason());
        }
        assertTrue(loader.loads.isEmpty());
        assertNull(staged());
        assertFalse(markers.read(Markers.DRIVER_READY).present());
    }

    @Test
    void aMissingModuleListIsAnErrorNamingItNeverAFreshBoot() throws IOException {
        Path missing = tmp.resolve("no-such-proc-modules");
        DriverEngine e = engine(POD, missing, loader);

        e.evaluate();

        assertEquals("ERROR", e.getState());
        assertTrue(e.getStateReason().contains(missing.toString()) && e.getStateReason().contains("does not exist")
                && e.getStateReason().contains("procModules"), e.getStateReason());
        assertTrue(loader.loads.isEmpty(), "an unreadable module list must not read as 'no driver loaded'");
        assertEquals("ERROR: " + e.getStateReason(), e.evaluateNow());
    }

    @Test
    void anUnusableStateFolderIsAnErrorNamingTheFile() throws IOException {
        Files.writeString(stateDir, "a file where the folder should be");
        health.version = "25.2.0";
        DriverEngine e = engine(POD);

        e.evaluate();

        assertEquals("ERROR", e.getState());
        assertTrue(e.getStateReason().contains("cannot write staging file " + stateDir.resolve(DriverStaging.STAGED))
                && e.getStateReason().contains("stateDir"), e.getStateReason());
        assertTrue(loader.loads.isEmpty());
    }

    @Test
    void aStagingFileWithoutVersionOrBootIsIgnoredAndReplaced() throws IOException {
        Files.createDirectories(stateDir);
        Files.writeString(stateDir.resolve(DriverStaging.STAGED), "garbage\nversion=\n");
        health.version = "25.2.0";
        DriverEngine e = engine(POD);

        e.evaluate();

        assertEquals("STAGED", e.getState());
        assertTrue(staged().contains("version=" + POD + "\n") && staged().contains("fromBootId=boot-a\n"), staged());
    }

    // ---- mode=host: drivers installed on the host by its administrator ----

    @Test
    void hostModeNeverLoadsIntoAFreshKernel() throws IOException {
        freshKernel();
        DriverEngine e = hostEngine(POD);
        e.evaluate();
        e.evaluate();
        assertEquals(List.of(), loader.loads, "mode=host never loads");
        assertEquals("NO_DRIVER_LOADED", e.getState(), e.getStateReason());
        assertTrue(e.getStateReason().contains("mode=host"), e.getStateReason());
        assertFalse(markers.read(Markers.DRIVER_READY).present());
        assertNull(staged());
    }

    @Test
    void hostModeNeverStagesAnotherVersionAndValidatesTheLoadedOne() throws IOException {
        health.version = "24.1.0"; // the host's driver; DRIVER_VERSION (if any) says something else
        DriverEngine e = hostEngine(POD);
        e.evaluate();
        assertEquals("VALIDATED", e.getState(), e.getStateReason());
        assertNull(staged(), "nothing staged");
        assertFalse(markers.read(Markers.REBOOT_REQUIRED).present(), "no upgrade reboot requested");
        assertTrue(markers.read(Markers.DRIVER_READY).present());
        assertEquals("24.1.0", writer.labels.get(NodeKeys.DRIVER_VERSION));
        assertEquals("24.1.0@boot-a", writer.annotations.get(NodeKeys.DRIVER_VALIDATED));
        assertEquals("24.1.0", e.getLoadedVersion());
        assertEquals(List.of(), loader.loads);
    }

    @Test
    void hostModeWaitsForAVersionThatIsNotAVersion() throws IOException {
        health.version = "n/a";
        DriverEngine e = hostEngine(null);
        e.evaluate();
        assertEquals("WAITING_FOR_VERSION", e.getState(), e.getStateReason());
        assertFalse(markers.read(Markers.DRIVER_READY).present());
    }

    // ---- the package folder: nothing staged or loaded before the driver container copied the package ----

    DriverEngine packageEngine(String podVersion, Path packages) {
        return new DriverEngine(markers, () -> writer, () -> loader, () -> health, time,
                new DriverEngine.Settings(podVersion, procModules, Set.of("drv_davinci_intf", "drv_devdrv"), stateDir,
                        TIMEOUT, false, packages));
    }

    @Test
    void aFreshBootWaitsForThePackageThenLoadsIt() throws IOException {
        freshKernel();
        Path packages = tmp.resolve("driver-packages");
        DriverEngine e = packageEngine(POD, packages);
        e.evaluate();
        assertEquals("WAITING_FOR_PACKAGE", e.getState(), e.getStateReason());
        assertEquals(List.of(), loader.loads, "no load before the package is complete");
        Files.createDirectories(packages.resolve(POD));
        Files.writeString(packages.resolve(POD).resolve(".complete"), "");
        e.evaluate();
        assertEquals(List.of(POD), loader.loads);
    }

    @Test
    void noStagingNorRebootRequestBeforeThePackageIsComplete() throws IOException {
        health.version = "25.2.0";
        Path packages = tmp.resolve("driver-packages");
        DriverEngine e = packageEngine(POD, packages);
        e.evaluate();
        assertEquals("WAITING_FOR_PACKAGE", e.getState(), e.getStateReason());
        assertNull(staged());
        assertFalse(markers.read(Markers.REBOOT_REQUIRED).present(), "no reboot without the package");
        Files.createDirectories(packages.resolve(POD));
        Files.writeString(packages.resolve(POD).resolve(".complete"), "");
        e.evaluate();
        assertEquals("STAGED", e.getState(), e.getStateReason());
        assertTrue(markers.read(Markers.REBOOT_REQUIRED).present());
    }
}
