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

    /**
     * Thrown by {@link #validate} (naming every bad key, in the order they are checked) and {@link #checkMethod}, with
     * a message naming the PID and the keys.
     */
    public static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;
        /** The bad keys in order: {@code [key, why]} each, at least one. */
        private final List<String[]> problems;

        Invalid(String key, String why) {
            this(List.<String[]>of(new String[] {key, why}));
        }

        private Invalid(List<String[]> problems) {
            super(text(null, problems));
            this.problems = List.copyOf(problems);
        }

        private static String text(Object file, List<String[]> problems) {
            StringBuilder b = new StringBuilder("PID " + PID + (file == null ? "" : " (" + file + ")"));
            for (int i = 0; i < problems.size(); i++) {
                b.append(i == 0 ? " key " : "; key ").append(problems.get(i)[0]).append(": ")
                        .append(problems.get(i)[1]);
            }
            return b.toString();
        }

        /** @return the first configuration key at fault, e.g. {@code timeout} */
        public String key() {
            return problems.get(0)[0];
        }

        /** @return what was expected of the first key, e.g. {@code must be below interval (60 s), got 90} */
        public String why() {
            return problems.get(0)[1];
        }

        /**
         * @return every key at fault with what was expected of it, in the order they are checked: {@code [key, why]}
         *         each, at least one
         */
        public List<String[]> problems() {
            return problems;
        }

        /**
         * The message with the configuration file, e.g. {@code PID io.npulifecycle.probe
         * (file:/x/etc/io.npulifecycle.probe.cfg) key timeout: must be below interval (60 s), got 90}, one
         * {@code key <key>: <why>} per bad key separated by {@code ; }, so the log line says which file to fix.
         *
         * @param file the {@code felix.fileinstall.filename} of the configuration, or {@code null} when it did not
         *        come from a file
         * @return the message
         */
        public String message(Object file) {
            return text(file, problems);
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
     * @throws Invalid naming every bad key, in the order of the parameters
     */
    public static WatchConfig validate(double intervalSeconds, double timeoutSeconds, int failureThreshold,
            int probeErrorThreshold, String method, String[] command, String[] environment, String dcmiLibrary,
            String expectedChips, boolean alarmIsFailure, boolean timeoutIsFailure, int maxOutputBytes) throws Invalid {
        List<String[]> bad = new ArrayList<>();
        boolean intervalOk = intervalSeconds > 0 && intervalSeconds <= 86_400;
        if (!intervalOk) {
            bad.add(new String[] {"interval", "must be > 0 and at most 86400 seconds, got " + num(intervalSeconds)});
        }
        if (!(timeoutSeconds > 0)) {
            bad.add(new String[] {"timeout", "must be > 0 seconds, got " + num(timeoutSeconds)});
        } else if (intervalOk && timeoutSeconds >= intervalSeconds) {
            bad.add(new String[] {"timeout", "must be below interval (" + num(intervalSeconds) + " s), got "
                    + num(timeoutSeconds)});
        }
        if (failureThreshold < 1) {
            bad.add(new String[] {"failureThreshold", "must be >= 1, got " + failureThreshold});
        }
        if (probeErrorThreshold < 1) {
            bad.add(new String[] {"probeErrorThreshold", "must be >= 1, got " + probeErrorThreshold});
        }
        String m = method == null ? "" : method.trim();
        if (m.isEmpty()) {
            bad.add(new String[] {"method", "must be npu-smi or dcmi"});
        }
        List<String> cmd = new ArrayList<>();
        if (command != null) {
            for (String c : command) {
                if (c != null && !c.isBlank()) {
                    cmd.addAll(Arrays.asList(c.trim().split("\\s+")));
                }
            }
        }
        if (cmd.isEmpty() && "npu-smi".equals(m)) {
            bad.add(new String[] {"npuSmiCommand", "is empty"});
        }
        Map<String, String> env = new LinkedHashMap<>();
        if (environment != null) {
            for (String e : environment) {
                if (e == null || e.isBlank()) {
                    continue;
                }
                int eq = e.indexOf('=');
                if (eq <= 0 || !ENV_KEY.matcher(e.substring(0, eq).trim()).matches() || e.indexOf('\0') >= 0) {
                    bad.add(new String[] {"npuSmiEnvironment", "element '" + e.replace('\0', '?')
                            + "' is not KEY=VALUE with KEY made of letters, digits and _ (not starting with a digit)"});
                    continue;
                }
                env.put(e.substring(0, eq).trim(), e.substring(eq + 1));
            }
        }
        if ("dcmi".equals(m) && (dcmiLibrary == null || dcmiLibrary.isBlank())) {
            bad.add(new String[] {"dcmiLibrary", "is empty"});
        }
        SortedSet<ChipId> pinned = null;
        try {
            pinned = ChipId.parseList(expectedChips);
        } catch (IllegalArgumentException e) {
            bad.add(new String[] {"expectedChips", e.getMessage()});
        }
        if (maxOutputBytes < 4096 || maxOutputBytes > NpuSmiParser.DEFAULT_MAX_BYTES) {
            bad.add(new String[] {"maxOutputBytes", "must be between 4096 and " + NpuSmiParser.DEFAULT_MAX_BYTES
                    + ", got " + maxOutputBytes});
        }
        if (!bad.isEmpty()) {
            throw new Invalid(bad);
        }
        return new WatchConfig(Duration.ofMillis(Math.round(intervalSeconds * 1000)),
                Duration.ofMillis(Math.round(timeoutSeconds * 1000)), failureThreshold, probeErrorThreshold,
                m, List.copyOf(cmd), env, dcmiLibrary, pinned,
                new ProbeOptions(alarmIsFailure, timeoutIsFailure), maxOutputBytes);
    }
}
