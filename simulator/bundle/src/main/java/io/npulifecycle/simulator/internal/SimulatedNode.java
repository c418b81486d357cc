package io.npulifecycle.simulator.internal;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Supplier;

import io.npulifecycle.api.probe.ChipId;

/**
 * One emulated Ascend node: its chips and their states, the loaded driver version, the boot id, reboots and
 * violations, kept in {@code <stateDir>/state.properties} (the "host", which outlives node-agent restarts and
 * simulated reboots), and rendered at the real interfaces after every change:
 * <ul>
 * <li>{@code <stateDir>/bin/npu-smi}: prints the table of {@code npu-smi.out} (first line {@code rc=N}, the exit
 * code), or hangs, or serves the next-N-probe faults ({@code failnext.*});</li>
 * <li>{@code <stateDir>/lib/dcmi.state}: read by the {@code libdcmi.so} shim next to it;</li>
 * <li>{@code <stateDir>/proc-modules}: a {@code /proc/modules} with {@code drv_davinci_intf} while a driver is
 * loaded;</li>
 * <li>the boot id file (the markers bundle's {@code bootIdPath}).</li>
 * </ul>
 * Not thread-safe by itself: {@link SimulatorComponent} serialises access. Public (constructor and
 * {@link #open}) only for {@link io.npulifecycle.simulator.host.EmulatedHosts}; the package is not exported.
 */
public final class SimulatedNode {

    /** A recorded violation of the product's rules (e.g. a driver unloaded in a running kernel). */
    static final String NPU_MODULE = "drv_davinci_intf";

    private final Path stateDir;
    private final Path bootIdFile;
    private final Path markersFolder;
    private final Supplier<String> newBootId;

    private String chipType;
    private final Map<ChipId, ChipState> chips = new TreeMap<>();
    private final Map<ChipId, Boolean> persistent = new TreeMap<>();
    private String loadedVersion;
    private String stagedVersion;
    private String bootId;
    private boolean devNumZeroUntilReboot;
    private boolean rebootPending;
    private int reboots;
    private final List<String> violations = new ArrayList<>();

    /**
     * @param stateDir where the state and the rendered interfaces live
     * @param bootIdFile the boot id file the node agent reads
     * @param markersFolder the marker folder a reboot clears ({@code /run} is a tmpfs)
     * @param newBootId source of boot ids (random UUIDs in production)
     */
    public SimulatedNode(Path stateDir, Path bootIdFile, Path markersFolder, Supplier<String> newBootId) {
        this.stateDir = stateDir;
        this.bootIdFile = bootIdFile;
        this.markersFolder = markersFolder;
        this.newBootId = newBootId;
    }

    /**
     * Loads the state, or creates a node of {@code npus} x {@code chipsPerNpu} healthy chips with
     * {@code driverVersion} loaded when there is none yet. A state file that cannot be parsed is kept aside as
     * {@code state.properties.corrupt-<n>} and a fresh node is created (the error is returned for the log).
     *
     * @return {@code null}, or what was wrong with the stored state
     * @throws IOException when the folder cannot be written
     */
    public String open(String chipType, int npus, int chipsPerNpu, String driverVersion) throws IOException {
        Files.createDirectories(stateDir.resolve("bin"));
        Files.createDirectories(stateDir.resolve("lib"));
        Path file = stateDir.resolve("state.properties");
        String problem = null;
        if (Files.exists(file)) {
            try {
                load(Files.readString(file, StandardCharsets.UTF_8));
                render();
                return null;
            } catch (IOException | RuntimeException e) {
                problem = file + " cannot be read (" + e.getMessage() + "); kept as "
                        + keepAside(file) + ", starting a fresh emulated node";
            }
        }
        this.chipType = chipType;
        chips.clear();
        persistent.clear();
        for (int n = 0; n < npus; n++) {
            for (int c = 0; c < chipsPerNpu; c++) {
                chips.put(new ChipId(n, c), ChipState.HEALTHY);
            }
        }
        loadedVersion = driverVersion;
        stagedVersion = null;
        bootId = readBootIdFile();
        if (bootId == null) {
            bootId = newBootId.get();
        }
        save();
        return problem;
    }

