package io.npulifecycle.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The parsed command line of {@code bin/npu-lifecycle}.
 *
 * <pre>
 * npu-lifecycle node|control-plane [--home DIR] [--no-shell]
 * npu-lifecycle check-npu-smi FILE [--exit-code N] [--expected-chips 0:0,1:0,...] [--alarm-is-failure] [--help]
 * npu-lifecycle hash-password [--role viewer|operator] USER
 * npu-lifecycle demo [--api embedded|real] [--nodes N] [--chips N] [--scale X] [--work DIR] [--prometheus] [--keep]
 * npu-lifecycle scenario FILE... [--api embedded|real] [--parallel N] [--work DIR] [--junit FILE] [--keep]
 * npu-lifecycle scenario --list FILE...
 * npu-lifecycle cluster [--api real|embedded] [--nodes N] [--kubeconfig FILE]
 * npu-lifecycle uninstall [--namespace NS] [--timeout SECONDS] [--kubeconfig FILE]
 *                         [--allow-missing-namespace]
 * npu-lifecycle help
 * </pre>
 */
public final class LaunchOptions {

    /** The usage text printed for {@code help} and for any bad command line. */
    public static final String USAGE = String.join("\n",
            "Usage: npu-lifecycle <command> [options]",
            "",
            "Commands:",
            "  node            [--home DIR] [--no-shell]   run the node-agent runtime (one per NPU node)",
            "  control-plane   [--home DIR] [--no-shell]   run the control-plane runtime",
            "  demo            [--api embedded|real] [--nodes N] [--chips N] [--scale X] [--work DIR] [--prometheus]",
            "                  [--keep] [--kubelet]",
            "                  the runbook end to end on a simulated cluster (upgrade, self-healing); no cluster needed;",
            "                  --api real --kubelet: through real pods, this machine a node (root; containerd, a kubelet)",
            "  scenario        FILE... [--api embedded|real] [--parallel N] [--work DIR] [--junit FILE] [--keep]",
            "                  run scenario files (YAML) on a simulated cluster; non-zero exit when an expectation fails;",
            "                  --parallel N runs N files at a time, each on its own cluster;",
            "                  --junit writes a JUnit XML report; --list FILE... validates and prints the steps only",
            "                  --planted-bug NAME: a bug planted on purpose in every runtime (testing the checker)",
            "                  (demo --help, scenario --help: every option)",
            "  chaos           --seed N | --seeds A..B [--nodes K] [--duration D] [--api embedded|real] [--policy FILE]",
            "                  a simulated cluster under a random fault schedule drawn from each seed, the contract's",
            "                  invariants checked throughout; a failing seed is shrunk to a scenario file",
            "                  (chaos-seed-<N>-shrunk.yaml; --shrink-runs N, --no-shrink; chaos --help: every option)",
            "  cluster         [--api real|embedded] [--nodes N] [--kubeconfig FILE] [--kubelet]",
            "                  an API server alone (default real: kube-apiserver and etcd, built with Go >= 1.26 at the",
            "                  first run) with the CRD, conf/kubernetes, N NPU nodes and the sample; runs until stopped;",
            "                  --kubelet: this machine the one real node instead, the chart installed with helm",
            "  check-npu-smi   FILE [--exit-code N] [--expected-chips 0:0,1:0,...] [--alarm-is-failure]",
            "                  classify a saved 'npu-smi info' output the way the health-watch does; prints JSON;",
            "                  --alarm-is-failure: an Alarm health is a failure (the health-watch's alarmIsFailure);",
            "                  check-npu-smi --help lists every option",
            "  uninstall       [--namespace NS] [--timeout SECONDS] [--kubeconfig FILE] [--allow-missing-namespace]",
            "                  remove what npu-lifecycle added to the cluster (driver and node-agent DaemonSets, the",
            "                  npu.openfuyao.com/ node labels, annotations, taint, the NpuHealthy condition, its own",
            "                  cordons, the NPUOperatorCtl finalizers); keeps an administrator's cordon and approvals;",
            "                  waits (up to --timeout, default 300 s) while a node is in its reboot; credentials: the",
            "                  pod's ServiceAccount, else --kubeconfig, $KUBECONFIG or ~/.kube/config; exit 0 done,",
            "                  1 timed out (what is left listed), 2 usage, 3 refused (the missing permission named)",
            "  hash-password   [--role viewer|operator] USER",
            "                  read a password (console without echo, else the first line of stdin; 12 characters",
            "                  at least) and print the line to add to etc/jolokia-users.properties (role default viewer)",
            "  help            print this text",
            "",
            "Options:",
            "  --home DIR      runtime home (etc/, deploy/, cache/, logs/, secrets/); default $NPU_LIFECYCLE_HOME,",
            "                  else ~/.npu-lifecycle/<role>",
            "  --no-shell      do not start the Gogo shell (it only starts when attached to a terminal anyway)",
            "  --api KIND      demo, scenario: the simulated cluster's API server, embedded (default: in-process",
            "                  mock) or real (kube-apiserver and etcd, built with Go >= 1.26 at the first run)",
            "  --work DIR      demo, scenario: a new or empty folder, or one an earlier run used (default: a new",
            "                  temporary folder); runtime homes, markers and logs go there. A temporary folder is",
            "                  deleted when the run passes and kept, its path printed, when it fails or is stopped by",
            "                  a signal; --work DIR is kept",
            "  --keep          demo, scenario: keep the temporary folder of a passed run too",
            "",
            "Environment (a variable wins over the etc/runtime.properties key in parentheses):",
            "  NPU_LIFECYCLE_HOME                   the runtime home when --home is not given",
            "  NPU_LIFECYCLE_JOLOKIA_USER, NPU_LIFECYCLE_JOLOKIA_PASSWORD   the runtime's operator user (together;",
            "                                       neither: generated into <home>/secrets/jolokia-credentials)",
            "  NPU_LIFECYCLE_HTTP_HOST, NPU_LIFECYCLE_HTTP_PORT   Jolokia and /health (http.host, http.port)",
            "  NPU_LIFECYCLE_METRICS_HOST, NPU_LIFECYCLE_METRICS_PORT   /metrics (metrics.host, metrics.port; 0: a free",
            "                                       port chosen at start)",
            "  NPU_LIFECYCLE_HTTPS_KEYSTORE_PASSWORD   the TLS keystore's password (https.keystore.password)",
            "  NPU_LIFECYCLE_LOG_LEVEL              ERROR, WARN, INFO, DEBUG or TRACE (log.level)",
            "  NPU_LIFECYCLE_KUBE_MASTER            the Kubernetes API server URL (else in-cluster or the kubeconfig)",
            "  NPU_LIFECYCLE_JAVA_OPTS (or JAVA_OPTS)   JVM options replacing the defaults of bin/npu-lifecycle;",
            "                                       JAVA_HOME selects the JDK (17 or later)");

