package io.npulifecycle.driver.internal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.markers.MarkerStoreException;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.reboot.DriverLoader;
import io.npulifecycle.api.reboot.DriverMXBean;
import io.npulifecycle.api.time.TimeSource;

/**
 * The node half of the driver upgrade, usable without OSGi. One {@link #evaluate()} round:
 * <ol>
 * <li>no NPU module in {@code /proc/modules} (a fresh boot): switch a staged version to current (atomic rename of
 * {@code driver-staged} to {@code driver-current} in the state folder) and load the pod's version through the
 * {@link DriverLoader}, once per boot;</li>
 * <li>a <em>different</em> version loaded: never unload; stage the pod's version for the next boot
 * ({@code driver-staged}, atomic write) and write {@code reboot-required} with {@code reason=upgrade};</li>
 * <li>the pod's version loaded: validate (every expected chip healthy, none wedged, loaded version = pod's) → write
 * {@code driver-ready}, the {@value NodeKeys#DRIVER_VERSION} label, the {@value NodeKeys#DRIVER_VALIDATED}
 * annotation and one {@value NodeKeys#EVENT_DRIVER_VALIDATED} Event; past {@code validationTimeout} without
 * success: one {@value NodeKeys#EVENT_DRIVER_VALIDATION_FAILED} Event, no marker, no reboot request. Once validated
 * in a boot ({@link BootValidation}, kept in the state folder across node-agent restarts), a problem is the
 * health-watch's, never a failed validation.</li>
 * </ol>
 * With {@link Settings#hostDrivers()} (PID {@value DriverComponent#PID} key {@code mode=host}: the drivers are
 * installed on the host by its administrator) nothing is ever staged nor loaded and {@code DRIVER_VERSION} is not
 * used: the loaded version (the health-watch's) is validated and reported as above; no NPU module loaded is the state
 * {@code NO_DRIVER_LOADED}, without any write.
 */
public final class DriverEngine {

    private static final System.Logger LOG = System.getLogger(DriverEngine.class.getName());
    static final String WRITER = "driver";
    private static final Pattern VERSION = Pattern.compile("[0-9]+(\\.[0-9A-Za-z]+){1,4}");

    /**
     * Settings (PID {@value DriverComponent#PID}).
     *
     * @param podVersion the driver version this pod carries ({@code DRIVER_VERSION}), e.g. {@code 25.5.0}; anything
     *        that is not a version means nothing is loaded or validated
     * @param procModules the kernel's module list, {@code /proc/modules}
     * @param moduleNames the kernel modules of the NPU driver: any one of them loaded means a driver is loaded
     * @param stateDir the persistent host folder of {@value DriverStaging#STAGED} and {@value DriverStaging#CURRENT}
     * @param validationTimeout how long after the first round of a boot (TimeSource time) a validation that has not
     *        passed is declared failed
     * @param hostDrivers {@code mode=host}: never stage nor load; validate and report the loaded version
     * @param packageDir where the driver container copies the package of each version
     *        ({@code <packageDir>/<version>/.complete} once complete); when set, a version is neither staged nor
     *        loaded before its package is complete there ({@code WAITING_FOR_PACKAGE}); null = no such check
     */
    public record Settings(String podVersion, Path procModules, Set<String> moduleNames, Path stateDir,
            Duration validationTimeout, boolean hostDrivers, Path packageDir) {

        /**
         * Without a package folder to wait for.
         *
         * @param podVersion see the record
         * @param procModules see the record
         * @param moduleNames see the record
         * @param stateDir see the record
         * @param validationTimeout see the record
         * @param hostDrivers see the record
         */
        public Settings(String podVersion, Path procModules, Set<String> moduleNames, Path stateDir,
                Duration validationTimeout, boolean hostDrivers) {
            this(podVersion, procModules, moduleNames, stateDir, validationTimeout, hostDrivers, null);
        }

        /**
         * Managed mode ({@code mode=managed}).
         *
         * @param podVersion see the record
         * @param procModules see the record
         * @param moduleNames see the record
         * @param stateDir see the record
         * @param validationTimeout see the record
         */
        public Settings(String podVersion, Path procModules, Set<String> moduleNames, Path stateDir,
                Duration validationTimeout) {
            this(podVersion, procModules, moduleNames, stateDir, validationTimeout, false, null);
        }
    }

