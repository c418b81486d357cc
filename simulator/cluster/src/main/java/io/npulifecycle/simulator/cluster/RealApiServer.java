package io.npulifecycle.simulator.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.simulator.common.LoopbackPorts;
import io.npulifecycle.simulator.cluster.internal.EtcdGateway;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;
import io.npulifecycle.simulator.cluster.internal.KubeCommandLines;
import io.npulifecycle.simulator.cluster.internal.Kubeconfigs;
import io.npulifecycle.simulator.cluster.internal.KubePki;
import io.npulifecycle.simulator.cluster.internal.RunRecords;
import io.npulifecycle.simulator.cluster.internal.ServerProbe;

/**
 * A real Kubernetes API server for tests: {@code kube-apiserver}, its own {@code etcd} and a
 * {@code kube-controller-manager} running only the controllers of {@link KubeCommandLines#CONTROLLERS}, built from
 * source by
 * {@code simulator/apiserver/build.sh} (system property {@value KubeBinaries#BIN_PROPERTY}), run as child processes
 * on free ports of 127.0.0.1 with a fresh data folder. Unlike {@link EmbeddedCluster} it validates against the
 * OpenAPI and CRD schemas, authorizes with {@code Node,RBAC}, runs admission (ValidatingAdmissionPolicy,
 * NodeRestriction, PodSecurity, ServiceAccount), issues service-account tokens (TokenRequest; a token bound to a pod
 * carries the claim {@code authentication.kubernetes.io/node-name} of the pod's node) and serves the Eviction API,
 * which PodDisruptionBudgets guard (their status computed by the disruption controller).
 *
 * <pre>
 * try (RealApiServer api = RealApiServer.start()) {
 *     api.apply(Path.of("charts/npu-lifecycle/templates/10-rbac-node-agent.yaml"));
 *     api.addNode(EmbeddedCluster.npuNode("node-0"));
 *     String token = api.podBoundToken("npu-operator", "npu-lifecycle-node-agent", "agent-node-0", Duration.ofHours(1));
 *     try (KubernetesClient agent = api.newTokenClient(token, c -> { })) { ... }
 * }
 * </pre>
 *
 * <p>Install mode ({@code RealApiServer.builder().installMode(true).start()}, for helm and {@code kubectl apply}
 * tests): Pod Security admission {@code restricted} is the cluster default, and kube-controller-manager also runs the
 * Deployment, ReplicaSet, DaemonSet, Job, garbage-collector and ServiceAccount controllers
 * ({@link Builder#installMode(boolean)}); pods still stay Pending (no scheduler, no kubelet).
 *
 * <p>Faults for watch-recovery tests: {@link #restartApiServer()} (kube-apiserver killed and started again, etcd and
 * its data kept) and {@link #compact()} (etcd compacted: old resourceVersions answer 410 Gone).
 *
 * <p>No scheduler or kubelet runs, and of the controllers (outside install mode) only the disruption controller:
 * nothing creates the
 * {@code default} ServiceAccount of a namespace ({@link #ensureNamespace} does), creates the pods of a ReplicaSet,
 * schedules or runs pods, watches node heartbeats, or garbage-collects; a deleted pod of a node
 * stays Terminating until it is deleted again with grace period 0 (the kubelet's part); the status sent with a
 * create is dropped (write it through the status subresource). Certificates: a fresh CA, the admin client is
 * CN=admin, O=system:masters; kube-controller-manager has its own, CN=system:kube-controller-manager, and runs each
 * controller under that controller's ServiceAccount. {@link #close()} stops the three processes and removes the data
 * folder; so does a JVM shutdown hook, and after a SIGKILL of the JVM the next {@link #start()} of any JVM on the
 * machine ({@link RunRecords}). Thread-safe.
 */
public final class RealApiServer implements ClusterBackend {

    /** {@code --service-account-issuer} and the default audience of the tokens it issues. */
    public static final String SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";
    /** How long {@link #start()} waits for etcd and then kube-apiserver to be ready. */
    public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(180);

    private static final Duration STOP_GRACE = Duration.ofSeconds(10);
    private static final ResourceDefinitionContext NPU_CTL_CONTEXT = new ResourceDefinitionContext.Builder()
            .withGroup(EmbeddedCluster.NPU_OPERATOR_CTL.group()).withVersion(EmbeddedCluster.NPU_OPERATOR_CTL.version())
            .withKind(EmbeddedCluster.NPU_OPERATOR_CTL.kind()).withPlural(EmbeddedCluster.NPU_OPERATOR_CTL.plural())
            .withNamespaced(true).build();