    private Path keepAside(Path file) throws IOException {
        for (int i = 1;; i++) {
            Path aside = file.resolveSibling(file.getFileName() + ".corrupt-" + i);
            if (!Files.exists(aside)) {
                Files.move(file, aside);
                return aside;
            }
        }
    }

    private String readBootIdFile() {
        try {
            String s = Files.readString(bootIdFile).trim();
            return s.isEmpty() ? null : s;
        } catch (IOException e) {
            return null;
        }
    }

    private void load(String text) throws IOException {
        Properties p = new Properties();
        try (Reader r = new StringReader(text)) {
            p.load(r);
        }
        String type = require(p, "chipType");
        if (!type.equals("910b") && !type.equals("310p")) {
            throw new IllegalArgumentException("chipType '" + type + "' is not 910b or 310p");
        }
        chipType = type;
        chips.clear();
        persistent.clear();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("chip.") && !key.endsWith(".persistent")) {
                ChipId id = ChipId.parse(key.substring("chip.".length()));
                chips.put(id, ChipState.parse(p.getProperty(key)));
                persistent.put(id, Boolean.parseBoolean(p.getProperty(key + ".persistent", "false")));
            }
        }
        if (chips.isEmpty()) {
            throw new IllegalArgumentException("no chip.N:M entries");
        }
        loadedVersion = blankToNull(p.getProperty("loadedVersion"));
        stagedVersion = blankToNull(p.getProperty("stagedVersion"));
        bootId = require(p, "bootId");
        devNumZeroUntilReboot = Boolean.parseBoolean(p.getProperty("devNumZeroUntilReboot", "false"));
        rebootPending = Boolean.parseBoolean(p.getProperty("rebootPending", "false"));
        reboots = Integer.parseInt(p.getProperty("reboots", "0"));
        violations.clear();
        int n = Integer.parseInt(p.getProperty("violations", "0"));
        for (int i = 1; i <= n; i++) {
            violations.add(p.getProperty("violation." + i, "?"));
        }
    }

    private static String require(Properties p, String key) {
        String v = p.getProperty(key);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("key " + key + " is missing");
        }
        return v.trim();
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    /** Writes the state and renders the interfaces. */
    void save() throws IOException {
        StringBuilder sb = new StringBuilder("# npu-lifecycle simulator: one emulated node\n");
        sb.append("chipType=").append(chipType).append('\n');
        sb.append("bootId=").append(bootId).append('\n');
        sb.append("loadedVersion=").append(loadedVersion == null ? "" : loadedVersion).append('\n');
        sb.append("stagedVersion=").append(stagedVersion == null ? "" : stagedVersion).append('\n');
        sb.append("devNumZeroUntilReboot=").append(devNumZeroUntilReboot).append('\n');
        sb.append("rebootPending=").append(rebootPending).append('\n');
        sb.append("reboots=").append(reboots).append('\n');
        for (Map.Entry<ChipId, ChipState> e : chips.entrySet()) {
            // ':' separates keys from values in the properties format: escape it
            String key = "chip." + e.getKey().toString().replace(":", "\\:");
            sb.append(key).append('=').append(e.getValue().id()).append('\n');
            if (persistent.getOrDefault(e.getKey(), false)) {
                sb.append(key).append(".persistent=true\n");
            }
        }
        sb.append("violations=").append(violations.size()).append('\n');
        for (int i = 0; i < violations.size(); i++) {
            sb.append("violation.").append(i + 1).append('=').append(violations.get(i).replace('\n', ' '))
                    .append('\n');
        }
        writeAtomically(stateDir.resolve("state.properties"), sb.toString());
        render();
    }

    /** Renders npu-smi, the DCMI state, /proc/modules and the boot id from the state. */
    void render() throws IOException {
        Map<ChipId, ChipState> effective = effectiveChips();
        NpuSmiRenderer.Output out = NpuSmiRenderer.render(chipType, loadedVersion, effective);
        writeAtomically(stateDir.resolve("npu-smi.out"), "rc=" + out.exitCode() + "\n" + out.text());
        Path hang = stateDir.resolve("npu-smi.hang");
        if (out.hang()) {
            writeAtomically(hang, "hang\n");
        } else {
            Files.deleteIfExists(hang);
        }
        writeAtomically(stateDir.resolve("lib/dcmi.state"), NpuSmiRenderer.dcmiState(loadedVersion, effective));
        writeAtomically(stateDir.resolve("proc-modules"), loadedVersion == null ? ""
                : NPU_MODULE + " 1146880 4 - Live 0x0000000000000000 (OE)\n");
        if (!bootId.equals(readBootIdFile())) {
            Files.createDirectories(bootIdFile.toAbsolutePath().getParent());
            writeAtomically(bootIdFile, bootId + "\n");
        }
        Path script = stateDir.resolve("bin/npu-smi");
        String body = npuSmiScript();
        if (!Files.exists(script) || !Files.readString(script).equals(body)) {
            writeAtomically(script, body);
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    private Map<ChipId, ChipState> effectiveChips() {
        if (!devNumZeroUntilReboot) {
            return Collections.unmodifiableMap(chips);
        }
        Map<ChipId, ChipState> all = new LinkedHashMap<>();
        for (ChipId id : chips.keySet()) {
            all.put(id, ChipState.WEDGED);
        }
        return all;
    }

    private String npuSmiScript() {
        String d = stateDir.toAbsolutePath().toString().replace("'", "'\\''");
        return "#!/bin/sh\n"
                + "# npu-smi of the npu-lifecycle simulator: prints what the emulated chips answer. Generated; do not edit.\n"
                + "d='" + d + "'\n"
                + "if [ -f \"$d/npu-smi.hang\" ]; then exec sleep 86400; fi\n"
                + "if [ -f \"$d/failnext.count\" ]; then\n"
                + "  n=$(cat \"$d/failnext.count\" 2>/dev/null)\n"
                + "  if [ -n \"$n\" ] && [ \"$n\" -gt 0 ] 2>/dev/null; then\n"
                + "    echo $((n - 1)) > \"$d/failnext.count.$$\" && mv -f \"$d/failnext.count.$$\" \"$d/failnext.count\"\n"
                + "    if [ -f \"$d/failnext.hang\" ]; then exec sleep 86400; fi\n"
                + "    { read -r rc; cat; exit \"${rc#rc=}\"; } < \"$d/failnext.out\"\n"
                + "  fi\n"
                + "fi\n"
                + "{ read -r rc; cat; exit \"${rc#rc=}\"; } < \"$d/npu-smi.out\"\n";
    }

    static void writeAtomically(Path file, String content) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
        try {
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    // ---- fault injection ----

    /**
     * @param id a chip of this node
     * @throws IllegalArgumentException naming the chip and the node's chips when it does not exist
     */
    void setChip(ChipId id, ChipState state) throws IOException {
        requireChip(id);
        chips.put(id, state);
        save();
    }

    void setPersistent(ChipId id, boolean value) throws IOException {
        requireChip(id);
        persistent.put(id, value);
        save();
    }

    private void requireChip(ChipId id) {
        if (!chips.containsKey(id)) {
            throw new IllegalArgumentException("chip " + id + " does not exist on this node (chips: "
                    + String.join(",", chips.keySet().stream().map(ChipId::toString).toList()) + ")");
        }
    }

    /**
     * The next {@code n} npu-smi runs fail in the given way, then the chips answer as their state says.
     *
     * @param kind {@code wedged} (-8005), {@code occupied} (-8020), {@code garbled} or {@code hanging}
     */
    void failNext(int n, ChipState kind) throws IOException {
        if (n < 0 || n > 100_000) {
            throw new IllegalArgumentException("count " + n + " is not between 0 and 100000");
        }
        String text;
        int rc;
        switch (kind) {
            case WEDGED: text = NpuSmiRenderer.ERR_8005; rc = 1; break;
            case OCCUPIED: text = NpuSmiRenderer.ERR_8020; rc = 1; break;
            case GARBLED: text = NpuSmiRenderer.GARBLED; rc = 0; break;
            case HANGING: text = ""; rc = 0; break;
            default: throw new IllegalArgumentException("fault kind '" + kind.id()
                    + "' is not one of wedged, occupied, garbled, hanging");
        }
        writeAtomically(stateDir.resolve("failnext.out"), "rc=" + rc + "\n" + text);
        Path hang = stateDir.resolve("failnext.hang");
        if (kind == ChipState.HANGING) {
            writeAtomically(hang, "hang\n");
        } else {
            Files.deleteIfExists(hang);
        }
        writeAtomically(stateDir.resolve("failnext.count"), n + "\n");
    }

    /** @return how many injected npu-smi failures are left */
    int failNextLeft() {
        try {
            return Integer.parseInt(Files.readString(stateDir.resolve("failnext.count")).trim());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    // ---- driver and reboot semantics ----

    /**
     * Loads a driver into the emulated kernel (the simulator's DriverLoader).
     *
     * @throws IOException when another version is loaded: replacing it would need {@code rmmod} of a running driver,
     *         which sends every chip to {@code dev_num=0} until the next reboot; recorded as a violation
     */
    void loadDriver(String version) throws IOException {
        if (version == null || version.isBlank()) {
            throw new IOException("no driver version given");
        }
        if (version.equals(loadedVersion)) {
            return;
        }
        if (loadedVersion != null) {
            unloadDriver("load of driver " + version + " while " + loadedVersion + " is loaded");
            throw new IOException("driver " + loadedVersion + " is loaded in the running kernel; loading " + version
                    + " would unload it (rmmod): every chip is now dev_num=0 until the next reboot (violation)");
        }
        loadedVersion = version;
        if (version.equals(stagedVersion)) {
            stagedVersion = null;
        }
        save();
    }

    /** Records that {@code version} is staged for the next boot (informational). */
    void stage(String version) throws IOException {
        stagedVersion = version;
        save();
    }

    /**
     * Unloads the driver in the running kernel: every chip goes to a permanent {@code dev_num=0} until the next
     * reboot, and a violation is recorded (DESIGN.md: Ascend chips do not survive rmmod of a running driver).
     */
    void unloadDriver(String why) throws IOException {
        violations.add("driver unloaded in a running kernel (boot " + bootId + "): " + why);
        devNumZeroUntilReboot = true;
        save();
    }

    /** The driver the host loads at boot by itself (drivers installed on the host), or null. */
    private volatile String hostDriver;

    /**
     * @param version the driver the emulated host loads at every boot by itself (an administrator's installation,
     *        {@code loadAtBoot}), or null: none until the node agent loads one
     */
    void hostDriver(String version) {
        this.hostDriver = version;
    }

    /**
     * A reboot: a new boot id, the marker folder (a tmpfs) emptied, the wedges that are not persistent ended, no driver
     * loaded until the node agent loads one from the fresh boot (or the host's own, {@link #hostDriver(String)}).
     */
    void reboot() throws IOException {
        rebootPending = false;
        bootId = newBootId.get();
        reboots++;
        devNumZeroUntilReboot = false;
        loadedVersion = hostDriver;
        for (Map.Entry<ChipId, ChipState> e : chips.entrySet()) {
            if (!persistent.getOrDefault(e.getKey(), false)) {
                e.setValue(ChipState.HEALTHY);
            }
        }
        Files.deleteIfExists(stateDir.resolve("failnext.count"));
        clearMarkers();
        save();
    }

    /**
     * The host is going down: the reboot itself ({@link #reboot()}) happens when the node agent is gone, at the next
     * start of the simulator, so nothing of the running agent sees a new boot id or an emptied marker folder (on a
     * real host the processes die before /run is cleared).
     */
    void markRebootPending() throws IOException {
        rebootPending = true;
        save();
    }

    /** @return whether a reboot was requested and has not happened yet */
    boolean rebootPending() {
        return rebootPending;
    }

    private void clearMarkers() throws IOException {
        if (markersFolder == null || !Files.isDirectory(markersFolder)) {
            return;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(markersFolder)) {
            for (Path p : ds) {
                if (Files.isRegularFile(p)) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    static String randomBootId() {
        return UUID.randomUUID().toString();
    }

    // ---- views ----

    String chipType() {
        return chipType;
    }

    String bootId() {
        return bootId;
    }

    String loadedVersion() {
        return loadedVersion;
    }

    String stagedVersion() {
        return stagedVersion;
    }

    int reboots() {
        return reboots;
    }

    List<String> violations() {
        return List.copyOf(violations);
    }

    Map<ChipId, ChipState> chips() {
        return Collections.unmodifiableMap(chips);
    }

    boolean persistent(ChipId id) {
        return persistent.getOrDefault(id, false);
    }

    boolean devNumZero() {
        return devNumZeroUntilReboot;
    }

    Path stateDir() {
        return stateDir;
    }
}
