package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.ClusterBackends;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.ImageWhiteLists;
import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;

/**
 * {@code npu-lifecycle cluster [--api real|embedded] [--nodes N] [--kubeconfig FILE]}: an API server on its own, for
 * kubectl and for runtimes started by hand. Installs the NPUOperatorCtl CRD, applies the installation's
 * {@code conf/kubernetes/*.yaml} (a real server must accept every object; the embedded mock as far as it can, each
 * file it refuses is named), creates {@code --nodes} NPU nodes {@code node-0...} (default 3) and the sample
 * NPUOperatorCtl, writes an admin kubeconfig, prints the master URL and the kubeconfig path, and runs until stopped
 * (SIGINT, SIGTERM): then it stops the server (and etcd), removes its data folder and the kubeconfig, and says so.
 *
 * <p>{@code --api real} (the default) needs kube-apiserver and etcd: system property {@value KubeBinaries#BIN_PROPERTY}
 * names their folder, else the installation's {@code kube/apiserver/build.sh} finds them in its cache folder or builds
 * them from the Go sources beside it (Go &gt;= 1.26; the first build takes many minutes). {@code --kubeconfig} must be a
 * new file or one this command wrote (its first line is {@value #MARKER}): nobody's own kubeconfig is overwritten;
 * and while one command runs with a {@code --kubeconfig}, another one with the same file is refused
 * ({@link KubeconfigLock}).
 *
 * <p>Exit codes: 0 stopped, 1 the server could not start or refused a manifest, 2 a bad argument (the message names the
 * option).
 */
final class ClusterCommand {

    /** The command line. */
    static final String USAGE = "npu-lifecycle cluster [--api real|embedded] [--nodes N] [--kubeconfig FILE] [--kubelet]";
    /** First line of every kubeconfig this command writes. */
    static final String MARKER = "# written by 'npu-lifecycle cluster'; removed when it stops";
    /** The most nodes {@code --nodes} accepts. */
    static final int MAX_NODES = 1000;
    /** How long a shutdown hook waits for the stop to finish. */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

    private static final String PREFIX = "npu-lifecycle cluster: ";
    private static final String CRD = "crd-npuoperatorctl.yaml";

    /**
     * The parsed command line.
     *
     * @param api {@value ClusterBackend#REAL} or {@value ClusterBackend#EMBEDDED}
     * @param nodes how many NPU nodes to create, 0 to {@value #MAX_NODES}
     * @param kubeconfig where to write the kubeconfig, null for a new temporary folder
     * @param kubelet this machine as a real node with the chart installed ({@link RealNodeDemo#cluster}); needs
     *        {@code --api real}, {@code --nodes} does not apply
     */
    record Options(String api, int nodes, Path kubeconfig, boolean kubelet) {