    private final MarkerStore markers;
    private final Supplier<NodeWriter> writers;
    private final Supplier<DriverLoader> loaders;
    /** Whether the planted bug {@link PlantedBug#MODULE_RELOADED} is active (never in the product). */
    private volatile boolean reloadLive;
    private final Supplier<HealthView> health;
    private final TimeSource time;
    private volatile Settings settings;

    private volatile String state = "NOT_EVALUATED";
    private volatile String why = "";
    private volatile String loadedVersion;
    private volatile boolean modulesLoaded;
    private String loadAttemptBoot;
    private String firstSeenBoot;
    private long firstSeenNanos;
    private String lastLogged;

    /**
     * @param markers marker store
     * @param writers Node writer supplier (may give {@code null})
     * @param loaders loader supplier (may give {@code null})
     * @param health health-watch view supplier (may give {@code null})
     * @param time the TimeSource
     * @param settings settings
     */
    public DriverEngine(MarkerStore markers, Supplier<NodeWriter> writers, Supplier<DriverLoader> loaders,
            Supplier<HealthView> health, TimeSource time, Settings settings) {
        this.markers = Objects.requireNonNull(markers);
        this.writers = writers;
        this.loaders = loaders;
        this.health = health;
        this.time = time;
        this.settings = settings;
    }

    /** @param s new settings */
    public void reconfigure(Settings s) {
        this.settings = s;
    }

    /** One round. Never throws, never unloads. */
    public synchronized void evaluate() {
        try {
            doEvaluate();
        } catch (IOException | RuntimeException e) {
            set("ERROR", e.getMessage());
            LOG.log(Level.ERROR, "driver round failed", e);
        }
    }

    private void doEvaluate() throws IOException {
        Settings s = settings;
        String boot = markers.bootId();
        if (!boot.equals(firstSeenBoot)) {
            firstSeenBoot = boot;
            firstSeenNanos = time.monotonicNanos();
        }
        String pod = s.podVersion();
        HealthView h = health == null ? null : health.get();
        reportHealth(h);
        if (s.hostDrivers()) {
            evaluateHost(s, boot, h);
            return;
        }
        if (pod == null || !VERSION.matcher(pod).matches()) {
            set("NO_DRIVER_VERSION", "DRIVER_VERSION is '" + pod + "', expected a driver version like 25.5.0: nothing is loaded or validated");
            return;
        }
        modulesLoaded = npuModuleLoaded(s);
        if (!modulesLoaded) {
            loadFromFreshBoot(s, boot, pod);
            return;
        }
        String loaded = h == null ? null : h.driverVersion();
        loadedVersion = loaded;
        if (loaded == null || loaded.isBlank()) {
            set("WAITING_FOR_VERSION", "NPU modules are loaded; waiting for the health-watch to report the loaded version");
            return;
        }
        report(w -> w.setLabel(NodeKeys.DRIVER_VERSION, labelValue(loaded)));
        if (!loaded.equals(pod)) {
            if (reloadLive) {
                reloadLive(pod);
            }
            stage(s, boot, pod, loaded);
            return;
        }
        validate(s, boot, pod, h);
    }

    /**
     * A round of {@code mode=host}: no staging, no loading, whatever {@code DRIVER_VERSION} says; the loaded version
     * is validated and reported.
     */
    private void evaluateHost(Settings s, String boot, HealthView h) throws IOException {
        modulesLoaded = npuModuleLoaded(s);
        if (!modulesLoaded) {
            loadedVersion = null;
            set("NO_DRIVER_LOADED", "mode=host: no NPU module is loaded; the host's driver is installed and loaded by "
                    + "its administrator, this agent never loads one");
            return;
        }
        String loaded = h == null ? null : h.driverVersion();
        loadedVersion = loaded;
        if (loaded == null || loaded.isBlank() || !VERSION.matcher(loaded).matches()) {
            set("WAITING_FOR_VERSION", "mode=host: NPU modules are loaded; waiting for the health-watch to report the "
                    + "loaded version (now '" + loaded + "')");
            return;
        }
        report(w -> w.setLabel(NodeKeys.DRIVER_VERSION, labelValue(loaded)));
        validate(s, boot, loaded, h);
    }

