package io.npulifecycle.probe.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;

import io.npulifecycle.api.probe.ChipId;

/**
 * The validated health-watch configuration (PID {@value #PID}). Built by {@link #validate}; an invalid configuration
 * is rejected with a message naming the PID and the key, and the caller keeps its previous configuration.
 *
 * @param interval probe period (default 60 s)
 * @param timeout hard limit of one probe (default 20 s), strictly below {@code interval}
 * @param failureThreshold consecutive strikes that make a chip wedged (default 3), {@code >= 1}
 * @param probeErrorThreshold probe errors in a row that raise {@code probe-degraded} (default 3), {@code >= 1}
 * @param method {@code npu-smi} or {@code dcmi} (or the method of a registered ChipProbe service)
 * @param command npu-smi command and arguments
 * @param environment extra environment of npu-smi
 * @param dcmiLibrary path of {@code libdcmi.so}
 * @param pinnedChips expected chips pinned by configuration, empty = learn at the first good probe of the boot
 * @param options classification switches
 * @param maxOutputBytes npu-smi output cap (default 1 MiB)
 */
public record WatchConfig(Duration interval, Duration timeout, int failureThreshold, int probeErrorThreshold,
        String method, List<String> command, Map<String, String> environment, String dcmiLibrary,
        SortedSet<ChipId> pinnedChips, ProbeOptions options, int maxOutputBytes) {

    /** The built-in probe methods. */
    public static final List<String> BUILT_IN_METHODS = List.of("npu-smi", "dcmi");
    private static final java.util.regex.Pattern ENV_KEY = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * Checks that a probe method can be served: a method no probe serves (e.g. the typo {@code npu_smi}) would make
     * every probe a probe error, so no chip would ever be judged.
     *
     * @param method the configured method
     * @param registered methods of the registered {@code ChipProbe} services (the simulator's, tests')
     * @throws Invalid naming the key {@code method} and the value when it is neither built in nor registered
     */
    public static void checkMethod(String method, java.util.Collection<String> registered) throws Invalid {
        String m = method == null ? "" : method.trim();
        if (!BUILT_IN_METHODS.contains(m) && !registered.contains(m)) {
            throw new Invalid("method", "'" + method + "' is not npu-smi, dcmi or the method of a registered ChipProbe"
                    + " service " + new java.util.TreeSet<>(registered));
        }
    }

    /** Configuration PID of the health-watch. */
    public static final String PID = "io.npulifecycle.probe";

    /** Thrown by {@link #validate} with a message naming the PID and the key. */
    public static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;
        private final String key;
        private final String why;

        Invalid(String key, String why) {
            super("PID " + PID + " key " + key + ": " + why);
            this.key = key;
            this.why = why;
        }

        /** @return the configuration key at fault, e.g. {@code timeout} */
        public String key() {
            return key;
        }

        /** @return what was expected of the key, e.g. {@code must be below interval (60 s), got 90} */
        public String why() {
            return why;
        }

        /**
         * The message with the configuration file, e.g. {@code PID io.npulifecycle.probe
         * (file:/x/etc/io.npulifecycle.probe.cfg) key timeout: must be below interval (60 s), got 90}, so the log line
         * says which file to fix.
         *
         * @param file the {@code felix.fileinstall.filename} of the configuration, or {@code null} when it did not
         *        come from a file
         * @return the message
         */
        public String message(Object file) {
            return "PID " + PID + (file == null ? "" : " (" + file + ")") + " key " + key + ": " + why;
        }
    }

    /**
     * @param v a number of seconds or a count
     * @return {@code 60} for 60.0, {@code 0.5} for 0.5
     */
    static String num(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? String.valueOf((long) v) : String.valueOf(v);
    }

    /**
     * Validates raw configuration values.
     *
     * @param intervalSeconds probe period, seconds
     * @param timeoutSeconds probe timeout, seconds (fractions allowed, e.g. 0.5)
     * @param failureThreshold strikes to wedge
     * @param probeErrorThreshold probe errors to probe-degraded
     * @param method probe method
     * @param command npu-smi command line elements
     * @param environment {@code KEY=VALUE} elements
     * @param dcmiLibrary libdcmi.so path
     * @param expectedChips {@code npu:chip,...} or blank
     * @param alarmIsFailure see {@link ProbeOptions}
     * @param timeoutIsFailure see {@link ProbeOptions}
     * @param maxOutputBytes output cap, bytes
     * @return the configuration
     * @throws Invalid naming the first bad key
     */
    public static WatchConfig validate(double intervalSeconds, double timeoutSeconds, int failureThreshold,
            int probeErrorThreshold, String method, String[] command, String[] environment, String dcmiLibrary,
            String expectedChips, boolean alarmIsFailure, boolean timeoutIsFailure, int maxOutputBytes) throws Invalid {
        if (!(intervalSeconds > 0) || intervalSeconds > 86_400) {
            throw new Invalid("interval", "must be > 0 and at most 86400 seconds, got " + num(intervalSeconds));
        }
        if (!(timeoutSeconds > 0)) {
            throw new Invalid("timeout", "must be > 0 seconds, got " + num(timeoutSeconds));
        }
        if (timeoutSeconds >= intervalSeconds) {
            throw new Invalid("timeout", "must be below interval (" + num(intervalSeconds) + " s), got " + num(timeoutSeconds));
        }
        if (failureThreshold < 1) {
            throw new Invalid("failureThreshold", "must be >= 1, got " + failureThreshold);
        }
        if (probeErrorThreshold < 1) {
            throw new Invalid("probeErrorThreshold", "must be >= 1, got " + probeErrorThreshold);
        }
        if (method == null || method.isBlank()) {
            throw new Invalid("method", "must be npu-smi or dcmi");
        }
        List<String> cmd = new ArrayList<>();
        if (command != null) {
            for (String c : command) {
                if (c != null && !c.isBlank()) {
                    cmd.addAll(Arrays.asList(c.trim().split("\\s+")));
                }
            }
        }
        if (cmd.isEmpty() && "npu-smi".equals(method.trim())) {
            throw new Invalid("npuSmiCommand", "is empty");
        }
        Map<String, String> env = new LinkedHashMap<>();
        if (environment != null) {
            for (String e : environment) {
                if (e == null || e.isBlank()) {
                    continue;
                }
                int eq = e.indexOf('=');
                if (eq <= 0 || !ENV_KEY.matcher(e.substring(0, eq).trim()).matches() || e.indexOf('\0') >= 0) {
                    throw new Invalid("npuSmiEnvironment", "element '" + e.replace('\0', '?')
                            + "' is not KEY=VALUE with KEY made of letters, digits and _ (not starting with a digit)");
                }
                env.put(e.substring(0, eq).trim(), e.substring(eq + 1));
            }
        }
        if ("dcmi".equals(method.trim()) && (dcmiLibrary == null || dcmiLibrary.isBlank())) {
            throw new Invalid("dcmiLibrary", "is empty");
        }
        SortedSet<ChipId> pinned;
        try {
            pinned = ChipId.parseList(expectedChips);
        } catch (IllegalArgumentException e) {
            throw new Invalid("expectedChips", e.getMessage());
        }
        if (maxOutputBytes < 4096 || maxOutputBytes > NpuSmiParser.DEFAULT_MAX_BYTES) {
            throw new Invalid("maxOutputBytes", "must be between 4096 and " + NpuSmiParser.DEFAULT_MAX_BYTES + ", got "
                    + maxOutputBytes);
        }
        return new WatchConfig(Duration.ofMillis(Math.round(intervalSeconds * 1000)),
                Duration.ofMillis(Math.round(timeoutSeconds * 1000)), failureThreshold, probeErrorThreshold,
                method.trim(), List.copyOf(cmd), env, dcmiLibrary, pinned,
                new ProbeOptions(alarmIsFailure, timeoutIsFailure), maxOutputBytes);
    }
}