        /**
         * @param args the arguments after {@code cluster}
         * @return the options
         * @throws IllegalArgumentException naming the option that is unknown, lacks its value or has a bad one
         */
        static Options parse(String[] args) {
            String api = ClusterBackend.REAL;
            int nodes = 3;
            Path kubeconfig = null;
            boolean kubelet = false;
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--api":
                        String kind = value(args, ++i, a, "real or embedded");
                        try {
                            api = ClusterBackends.checkKind(kind);
                        } catch (IllegalArgumentException e) {
                            throw new IllegalArgumentException("--api '" + kind + "': expected real or embedded");
                        }
                        break;
                    case "--nodes":
                        String n = value(args, ++i, a, "a number");
                        try {
                            nodes = Integer.parseInt(n);
                        } catch (NumberFormatException e) {
                            throw new IllegalArgumentException("--nodes '" + n + "' is not a whole number");
                        }
                        if (nodes < 0 || nodes > MAX_NODES) {
                            throw new IllegalArgumentException("--nodes " + nodes + " is outside 0.." + MAX_NODES);
                        }
                        break;
                    case "--kubeconfig":
                        kubeconfig = Path.of(value(args, ++i, a, "a file"));
                        break;
                    case "--kubelet":
                        kubelet = true;
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option '" + a + "' for cluster");
                }
            }
            if (kubelet && !ClusterBackend.REAL.equals(api)) {
                throw new IllegalArgumentException("--kubelet needs --api real (a kubelet registers with a real "
                        + "kube-apiserver)");
            }
            return new Options(api, nodes, kubeconfig, kubelet);
        }

        private static String value(String[] args, int i, String option, String what) {
            if (i >= args.length || args[i].isBlank()) {
                throw new IllegalArgumentException(option + " needs " + what);
            }
            return args[i];
        }
    }

    /**
     * Where the command finds what it installs and runs.
     *
     * @param manifests the folder of the Kubernetes manifests ({@code conf/kubernetes} of an installation)
     * @param buildScript {@code build.sh} of the Go sources of kube-apiserver and etcd
     */
    record Layout(Path manifests, Path buildScript) {

        /**
         * @param install an installation (bin/, lib/, conf/)
         * @return its {@code conf/kubernetes} and {@code kube/apiserver/build.sh}
         */
        static Layout of(Path install) {
            return new Layout(install.resolve("conf").resolve("kubernetes"),
                    install.resolve("kube").resolve("apiserver").resolve("build.sh"));
        }
    }

    private final Options options;
    private final Layout layout;
    private final PrintStream out;
    private final PrintStream err;

    private ClusterCommand(Options options, Layout layout, PrintStream out, PrintStream err) {
        this.options = options;
        this.layout = layout;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the command until the JVM is told to stop (SIGINT, SIGTERM).
     *
     * @param args the arguments after {@code cluster}
     * @param install the installation
     * @param out standard output
     * @param err standard error
     * @return the exit code (see the class comment)
     */
    static int run(String[] args, Path install, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println(PREFIX + e.getMessage() + "\nusage: " + USAGE);
            return 2;
        }
        return run(o, Layout.of(install), out, err, new CountDownLatch(1));
    }

    /**
     * Runs the command until {@code stop} is counted down or the JVM shuts down (its shutdown hook counts {@code stop}
     * down, then waits, at most {@link #STOP_TIMEOUT}, for the clean stop).
     *
     * @param options the options
     * @param layout where the manifests and the build script are
     * @param out standard output
     * @param err standard error
     * @param stop counted down to stop
     * @return the exit code (see the class comment)
     */
    static int run(Options options, Layout layout, PrintStream out, PrintStream err, CountDownLatch stop) {
        return new ClusterCommand(options, layout, out, err).serve(stop);
    }

    private int serve(CountDownLatch stop) {
        Path ownFolder = null;
        Path kubeconfig = options.kubeconfig();
        try {
            if (kubeconfig == null) {
                ownFolder = Files.createTempDirectory("npu-lifecycle-cluster-");
                kubeconfig = ownFolder.resolve("kubeconfig");
            } else if (Files.exists(kubeconfig) && !writtenByUs(kubeconfig)) {
                err.println(PREFIX + "--kubeconfig " + kubeconfig + " exists and was not written by this command: "
                        + "give a new file (it is written at the start and removed at the stop)");
                return 2;
            }
        } catch (IOException e) {
            err.println(PREFIX + "cannot create a folder for the kubeconfig: " + e.getMessage());
            return 1;
        }
        if (ownFolder != null) {
            return serve(stop, kubeconfig, ownFolder); // a new folder of its own: nobody else can use it
        }
        try (KubeconfigLock lock = KubeconfigLock.acquire(kubeconfig)) {
            return serve(stop, kubeconfig, null);
        } catch (KubeconfigLock.Held e) {
            err.println(PREFIX + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println(PREFIX + "cannot lock --kubeconfig " + kubeconfig + ": " + e.getMessage());
            return 1;
        }
    }

    private int serve(CountDownLatch stop, Path kubeconfig, Path ownFolder) {
        if (options.kubelet()) {
            return RealNodeDemo.cluster(layout.manifests().getParent().getParent(), kubeconfig, MARKER, out, err,
                    stop, STOP_TIMEOUT);
        }
        CountDownLatch done = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            stop.countDown();
            try {
                done.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "npu-lifecycle-cluster-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        ClusterBackend backend = null;
        try {
            out.println(PREFIX + "starting " + (ClusterBackend.REAL.equals(options.api())
                    ? "a real API server (kube-apiserver and etcd)" : "the embedded API server (fabric8 mock)"));
            out.flush();
            try {
                backend = ClusterBackends.start(options.api(), KubeBinarySource.of(layout.buildScript()));
            } catch (IllegalStateException e) {
                err.println(PREFIX + "--api " + options.api() + ": " + e.getMessage()
                        + (ClusterBackend.REAL.equals(options.api()) ? "\n(--api embedded needs no binaries)" : ""));
                return 1;
            }
            try {
                populate(backend, kubeconfig);
            } catch (RuntimeException e) {
                err.println(PREFIX + (stop.getCount() == 0 ? "stopped while starting: " + e.getMessage()
                        : "the " + options.api() + " API server refused the setup: " + e.getMessage()));
                return 1;
            }
            out.println(PREFIX + "ready; runs until stopped (Ctrl-C or SIGTERM)");
            out.flush();
            stop.await();
            out.println(PREFIX + "stopping");
            out.flush();
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } finally {
            if (backend != null) {
                backend.close();
            }
            boolean removed = remove(kubeconfig, ownFolder);
            if (backend != null) {
                out.println(PREFIX + "stopped: the " + options.api() + " API server ended" + (backend instanceof
                        RealApiServer ? " with its etcd, its data folder is removed" : "")
                        + (removed ? ", kubeconfig " + kubeconfig + " removed" : ""));
                out.flush();
            }
            done.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it returns now that done is counted down
            }
        }
    }

    private void populate(ClusterBackend backend, Path kubeconfig) {
        String version = backend.client().getKubernetesVersion().getGitVersion();
        out.println(PREFIX + backend.kind() + " API server " + version + " at " + backend.masterUrl()
                + (backend instanceof RealApiServer real ? ", data folder " + real.dataFolder() : ""));
        List<Path> files = manifests();
        Path crd = files.stream().filter(f -> f.getFileName().toString().equals(CRD)).findFirst().orElse(null);
        backend.installCrd(crd); // null: the embedded mock registers the type, a real server refuses
        out.println("  CRD " + (crd == null ? "registered without a file" : crd));
        for (Path f : files) {
            if (f.equals(crd)) {
                continue;
            }
            try {
                int n = backend.apply(f).size();
                out.println("  applied " + f + " (" + n + (n == 1 ? " object)" : " objects)"));
            } catch (KubernetesClientException e) {
                if (!ClusterBackend.EMBEDDED.equals(backend.kind())) {
                    throw new IllegalStateException(f + ": " + e.getMessage(), e);
                }
                out.println("  skipped " + f + ": the embedded API refuses it (" + e.getMessage() + ")");
            }
        }
        for (int i = 0; i < options.nodes(); i++) {
            backend.addNode(EmbeddedCluster.npuNode("node-" + i));
        }
        out.println("  " + options.nodes() + " NPU nodes" + (options.nodes() == 0 ? ""
                : options.nodes() == 1 ? ": node-0" : ": node-0 .. node-" + (options.nodes() - 1)));
        GenericKubernetesResource cr = backend.npuOperatorCtls().withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).get();
        if (cr == null) {
            cr = backend.createNpuOperatorCtl("25.0.0", false, false);
        }
        out.println("  NPUOperatorCtl " + EmbeddedCluster.NPU_NAMESPACE + "/" + EmbeddedCluster.NPU_OPERATOR_CTL_NAME
                + " (spec.driver.version " + cr.get("spec", "driver", "version") + ")");
        // the platform's ImageWhiteList (runbook preflight item 2), listing the sample CR's driver tag, so the
        // preflight's check and `kubectl edit imagewhitelist` can be tried here as on the platform
        ImageWhiteLists.installCrd(backend);
        Object sampleVersion = cr.get("spec", "driver", "version");
        String tag = SimCluster.imageTag(EmbeddedCluster.driverImage(String.valueOf(sampleVersion), "910b"));
        ImageWhiteLists.seed(backend, List.of(tag));
        out.println("  ImageWhiteList " + ImageWhiteLists.NAMESPACE + "/" + ImageWhiteLists.NAME + " (spec.repoList ["
                + tag + "])");
        backend.writeKubeconfig(kubeconfig);
        try {
            Files.writeString(kubeconfig, MARKER + "\n" + Files.readString(kubeconfig, StandardCharsets.UTF_8),
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + kubeconfig, e);
        }
        out.println("master URL: " + backend.masterUrl());
        out.println("kubeconfig: " + kubeconfig.toAbsolutePath());
        out.println("  kubectl --kubeconfig " + kubeconfig.toAbsolutePath() + " get nodes");
    }

    /** @return the manifests ({@code *.yaml}, file order), none when the folder is missing */
    private List<Path> manifests() {
        if (!Files.isDirectory(layout.manifests())) {
            out.println("  no manifests: " + layout.manifests() + " is not a folder");
            return List.of();
        }
        try (Stream<Path> s = Files.list(layout.manifests())) {
            return s.filter(p -> p.getFileName().toString().endsWith(".yaml")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + layout.manifests(), e);
        }
    }

    private static boolean writtenByUs(Path file) {
        try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
            return lines.findFirst().map(MARKER::equals).orElse(false);
        } catch (IOException | UncheckedIOException e) {
            return false;
        }
    }

    /** @return whether the kubeconfig was removed (a file this command wrote; its own folder too) */
    private boolean remove(Path kubeconfig, Path ownFolder) {
        try {
            boolean removed = writtenByUs(kubeconfig) && Files.deleteIfExists(kubeconfig);
            if (ownFolder != null) {
                Files.deleteIfExists(ownFolder);
            }
            return removed;
        } catch (IOException e) {
            err.println(PREFIX + "cannot remove " + kubeconfig + ": " + e.getMessage());
            return false;
        }
    }
}
