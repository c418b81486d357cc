package io.npulifecycle.simulator.harness;

import io.npulifecycle.simulator.cluster.NodeEdits;


import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.ClusterBackends;
import io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.ImageWhiteLists;
import io.npulifecycle.simulator.common.LoopbackPorts;
import io.npulifecycle.simulator.common.TcpProxy;

/**
 * A simulated cluster on this machine, no real cluster needed: a Kubernetes API server (a {@link ClusterBackend}:
 * the embedded mock or a real kube-apiserver, with the CRD, the {@code NPUOperatorCtl}, NPU nodes and the platform's
 * {@code ImageWhiteList} listing the tags the registry holds), a cluster registry, a control-plane runtime, one
 * node-agent runtime per node with the simulator, and the kubelet / DaemonSet controller emulation. Every runtime is
 * a real Felix runtime started by {@code bin/npu-lifecycle}; they share a compressed clock.
 *
 * <p>On a real API server the manifests of {@code conf/kubernetes/} (ServiceAccounts, RBAC, the node agent's admission
 * policy) are applied first and every runtime authenticates as its own ServiceAccount ({@link RuntimeCredentials});
 * only the harness itself (playing the operator, the kubelet and the DaemonSet controller) uses the admin client.
 */
public final class SimCluster implements ScenarioCluster {

    /** Jolokia user of every runtime of the simulated cluster. */
    public static final String USER = "sim-operator";

    private final SimSettings settings;
    private final Path work;
    private final Path install;
    private final Consumer<String> log;
    private final String password;
    private final String api;
    private ClusterBackend cluster;
    private RuntimeCredentials credentials;
    /** The API server URL the runtimes are given: the forwarder's, with the server's scheme. */
    private String runtimeMaster;
    private FakeRegistry registry;
    private RuntimeProcess controlPlane;
    private final List<RuntimeProcess> controlPlanes = new java.util.concurrent.CopyOnWriteArrayList<>();
    private int replicas = 1;
    /** Drivers installed on the hosts ({@link #hostDrivers(boolean)}). */
    private boolean hostDrivers;
    /** The node-agent DaemonSet of host mode (the chart's {@code 50-node-agent.yaml}). */
    static final String NODE_AGENT_DAEMONSET = "npu-lifecycle-node-agent";
    private boolean markersOnTmpfs;
    private boolean watchesFromEtcd;
    private boolean auditLog;
    private boolean nodeLifecycle;
    private KubeletHeartbeats heartbeats;
    private Thread shutdownHook;
    private boolean answers503;
    /** The bug planted in every runtime (testing the chaos checker), or {@code null}. */
    private PlantedBug plantedBug;
    private ApiFaults apiFaults;
    private Jolokia controlPlaneJolokia;
    private int controlPlanePort;
    private int controlPlaneMetricsPort;
    /** pod name (POD_NAME) of each control-plane replica to its metrics port, for {@link PrometheusTargets} */
    private final Map<String, Integer> controlPlaneMetricsPorts = new java.util.TreeMap<>();
    private final Map<String, SimNode> nodes = new LinkedHashMap<>();
    /** Reads the node agents' {@code /metrics} (whether an agent has probed); shared by the nodes. */
    private final java.net.http.HttpClient metricsClient = java.net.http.HttpClient.newBuilder()
            .connectTimeout(java.time.Duration.ofSeconds(1)).build();
    private volatile DaemonSetController daemonSets;
    private Thread daemonSetThread;
    /** Where a real API server comes from and goes back to ({@link #handOver}); null: each cluster its own. */
    private ServerHandover handover;
    /** The server this cluster got from {@link #handover} or lent to it; null when it closes its own. */
    private ServerHandover.Lent lent;

    /**
     * @param settings cluster size, chips, versions, time scale
     * @param work a folder for every runtime's home and the emulated hosts
     * @param install the installation (bin/, bundles/, conf/)
     * @param log where the harness reports what it does
     */
    public SimCluster(SimSettings settings, Path work, Path install, Consumer<String> log) {
        this(settings, work, install, ClusterBackend.EMBEDDED, log);
    }

    /**
     * @param settings cluster size, chips, versions, time scale
     * @param work a folder for every runtime's home and the emulated hosts
     * @param install the installation (bin/, bundles/, conf/, kube/)
     * @param api {@value ClusterBackend#EMBEDDED} or {@value ClusterBackend#REAL}
     * @param log where the harness reports what it does
     * @throws IllegalArgumentException when {@code api} is neither (the message names the two choices)
     */
    public SimCluster(SimSettings settings, Path work, Path install, String api, Consumer<String> log) {
        this.api = ClusterBackends.checkKind(api);
        this.settings = settings;
        this.cpClockOffset = settings.wallOffsetMillis();
        this.work = work;
        this.install = install;
        this.log = log;
        this.password = "sim-" + Long.toHexString(new java.security.SecureRandom().nextLong());
    }