    /**
     * @return null when the pod's package is complete in {@link Settings#packageDir()} (or there is none to wait
     *         for), else why not (the state's reason)
     */
    private static String packageMissing(Settings s, String pod) {
        if (s.packageDir() == null) {
            return null;
        }
        Path done = s.packageDir().resolve(pod).resolve(".complete");
        return Files.exists(done) ? null : "the driver package of " + pod + " is not complete yet (" + done
                + " absent): the driver container copies it; nothing is staged or loaded before";
    }

    /**
     * Plants a bug of the chaos checker's tests ({@link PlantedBug}); called before the first evaluation.
     *
     * @param bug {@link PlantedBug#MODULE_RELOADED}, or {@code null} (none)
     */
    public void plant(PlantedBug bug) {
        reloadLive = bug == PlantedBug.MODULE_RELOADED;
    }

    /**
     * Planted bug (testing the chaos checker only): breaks "a driver module is loaded only from a fresh boot", as the
     * pod's version is loaded into the running kernel over the loaded one.
     */
    private void reloadLive(String pod) {
        DriverLoader loader = loaders == null ? null : loaders.get();
        if (loader == null) {
            return;
        }
        try {
            loader.load(pod);
        } catch (IOException e) {
            LOG.log(Level.WARNING, "planted bug " + PlantedBug.MODULE_RELOADED.bugName() + ": loading " + pod
                    + " into the running kernel failed: " + e.getMessage());
        }
    }

    private void loadFromFreshBoot(Settings s, String boot, String pod) throws IOException {
        String missing = packageMissing(s, pod);
        if (missing != null && !boot.equals(loadAttemptBoot)) {
            set("WAITING_FOR_PACKAGE", missing);
            return;
        }
        if (boot.equals(loadAttemptBoot)) {
            if (!"LOAD_FAILED".equals(state)) {
                set("LOADING", "modules of " + pod + " requested in this boot; /proc/modules shows none yet");
            }
            return;
        }
        DriverStaging staging = new DriverStaging(s.stateDir());
        Map<String, String> staged = staging.staged();
        if (!staged.isEmpty() && !boot.equals(staged.get("fromBootId"))) {
            staging.switchToCurrent();
            LOG.log(Level.INFO, "fresh boot " + boot + ": staged driver " + staged.get("version") + " switched to current");
            if (!pod.equals(staged.get("version"))) {
                LOG.log(Level.WARNING, "staged driver version " + staged.get("version") + " differs from this pod's "
                        + pod + ": loading the pod's version (the only one it carries)");
            }
        }
        DriverLoader loader = loaders == null ? null : loaders.get();
        if (loader == null) {
            set("LOAD_FAILED", "no NPU module loaded and no driver loader configured (PID io.npulifecycle.driver key loaderCommand)");
            return;
        }
        loadAttemptBoot = boot;
        set("LOADING", "fresh boot without NPU modules: loading " + pod + " with " + loader.describe());
        try {
            loader.load(pod);
        } catch (IOException e) {
            String text = "loading driver " + pod + " failed: " + e.getMessage();
            set("LOAD_FAILED", text);
            report(w -> w.recordEvent(NodeKeys.EVENT_DRIVER_VALIDATION_FAILED + "/" + boot + "/load", NodeKeys.WARNING,
                    NodeKeys.EVENT_DRIVER_VALIDATION_FAILED, text));
        }
    }

    private void stage(Settings s, String boot, String pod, String loaded) throws IOException {
        String missing = packageMissing(s, pod);
        if (missing != null) {
            set("WAITING_FOR_PACKAGE", missing + " (no reboot is requested without it)");
            return;
        }
        DriverStaging staging = new DriverStaging(s.stateDir());
        Map<String, String> staged = staging.staged();
        if (!pod.equals(staged.get("version")) || !boot.equals(staged.get("fromBootId"))) {
            Map<String, String> kv = new LinkedHashMap<>();
            kv.put("version", pod);
            kv.put("fromBootId", boot);
            kv.put("replaces", loaded);
            kv.put("stagedAt", time.now().toString());
            staging.stage(kv);
            LOG.log(Level.INFO, "driver " + pod + " staged for the next boot (" + loaded
                    + " stays loaded: a loaded driver is never unloaded)");
        }
        report(w -> w.setAnnotation(NodeKeys.DRIVER_VALIDATED, null));
        MarkerRead r = markers.read(Markers.REBOOT_REQUIRED);
        if (!r.present()) {
            Map<String, String> c = new LinkedHashMap<>();
            c.put(Markers.KEY_REASON, Markers.REASON_UPGRADE);
            c.put("from", loaded);
            c.put("to", pod);
            c.put(Markers.KEY_SINCE, time.now().toString());
            try {
                markers.write(Markers.REBOOT_REQUIRED, c, WRITER);
            } catch (MarkerStoreException e) {
                set("ERROR", "cannot write the reboot-required marker: " + e.getMessage());
                return;
            }
        }
        set("STAGED", "driver " + loaded + " is loaded, this pod carries " + pod + ": staged for the next boot, reboot requested (reason=upgrade)");
    }

