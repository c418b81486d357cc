package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;

/**
 * {@code npu-lifecycle uninstall [--namespace NS] [--timeout SECONDS] [--kubeconfig FILE]
 * [--allow-missing-namespace]}: removes what npu-lifecycle
 * added to the cluster ({@link ClusterCleanup}, {@link ClusterCleanup.Scope#UNINSTALL}), for the chart's pre-delete
 * hook Job or an administrator. It first marks the NPUOperatorCtl resources {@value ClusterCleanup#UNINSTALLING}, so
 * the running control plane writes nothing more, then repeats cleanup passes every {@link #POLL} until one finds
 * nothing left, or the timeout passes. Run by the launcher on a plain class path (no OSGi framework): the upgrade and
 * API bundles and the fabric8 jars of the kubeclient bundle.
 *
 * <p>Prints what it removed, what it kept and why, and what it waits for (each once, when it starts waiting). Exit
 * codes: {@value #OK} everything of ours is gone (what was kept on purpose is listed), {@value #INCOMPLETE} the
 * timeout passed while waiting (what is left and why is listed), {@value #USAGE} a bad argument, {@value #REFUSED}
 * the API server refused or could not be reached (the request and the missing permission named).
 */
public final class UninstallCommand {

    /** Exit code: done. */
    public static final int OK = 0;
    /** Exit code: the timeout passed while waiting for a node's reboot or terminating pods. */
    public static final int INCOMPLETE = 1;
    /** Exit code: usage error. */
    public static final int USAGE = 2;
    /** Exit code: a request was refused (a missing permission) or the API server could not be reached. */
    public static final int REFUSED = 3;
    /** The default timeout, seconds. */
    public static final int DEFAULT_TIMEOUT_SECONDS = 300;
    /** Time between two passes. */
    static final Duration POLL = Duration.ofSeconds(2);
    /** How long connecting to the API server may take. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** How long one request may take. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    /** How many times a failed request is sent again (with the client's back-off) before the command gives up. */
    static final int REQUEST_RETRIES = 1;
    /** Where a pod finds its own namespace. */
    static final Path POD_NAMESPACE = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

    /** The command's usage text. */
    public static final String USAGE_TEXT = """
            Usage: npu-lifecycle uninstall [--namespace NS] [--timeout SECONDS] [--kubeconfig FILE]
                                           [--allow-missing-namespace]
              Removes what npu-lifecycle added to the cluster: the driver DaemonSets (app=npu-driver-daemonset) and the
              node-agent DaemonSet (app=npu-lifecycle-node-agent) with their pods; on every Node the npu.openfuyao.com/
              labels and annotations of the contract, the taint npu.openfuyao.com/npu-unhealthy, the NodeCondition
              NpuHealthy and the cordons npu-lifecycle made (npu.openfuyao.com/cordoned-by); the finalizer
              npu.openfuyao.com/cleanup of the NPUOperatorCtl resources (the resources and the CRD are kept).
              Kept: an administrator's cordon, the approvals npu.openfuyao.com/approve-reboot, the installer's labels.
              Never in the middle of a node's reboot: it waits (up to --timeout) and names the node.
              --namespace NS     the control plane's namespace (default: the pod's own, else npu-operator)
              --timeout SECONDS  the longest wait for reboots and terminating pods (default 300)
              --allow-missing-namespace
                                 clean the Nodes even though the --namespace given does not exist (e.g. it was
                                 deleted before the uninstall); without it a namespace that does not exist is refused
              --kubeconfig FILE  credentials (default: the pod's ServiceAccount, else $KUBECONFIG or ~/.kube/config)
              Exit codes: 0 done, 1 timed out (what is left is listed), 2 usage, 3 refused by the API server (the
              missing permission named) or not reachable.""";

    /** Sleeps between passes (tests advance a clock instead). */
    @FunctionalInterface
    public interface Sleeper {
        /**
         * @param d how long
         * @throws InterruptedException when interrupted
         */
        void sleep(Duration d) throws InterruptedException;
    }

    private UninstallCommand() {
    }