    /**
     * Starts everything: API server, CRD, CR at the installed version, registry holding the installed version and
     * {@code extraVersions}, NPU nodes, the control plane, and the DaemonSet controller that starts the node agents.
     *
     * @param extraVersions further driver versions the registry holds (e.g. the upgrade target)
     * @throws IOException when a folder or a process cannot be created
     */
    @Override
    public void start(List<String> extraVersions) throws IOException {
        Files.createDirectories(work);
        // Cancelled (SIGTERM, Ctrl-C, a CI timeout): take every runtime of the simulated cluster down too.
        // The DaemonSet controller stops first: it would restart the agents the hook stops.
        shutdownHook = new Thread(() -> {
            DaemonSetController controller = daemonSets;
            if (controller != null) {
                controller.stop();
            }
            stopChildren();
            SimNode.unmountAll();
        }, "sim-cluster-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        Path crd = install.resolve("conf/kubernetes/crd-npuoperatorctl.yaml");
        if (Files.exists(crd)) {
            System.setProperty(EmbeddedCluster.CRD_FILE_PROPERTY, crd.toString());
        }
        List<String> flags = new ArrayList<>(ApiFaults.realServerFlags(watchesFromEtcd));
        if (auditLog && ClusterBackend.REAL.equals(api)) {
            flags.addAll(AuditLog.serverFlags(work.resolve("audit")));
        }
        // a server of an earlier file of the same run, restored to the state after its set-up below; not one with an
        // audit log (its file reads it) or with the node-lifecycle controller
        boolean handedOver = handover != null && ClusterBackend.REAL.equals(api) && !auditLog && !nodeLifecycle;
        ServerHandover.Lent taken = handedOver ? handover.take(flags) : null;
        if (taken != null) {
            cluster = taken.server();
            lent = taken;
            log.accept("cluster: API server " + cluster.masterUrl() + " handed over from an earlier file (file "
                    + (taken.files() + 1) + " on it), its baseline restored");
        } else if (nodeLifecycle) {
            if (!ClusterBackend.REAL.equals(api)) {
                throw new IOException("nodeNotReady needs --api real: a node goes NotReady through kube-controller-"
                        + "manager's node-lifecycle controller, which the embedded mock does not have");
            }
            cluster = io.npulifecycle.simulator.cluster.RealApiServer.builder()
                    .binaries(KubeBinarySource.ofInstall(install).get()).apiServerFlags(flags)
                    .nodeLifecycle(NODE_MONITOR_GRACE).start();
        } else {
            cluster = ClusterBackends.start(api, KubeBinarySource.ofInstall(install), flags);
        }
        credentials = new RuntimeCredentials(cluster);
        // the runtimes reach the API server through a forwarder that can make it unreachable, unavailable (503) or
        // close their watches (ApiFaults)
        apiFaults = ApiFaults.start(cluster, answers503, log);
        runtimeMaster = apiFaults.runtimeMaster();
        if (taken == null) {
            // what every file needs and none changes: the baseline a handed-over server is restored to
            credentials.applyManifests(install.resolve("conf/kubernetes"), log);
            cluster.installCrd();
            cluster.ensureNamespace(DaemonSetController.NAMESPACE);
            // the platform's ImageWhiteList kind (runbook preflight item 2); its object is seeded below
            ImageWhiteLists.installCrd(cluster);
            if (handedOver) {
                lent = handover.lend((io.npulifecycle.simulator.cluster.RealApiServer) cluster, flags);
            }
        }
        // the driver DaemonSet template the control plane reads at run time (the chart's ConfigMap); host mode has none
        if (!hostDrivers) {
            DriverDaemonSetTemplate.install(cluster.client(), DaemonSetController.NAMESPACE,
                    DriverDaemonSetTemplate.locate(install.resolve("conf/kubernetes")));
        }
        registry = new FakeRegistry();
        List<String> versions = new ArrayList<>(List.of(settings.installedVersion()));
        versions.addAll(extraVersions);
        for (int i = 0; i < settings.nodes(); i++) {
            Node n = cluster.addNode(EmbeddedCluster.npuNode("node-" + i, settings.chipType(),
                    EmbeddedCluster.DEFAULT_KERNEL, EmbeddedCluster.DEFAULT_OS_IMAGE));
            for (String v : versions) {
                registry.add(repositoryAndTag(EmbeddedCluster.driverImage(v, settings.chipType())));
            }
            nodes.put(n.getMetadata().getName(), null);
        }
        if (nodeLifecycle) {
            heartbeats = new KubeletHeartbeats(cluster.client(), nodes::keySet, log);
        }
        // the platform's ImageWhiteList (runbook preflight item 2) lists every tag the registry holds
        List<String> tags = new ArrayList<>();
        for (String v : versions) {
            tags.add(imageTag(EmbeddedCluster.driverImage(v, settings.chipType())));
        }
        ImageWhiteLists.seed(cluster, tags);
        GenericKubernetesResource cr = cluster.createNpuOperatorCtl(settings.installedVersion(), false, false);
        patchDriver(Map.of("registry", registry.address()));
        log.accept("cluster: API server " + cluster.masterUrl() + ", registry " + registry.address() + ", CR "
                + cr.getMetadata().getNamespace() + "/" + cr.getMetadata().getName());
        Path kubeconfig = cluster.writeKubeconfig(work.resolve("kubeconfig"));
        log.accept("cluster: kubeconfig " + kubeconfig + "  (export KUBECONFIG=" + kubeconfig + ")");

        for (String name : List.copyOf(nodes.keySet())) {
            SimNode node = new SimNode(name, work.resolve(name), install, LoopbackPorts.shared().allocate(), USER, password, runtimeMaster,
                    settings, credentials.enabled(), metricsClient);
            planted(node.runtime());
            if (markersOnTmpfs) {
                node.mountMarkersTmpfs();
            }
            if (hostDrivers) {
                node.hostDrivers();
            }
            nodes.put(name, node);
        }
        if (hostDrivers) {
            createNodeAgentDaemonSet();
        }
        startControlPlane();
        for (int i = 1; i < replicas; i++) {
            startReplica(i);
        }
        daemonSets = new DaemonSetController(cluster.client(), nodes, credentials, settings.timeScale(),
                System::nanoTime, log);
        if (heartbeats != null) {
            daemonSets.silentNodes(heartbeats::silent);
        }
        daemonSetThread = new Thread(daemonSets, "sim-daemonset-controller");
        daemonSetThread.setDaemon(true);
        daemonSetThread.start();
        Map<String, Integer> agents = new LinkedHashMap<>();
        nodes.forEach((name, node) -> agents.put(name, node.metricsPort()));
        PrometheusTargets.write(PrometheusTargets.folder(work), agents, controlPlaneMetricsPorts);
    }

    /**
     * Drivers installed on the hosts (chart {@code driver.enabled=false}); before {@link #start(List)}: the control
     * plane runs with {@code driverManagement=host}, the node agents with {@code mode=host} from the node-agent
     * DaemonSet {@value #NODE_AGENT_DAEMONSET} (not a driver DaemonSet), each emulated host loads its installed driver
     * at every boot by itself (simulator {@code loadAtBoot=true}), and no driver DaemonSet template is installed.
     *
     * @param host true for host-installed drivers
     */
    public void hostDrivers(boolean host) {
        this.hostDrivers = host;
    }

    /**
     * The node-agent DaemonSet of host mode: the node agent alone on every NPU node, label
     * {@code app=npu-lifecycle-node-agent}; its pods are started by the {@link DaemonSetController} like driver pods.
     */
    private void createNodeAgentDaemonSet() {
        Map<String, String> labels = Map.of("app", DaemonSetController.NODE_AGENT_APP);
        cluster.client().apps().daemonSets().inNamespace(DaemonSetController.NAMESPACE).resource(
                new io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder().withNewMetadata()
                        .withName(NODE_AGENT_DAEMONSET).withNamespace(DaemonSetController.NAMESPACE).withLabels(labels)
                        .endMetadata().withNewSpec().withNewSelector().withMatchLabels(labels).endSelector()
                        .withNewUpdateStrategy().withType("RollingUpdate").endUpdateStrategy()
                        .withNewTemplate().withNewMetadata().withLabels(labels).endMetadata().withNewSpec()
                        .withServiceAccountName("npu-lifecycle-node-agent")
                        .withNodeSelector(Map.of(EmbeddedCluster.NPU_PRESENT_LABEL, "true"))
                        .addNewContainer().withName("node-agent").withImage("registry.local/npu-lifecycle/node-agent:"
                                + settings.installedVersion()).endContainer()
                        .endSpec().endTemplate().endSpec().build()).create();
    }

    /**
     * Takes the real API server from {@code handover} when it holds one started with this cluster's flags, and gives
     * it back on {@link #close} (restored to the state after the manifests and CRDs were installed) instead of
     * stopping it; before {@link #start(List)}. Not for a cluster with an audit log or the node-lifecycle controller:
     * those always start their own server.
     *
     * @param handover the run's servers, or null (the default: a server of its own, stopped on close)
     */
    void handOver(ServerHandover handover) {
        this.handover = handover;
    }

    /**
     * How many control-plane replicas to run (leader election on a Lease decides which one writes); before
     * {@link #start(List)}.
     *
     * @param n 1 or 2
     */
    public void controlPlaneReplicas(int n) {
        if (n < 1 || n > 2) {
            throw new IllegalArgumentException("control-plane replicas must be 1 or 2, got " + n);
        }
        this.replicas = n;
    }

    /** The node-lifecycle controller's grace for a node without a heartbeat ({@link #nodeLifecycle}), wall clock. */
    static final java.time.Duration NODE_MONITOR_GRACE = java.time.Duration.ofSeconds(8);

    /**
     * Whether nodes can go NotReady ({@link #nodeNotReady}): the real API server's kube-controller-manager then runs
     * the node-lifecycle controller (grace {@link #NODE_MONITOR_GRACE}), and the harness renews every node's Lease as
     * its kubelet would ({@link KubeletHeartbeats}); before {@link #start(List)}. The embedded mock has no such
     * controller: {@link #start(List)} refuses.
     *
     * @param value whether to
     */
    public void nodeLifecycle(boolean value) {
        this.nodeLifecycle = value;
    }

    /**
     * Kills kube-apiserver and starts it again with the same command line (so the same port: the runtimes' forwarder
     * or front proxy reaches it where it was), etcd and its data kept; a server handed over from an earlier file is
     * restarted the same way and handed on as it is.
     */
    @Override
    public java.time.Duration restartApiServer() {
        if (!(cluster instanceof io.npulifecycle.simulator.cluster.RealApiServer real)) {
            return ScenarioCluster.super.restartApiServer();
        }
        java.time.Duration away = real.restartApiServer();
        log.accept("api: kube-apiserver restarted at " + real.masterUrl() + ", away " + away.toMillis() + " ms");
        return away;
    }

    @Override
    public void nodeNotReady(String node) {
        heartbeats().silence(node);
    }

    @Override
    public void nodeReady(String node) {
        heartbeats().speak(node);
    }

    private KubeletHeartbeats heartbeats() {
        if (heartbeats == null) {
            throw new IllegalStateException("the cluster was started without the node-lifecycle controller");
        }
        return heartbeats;
    }

    /**
     * Whether a real API server records every request in an audit log ({@code <work>/audit/audit.log},
     * {@link AuditLog}), for {@link #apiRequests()}; before {@link #start(List)}. No effect on the embedded mock.
     *
     * @param value whether to
     */
    public void auditLog(boolean value) {
        this.auditLog = value;
    }

    @Override
    public List<AuditLog.Request> apiRequests() throws IOException {
        if (!auditLog || !ClusterBackend.REAL.equals(api)) {
            return ScenarioCluster.super.apiRequests();
        }
        return AuditLog.in(work.resolve("audit")).read();
    }

    /**
     * Whether a real API server serves watches from etcd ({@code --watch-cache=false}), so that {@link #apiGone}
     * makes etcd itself answer resumed watches 410 Gone; before {@link #start(List)}. No effect on the embedded mock.
     *
     * @param value whether to
     */
    public void watchesFromEtcd(boolean value) {
        this.watchesFromEtcd = value;
    }

    /**
     * Whether {@link #unavailableFor} will be used: on a real API server the runtimes then reach it through a TLS
     * front proxy that can answer 503 (HTTP/1.1), otherwise through a forwarder that passes TLS through; before
     * {@link #start(List)}. No effect on the embedded mock.
     *
     * @param value whether to
     */
    public void answers503(boolean value) {
        this.answers503 = value;
    }

    /**
     * Plants a bug in every runtime of the cluster, node agents and control plane ({@code -D}{@value
     * PlantedBug#PROPERTY}{@code =<name>} on their JVMs): to show the chaos checker catching it. Before {@link
     * #start()}.
     *
     * @param bug the bug, or {@code null} for none (the product as it is)
     */
    public void plantedBug(PlantedBug bug) {
        this.plantedBug = bug;
    }

    /** @return {@code rp}, with the planted bug's property on its JVM when a bug is planted */
    private RuntimeProcess planted(RuntimeProcess rp) {
        if (plantedBug != null) {
            rp.extraJavaOptions(plantedBugOption(plantedBug));
        }
        return rp;
    }

    /**
     * @param bug a planted bug
     * @return the JVM options that plant it, {@code -Dnpu.lifecycle.plantedBug=<name>} (and, for {@link
     *         PlantedBug#MEMORY_LEAK}, a direct-memory limit above the leak's cap)
     */
    static String plantedBugOption(PlantedBug bug) {
        String option = "-D" + PlantedBug.PROPERTY + "=" + bug.bugName();
        // the leak is native memory (direct buffers), which the JVM limits to its heap's maximum (160 MiB here) by
        // default: raised above the leak's cap, so that the node agent lives on to be caught by the checker
        return bug == PlantedBug.MEMORY_LEAK ? option + " -XX:MaxDirectMemorySize=" + 2 * PlantedBug.LEAK_CAP_MIB + "m"
                : option;
    }

    /**
     * Puts every node's marker folder on its own small tmpfs (1 MiB), as {@code /run/npu-operator} is on a host, so a
     * scenario can fill it ({@code ENOSPC}) or remount it read-only ({@code EROFS}) for real; before {@link
     * #start(List)}. Needs root (CAP_SYS_ADMIN).
     *
     * @param value whether to
     */
    public void markersOnTmpfs(boolean value) {
        this.markersOnTmpfs = value;
    }

    /** Writes the control plane's Kubernetes client configuration: its own ServiceAccount on a real server. */
    private void writeKubeConfiguration(Path home, Path etc) throws IOException {
        String cfg = RuntimeCredentials.kubeConfiguration(credentials.writeControlPlane(home.resolve("kubeconfig")));
        if (cfg != null) {
            SimNode.write(etc.resolve("io.npulifecycle.kube.cfg"), cfg);
        }
    }

    private void startReplica(int i) throws IOException {
        Path home = work.resolve("control-plane-" + i + "/home");
        Path etc = Files.createDirectories(home.resolve("etc"));
        writeKubeConfiguration(home, etc);
        int metricsPort = LoopbackPorts.shared().allocate();
        controlPlaneMetricsPorts.put(controlPlaneEnv(i).get("POD_NAME"), metricsPort);
        SimNode.write(etc.resolve("runtime.properties"), "http.host=127.0.0.1\nhttp.port=" + LoopbackPorts.shared().allocate()
                + "\nmetrics.port=" + metricsPort + "\nlog.level=" + settings.logLevel() + "\n");
        SimNode.write(etc.resolve("io.npulifecycle.time.cfg"), settings.timeConfig());
        SimNode.write(etc.resolve("io.npulifecycle.upgrade.cfg"), "registryScheme=http\n"
                + (hostDrivers ? "driverManagement=host\n" : ""));
        RuntimeProcess rp = planted(new RuntimeProcess("control-plane-" + i, install, "control-plane", home,
                controlPlaneEnv(i), CrashLoop.CONTROL_PLANE_EXITS));
        rp.start(Map.of());
        controlPlanes.add(rp);
    }

    private Map<String, String> controlPlaneEnv(int replica) {
        Map<String, String> env = new HashMap<>();
        env.put("NPU_LIFECYCLE_JOLOKIA_USER", USER);
        env.put("NPU_LIFECYCLE_JOLOKIA_PASSWORD", password);
        env.put("NPU_LIFECYCLE_KUBE_MASTER", runtimeMaster);
        env.put("POD_NAME", "npu-lifecycle-control-plane-" + replica);
        return env;
    }

    /**
     * @param replica 0 or 1
     * @return that control-plane replica's runtime
     */
    public RuntimeProcess controlPlane(int replica) {
        return controlPlanes.get(replica);
    }

    /** @return how many control-plane replicas run */
    public int controlPlaneReplicas() {
        return controlPlanes.size();
    }

    /**
     * @return the replica holding the upgrade Lease ({@code npu-lifecycle-upgrade}), or -1 when none does
     */
    public int leaderReplica() {
        var lease = cluster.client().leases().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .withName("npu-lifecycle-upgrade").get();
        String holder = lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
        if (holder != null && holder.startsWith("npu-lifecycle-control-plane-")) {
            try {
                return Integer.parseInt(holder.substring("npu-lifecycle-control-plane-".length()));
            } catch (NumberFormatException e) {
                return -1;
            }
        }
        return -1;
    }

    /**
     * SIGKILLs control-plane replicas, optionally restarting them at once as a Deployment would.
     *
     * @param which {@code 0}, {@code 1}, {@code leader} (the Lease holder, else replica 0) or {@code all}
     * @param restart whether to start them again at once
     * @throws IOException if a runtime cannot be started again
     */
    @Override
    public synchronized void killControlPlane(String which, boolean restart) throws IOException {
        List<Integer> targets = new ArrayList<>();
        if (which.equals("all")) {
            for (int i = 0; i < controlPlanes.size(); i++) {
                targets.add(i);
            }
        } else if (which.equals("leader")) {
            int l = leaderReplica();
            targets.add(l >= 0 && l < controlPlanes.size() ? l : 0);
        } else {
            targets.add(Integer.parseInt(which));
        }
        for (int i : targets) {
            controlPlanes.get(i).kill();
            log.accept("control plane: replica " + i + " killed (SIGKILL)");
        }
        if (restart) {
            for (int i : targets) {
                controlPlanes.get(i).start(Map.of());
            }
        }
    }

    /**
     * Starts a control-plane replica that was killed without restart.
     *
     * @param replica 0 or 1
     * @throws IOException if it cannot be started
     */
    @Override
    public synchronized void startControlPlane(int replica) throws IOException {
        RuntimeProcess rp = controlPlanes.get(replica);
        if (!rp.alive()) {
            rp.start(Map.of());
        }
    }

    /**
     * Makes the API server unreachable for the runtimes (connections refused and reset, not an HTTP error) for
     * {@code wall} of wall-clock time, in the background.
     *
     * @param wall how long
     */
    @Override
    public void unreachableFor(java.time.Duration wall) {
        apiFaults.unreachableFor(wall);
    }

    /**
     * Makes the runtimes' requests fail with {@code 503 Service Unavailable} for {@code wall} of wall-clock time, in
     * the background (see {@link ApiFaults#unavailableFor}); on a real server after {@link #answers503(boolean)}.
     *
     * @param wall how long
     * @return what was done
     * @throws IOException when the forwarder cannot listen again
     */
    @Override
    public String unavailableFor(java.time.Duration wall) throws IOException {
        return apiFaults.unavailableFor(wall);
    }

    /**
     * Makes the runtimes' watches end and resume with {@code 410 Gone} (see {@link ApiFaults#gone}; on a real server
     * after {@link #watchesFromEtcd(boolean)}).
     *
     * @param failNext the embedded mock's count of watch requests answered 410 Gone
     * @return what was done
     */
    @Override
    public String apiGone(int failNext) {
        return apiFaults.gone(failNext);
    }

    /** @return what the API faults did over the run (e.g. how many requests were answered 503), or null */
    @Override
    public String apiFaultSummary() {
        return apiFaults == null ? null : apiFaults.summary();
    }

    /**
     * Moves the wall clock of the control plane (every replica) by {@code delta}: PID {@code io.npulifecycle.time}
     * key {@code wallOffsetMillis}, applied in place by the running clock.
     *
     * @param delta simulated time, negative = back
     * @throws IOException if the configuration cannot be written
     */
    /**
     * Deletes the Node object, then, as kube-controller-manager's pod garbage collector does for the pods of a node
     * that no longer exists (podgc, which neither of the harness's API servers runs), every pod bound to it, with grace
     * 0: the node's kubelet emulation then stops its node agent, whose driver pod is gone.
     */
    @Override
    public void deleteNode(String node) {
        ScenarioCluster.super.deleteNode(node);
        for (var p : cluster.client().pods().inAnyNamespace().withField("spec.nodeName", node).list().getItems()) {
            if (node.equals(p.getSpec().getNodeName())) {
                cluster.client().pods().inNamespace(p.getMetadata().getNamespace()).withName(p.getMetadata().getName())
                        .withGracePeriod(0).delete();
                log.accept("podgc: deleted pod " + p.getMetadata().getNamespace() + "/" + p.getMetadata().getName()
                        + " of the deleted Node " + node);
            }
        }
    }

    @Override
    public void registerNode(String node) {
        if (cluster.client().nodes().withName(node).get() != null) {
            throw new IllegalStateException("registerNode: the Node " + node + " exists (registerNode follows a "
                    + "deleteNode)");
        }
        cluster.addNode(EmbeddedCluster.npuNode(node, settings.chipType(), EmbeddedCluster.DEFAULT_KERNEL,
                EmbeddedCluster.DEFAULT_OS_IMAGE));
    }

    @Override
    public String metrics(ScenarioNode node) throws IOException {
        SimNode n = nodes.get(node.name());
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                .connectTimeout(java.time.Duration.ofSeconds(5)).build();
        try {
            var r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(n.metricsUrl()))
                    .timeout(java.time.Duration.ofSeconds(10)).GET().build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException(n.metricsUrl() + " answered " + r.statusCode());
            }
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted reading " + n.metricsUrl(), e);
        }
    }

    @Override
    public void jumpControlPlaneClock(java.time.Duration delta) throws IOException {
        cpClockOffset += delta.toMillis();
        SimNode.writeAtomically(work.resolve("control-plane/home/etc/io.npulifecycle.time.cfg"),
                settings.timeConfig(cpClockOffset));
        for (int i = 1; i < controlPlanes.size(); i++) {
            SimNode.writeAtomically(work.resolve("control-plane-" + i + "/home/etc/io.npulifecycle.time.cfg"),
                    settings.timeConfig(cpClockOffset));
        }
    }

    private long cpClockOffset;

    /**
     * Sets every runtime's simulated clock to {@code at} (a scenario's {@code cluster.startTime} at its time 0): one
     * jump of each clock's wall time ({@code wallOffsetMillis}, as {@code clockJump}), the runtimes written one after
     * the other within milliseconds; monotonic time and scheduled delays are unchanged.
     *
     * @param at the simulated instant now
     * @return the jump, in simulated milliseconds (forward when the clocks were started behind {@code at})
     * @throws IOException when a configuration cannot be written
     */
    @Override
    public long setSimulatedTime(java.time.Instant at) throws IOException {
        long delta = at.toEpochMilli() - settings.simulatedAt(System.currentTimeMillis(), cpClockOffset);
        jumpControlPlaneClock(java.time.Duration.ofMillis(delta));
        for (SimNode n : nodes.values()) {
            n.jumpClock(java.time.Duration.ofMillis(delta));
        }
        return delta;
    }

    private void startControlPlane() throws IOException {
        Path home = work.resolve("control-plane/home");
        Path etc = Files.createDirectories(home.resolve("etc"));
        writeKubeConfiguration(home, etc);
        controlPlanePort = LoopbackPorts.shared().allocate();
        controlPlaneMetricsPort = LoopbackPorts.shared().allocate();
        controlPlaneMetricsPorts.put(controlPlaneEnv(0).get("POD_NAME"), controlPlaneMetricsPort);
        SimNode.write(etc.resolve("runtime.properties"), "http.host=127.0.0.1\nhttp.port=" + controlPlanePort
                + "\nmetrics.port=" + controlPlaneMetricsPort + "\nlog.level=" + settings.logLevel() + "\n");
        SimNode.write(etc.resolve("io.npulifecycle.time.cfg"), settings.timeConfig());
        SimNode.write(etc.resolve("io.npulifecycle.upgrade.cfg"), "registryScheme=http\n"
                + (hostDrivers ? "driverManagement=host\n" : ""));
        controlPlane = planted(new RuntimeProcess("control-plane", install, "control-plane", home,
                controlPlaneEnv(0), CrashLoop.CONTROL_PLANE_EXITS));
        controlPlane.start(Map.of());
        controlPlanes.add(controlPlane);
        controlPlaneJolokia = new Jolokia(controlPlanePort, USER, password);
    }

    /** Kills the control plane (SIGKILL) and starts it again, as a Deployment would. */
    public synchronized void restartControlPlane(boolean kill) throws IOException {
        if (kill) {
            controlPlane.kill();
        } else {
            controlPlane.stop();
        }
        controlPlane.start(Map.of());
    }

    /**
     * @param image {@code <registry>/<path>:<tag>}
     * @return its tag, as the ImageWhiteList lists it
     */
    static String imageTag(String image) {
        return image.substring(image.lastIndexOf(':') + 1);
    }

    static String repositoryAndTag(String image) {
        int slash = image.indexOf('/');
        return slash < 0 ? image : image.substring(slash + 1);
    }

    /**
     * Runs a read-modify-write like a person's {@code kubectl edit}: on a 409 (a controller or node agent wrote the
     * object in between) it runs again with the newer object, up to 10 times.
     */
    static void retryOnConflict(Runnable edit) {
        NodeEdits.retryOnConflict(edit);
    }

    @SuppressWarnings("unchecked")
    static void merge(Map<String, Object> target, Map<String, Object> patch) {
        for (Map.Entry<String, Object> e : patch.entrySet()) {
            if (e.getValue() == null) {
                target.remove(e.getKey());
            } else if (e.getValue() instanceof Map && target.get(e.getKey()) instanceof Map) {
                merge((Map<String, Object>) target.get(e.getKey()), (Map<String, Object>) e.getValue());
            } else {
                target.put(e.getKey(), e.getValue() instanceof Map
                        ? new LinkedHashMap<>((Map<String, Object>) e.getValue()) : e.getValue());
            }
        }
    }

    /**
     * @return the first runtime of the cluster (node agents, then control-plane replicas) that keeps exiting on its
     *         own without reaching ready ({@link CrashLoop}): what it is, how often it exited and its last error; null
     *         when none does
     */
    @Override
    public CrashLoopException crashLoop() {
        for (SimNode n : nodes.values()) {
            CrashLoopException f = n == null ? null : n.runtime().crashLoop();
            if (f != null) {
                return f;
            }
        }
        for (RuntimeProcess rp : controlPlanes) {
            CrashLoopException f = rp.crashLoop();
            if (f != null) {
                return f;
            }
        }
        return null;
    }

    /** @return the emulated nodes by name */
    @Override
    public Map<String, SimNode> nodes() {
        return nodes;
    }

    /** @return the scenario's workloads and scheduling edits on this cluster's API server */
    @Override
    public Workloads workloads() {
        return new Workloads(cluster);
    }

    /** @return the fabric8 client of the embedded API */
    public KubernetesClient client() {
        return cluster.client();
    }

    /** @return the API server */
    @Override
    public ClusterBackend cluster() {
        return cluster;
    }

    /** @return the cluster registry */
    public FakeRegistry registry() {
        return registry;
    }

    /** @return the control plane's {@code /metrics} URL (its own listener, {@code metrics.port}) */
    public String controlPlaneMetricsUrl() {
        return "http://127.0.0.1:" + controlPlaneMetricsPort + "/metrics";
    }

    /** @return the control plane's Jolokia client */
    public Jolokia controlPlaneJolokia() {
        return controlPlaneJolokia;
    }

    /** @return the control-plane runtime */
    public RuntimeProcess controlPlane() {
        return controlPlane;
    }

    /**
     * Writes the Jolokia user and password of the runtimes to {@code jolokia-credentials} in the node's folder
     * ({@code user=...}, {@code password=...}; owner read/write only), for curl, jolokia.js and Hawtio.
     *
     * @param n a node of this cluster
     * @return the file
     * @throws IOException when it cannot be written
     */
    @Override
    public Path writeJolokiaCredentials(ScenarioNode n) throws IOException {
        return ScenarioCluster.writeCredentialsFile(n.root(), USER, password);
    }

    /** @return the Jolokia password of every runtime (never logged by the runtimes) */
    public String password() {
        return password;
    }

    /** Pauses or resumes the kubelet / DaemonSet emulation. */
    public void pauseKubelet(boolean value) {
        daemonSets.paused(value);
    }

    /** @return the settings */
    public SimSettings settings() {
        return settings;
    }

    /** Stops every child process of the harness (the runtimes), forcibly after 10 s. */
    static void stopChildren() {
        long end = System.nanoTime() + 10_000_000_000L;
        List<ProcessHandle> children = ProcessHandle.current().descendants().toList();
        // again while new ones appear: a thread of the harness may have started a runtime since the last look
        while (!children.isEmpty()) {
            children.forEach(ProcessHandle::destroy);
            for (ProcessHandle p : children) {
                while (p.isAlive() && System.nanoTime() < end) {
                    try {
                        p.onExit().get(200, java.util.concurrent.TimeUnit.MILLISECONDS);
                    } catch (Exception e) {
                        // keep waiting until the deadline
                    }
                }
                if (p.isAlive()) {
                    p.destroyForcibly();
                }
            }
            children = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).toList();
            if (System.nanoTime() >= end) {
                children.forEach(ProcessHandle::destroyForcibly);
                return;
            }
        }
    }

    /** Stops every runtime and the API server. */
    @Override
    public void close() {
        if (shutdownHook != null) {
            try {
                // stopped here: the hook would run again at the JVM's exit, after the launcher closed this class loader
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook runs (or ran) anyway
            }
        }
        if (heartbeats != null) {
            heartbeats.close();
        }
        if (daemonSets != null) {
            daemonSets.stop();
        }
        for (SimNode n : nodes.values()) {
            if (n != null) {
                n.stopAgent();
            }
        }
        for (RuntimeProcess rp : controlPlanes) {
            rp.stop();
        }
        for (SimNode n : nodes.values()) {
            if (n != null) {
                n.unmountMarkers();
            }
        }
        if (apiFaults != null) {
            apiFaults.close();
        }
        if (registry != null) {
            registry.close();
        }
        if (lent != null) {
            handover.giveBack(lent, log);
        } else if (cluster != null) {
            cluster.close();
        }
    }
}