    private final Path data;
    private final RunRecords.Record record;
    private final Thread shutdownHook = new Thread(this::close, "npu-real-apiserver-shutdown");
    private final Duration startDuration;
    private Duration controllerManagerStartDuration;
    private final Duration startTimeout;
    private final LongSupplier nanoClock;
    private final boolean installMode;
    private final String realNode;
    private KubePki pki;
    private ChildProcess etcd;
    private volatile ChildProcess apiserver;
    private ChildProcess controllerManager;
    private ChildProcess scheduler;
    private List<String> apiServerCommand;
    private ServerProbe probe;
    private EtcdGateway etcdGateway;
    private String masterUrl;
    private final BackendClients.Shared shared = new BackendClients.Shared(this::newClient);
    private volatile boolean closed;

    private RealApiServer(KubeBinaries bin, Duration timeout, LongSupplier nanoClock, List<String> extraApiServerFlags,
            boolean installMode, String realNode) throws IOException {
        this(bin, timeout, nanoClock, extraApiServerFlags, installMode, realNode, null);
    }

    private RealApiServer(KubeBinaries bin, Duration timeout, LongSupplier nanoClock, List<String> extraApiServerFlags,
            boolean installMode, String realNode, Duration nodeMonitorGrace) throws IOException {
        this.startTimeout = timeout;
        this.installMode = installMode || realNode != null;
        this.realNode = realNode;
        String host = realNode == null ? "127.0.0.1" : KubeCommandLines.REAL_NODE_ADDRESS;
        this.nanoClock = nanoClock;
        long t0 = nanoClock.getAsLong();
        RunRecords records = RunRecords.standard();
        records.reapLeftovers();
        data = Files.createTempDirectory("npu-kube-");
        record = records.open(data);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            pki = KubePki.generate(bin.pki(), data.resolve("pki"), realNode);
            probe = new ServerProbe(pki.caCert(), nanoClock);
            String etcdUrl = null;
            // ports of LoopbackPorts: never handed out twice, outside the ephemeral range, reserved against the
            // other JVMs that use it; a process that does not use it may still take one before the server binds
            // it: such a start is tried again on other ports
            for (int attempt = 1; etcdUrl == null; attempt++) {
                String clientUrl = "http://127.0.0.1:" + LoopbackPorts.shared().allocate();
                String peerUrl = "http://127.0.0.1:" + LoopbackPorts.shared().allocate();
                RunRecords.deleteTree(data.resolve("etcd"));
                etcd = startChild("etcd", KubeCommandLines.etcd(bin, data.resolve("etcd"), clientUrl,
                        peerUrl), data.resolve("etcd.log"));
                record.add(etcd);
                if (awaitReady(clientUrl + "/health", etcd, timeout, t0, attempt)) {
                    etcdUrl = clientUrl;
                }
            }
            etcdGateway = new EtcdGateway(etcdUrl);
            for (int attempt = 1; masterUrl == null; attempt++) {
                int apiPort = LoopbackPorts.shared().allocate();
                List<String> command = new ArrayList<>(KubeCommandLines.kubeApiserver(bin, pki,
                        data.resolve("apiserver-certs"), etcdUrl, apiPort, SERVICE_ACCOUNT_ISSUER));
                if (this.installMode) {
                    Path admission = data.resolve("admission-configuration.yaml");
                    Files.writeString(admission, KubeCommandLines.RESTRICTED_ADMISSION_CONFIGURATION);
                    command.addAll(KubeCommandLines.restrictedPodSecurityFlags(admission));
                }
                if (realNode != null) {
                    command.addAll(KubeCommandLines.realNodeApiServerFlags(pki));
                }
                command.addAll(extraApiServerFlags);
                apiServerCommand = List.copyOf(command);
                apiserver = startChild("kube-apiserver", apiServerCommand, data.resolve("kube-apiserver.log"));
                record.add(apiserver);
                if (awaitReady("https://" + host + ":" + apiPort + "/readyz", apiserver, timeout, t0, attempt)) {
                    masterUrl = "https://" + host + ":" + apiPort;
                }
            }
            Path kubeconfig = Kubeconfigs.forControllerManager(data.resolve("controller-manager.kubeconfig"),
                    masterUrl, pki);
            long tcm = nanoClock.getAsLong();
            boolean ready = false;
            for (int attempt = 1; !ready; attempt++) {
                int port = LoopbackPorts.shared().allocate();
                List<String> controllers = new ArrayList<>(realNode != null ? KubeCommandLines.REAL_NODE_CONTROLLERS
                        : installMode ? KubeCommandLines.INSTALL_CONTROLLERS : KubeCommandLines.CONTROLLERS);
                if (nodeMonitorGrace != null && !controllers.contains("nodelifecycle")) {
                    controllers.add("nodelifecycle");
                }
                List<String> command = new ArrayList<>(KubeCommandLines.kubeControllerManager(bin, pki, kubeconfig,
                        port, controllers));
                if (realNode != null) {
                    command.addAll(KubeCommandLines.realNodeControllerManagerFlags(pki));
                }
                if (nodeMonitorGrace != null) {
                    command.addAll(KubeCommandLines.nodeLifecycleFlags(nodeMonitorGrace));
                }
                controllerManager = startChild("kube-controller-manager", command,
                        data.resolve("kube-controller-manager.log"));
                record.add(controllerManager);
                ready = awaitReady("https://127.0.0.1:" + port + "/healthz", controllerManager, timeout, t0, attempt);
            }
            controllerManagerStartDuration = Duration.ofNanos(nanoClock.getAsLong() - tcm);
            if (realNode != null) {
                Path schedulerKubeconfig = Kubeconfigs.forComponent(data.resolve("scheduler.kubeconfig"), masterUrl,
                        pki, pki.schedulerCert(), pki.schedulerKey());
                ready = false;
                for (int attempt = 1; !ready; attempt++) {
                    int port = LoopbackPorts.shared().allocate();
                    scheduler = startChild("kube-scheduler", KubeCommandLines.kubeScheduler(bin, pki,
                            schedulerKubeconfig, port), data.resolve("kube-scheduler.log"));
                    record.add(scheduler);
                    ready = awaitReady("https://127.0.0.1:" + port + "/healthz", scheduler, timeout, t0, attempt);
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        startDuration = Duration.ofNanos(nanoClock.getAsLong() - t0);
    }

    /**
     * Starts a server binary, stdout and stderr appended to {@code log}, standard input from {@code /dev/null}.
     *
     * @param name for messages and the run record, e.g. {@code etcd}
     * @throws UncheckedIOException when it cannot be started
     */
    private static ChildProcess startChild(String name, List<String> command, Path log) {
        try {
            return ChildProcess.builder(command).name(name).output(log, true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + " (" + command.get(0) + ")", e);
        }
    }

    /**
     * @return true when {@code url} answered 200; false when the server exited because its port was taken (and
     *         attempts are left: the caller starts it on other ports)
     * @throws IllegalStateException on any other failure, or a taken port at the third attempt
     */
    private boolean awaitReady(String url, ChildProcess server, Duration timeout, long t0, int attempt) {
        long left = timeout.toNanos() - (nanoClock.getAsLong() - t0);
        try {
            probe.awaitOk(url, server, Duration.ofNanos(Math.max(left, 0)));
            return true;
        } catch (IllegalStateException e) {
            if (attempt < 3 && !server.alive() && server.outputTail(10).contains("address already in use")) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Starts etcd and kube-apiserver from the binaries of system property {@value KubeBinaries#BIN_PROPERTY} and
     * waits (at most {@link #DEFAULT_START_TIMEOUT}) until kube-apiserver's {@code /readyz} and then
     * kube-controller-manager's {@code /healthz} answer 200.
     *
     * @return the ready server
     * @throws IllegalStateException when the binaries are missing (the message says what to install or build), a
     *         process exits or the timeout passes (the message has the end of its log)
     * @throws UncheckedIOException when the data folder cannot be written
     */
    public static RealApiServer start() {
        return start(KubeBinaries.fromSystemProperties(), DEFAULT_START_TIMEOUT, System::nanoTime);
    }

    /**
     * @param bin the binaries
     * @param timeout how long to wait for readiness
     * @param nanoClock monotonic nanoseconds, for the deadlines
     * @return the ready server, as {@link #start()}
     */
    public static RealApiServer start(KubeBinaries bin, Duration timeout, LongSupplier nanoClock) {
        return start(bin, timeout, nanoClock, List.of());
    }

    /**
     * As {@link #start(KubeBinaries, Duration, LongSupplier)}, with more kube-apiserver flags after the standard
     * ones (a later flag wins), e.g. {@code --watch-cache=false}: every watch is then served by etcd itself, so a
     * watch from a compacted resourceVersion is answered {@code 410 Gone} (with the watch cache, the cache's own
     * window decides).
     *
     * @param bin the binaries
     * @param timeout how long to wait for readiness
     * @param nanoClock monotonic nanoseconds, for the deadlines
     * @param extraApiServerFlags e.g. {@code List.of("--watch-cache=false")}
     * @return the ready server
     */
    public static RealApiServer start(KubeBinaries bin, Duration timeout, LongSupplier nanoClock,
            List<String> extraApiServerFlags) {
        return builder().binaries(bin).startTimeout(timeout).nanoClock(nanoClock).apiServerFlags(extraApiServerFlags)
                .start();
    }

    /**
     * @return a builder with the defaults of {@link #start()}: the binaries of {@link KubeBinaries#fromSystemProperties()},
     *         {@link #DEFAULT_START_TIMEOUT}, {@link System#nanoTime()}, no extra flags, install mode off
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * How a {@link RealApiServer} starts. Not thread-safe; {@link #start()} may be called more than once (each call
     * starts a new server).
     */
    public static final class Builder {
        private Supplier<KubeBinaries> binaries = KubeBinaries::fromSystemProperties;
        private Duration startTimeout = DEFAULT_START_TIMEOUT;
        private LongSupplier nanoClock = System::nanoTime;
        private List<String> apiServerFlags = List.of();
        private boolean installMode;
        private Duration nodeMonitorGrace;
        private String realNode;

        private Builder() {
        }

        /**
         * @param bin the binaries (default: {@link KubeBinaries#fromSystemProperties()}, read at {@link #start()})
         * @return this builder
         */
        public Builder binaries(KubeBinaries bin) {
            this.binaries = () -> bin;
            return this;
        }

        /**
         * @param timeout how long {@link #start()} waits for each process to get ready, in total (default
         *        {@link #DEFAULT_START_TIMEOUT})
         * @return this builder
         */
        public Builder startTimeout(Duration timeout) {
            this.startTimeout = timeout;
            return this;
        }

        /**
         * @param clock monotonic nanoseconds, for the deadlines (default {@link System#nanoTime()})
         * @return this builder
         */
        public Builder nanoClock(LongSupplier clock) {
            this.nanoClock = clock;
            return this;
        }

        /**
         * @param flags kube-apiserver flags after the standard ones (a later flag wins), e.g.
         *        {@code --watch-cache=false}; default none
         * @return this builder
         */
        public Builder apiServerFlags(List<String> flags) {
            this.apiServerFlags = List.copyOf(flags);
            return this;
        }

        /**
         * Install mode, for tests that install the product as an operator would (helm, {@code kubectl apply}):
         * Pod Security admission {@code restricted} (enforce, audit and warn) is the default of every namespace
         * without its own {@code pod-security.kubernetes.io/*} labels ({@link
         * KubeCommandLines#RESTRICTED_ADMISSION_CONFIGURATION}, no exemptions), and kube-controller-manager runs
         * the controllers an installation needs ({@link KubeCommandLines#INSTALL_CONTROLLERS}: Deployments,
         * ReplicaSets, DaemonSets, Jobs, garbage collection, default ServiceAccounts). Pods are still never
         * scheduled nor run: the pods those controllers create stay Pending. Off by default: the other tests and the
         * scenarios create pods themselves (some privileged, in unlabelled namespaces) and start faster without
         * these controllers (the garbage collector's graph watches every resource).
         *
         * @param on true for install mode
         * @return this builder
         */
        public Builder installMode(boolean on) {
            this.installMode = on;
            return this;
        }

        /**
         * A server for a real node ({@link RealNode}): install mode, plus kube-scheduler, the
         * {@code root-ca-cert-publisher} controller, kube-apiserver bound to and advertising the node's bridge
         * address {@link KubeCommandLines#REAL_NODE_ADDRESS} (which must exist: start the {@link RealNode} first),
         * the {@code lease} endpoint reconciler, and the kubelet client certificate of the node in the PKI
         * ({@link #writeKubeletKubeconfig(Path)}).
         *
         * @param nodeName the node's name, e.g. {@code npu-node-0}
         * @return this
         */
        public Builder realNode(String nodeName) {
            this.realNode = nodeName;
            return this;
        }

        /**
         * Runs kube-controller-manager's node-lifecycle controller too ({@code nodelifecycle}), checking every second
         * and marking a node whose kubelet has not renewed its Lease ({@code kube-node-lease}) nor posted its status
         * for {@code grace} {@code Ready=Unknown}, tainted {@code node.kubernetes.io/unreachable} (NoSchedule,
         * NoExecute); the taint-eviction controller does not run, so no pod is evicted for the taint. Whoever starts
         * such a server renews the Leases of the nodes it creates (the kubelets' heartbeat), or they go NotReady.
         *
         * @param grace {@code --node-monitor-grace-period} (wall clock), e.g. 8 s
         * @return this
         */
        public Builder nodeLifecycle(Duration grace) {
            this.nodeMonitorGrace = grace;
            return this;
        }

        /**
         * Starts etcd, kube-apiserver and kube-controller-manager and waits until they are ready, as
         * {@link RealApiServer#start()}.
         *
         * @return the ready server; the caller closes it
         * @throws IllegalStateException when the binaries are missing (the message says what to install or build),
         *         a process exits or the timeout passes (the message has the end of its log)
         * @throws UncheckedIOException when the data folder cannot be written
         */
        public RealApiServer start() {
            try {
                return new RealApiServer(binaries.get(), startTimeout, nanoClock, apiServerFlags, installMode, realNode,
                        nodeMonitorGrace);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create the data folder of a real API server", e);
            }
        }
    }

    /**
     * @return true when started in install mode ({@link Builder#installMode(boolean)}): Pod Security
     *         {@code restricted} by default, the workload controllers running
     */
    public boolean installMode() {
        return installMode;
    }

    @Override
    public String kind() {
        return REAL;
    }

    /** @return e.g. {@code https://127.0.0.1:41231} */
    @Override
    public String masterUrl() {
        return masterUrl;
    }

    /** @return the data folder (certificates, etcd data, logs); removed by {@link #close()} */
    public Path dataFolder() {
        return data;
    }

    /** @return the CA certificate (PEM) that the serving certificate chains to */
    public Path caCertificate() {
        return pki.caCert();
    }

    /**
     * @return a new TLS server context presenting kube-apiserver's serving certificate (127.0.0.1, signed by
     *         {@link #caCertificate()}), for a front proxy that the server's clients trust as they trust the server
     *         (no ALPN: clients speak HTTP/1.1 to it)
     * @throws IllegalStateException when the certificate or key cannot be read
     */
    public javax.net.ssl.SSLContext servingSslContext() {
        return pki.servingSslContext();
    }

    /**
     * @return a new TLS client context that trusts {@link #caCertificate()} only, without a client certificate: how
     *         a front proxy reaches kube-apiserver while each request keeps its own bearer token
     * @throws IllegalStateException when the CA certificate cannot be read
     */
    public javax.net.ssl.SSLContext trustingSslContext() {
        return pki.trustingSslContext();
    }

    /**
     * Kills kube-apiserver (SIGKILL: a crash, no graceful shutdown, every watch and connection cut), keeps etcd and
     * its data, and starts kube-apiserver again with the same command line: the same port, certificates and
     * service-account keys, so that existing clients and tokens go on working once it is back. Returns when
     * {@code /readyz} answers 200 again.
     *
     * @return how long kube-apiserver was away, from the kill to {@code /readyz} answering 200
     * @throws IllegalStateException when the server was closed, or kube-apiserver does not get ready within the
     *         start timeout (the message has the end of its log)
     */
    public synchronized Duration restartApiServer() {
        if (closed) {
            throw new IllegalStateException("the real API server at " + masterUrl + " is closed");
        }
        long t0 = nanoClock.getAsLong();
        apiserver.kill();
        apiserver = startChild("kube-apiserver", apiServerCommand, apiserver.outputFile());
        record.add(apiserver);
        probe.awaitOk(masterUrl + "/readyz", apiserver, startTimeout);
        return Duration.ofNanos(nanoClock.getAsLong() - t0);
    }

    /**
     * Compacts etcd to its current revision (through etcd's gRPC-gateway, {@code POST /v3/kv/compaction}): every
     * older resourceVersion is gone, so a watch or a list that asks for one is answered {@code 410 Gone} (a watch
     * directly, when the server was started with {@code --watch-cache=false}; otherwise once the watch cache no
     * longer holds it).
     *
     * @return the revision compacted to (a resourceVersion: every object's is at most this)
     * @throws IllegalStateException when etcd refuses or does not answer
     */
    public long compact() {
        return etcdGateway.compactToCurrent();
    }

    /**
     * Writes the kubeconfig of the real node's kubelet (client certificate CN=system:node:&lt;name&gt;, O=system:nodes).
     *
     * @param file where to write it
     * @return {@code file}
     * @throws IllegalStateException when the server was not started for a real node ({@link Builder#realNode})
     * @throws UncheckedIOException when it cannot be written
     */
    public Path writeKubeletKubeconfig(Path file) {
        if (realNode == null) {
            throw new IllegalStateException("this API server was not started for a real node (builder().realNode(name))");
        }
        return Kubeconfigs.forComponent(file, masterUrl, pki, pki.kubeletCert(), pki.kubeletKey());
    }

    /**
     * Writes the kubeconfig of kube-proxy (client certificate CN=system:kube-proxy).
     *
     * @param file where to write it
     * @return {@code file}
     * @throws UncheckedIOException when it cannot be written
     */
    public Path writeKubeProxyKubeconfig(Path file) {
        return Kubeconfigs.forComponent(file, masterUrl, pki, pki.proxyCert(), pki.proxyKey());
    }

    /** @return the real node's name ({@link Builder#realNode}), or null */
    public String realNodeName() {
        return realNode;
    }

    /** @return the kube-scheduler log file (in the data folder), or null without a real node */
    public Path schedulerLog() {
        return scheduler == null ? null : scheduler.outputFile();
    }

    /** @return the pids of etcd, kube-apiserver and kube-controller-manager, in that order */
    public List<Long> pids() {
        return List.of(etcd.pid(), apiserver.pid(), controllerManager.pid());
    }

    /** @return the kube-controller-manager log file (in the data folder) */
    public Path controllerManagerLog() {
        return controllerManager.outputFile();
    }

    /** @return the kube-apiserver log file (in the data folder) */
    public Path apiServerLog() {
        return apiserver.outputFile();
    }

    /** @return from kube-apiserver's {@code /readyz} answering 200 to kube-controller-manager's {@code /healthz} doing so */
    public Duration controllerManagerStartDuration() {
        return controllerManagerStartDuration;
    }

    /** @return from {@link #start()} to kube-apiserver's {@code /readyz} and kube-controller-manager's {@code /healthz}
     *          answering 200 */
    public Duration startDuration() {
        return startDuration;
    }

    @Override
    public KubernetesClient client() {
        return shared.get();
    }

    /**
     * @param customizer changes the configuration before the client is built
     * @return a new admin client (CN=admin, O=system:masters; JDK HTTP client, namespace {@code npu-operator}, 10 s
     *         request timeout, 2 retries 50 ms apart); the caller closes it
     */
    @Override
    public KubernetesClient newClient(Consumer<Config> customizer) {
        return build(c -> {
            c.setClientCertData(KubePki.base64(pki.adminCert()));
            c.setClientKeyData(KubePki.base64(pki.adminKey()));
            c.setClientKeyAlgo("RSA");
            customizer.accept(c);
        });
    }

    /**
     * @param token a bearer token, e.g. from {@link #podBoundToken}
     * @param customizer changes the configuration before the client is built
     * @return a new client that authenticates with the token only (defaults as {@link #newClient(Consumer)}); the
     *         caller closes it
     */
    public KubernetesClient newTokenClient(String token, Consumer<Config> customizer) {
        return newTokenClient(token, customizer, h -> { });
    }

    /**
     * @param token a bearer token, e.g. from {@link #podBoundToken}
     * @param customizer changes the configuration before the client is built
     * @param http changes the HTTP client before it is built, e.g. adds an
     *        {@link io.fabric8.kubernetes.client.http.Interceptor} that counts the requests of a test
     * @return a new client as {@link #newTokenClient(String, Consumer)}; the caller closes it
     */
    public KubernetesClient newTokenClient(String token, Consumer<Config> customizer,
            Consumer<io.fabric8.kubernetes.client.http.HttpClient.Builder> http) {
        return build(c -> {
            c.setOauthToken(token);
            customizer.accept(c);
        }, http);
    }

    private KubernetesClient build(Consumer<Config> credentials) {
        return build(credentials, h -> { });
    }

    private KubernetesClient build(Consumer<Config> credentials,
            Consumer<io.fabric8.kubernetes.client.http.HttpClient.Builder> http) {
        return BackendClients.build(masterUrl, config -> {
            config.setCaCertData(KubePki.base64(pki.caCert()));
            credentials.accept(config);
        }, http);
    }

    @Override
    public Path writeKubeconfig(Path file) {
        return Kubeconfigs.withClientCertificate(file, masterUrl, pki, EmbeddedCluster.NPU_NAMESPACE);
    }

    /**
     * Writes a kubeconfig that authenticates with a bearer token (e.g. for a node agent's process), the CA
     * embedded, namespace {@code npu-operator}.
     *
     * @param file where to write it; folders are created; mode 0600
     * @param token e.g. from {@link #podBoundToken}
     * @return {@code file}
     * @throws UncheckedIOException when it cannot be written
     */
    public Path writeTokenKubeconfig(Path file, String token) {
        return Kubeconfigs.withToken(file, masterUrl, pki, EmbeddedCluster.NPU_NAMESPACE, token);
    }

    /**
     * Applies the CRD file (as {@link EmbeddedCluster#installCrd()} finds it) and waits until it is Established.
     *
     * @throws IllegalStateException when no CRD file is found, or it is not Established within 60 s
     */
    @Override
    public Path installCrd() {
        Path file = EmbeddedCluster.findCrdFile();
        if (file == null) {
            throw new IllegalStateException("no CRD file: neither system property " + EmbeddedCluster.CRD_FILE_PROPERTY
                    + " nor " + EmbeddedCluster.CRD_FILE + " in the working folder or a parent");
        }
        installCrd(file);
        return file;
    }

    /** Applies the CRD file and waits until it is Established (at most 60 s). */
    @Override
    public void installCrd(Path file) {
        if (file == null) {
            throw new IllegalArgumentException("a real API server needs a CRD file to serve NPUOperatorCtl; got null");
        }
        apply(file);
    }

    /**
     * Server-side applies every object of the file (field manager {@code npu-real-apiserver}, conflicts forced),
     * creating the namespace of each namespaced object first and waiting for each CRD to be Established.
     */
    @Override
    public List<HasMetadata> apply(Path yaml) {
        try (InputStream in = Files.newInputStream(yaml)) {
            List<HasMetadata> out = new ArrayList<>();
            for (HasMetadata o : client().load(in).items()) {
                if (o.getMetadata().getNamespace() != null) {
                    ensureNamespace(o.getMetadata().getNamespace());
                }
                HasMetadata applied = client().resource(o).fieldManager("npu-real-apiserver").forceConflicts()
                        .serverSideApply();
                if (applied instanceof CustomResourceDefinition) {
                    awaitEstablished(applied.getMetadata().getName());
                }
                out.add(applied);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + yaml, e);
        }
    }

    private void awaitEstablished(String crd) {
        client().apiextensions().v1().customResourceDefinitions().withName(crd).waitUntilCondition(c -> c != null
                && c.getStatus() != null && c.getStatus().getConditions() != null // none yet right after the create
                && c.getStatus().getConditions().stream()
                        .anyMatch(k -> "Established".equals(k.getType()) && "True".equals(k.getStatus())),
                60, TimeUnit.SECONDS);
    }

    /** Creates the namespace when absent, and its {@code default} ServiceAccount (no controller-manager does). */
    @Override
    public Namespace ensureNamespace(String name) {
        Namespace ns = client().namespaces().withName(name).get();
        if (ns == null) {
            ns = createOrGet(() -> client().namespaces().resource(new NamespaceBuilder().withNewMetadata()
                    .withName(name).endMetadata().build()).create(), () -> client().namespaces().withName(name).get());
        }
        ensureServiceAccount(name, "default");
        return ns;
    }

    /**
     * @param namespace an existing namespace
     * @param name ServiceAccount name
     * @return the ServiceAccount, created when absent
     */
    public ServiceAccount ensureServiceAccount(String namespace, String name) {
        ServiceAccount sa = client().serviceAccounts().inNamespace(namespace).withName(name).get();
        return sa != null ? sa : createOrGet(() -> client().serviceAccounts().inNamespace(namespace)
                .resource(new ServiceAccountBuilder().withNewMetadata().withName(name).withNamespace(namespace)
                        .endMetadata().build()).create(),
                () -> client().serviceAccounts().inNamespace(namespace).withName(name).get());
    }

    /** Creates; when another caller created it meanwhile (409), reads it. */
    private static <T> T createOrGet(Supplier<T> create, Supplier<T> get) {
        try {
            return create.get();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                return get.get();
            }
            throw e;
        }
    }

    /**
     * Creates the node, then writes its status (which a create does not store). The admission plugin
     * TaintNodesByCondition gives every new node the taint {@value #NOT_READY_TAINT}{@code :NoSchedule}; a node
     * written Ready loses it here, as the node lifecycle controller (not run) removes it once the kubelet reports
     * Ready.
     */
    @Override
    public Node addNode(Node node) {
        String name = node.getMetadata().getName();
        Node[] created = {client().nodes().resource(node).create()};
        // a node-lifecycle controller (Builder.nodeLifecycle) may write the new Node meanwhile: again on a 409
        if (node.getStatus() != null) {
            NodeEdits.retryOnConflict(() -> {
                Node latest = client().nodes().withName(name).get();
                latest.setStatus(node.getStatus());
                created[0] = client().nodes().resource(latest).updateStatus();
            });
        }
        boolean ready = created[0].getStatus() != null && created[0].getStatus().getConditions() != null
                && created[0].getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        if (ready) {
            NodeEdits.retryOnConflict(() -> {
                Node latest = client().nodes().withName(name).get();
                if (latest.getSpec().getTaints() != null
                        && latest.getSpec().getTaints().removeIf(t -> NOT_READY_TAINT.equals(t.getKey()))) {
                    latest = client().nodes().resource(latest).update();
                }
                created[0] = latest;
            });
        }
        return created[0];
    }

    /** The taint a node gets at its creation until the node lifecycle controller sees it Ready. */
    public static final String NOT_READY_TAINT = "node.kubernetes.io/not-ready";

    /**
     * Creates the driver pod of {@link EmbeddedCluster#addDriverPod} (ServiceAccount {@code default}, bound to the
     * node by {@code spec.nodeName}) and sets its phase to Running.
     */
    @Override
    public Pod addDriverPod(String nodeName, String image) {
        ensureNamespace(EmbeddedCluster.NPU_NAMESPACE);
        Pod pod = new PodBuilder()
                .withNewMetadata().withName("npu-driver-" + nodeName).withNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .addToLabels("app", EmbeddedCluster.DRIVER_POD_LABEL_VALUE).endMetadata()
                .withNewSpec().withNodeName(nodeName).withHostPID(true)
                .addNewContainer().withName("driver").withImage(image).withNewSecurityContext().withPrivileged(true)
                .endSecurityContext().endContainer()
                .endSpec()
                .build();
        Pod created = client().pods().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(pod).create();
        created.setStatus(new PodStatusBuilder().withPhase("Running").build());
        return client().pods().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(created).updateStatus();
    }

    /** Installs the CRD first when the server does not serve it yet. */
    @Override
    public GenericKubernetesResource createNpuOperatorCtl(String driverVersion, boolean autoUpgrade,
            boolean autoRecover) {
        if (client().apiextensions().v1().customResourceDefinitions()
                .withName(EmbeddedCluster.NPU_OPERATOR_CTL.plural() + "." + EmbeddedCluster.NPU_OPERATOR_CTL.group())
                .get() == null) {
            installCrd();
        }
        ensureNamespace(EmbeddedCluster.NPU_NAMESPACE);
        Map<String, Object> driver = new LinkedHashMap<>();
        driver.put("version", driverVersion);
        driver.put("upgradePolicy", new LinkedHashMap<>(Map.of("autoUpgrade", autoUpgrade)));
        driver.put("recoveryPolicy", new LinkedHashMap<>(Map.of("autoRecover", autoRecover)));
        GenericKubernetesResource cr = new GenericKubernetesResourceBuilder()
                .withApiVersion(EmbeddedCluster.NPU_OPERATOR_CTL.groupVersion())
                .withKind(EmbeddedCluster.NPU_OPERATOR_CTL.kind())
                .withNewMetadata().withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME)
                .withNamespace(EmbeddedCluster.NPU_NAMESPACE).endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of("driver", driver)))
                .build();
        return npuOperatorCtls().resource(cr).create();
    }

    @Override
    public MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> npuOperatorCtls() {
        return client().genericKubernetesResources(NPU_CTL_CONTEXT);
    }

    /**
     * Mints a service-account token bound to a pod (TokenRequest with {@code boundObjectRef} kind Pod): it is valid
     * while the pod exists, and when the pod has a {@code spec.nodeName} it carries the node-name claim that the
     * API server exposes as {@code userInfo.extra["authentication.kubernetes.io/node-name"]}.
     *
     * @param namespace namespace of the ServiceAccount and the pod
     * @param serviceAccount the ServiceAccount (must exist)
     * @param podName the pod (must exist and run under that ServiceAccount)
     * @param ttl lifetime; the API server accepts 10 minutes to 48 hours
     * @return the token (a JWT)
     * @throws IllegalArgumentException when the pod does not exist
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server refuses the request
     */
    public String podBoundToken(String namespace, String serviceAccount, String podName, Duration ttl) {
        Pod pod = client().pods().inNamespace(namespace).withName(podName).get();
        if (pod == null) {
            throw new IllegalArgumentException("no pod " + namespace + "/" + podName + " to bind a token to");
        }
        TokenRequest request = new TokenRequestBuilder().withNewSpec().withExpirationSeconds(ttl.toSeconds())
                .withNewBoundObjectRef().withApiVersion("v1").withKind("Pod").withName(podName)
                .withUid(pod.getMetadata().getUid()).endBoundObjectRef().endSpec().build();
        return client().serviceAccounts().inNamespace(namespace).withName(serviceAccount).tokenRequest(request)
                .getStatus().getToken();
    }

    /**
     * Stops kube-controller-manager, kube-apiserver, then etcd (SIGTERM, SIGKILL after 10 s), closes the client,
     * removes the data folder.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        shared.close();
        for (ChildProcess p : new ChildProcess[] {scheduler, controllerManager, apiserver, etcd}) {
            if (p != null) {
                p.stop(STOP_GRACE);
            }
        }
        RunRecords.deleteTree(data);
        record.remove();
        // last: a JVM shutdown that begins while this runs must still find the hook, which then waits for the lock
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down (this may be the hook itself)
        }
    }
}