    /**
     * Entry point of the launcher ({@code Main} calls it by reflection).
     *
     * @param args the arguments after {@code uninstall}
     * @param out standard output
     * @param err standard error
     * @return the exit code
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        String namespace = null;
        int timeout = DEFAULT_TIMEOUT_SECONDS;
        String kubeconfig = null;
        boolean allowMissingNamespace = false;
        boolean namespaceGiven = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                out.println(USAGE_TEXT);
                return OK;
            }
            if (a.equals("--allow-missing-namespace")) {
                allowMissingNamespace = true;
                continue;
            }
            if (!a.equals("--namespace") && !a.equals("--timeout") && !a.equals("--kubeconfig")) {
                err.println("npu-lifecycle uninstall: unknown argument '" + a + "'\n" + USAGE_TEXT);
                return USAGE;
            }
            if (i + 1 >= args.length || args[i + 1].isBlank()) {
                err.println("npu-lifecycle uninstall: " + a + " needs a value\n" + USAGE_TEXT);
                return USAGE;
            }
            String v = args[++i];
            switch (a) {
                case "--namespace" -> {
                    if (!v.matches("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")) {
                        err.println("npu-lifecycle uninstall: --namespace '" + v + "' is not a namespace name");
                        return USAGE;
                    }
                    namespace = v;
                    namespaceGiven = true;
                }
                case "--timeout" -> {
                    try {
                        timeout = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        timeout = -1;
                    }
                    if (timeout < 0 || timeout > 86_400) {
                        err.println("npu-lifecycle uninstall: --timeout '" + v + "' is not a number of seconds from 0 "
                                + "to 86400");
                        return USAGE;
                    }
                }
                default -> {
                    if (!Files.isReadable(Path.of(v))) {
                        err.println("npu-lifecycle uninstall: --kubeconfig " + v + ": no such readable file");
                        return USAGE;
                    }
                    kubeconfig = v;
                }
            }
        }
        if (namespace == null) {
            namespace = podNamespace();
        }
        if (kubeconfig != null) {
            String problem = kubeconfigProblem(Path.of(kubeconfig));
            if (problem != null) {
                err.println("npu-lifecycle uninstall: --kubeconfig " + kubeconfig + " " + problem);
                return USAGE;
            }
        } else {
            String none = noCredentials(System.getenv(), Path.of(System.getProperty("user.home", "/")),
                    Path.of(SERVICE_ACCOUNT_TOKEN));
            if (none != null) {
                err.println("npu-lifecycle uninstall: " + none);
                return USAGE;
            }
        }
        Config config;
        try {
            config = kubeconfig != null ? Config.fromKubeconfig(Files.readString(Path.of(kubeconfig)))
                    : Config.autoConfigure(null);
        } catch (IOException | RuntimeException e) {
            err.println("npu-lifecycle uninstall: cannot read the credentials"
                    + (kubeconfig == null ? " (the pod's ServiceAccount, $KUBECONFIG or ~/.kube/config)"
                            : " of --kubeconfig " + kubeconfig)
                    + ": expected a kubeconfig (YAML with clusters, contexts and users and a current-context): "
                    + firstLine(e.getMessage()));
            return USAGE;
        }
        if (config.getMasterUrl() == null || config.getMasterUrl().isBlank()) {
            err.println("npu-lifecycle uninstall: the credentials" + (kubeconfig == null ? "" : " of --kubeconfig "
                    + kubeconfig) + " name no API server (a kubeconfig's current-context with a cluster server)");
            return USAGE;
        }
        // an unreachable API server fails within seconds, not after the client's retries with back-off (minutes):
        // --timeout bounds waiting for reboots and pods, never a connection
        config.setConnectionTimeout((int) CONNECT_TIMEOUT.toMillis());
        config.setRequestTimeout((int) REQUEST_TIMEOUT.toMillis());
        config.setRequestRetryBackoffLimit(REQUEST_RETRIES);
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
                .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
            if (namespaceGiven && !allowMissingNamespace && namespaceMissing(client, namespace)) {
                err.println("npu-lifecycle uninstall: namespace " + namespace + " does not exist on "
                        + client.getMasterUrl() + ": nothing was changed. Is --namespace the namespace npu-lifecycle "
                        + "was installed in (helm list -A)? To clean the Nodes of a cluster whose namespace is already "
                        + "deleted, add --allow-missing-namespace");
                return USAGE;
            }
            return uninstall(client, namespace, Duration.ofSeconds(timeout), Instant::now, System::nanoTime,
                    d -> Thread.sleep(d.toMillis()), out, err);
        }
    }

    /**
     * @return true only when the API server says the namespace does not exist (404); false when it exists or cannot
     *         be read (no {@code get namespaces} permission, as the chart's hook Job has: its namespace is its own)
     */
    static boolean namespaceMissing(KubernetesClient client, String namespace) {
        try {
            return client.namespaces().withName(namespace).get() == null;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * @return what is wrong with a kubeconfig file for this command (it names a current-context, that context names a
     *         cluster, and the cluster has a server), or null when it is usable; read with fabric8's model of the
     *         file, so that a file the client would silently replace by the in-cluster defaults is refused instead
     */
    /** Where a pod's ServiceAccount token is mounted. */
    static final String SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

    /**
     * Without {@code --kubeconfig}: whether any credentials are there to find, as the client looks for them (the pod's
     * ServiceAccount, {@code $KUBECONFIG}, {@code ~/.kube/config}). Without any, the client would fall back to the
     * in-cluster address {@code https://kubernetes.default.svc} and fail with a connection error that names neither
     * the cause nor the remedy.
     *
     * @param env the environment ({@code KUBERNETES_SERVICE_HOST}, {@code KUBECONFIG})
     * @param home the user's home folder
     * @param token where a pod's ServiceAccount token would be
     * @return what is missing and what to give, or null when some credentials are there
     */
    /**
     * @return {@code ", at line N"} from the location the YAML or JSON parser gives in a message of {@code e}'s
     *         causes ({@code [Source: ...; line: N, column: M]}), or ""; nothing else of the message, which quotes text
     */
    private static String where(Throwable e) {
        java.util.regex.Pattern line = java.util.regex.Pattern.compile("line: ([0-9]+)");
        for (Throwable t = e; t != null; t = t.getCause()) {
            java.util.regex.Matcher m = t.getMessage() == null ? null : line.matcher(t.getMessage());
            if (m != null && m.find()) {
                return ", at line " + m.group(1);
            }
        }
        return "";
    }

    static String noCredentials(java.util.Map<String, String> env, Path home, Path token) {
        String host = env.get("KUBERNETES_SERVICE_HOST");
        if (host != null && !host.isBlank() && Files.isReadable(token)) {
            return null;
        }
        String kc = env.get("KUBECONFIG");
        if (kc != null && !kc.isBlank()) {
            for (String f : kc.split(java.io.File.pathSeparator)) {
                if (!f.isBlank() && Files.isReadable(Path.of(f))) {
                    return null;
                }
            }
            return "no credentials: $KUBECONFIG=" + kc + " names no readable file (and this is not a pod with a "
                    + "ServiceAccount token); give --kubeconfig FILE or a KUBECONFIG that exists";
        }
        if (Files.isReadable(home.resolve(".kube/config"))) {
            return null;
        }
        return "no credentials: not in a pod (no KUBERNETES_SERVICE_HOST and ServiceAccount token " + token + "), "
                + "$KUBECONFIG unset and no " + home.resolve(".kube/config") + "; give --kubeconfig FILE";
    }

    static String kubeconfigProblem(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException | RuntimeException e) {
            return "cannot be read: " + firstLine(e.getMessage());
        }
        if (text.isBlank()) {
            return "is empty: expected a kubeconfig (YAML with clusters, contexts and users and a current-context)";
        }
        io.fabric8.kubernetes.api.model.Config kc;
        try {
            kc = new io.fabric8.kubernetes.client.utils.KubernetesSerialization().unmarshal(text,
                    io.fabric8.kubernetes.api.model.Config.class);
        } catch (RuntimeException e) {
            // the parser's message quotes the file's text, which may be a token: only where it stopped is told
            return "is not a kubeconfig (YAML with clusters, contexts and users and a current-context)" + where(e);
        }
        if (kc == null || kc.getCurrentContext() == null || kc.getCurrentContext().isBlank()) {
            return "names no current-context";
        }
        var context = kc.getContexts() == null ? null : kc.getContexts().stream()
                .filter(c -> kc.getCurrentContext().equals(c.getName()) && c.getContext() != null).findFirst()
                .orElse(null);
        if (context == null) {
            return "has no context '" + kc.getCurrentContext() + "' (its current-context)";
        }
        String cluster = context.getContext().getCluster();
        var named = kc.getClusters() == null ? null : kc.getClusters().stream()
                .filter(c -> c.getName() != null && c.getName().equals(cluster) && c.getCluster() != null).findFirst()
                .orElse(null);
        if (named == null || named.getCluster().getServer() == null || named.getCluster().getServer().isBlank()) {
            return "has no server for cluster '" + cluster + "' (of context '" + kc.getCurrentContext() + "')";
        }
        return null;
    }

    private static String firstLine(String s) {
        if (s == null || s.isBlank()) {
            return "(no detail)";
        }
        int nl = s.indexOf('\n');
        String line = (nl < 0 ? s : s.substring(0, nl)).trim();
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }

    /** @return the pod's namespace, else {@value NpuOperatorCtlType#DEFAULT_NAMESPACE} */
    static String podNamespace() {
        try {
            String ns = Files.readString(POD_NAMESPACE).trim();
            return ns.isEmpty() ? NpuOperatorCtlType.DEFAULT_NAMESPACE : ns;
        } catch (IOException | RuntimeException e) {
            return NpuOperatorCtlType.DEFAULT_NAMESPACE;
        }
    }

    /**
     * The uninstall itself.
     *
     * @param client the client (not closed here)
     * @param namespace the control plane's namespace
     * @param timeout the longest wait
     * @param wall the wall clock (the {@value ClusterCleanup#UNINSTALLING} instant)
     * @param nanos a monotonic clock in nanoseconds (the timeout)
     * @param sleeper waits between passes
     * @param out what was done
     * @param err what failed
     * @return the exit code ({@link #OK}, {@link #INCOMPLETE}, {@link #REFUSED})
     */
    public static int uninstall(KubernetesClient client, String namespace, Duration timeout, Supplier<Instant> wall,
            java.util.function.LongSupplier nanos, Sleeper sleeper, PrintStream out, PrintStream err) {
        long start = nanos.getAsLong();
        out.println("npu-lifecycle uninstall: namespace " + namespace + ", API server " + client.getMasterUrl()
                + ", waiting at most " + timeout.toSeconds() + " s for reboots and terminating pods");
        ClusterCleanup cleanup = new ClusterCleanup(client, namespace, ClusterCleanup.Scope.UNINSTALL);
        Set<String> removed = new LinkedHashSet<>();
        Set<String> kept = new LinkedHashSet<>();
        Set<String> announced = new LinkedHashSet<>();
        List<String> waiting = new ArrayList<>();
        try {
            cleanup.checkPermissions();
            List<String> marked = cleanup.markUninstalling(wall.get());
            for (String name : marked) {
                out.println("marked NPUOperatorCtl " + namespace + "/" + name + " " + ClusterCleanup.UNINSTALLING
                        + ": the running control plane writes nothing more");
            }
            if (marked.isEmpty()) {
                // a mistyped --namespace would otherwise pass silently while the control plane keeps writing
                err.println("npu-lifecycle uninstall: warning: no NPUOperatorCtl in namespace " + namespace
                        + " (is --namespace the namespace npu-lifecycle was installed in?); the Nodes are cleaned, "
                        + "and the DaemonSets of " + namespace + " if any");
            }
            while (true) {
                ClusterCleanup.Report r = cleanup.pass();
                for (String s : r.removed()) {
                    if (removed.add(s)) {
                        out.println("removed " + s);
                    }
                }
                kept.addAll(r.kept());
                waiting = r.waitingFor();
                long waited = Duration.ofNanos(nanos.getAsLong() - start).toSeconds();
                for (String w : waiting) {
                    if (announced.add(w)) {
                        out.println("waiting for " + w + " (" + waited + " s of " + timeout.toSeconds() + " s)");
                    }
                }
                if (r.done()) {
                    break;
                }
                if (!waiting.isEmpty() && nanos.getAsLong() - start >= timeout.toNanos()) {
                    for (String k : kept) {
                        out.println("kept " + k);
                    }
                    err.println("npu-lifecycle uninstall: timed out after " + timeout.toSeconds() + " s; left as it "
                            + "is, because of:");
                    waiting.forEach(w -> err.println("  " + w));
                    err.println("run npu-lifecycle uninstall again once that is over (or with a longer --timeout)");
                    return INCOMPLETE;
                }
                if (!waiting.isEmpty()) {
                    sleeper.sleep(POLL);
                }
            }
        } catch (ClusterCleanup.CleanupException e) {
            err.println("npu-lifecycle uninstall: " + e.getMessage() + " (API server " + client.getMasterUrl() + ")");
            if (!removed.isEmpty()) {
                err.println("removed before that: " + removed.size() + " items (listed above); run it again once fixed");
            }
            return REFUSED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("npu-lifecycle uninstall: interrupted; what was removed is listed above");
            return INCOMPLETE;
        }
        for (String k : kept) {
            out.println("kept " + k);
        }
        out.println("done: nothing npu-lifecycle added is left (" + removed.size() + " removed, " + kept.size()
                + " kept on purpose)");
        return OK;
    }
}