    /** The runtime roles. */
    public enum Role {
        NODE("node"), CONTROL_PLANE("control-plane");

        private final String id;

        Role(String id) {
            this.id = id;
        }

        /** @return the name users type and the {@code npu.lifecycle.role} value */
        public String id() {
            return id;
        }
    }

    private final String command;
    private final Role role;
    private final Path home;
    private final boolean noShell;
    private final List<String> rest;

    private LaunchOptions(String command, Role role, Path home, boolean noShell, List<String> rest) {
        this.command = command;
        this.role = role;
        this.home = home;
        this.noShell = noShell;
        this.rest = rest;
    }

    /**
     * Parses the command line.
     *
     * @param args the arguments after the script name
     * @param env the environment (for {@code NPU_LIFECYCLE_HOME} and {@code HOME})
     * @return the options
     * @throws LaunchException with exit code {@link LaunchException#USAGE} and the usage text for an unknown
     *         command, an unknown option or a missing option value
     */
    public static LaunchOptions parse(String[] args, Map<String, String> env) throws LaunchException {
        if (args.length == 0) {
            throw usage("no command given");
        }
        String command = args[0];
        switch (command) {
            case "help":
            case "--help":
            case "-h":
                return new LaunchOptions("help", null, null, true, List.of());
            case "check-npu-smi":
            case "hash-password":
            case "uninstall":
                List<String> rest = new ArrayList<>(List.of(args).subList(1, args.length));
                return new LaunchOptions(command, null, null, true, rest);
            case "demo":
            case "scenario":
            case "chaos":
            case "cluster":
                return new LaunchOptions(command, null, null, true, List.of(args));
            case "node":
            case "control-plane":
                break;
            default:
                throw usage("unknown command '" + command + "'");
        }
        Role role = "node".equals(command) ? Role.NODE : Role.CONTROL_PLANE;
        Path home = null;
        boolean noShell = false;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if ("--no-shell".equals(a)) {
                noShell = true;
            } else if ("--home".equals(a)) {
                if (i + 1 >= args.length || args[i + 1].isBlank()) {
                    throw usage("--home needs a folder");
                }
                home = Path.of(args[++i]);
            } else if (a.startsWith("--home=")) {
                if (a.substring("--home=".length()).isBlank()) {
                    throw usage("--home= needs a folder");
                }
                home = Path.of(a.substring("--home=".length()));
            } else {
                throw usage("unknown option '" + a + "' for " + command);
            }
        }
        if (home == null) {
            String fromEnv = env.get("NPU_LIFECYCLE_HOME");
            if (fromEnv != null && !fromEnv.isBlank()) {
                home = Path.of(fromEnv);
            } else {
                String userHome = env.getOrDefault("HOME", System.getProperty("user.home"));
                home = Path.of(userHome, ".npu-lifecycle", role.id());
            }
        }
        return new LaunchOptions(command, role, home.toAbsolutePath().normalize(), noShell, List.of());
    }

    private static LaunchException usage(String why) {
        return new LaunchException(LaunchException.USAGE, "npu-lifecycle: " + why + "\n\n" + USAGE);
    }

    /** @return {@code node}, {@code control-plane}, {@code check-npu-smi}, {@code hash-password}, {@code uninstall}, {@code demo}, {@code scenario}, {@code cluster} or {@code help} */
    public String command() {
        return command;
    }

    /** @return the runtime role, or {@code null} for the other commands */
    public Role role() {
        return role;
    }

    /** @return the absolute runtime home, or {@code null} for the other commands */
    public Path home() {
        return home;
    }

    /** @return {@code true} when {@code --no-shell} was given */
    public boolean noShell() {
        return noShell;
    }

    /** @return the arguments of {@code check-npu-smi}, {@code hash-password} and {@code uninstall}; for {@code demo}, {@code scenario} and {@code cluster} the whole command line */
    public List<String> rest() {
        return rest;
    }
}
