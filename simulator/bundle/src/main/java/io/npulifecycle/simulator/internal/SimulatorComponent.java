package io.npulifecycle.simulator.internal;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.Mbeans;
import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.reboot.DriverLoader;
import io.npulifecycle.api.reboot.RebootExecutor;

/**
 * The simulator, deployed into a node-agent runtime instead of real hardware. PID {@code io.npulifecycle.simulator};
 * the launcher installs this bundle only in a node runtime whose {@code etc/} holds that configuration, the component
 * only runs with it (a production node never emulates by accident), and it refuses to activate on a host with real
 * Ascend devices ({@code /dev/davinci_manager}) unless {@code force=true}.
 *
 * <p>It emulates the node's chips at the real interfaces (a generated {@code npu-smi}, a {@code libdcmi.so} shim, a
 * {@code /proc/modules} and the boot id file), so the production probes run unchanged, and registers the
 * {@link DriverLoader} and {@link RebootExecutor} services (ranking 1000) that the driver bundle and the rebooter use.
 * Fault injection: the MBean {@code io.npulifecycle:type=Simulator} and the Gogo commands {@code sim:*}.
 */
@Component(configurationPid = SimulatorComponent.PID, configurationPolicy = ConfigurationPolicy.REQUIRE, service = {})
@Designate(ocd = SimulatorComponent.Config.class)
public class SimulatorComponent implements SimulatorMXBean {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.simulator";
    /** Object name of the MBean. */
    public static final String OBJECT_NAME = Mbeans.DOMAIN + ":type=Simulator";
    private static final System.Logger LOG = System.getLogger(SimulatorComponent.class.getName());

    /** Simulator configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle simulator", description = "Emulated Ascend chips for machines without NPUs.")
    public @interface Config {
        @AttributeDefinition(name = "State folder", description = "Folder of the emulated node (state, npu-smi, libdcmi.so, /proc/modules). "
                + "Empty = <runtime home>/simulator.")
        String stateDir() default "";

        @AttributeDefinition(name = "Chip type", description = "Chip family: 910b (one chip per NPU id) or 310p (two chips per NPU id).",
                options = {@org.osgi.service.metatype.annotations.Option(value = "910b"),
                    @org.osgi.service.metatype.annotations.Option(value = "310p")})
        String chipType() default "910b";

        @AttributeDefinition(name = "NPU ids", description = "Number of NPU ids (cards).", min = "1", max = "64")
        int npus() default 8;

        @AttributeDefinition(name = "Chips per NPU id", description = "Chips per NPU id.", min = "1", max = "4")
        int chipsPerNpu() default 1;

        @AttributeDefinition(name = "Initial driver version", description = "Driver version loaded when the emulated node is first created.")
        String driverVersion() default "25.2.0";

        @AttributeDefinition(name = "Boot id file", description = "Boot id file the emulated node owns (the markers bundle's bootIdPath). "
                + "Empty = <stateDir>/boot_id.")
        String bootIdFile() default "";

        @AttributeDefinition(name = "Marker folder", description = "Marker folder a simulated reboot empties (it is a tmpfs on a real host).")
        String markersFolder() default "/run/npu-operator";

        @AttributeDefinition(name = "Restart mode", description = "What a simulated reboot does to this runtime: 'framework' restarts the "
                + "OSGi framework (the node agent comes back in the same JVM), 'exit' ends the JVM with exit code 75 "
                + "for a harness to restart it, 'none' leaves it running (tests).",
                options = {@org.osgi.service.metatype.annotations.Option(value = "framework"),
                    @org.osgi.service.metatype.annotations.Option(value = "exit"),
                    @org.osgi.service.metatype.annotations.Option(value = "none")})
        String restartMode() default "framework";

        /**
         * @return whether a reboot loads the installed driver by itself
         */
        @AttributeDefinition(name = "Host loads the driver at boot", description = "true: the emulated host loads "
                + "driverVersion at every boot by itself, as a host whose administrator installed the driver "
                + "(driverManagement=host, node agent mode=host: the agent never loads); false (default): no driver is "
                + "loaded after a reboot until the node agent loads one (managed drivers).")
        boolean loadAtBoot() default false;