    private void validate(Settings s, String boot, String pod, HealthView h) {
        MarkerRead rr = markers.read(Markers.REBOOT_REQUIRED);
        if (rr.present() && Markers.REASON_UPGRADE.equals(rr.marker().reason())) {
            try {
                markers.remove(Markers.REBOOT_REQUIRED, WRITER);
                LOG.log(Level.INFO, "driver " + pod + " is loaded: the upgrade reboot request is no longer needed");
            } catch (MarkerStoreException e) {
                LOG.log(Level.WARNING, e.getMessage());
            }
        }
        String problem = healthProblem(h);
        if (problem == null) {
            boolean wasReady = markers.read(Markers.DRIVER_READY).present();
            if (!wasReady) {
                Map<String, String> c = new LinkedHashMap<>();
                c.put("version", pod);
                c.put("chips", h.expectedChips());
                try {
                    markers.write(Markers.DRIVER_READY, c, WRITER);
                } catch (MarkerStoreException e) {
                    set("ERROR", "cannot write the driver-ready marker: " + e.getMessage());
                    return;
                }
            }
            try {
                new BootValidation(s.stateDir()).record(pod, boot, time.now().toString());
            } catch (IOException e) {
                // the validation stands; an agent restarted in this boot validates again
                LOG.log(Level.WARNING, e.getMessage());
            }
            report(w -> {
                w.setAnnotation(NodeKeys.DRIVER_VALIDATED, pod + "@" + boot);
                w.recordEvent(NodeKeys.EVENT_DRIVER_VALIDATED + "/" + boot + "/" + pod, NodeKeys.NORMAL,
                        NodeKeys.EVENT_DRIVER_VALIDATED, "driver " + pod + " validated in boot " + boot + ": chips "
                                + h.expectedChips() + " healthy");
            });
            set("VALIDATED", "driver " + pod + " loaded and every expected chip (" + h.expectedChips() + ") healthy");
            return;
        }
        Duration waited = Duration.ofNanos(time.monotonicNanos() - firstSeenNanos);
        if ("VALIDATED".equals(state)) {
            set("VALIDATED", "validated in this boot; now " + problem + " (the health-watch handles it)");
            return;
        }
        if (new BootValidation(s.stateDir()).validated(pod, boot)) {
            // this agent restarted in a boot whose driver it validated before: a problem now is a runtime fault
            set("VALIDATED", "validated in this boot before this node agent started (" + BootValidation.FILE
                    + " in the state folder); now " + problem + " (the health-watch handles it)");
            return;
        }
        if (waited.compareTo(s.validationTimeout()) < 0) {
            set("VALIDATING", problem + " (waiting up to " + s.validationTimeout().toSeconds() + " s)");
            return;
        }
        String text = "driver " + pod + " validation failed after " + waited.toSeconds() + " s: " + problem
                + " (driver-ready stays absent; no reboot is requested)";
        report(w -> {
            w.setAnnotation(NodeKeys.DRIVER_VALIDATED, null);
            w.recordEvent(NodeKeys.EVENT_DRIVER_VALIDATION_FAILED + "/" + boot + "/" + pod, NodeKeys.WARNING,
                    NodeKeys.EVENT_DRIVER_VALIDATION_FAILED, text);
        });
        // logged once per pod and problem: the text's waited seconds grow at every evaluation
        set("VALIDATION_FAILED", text, "VALIDATION_FAILED" + pod + problem);
    }

    static String healthProblem(HealthView h) {
        if (h == null) {
            return "the health-watch is not available";
        }
        if (h.verdict() == null) {
            return "the health-watch has not probed yet";
        }
        if (h.expectedChips() == null || h.expectedChips().isBlank()) {
            return "the expected chips are not known yet";
        }
        if (h.wedgedChips() != null && !h.wedgedChips().isBlank()) {
            return "chips " + h.wedgedChips() + " are wedged";
        }
        if (!"healthy".equals(h.verdict())) {
            return "the last probe verdict is " + h.verdict();
        }
        return null;
    }

