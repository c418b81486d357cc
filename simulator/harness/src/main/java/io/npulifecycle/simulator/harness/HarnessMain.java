package io.npulifecycle.simulator.harness;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point of {@code bin/npu-lifecycle demo}, {@code scenario} and {@code cluster}, loaded by the launcher from
 * {@code lib/harness/}.
 *
 * <pre>
 * npu-lifecycle demo [--api embedded|real] [--nodes N] [--chips N] [--scale X] [--work DIR] [--prometheus] [--keep]
 * npu-lifecycle scenario FILE... [--api embedded|real] [--parallel N] [--work DIR] [--junit FILE] [--keep] [--kubelet]
 * npu-lifecycle scenario --list FILE...     (validates and prints the scenarios, cases and steps, runs nothing)
 * npu-lifecycle cluster [--api real|embedded] [--nodes N] [--kubeconfig FILE]   (see {@link ClusterCommand})
 * </pre>
 *
 * <p>{@code --api} picks the API server of the simulated cluster (default {@code embedded}, the in-process mock);
 * {@code real} runs kube-apiserver and etcd (see {@link ClusterCommand} for where their binaries come from), with the
 * RBAC and admission policy of {@code conf/kubernetes/} and every runtime on its own ServiceAccount. {@code --work}
 * is checked by {@link WorkFolder}; without it the run's temporary folder is deleted when the run passes, unless
 * {@code --keep}, and kept (its path printed) when it fails or is stopped by a signal; {@code --junit} writes a JUnit XML report
 * ({@link JUnitReport}); a SIGTERM is reported by {@link Interruption}; {@code --help} prints {@link #DEMO_USAGE} or
 * {@link #SCENARIO_USAGE}.
 */
public final class HarnessMain {

    /** Held so the configured levels are not garbage-collected with their loggers. */
    private static final java.util.logging.Logger ROOT = java.util.logging.Logger.getLogger("");

    /** {@code npu-lifecycle demo --help}. */
    static final String DEMO_USAGE = String.join("\n",
            "Usage: npu-lifecycle demo [--api embedded|real] [--nodes N] [--chips N] [--scale X] [--work DIR]",
            "                          [--prometheus] [--keep] [--kubelet]",
            "The runbook end to end on a simulated cluster (driver upgrade 25.2.0 -> 25.5.0 with approvals, then",
            "self-healing of wedged chips); no cluster and no NPU needed. Exit code 0 when every step passed.",
            "",
            "  --api KIND     embedded (default: the in-process Kubernetes API) or real (kube-apiserver and etcd,",
            "                 built with Go >= 1.26 at the first run; adds the upgrade-drain step)",
            "  --nodes N      simulated nodes, 1 to 16 (default 3)",
            "  --chips N      chips per node, 1 to 16 (default 8)",
            "  --scale X      clock compression, 1 to 1000 (default 30: 1 s = 30 simulated s)",
            "  --work DIR     a new or empty folder, or one an earlier run used; kept after the run. Default: a new",
            "                 temporary folder, deleted when the run passes, kept (its path printed) when it fails",
            "                 or is stopped by a signal",
            "  --keep         keep the temporary folder of a passed run too (runtime homes, markers, logs)",
            "  --prometheus   start a Prometheus (on PATH) scraping the runtimes, with the alert rules loaded",
            "  --kubelet      with --api real: through real pods. This machine becomes one node (containerd, a",
            "                 kubelet and kube-proxy built from source, all state in the work folder; root), the",
            "                 chart is installed with helm (conf/helm/simulator-values.yaml: emulated chips, never",
            "                 a real reboot: a simulated reboot restarts the node agent's container), and the",
            "                 runbook runs on it; --nodes, --chips and --scale do not apply. Needs the images of",
            "                 mvn package (../images), kubectl, and Debian's containerd, runc, nftables and",
            "                 containernetworking-plugins (installed with apt-get when missing)",
            "  --help         print this text");

    /** {@code npu-lifecycle scenario --help}. */
    static final String SCENARIO_USAGE = String.join("\n",
            "Usage: npu-lifecycle scenario FILE... [--api embedded|real] [--parallel N] [--work DIR] [--junit FILE]",
            "                                      [--keep] [--kubelet] [--planted-bug NAME]",
            "       npu-lifecycle scenario --list FILE...",
            "Runs scenario files (YAML, docs/simulator.md) each on a fresh simulated cluster and prints each step, each",
            "node's Jolokia URL and a timeline per node. Exit code 0 when every scenario passed, 1 when one failed, 2",
            "when a file is malformed (nothing is run), 143 on SIGTERM and 130 on Ctrl-C (the runtimes are stopped).",
            "",
            "  --list         validate the files and print their scenarios, cases and steps; run nothing",
            "  --api KIND     embedded (default) or real (kube-apiserver and etcd, built with Go >= 1.26 at first use)",
            "  --parallel N   run up to N files at a time, 1 to 8 (default 1), each on its own simulated cluster and API",
            "                 server; each file's output is printed whole when it ends, in the order of the files",
            "  --work DIR     a new or empty folder, or one an earlier run used; kept after the run. Default: a new",
            "                 temporary folder, deleted when every scenario passes, kept (its path printed) otherwise",
            "  --keep         keep the temporary folder of a passed run too",
            "  --junit FILE   write the results as a JUnit XML report",
            "  --kubelet      with --api real: through real pods. This machine becomes the one node, node-0 (as",
            "                 demo --kubelet: containerd, a kubelet and kube-proxy, the chart installed with helm and",
            "                 conf/helm/simulator-values.yaml, the scenario's chips, driver and timeScale in its",
            "                 values; root). Scenarios of one node only, one at a time; the API faults, clockJump,",
            "                 markersReadOnly, markersFull, startControlPlane, killControlPlane restart: false and",
            "                 StatefulSet, DaemonSet or mirror pods are refused before anything runs (exit code 2)",
            "  --planted-bug NAME  testing the chaos checker only: every runtime breaks one invariant on purpose",
            "                 (-Dnpu.lifecycle.plantedBug=NAME; docs/simulator.md \"Planted bugs\"), one of",
            "                 " + io.npulifecycle.api.faults.PlantedBug.names() + "; not with --kubelet",
            "  --help         print this text");

    private HarnessMain() {
    }

    /**
     * The fabric8 mock's selector parser, which warns on every list with a set-based selector ({@code app in (...)})
     * it answers without applying: the harness's DaemonSet emulation filters those lists again (held here: JUL keeps
     * its loggers weakly).
     */
    private static final java.util.logging.Logger MOCK_SELECTORS = java.util.logging.Logger.getLogger(
            "io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor");

    /** The harness prints its own progress; libraries only speak up for warnings. */
    static void quietLibraries() {
        MOCK_SELECTORS.setLevel(java.util.logging.Level.SEVERE);
        ROOT.setLevel(java.util.logging.Level.WARNING);
        for (java.util.logging.Handler h : ROOT.getHandlers()) {
            h.setLevel(java.util.logging.Level.WARNING);
        }
    }

    /**
     * @param args the arguments after the subcommand's name, preceded by it ({@code demo ...},
     *        {@code scenario ...} or {@code cluster ...})
     * @param out standard output
     * @param err standard error
     * @return the exit code: 0 every step passed, 1 a step failed, 2 bad arguments or scenario file
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println("npu-lifecycle: demo, scenario, chaos or cluster expected");
            return 2;
        }
        String install = System.getProperty("npu.lifecycle.install");
        if (install == null) {
            err.println("npu-lifecycle: -Dnpu.lifecycle.install is not set (run bin/npu-lifecycle)");
            return 2;
        }
        Path installDir = Path.of(install);
        quietLibraries();
        if ("cluster".equals(args[0])) {
            return ClusterCommand.run(java.util.Arrays.copyOfRange(args, 1, args.length), installDir, out, err);
        }
        if ("chaos".equals(args[0])) {
            return ChaosCommand.run(java.util.Arrays.copyOfRange(args, 1, args.length), installDir, out, err);
        }
        int nodes = 3;
        int chips = 8;
        double scale = 30;
        Path work = null;
        List<Path> files = new ArrayList<>();
        boolean list = false;
        Path junit = null;
        boolean prometheus = false;
        boolean keep = false;
        boolean kubelet = false;
        int parallel = 1;
        io.npulifecycle.api.faults.PlantedBug plantedBug = null;
        String api = io.npulifecycle.simulator.cluster.ClusterBackend.EMBEDDED;
        boolean temporary;
        try {
            for (int i = 1; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--help":
                    case "-h":
                        if ("demo".equals(args[0]) || "scenario".equals(args[0])) {
                            out.println("demo".equals(args[0]) ? DEMO_USAGE : SCENARIO_USAGE);
                            return 0;
                        }
                        break;
                    case "--keep": keep = true; break;
                    case "--kubelet":
                        if (!"demo".equals(args[0]) && !"scenario".equals(args[0])) {
                            throw new IllegalArgumentException("unknown option '" + a + "' for " + args[0]
                                    + " (--kubelet: demo, scenario and cluster)");
                        }
                        kubelet = true;
                        break;
                    case "--nodes": nodes = intArg(args, ++i, a, 1, 16); break;
                    case "--chips": chips = intArg(args, ++i, a, 1, 16); break;
                    case "--scale": scale = intArg(args, ++i, a, 1, 1000); break;
                    case "--api":
                        api = apiArg(args, ++i);
                        break;
                    case "--parallel":
                        if (!"scenario".equals(args[0])) {
                            throw new IllegalArgumentException("unknown option '" + a + "' for " + args[0]);
                        }
                        parallel = intArg(args, ++i, a, 1, ScenarioCommand.MAX_PARALLEL);
                        break;
                    case "--planted-bug":
                        if (!"scenario".equals(args[0])) {
                            throw new IllegalArgumentException("unknown option '" + a + "' for " + args[0]
                                    + " (--planted-bug: scenario and chaos)");
                        }
                        if (i + 1 >= args.length || args[i + 1].isBlank()) {
                            throw new IllegalArgumentException("--planted-bug needs a bug name (one of "
                                    + io.npulifecycle.api.faults.PlantedBug.names() + ")");
                        }
                        plantedBug = ScenarioCommand.plantedBug(a, args[++i]);
                        break;
                    case "--list":
                        if (!"scenario".equals(args[0])) {
                            throw new IllegalArgumentException("unknown option '" + a + "' for " + args[0]);
                        }
                        list = true;
                        break;
                    case "--junit":
                        if (!"scenario".equals(args[0])) {
                            throw new IllegalArgumentException("unknown option '" + a + "' for " + args[0]);
                        }
                        if (i + 1 >= args.length || args[i + 1].isBlank()) {
                            throw new IllegalArgumentException("--junit needs a file (the JUnit XML report)");
                        }
                        junit = Path.of(args[++i]);
                        if (Files.isDirectory(junit)) {
                            throw new IllegalArgumentException("--junit " + junit + " is a folder: give a file");
                        }
                        break;
                    case "--prometheus":
                        if (!"demo".equals(args[0])) {
                            throw new IllegalArgumentException("unknown option '" + a + "' for " + args[0]);
                        }
                        prometheus = true;
                        break;
                    case "--work":
                        if (i + 1 >= args.length) {
                            throw new IllegalArgumentException("--work needs a folder");
                        }
                        work = Path.of(args[++i]);
                        break;
                    default:
                        if (a.startsWith("--") || !"scenario".equals(args[0])) {
                            throw new IllegalArgumentException("unknown option '" + a + "' for " + args[0]);
                        }
                        files.add(Path.of(a));
                }
            }
            if (!"demo".equals(args[0]) && !"scenario".equals(args[0])) {
                err.println("npu-lifecycle: unknown harness command '" + args[0] + "'");
                return 2;
            }
            if ("scenario".equals(args[0]) && files.isEmpty()) {
                err.println("npu-lifecycle scenario: give at least one scenario file");
                return 2;
            }
            if (list) {
                if (junit != null) {
                    throw new IllegalArgumentException("--junit writes the report of a run; --list runs nothing");
                }
                return ScenarioCommand.list(files, kubelet, out, err);
            }
            if (junit != null) {
                checkWritable(junit);
            }
            if (kubelet && !io.npulifecycle.simulator.cluster.ClusterBackend.REAL.equals(api)) {
                throw new IllegalArgumentException("--kubelet needs --api real (a kubelet registers with a real "
                        + "kube-apiserver)");
            }
            if (kubelet && plantedBug != null) {
                throw new IllegalArgumentException(ScenarioCommand.KUBELET_REFUSES_PLANTED_BUG);
            }
            if (kubelet && parallel != 1) {
                throw new IllegalArgumentException("--kubelet runs one scenario at a time (--parallel 1): the real "
                        + "node is this machine, one per run");
            }
            if (kubelet && work != null) {
                String problem = RealNodeCluster.workFolderProblem(work, "scenario".equals(args[0])
                        ? "scenario-" + (files.size() - 1) : "");
                if (problem != null) {
                    throw new IllegalArgumentException(problem);
                }
            }
            temporary = work == null;
            work = WorkFolder.prepare(work, args[0]);
        } catch (IllegalArgumentException | java.io.IOException e) {
            err.println("npu-lifecycle " + args[0] + ": " + e.getMessage());
            return 2;
        }
        Interruption interruption = new Interruption(args[0], err).install();
        WorkFolder.keptOnInterrupt(interruption, work, out);
        int rc;
        try {
            if ("demo".equals(args[0])) {
                interruption.doing(() -> "running the demo");
                rc = kubelet ? RealNodeDemo.run(work, installDir, out)
                        : Demo.run(nodes, chips, scale, work, installDir, api, prometheus, out);
            } else {
                rc = ScenarioCommand.run(files, work, installDir, api, kubelet, junit, parallel, plantedBug,
                        interruption, out, err, verdicts -> { });
            }
        } finally {
            interruption.finished();
        }
        WorkFolder.finish(work, temporary, keep, rc, out);
        return rc;
    }

    /**
     * The report is written after the run: a file that could not be written then is refused now, before any
     * scenario runs (its folders are created).
     *
     * @throws IllegalArgumentException naming the file and why
     */
    static void checkWritable(Path junit) {
        Path file = junit.toAbsolutePath();
        try {
            Files.createDirectories(file.getParent());
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("--junit " + junit + ": its folder " + file.getParent()
                    + " cannot be created (" + e.getMessage() + ")");
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw new IllegalArgumentException("--junit " + junit + ": cannot be written (give a writable file)");
        }
        // opened for writing now, as it will be (root passes every permission check; /proc or a read-only mount does not)
        boolean existed = Files.exists(file);
        try (var w = Files.newOutputStream(file, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND)) {
            w.flush();
        } catch (java.io.IOException | RuntimeException e) {
            throw new IllegalArgumentException("--junit " + junit + ": cannot be written (" + e.getMessage()
                    + "; give a writable file)");
        }
        if (!existed) {
            try {
                Files.deleteIfExists(file);
            } catch (java.io.IOException e) {
                // written by the run's end anyway
            }
        }
    }

    private static String apiArg(String[] args, int i) {
        String choices = String.join(" or ", io.npulifecycle.simulator.cluster.ClusterBackends.KINDS);
        if (i >= args.length || args[i].isBlank()) {
            throw new IllegalArgumentException("--api needs " + choices);
        }
        if (!io.npulifecycle.simulator.cluster.ClusterBackends.KINDS.contains(args[i])) {
            throw new IllegalArgumentException("--api '" + args[i] + "': expected " + choices);
        }
        return args[i];
    }

    private static int intArg(String[] args, int i, String option, int min, int max) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a number");
        }
        try {
            int v = Integer.parseInt(args[i]);
            if (v < min || v > max) {
                throw new IllegalArgumentException(option + " " + v + " is outside " + min + ".." + max);
            }
            return v;
        } catch (NumberFormatException e) {
            if (args[i].trim().matches("[+-]?[0-9]+")) {
                // a whole number too large for an int: say what the bounds are
                throw new IllegalArgumentException(option + " " + args[i].trim() + " is outside " + min + ".." + max);
            }
            throw new IllegalArgumentException(option + " '" + args[i] + "' is not a whole number");
        }
    }
}