        @AttributeDefinition(name = "Real device path", description = "Path whose existence means real Ascend devices are present.")
        String realDevicePath() default "/dev/davinci_manager";

        @AttributeDefinition(name = "Force", description = "Activate even where real Ascend devices are present. Dangerous.")
        boolean force() default false;
    }

    /** Exit code of a JVM ended by a simulated reboot with {@code restartMode=exit}. */
    public static final int REBOOT_EXIT_CODE = 75;

    private final CountDownLatch goingDown = new CountDownLatch(1);

    private BundleContext context;
    private SimulatedNode node;
    private String status = "inactive";
    private String restartMode;
    private Path dcmiLibrary;
    private final List<ServiceRegistration<?>> registrations = new ArrayList<>();
    private MBeanRegistrations.Registration mbean;

    @Activate
    void activate(BundleContext ctx, Config config) throws IOException {
        this.context = ctx;
        this.restartMode = config.restartMode();
        if (Files.exists(Path.of(config.realDevicePath())) && !config.force()) {
            status = "refused: real Ascend devices are present (" + config.realDevicePath() + " exists); the simulator "
                    + "would shadow them. Set force=true in PID " + PID + " only if you know why.";
            LOG.log(Level.ERROR, "Simulator " + status);
            registerMBean();
            return;
        }
        String home = ctx.getProperty(Mbeans.HOME_PROPERTY);
        Path stateDir = config.stateDir().isBlank()
                ? Path.of(home == null ? "." : home).resolve("simulator") : Path.of(config.stateDir());
        Path bootIdFile = config.bootIdFile().isBlank() ? stateDir.resolve("boot_id") : Path.of(config.bootIdFile());
        node = new SimulatedNode(stateDir.toAbsolutePath(), bootIdFile.toAbsolutePath(),
                config.markersFolder().isBlank() ? null : Path.of(config.markersFolder()), SimulatedNode::randomBootId);
        String problem = node.open(config.chipType(), config.npus(), config.chipsPerNpu(), config.driverVersion());
        if (problem != null) {
            LOG.log(Level.WARNING, "Simulator: " + problem);
        }
        node.hostDriver(config.loadAtBoot() ? config.driverVersion() : null);
        if (node.rebootPending()) {
            String before = node.bootId();
            node.reboot();
            LOG.log(Level.WARNING, "Simulator: the emulated host rebooted: boot {0} -> {1}; markers cleared, transient "
                    + "faults ended, no driver loaded", before, node.bootId());
        }
        dcmiLibrary = extractDcmiShim(stateDir.resolve("lib"));
        status = "active";
        LOG.log(Level.INFO, "Simulator active: {0} x {1} {2} chips, driver {3} loaded, boot {4}, npu-smi {5}",
                config.npus(), config.chipsPerNpu(), node.chipType(), node.loadedVersion(), node.bootId(),
                stateDir.resolve("bin/npu-smi"));
        Dictionary<String, Object> ranking = new Hashtable<>(Map.of(Constants.SERVICE_RANKING, 1000));
        registrations.add(ctx.registerService(DriverLoader.class, new SimDriverLoader(), ranking));
        registrations.add(ctx.registerService(RebootExecutor.class, new SimRebootExecutor(), ranking));
        Dictionary<String, Object> gogo = new Hashtable<>();
        gogo.put("osgi.command.scope", "sim");
        gogo.put("osgi.command.function", new String[] {"status", "wedge", "recover", "set", "persistent", "fail",
            "hang", "reboot", "unload"});
        registrations.add(ctx.registerService(SimCommands.class, new SimCommands(this), gogo));
        registerMBean();
    }

    private void registerMBean() {
        mbean = MBeanRegistrations.register(context, SimulatorMXBean.class, this, OBJECT_NAME);
    }

    private Path extractDcmiShim(Path libDir) {
        try (InputStream in = SimulatorComponent.class.getResourceAsStream("/native/libdcmi-sim.so")) {
            if (in == null) {
                LOG.log(Level.WARNING, "Simulator: the libdcmi.so shim was not built (no gcc at build time): the DCMI "
                        + "probe cannot be emulated, the npu-smi probe can");
                return null;
            }
            Path target = libDir.resolve("libdcmi.so");
            Path tmp = Files.createTempFile(libDir, ".libdcmi", ".tmp");
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return target;
        } catch (IOException e) {
            LOG.log(Level.WARNING, "Simulator: cannot extract the libdcmi.so shim: " + e);
            return null;
        }
    }

    @Deactivate
    void deactivate() {
        goingDown.countDown();
        for (ServiceRegistration<?> r : registrations) {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // already gone
            }
        }
        registrations.clear();
        if (mbean != null) {
            mbean.unregister();
        }
    }

    // ---- services ----

    /** The simulator's driver loader: loads into the emulated kernel. */
    final class SimDriverLoader implements DriverLoader {
        @Override
        public String describe() {
            return "simulator (emulated kernel of " + node.stateDir() + ")";
        }

        @Override
        public void load(String version) throws IOException {
            synchronized (SimulatorComponent.this) {
                node.loadDriver(version);
            }
            LOG.log(Level.INFO, "Simulator: driver {0} loaded into the emulated kernel", version);
        }
    }

    /** The simulator's reboot executor. */
    final class SimRebootExecutor implements RebootExecutor {
        @Override
        public String describe() {
            return "simulator reboot (restartMode=" + restartMode + ")";
        }

        @Override
        public void reboot(String reason) throws IOException {
            LOG.log(Level.WARNING, "Simulator: REBOOT requested by the rebooter (reason={0})", reason);
            doReboot();
            if (!"none".equals(restartMode)) {
                // Like reboot(2), the call does not come back while the node is up: hold the caller until this
                // runtime is torn down (at most 60 s).
                try {
                    goingDown.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Reboots the emulated node. With {@code restartMode=none} at once; otherwise the host is marked as going down
     * and this runtime is restarted (the framework, or the JVM with exit code 75): the reboot itself (new boot id,
     * emptied marker folder, transient faults ended, no driver loaded) happens at the simulator's next start, before
     * the node agent's other bundles start (the simulator runs at start level 4).
     *
     * @return the boot id after the reboot with {@code restartMode=none}, else the boot id being left
     */
    synchronized String doReboot() throws IOException {
        requireActive();
        if ("none".equals(restartMode)) {
            node.reboot();
            LOG.log(Level.WARNING, "Simulator: node rebooted, new boot id {0}", node.bootId());
            return node.bootId();
        }
        String leaving = node.bootId();
        node.markRebootPending();
        LOG.log(Level.WARNING, "Simulator: node going down for a reboot (leaving boot {0}); restart mode {1}", leaving,
                restartMode);
        Thread t = new Thread(() -> {
            if ("framework".equals(restartMode)) {
                try {
                    context.getBundle(0).update();
                } catch (BundleException | IllegalStateException e) {
                    LOG.log(Level.ERROR, "Simulator: cannot restart the framework after a reboot: " + e);
                }
            } else {
                Runtime.getRuntime().halt(REBOOT_EXIT_CODE);
            }
        }, "simulator-reboot");
        t.setDaemon(true);
        t.start();
        return leaving;
    }

    private void requireActive() {
        if (node == null) {
            throw new IllegalStateException("simulator not active: " + status);
        }
    }

    private String line(ChipId id) {
        return id + " " + node.chips().get(id).id() + (node.persistent(id) ? " persistent" : "");
    }

    private String change(String what, ChipId id, ChipState state) {
        requireActive();
        try {
            synchronized (this) {
                node.setChip(id, state);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the emulated node: " + e.getMessage(), e);
        }
        LOG.log(Level.INFO, "Simulator: {0} chip {1}: now {2}", what, id, state.id());
        return line(id);
    }

    // ---- MBean ----

    @Override
    public String getStatus() {
        return status;
    }

    @Override
    public String getChipType() {
        return node == null ? "" : node.chipType();
    }

    @Override
    public String getBootId() {
        return node == null ? "" : node.bootId();
    }

    @Override
    public String getLoadedDriverVersion() {
        return node == null || node.loadedVersion() == null ? "" : node.loadedVersion();
    }

    @Override
    public String getStagedDriverVersion() {
        return node == null || node.stagedVersion() == null ? "" : node.stagedVersion();
    }

    @Override
    public int getReboots() {
        return node == null ? 0 : node.reboots();
    }

    @Override
    public List<String> getViolations() {
        return node == null ? List.of() : node.violations();
    }

    @Override
    public synchronized List<String> getChips() {
        List<String> out = new ArrayList<>();
        if (node != null) {
            for (ChipId id : node.chips().keySet()) {
                out.add(line(id));
            }
        }
        return out;
    }

    @Override
    public int getInjectedFailuresLeft() {
        return node == null ? 0 : node.failNextLeft();
    }

    @Override
    public String getNpuSmiPath() {
        return node == null ? "" : node.stateDir().resolve("bin/npu-smi").toString();
    }

    @Override
    public String getDcmiLibraryPath() {
        return dcmiLibrary == null ? "" : dcmiLibrary.toString();
    }

    @Override
    public String getProcModulesPath() {
        return node == null ? "" : node.stateDir().resolve("proc-modules").toString();
    }

    @Override
    public String wedge(int npu, int chip) {
        return change("wedged", new ChipId(npu, chip), ChipState.WEDGED);
    }

    @Override
    public String recover(int npu, int chip) {
        return change("recovered", new ChipId(npu, chip), ChipState.HEALTHY);
    }

    @Override
    public String setChip(int npu, int chip, String state) {
        return change("set", new ChipId(npu, chip), ChipState.parse(state));
    }

    @Override
    public synchronized String persistent(int npu, int chip, boolean value) {
        requireActive();
        ChipId id = new ChipId(npu, chip);
        try {
            node.setPersistent(id, value);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the emulated node: " + e.getMessage(), e);
        }
        LOG.log(Level.INFO, "Simulator: chip {0} fault persistent={1}", id, value);
        return line(id);
    }

    @Override
    public synchronized String failNextProbes(int count, String kind) {
        requireActive();
        try {
            node.failNext(count, ChipState.parse(kind));
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the emulated node: " + e.getMessage(), e);
        }
        LOG.log(Level.INFO, "Simulator: the next {0} npu-smi runs fail ({1})", count, kind);
        return "next " + count + " npu-smi runs: " + kind;
    }

    @Override
    public synchronized String hang(boolean value) {
        requireActive();
        try {
            for (ChipId id : node.chips().keySet()) {
                node.setChip(id, value ? ChipState.HANGING : ChipState.HEALTHY);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the emulated node: " + e.getMessage(), e);
        }
        LOG.log(Level.INFO, "Simulator: every chip {0}", value ? "hangs" : "answers again");
        return value ? "every chip hangs" : "every chip answers";
    }

    @Override
    public String reboot() {
        try {
            return doReboot();
        } catch (IOException e) {
            throw new IllegalStateException("cannot reboot the emulated node: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized String unloadDriver() {
        requireActive();
        try {
            node.unloadDriver("unloadDriver() through the simulator MBean");
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the emulated node: " + e.getMessage(), e);
        }
        LOG.log(Level.ERROR, "Simulator: driver unloaded in a running kernel: every chip dev_num=0 (violation)");
        return "every chip dev_num=0 until the next reboot (violation recorded)";
    }

    @Override
    public synchronized String report() {
        if (node == null) {
            return "simulator " + status;
        }
        StringBuilder sb = new StringBuilder();
        sb.append("emulated ").append(node.chipType()).append(" node, boot ").append(node.bootId()).append('\n');
        sb.append("driver loaded: ").append(node.loadedVersion() == null ? "none" : node.loadedVersion())
                .append(", staged: ").append(node.stagedVersion() == null ? "none" : node.stagedVersion())
                .append(", reboots: ").append(node.reboots()).append('\n');
        if (node.devNumZero()) {
            sb.append("every chip dev_num=0 until the next reboot\n");
        }
        for (String l : getChips()) {
            sb.append("  chip ").append(l).append('\n');
        }
        sb.append("violations: ").append(node.violations().size()).append('\n');
        for (String v : node.violations()) {
            sb.append("  ").append(v).append('\n');
        }
        return sb.toString();
    }
}