    private void reportHealth(HealthView h) {
        String v;
        if (h == null || h.verdict() == null || "probe-error".equals(h.verdict())) {
            v = "unknown";
        } else if (h.wedgedChips() != null && !h.wedgedChips().isBlank()) {
            v = "wedged";
        } else if ("healthy".equals(h.verdict())) {
            v = "healthy";
        } else {
            v = "degraded";
        }
        report(w -> w.setLabel(NodeKeys.NPU_HEALTH, v));
    }

    /**
     * @param v a version as the health-watch reports it
     * @return it as a label value: characters outside {@code [A-Za-z0-9._-]} become {@code _}, at most 63
     *         characters, alphanumeric at both ends (what Kubernetes accepts; anything else would be refused and the
     *         loaded version never reported)
     */
    static String labelValue(String v) {
        String s = v.replaceAll("[^A-Za-z0-9._-]", "_");
        s = s.length() > 63 ? s.substring(0, 63) : s;
        return s.replaceAll("^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "");
    }

    /**
     * A module list that cannot be read is an error, never "no module loaded": that would load a second driver into a
     * kernel that has one.
     */
    private boolean npuModuleLoaded(Settings s) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(s.procModules(), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IOException("the kernel's module list " + s.procModules() + " does not exist (PID "
                    + DriverComponent.PID + " key procModules): nothing is loaded or staged", e);
        } catch (IOException e) {
            throw new IOException("cannot read the kernel's module list " + s.procModules() + " (PID "
                    + DriverComponent.PID + " key procModules): " + e + ": nothing is loaded or staged", e);
        }
        for (String line : lines) {
            int sp = line.indexOf(' ');
            String name = sp < 0 ? line.trim() : line.substring(0, sp);
            if (s.moduleNames().contains(name)) {
                return true;
            }
        }
        return false;
    }

    private interface WriterAction {
        void run(NodeWriter w);
    }

    private void report(WriterAction a) {
        NodeWriter w = writers == null ? null : writers.get();
        if (w != null) {
            try {
                a.run(w);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "cannot report to the Node: " + e.getMessage());
            }
        }
    }

    private void set(String st, String text) {
        set(st, text, st + text);
    }

    /** Sets the state; logs it when {@code logKey} differs from the last one logged. */
    private void set(String st, String text, String logKey) {
        state = st;
        why = text;
        String key = logKey;
        if (!key.equals(lastLogged)) {
            lastLogged = key;
            LOG.log(st.endsWith("FAILED") || "ERROR".equals(st) ? Level.WARNING : Level.INFO, "driver " + st + ": " + text);
        }
    }

    /** @return what the MBean attribute {@link DriverMXBean#getPodVersion()} shows */
    public String getPodVersion() {
        return settings.podVersion();
    }

    /** @return what the MBean attribute {@link DriverMXBean#getLoadedVersion()} shows */
    public String getLoadedVersion() {
        return loadedVersion;
    }

    /** @return what the MBean attribute {@link DriverMXBean#isModulesLoaded()} shows */
    public boolean isModulesLoaded() {
        return modulesLoaded;
    }

    /** @return what the MBean attribute {@link DriverMXBean#getState()} shows */
    public String getState() {
        return state;
    }

    /** @return what the MBean attribute {@link DriverMXBean#getStateReason()} shows */
    public String getStateReason() {
        return why;
    }

    /** @return what the MBean attribute {@link DriverMXBean#getStaged()} shows */
    public String getStaged() {
        try {
            Map<String, String> kv = new DriverStaging(settings.stateDir()).staged();
            return kv.isEmpty() ? null : kv.toString();
        } catch (IOException e) {
            return "unreadable: " + e.getMessage();
        }
    }

    /** @return what the MBean attribute {@link DriverMXBean#getLoader()} shows */
    public String getLoader() {
        DriverLoader l = loaders == null ? null : loaders.get();
        return l == null ? "none configured" : l.describe();
    }

    /** @return what the MBean operation {@link DriverMXBean#evaluateNow()} answers */
    public String evaluateNow() {
        LOG.log(Level.INFO, "driver round requested through the Driver MBean");
        evaluate();
        return state + ": " + why;
    }
}
