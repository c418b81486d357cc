package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.cluster.RealNode;
import io.npulifecycle.simulator.cluster.internal.HelmBinary;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;
import io.npulifecycle.simulator.common.ChildProcess;

/**
 * {@code npu-lifecycle demo --api real --kubelet}: the README's demo through real pods. This machine becomes a real
 * node ({@link RealNode}: containerd, a kubelet, kube-proxy) of a real API server (with kube-scheduler and the
 * controllers a cluster has), the chart is installed with {@code helm} and {@code conf/helm/simulator-values.yaml}
 * (the node agent emulates 8 x 910b chips: the simulator, never a real reboot executor), the images of the build
 * are loaded into containerd, and the runbook runs as an operator types it:
 * <ol>
 * <li>the node registers and is Ready; the chart installs; both control-plane replicas run, one holds the lease;</li>
 * <li>the NPUOperatorCtl (25.2.0) makes the control plane create the driver DaemonSet, whose pod (the vendor's
 * driver image, here the simulated one, and the node agent) becomes Ready: its probes pass, the driver validates;</li>
 * <li>the node agent's Jolokia answers through {@code kubectl port-forward} with the chart's Secret;</li>
 * <li>deleting the leader's pod hands the lease to the other replica;</li>
 * <li>a wedge injected through Jolokia: label, Event {@code reason=recovery}, taint, NodeCondition; {@code kubectl
 * annotate} approves; cordon; the drain is blocked by a PodDisruptionBudget of a real workload pod until the budget
 * allows it; the simulated reboot restarts the node-agent container with a new boot id; validation; uncordon;</li>
 * <li>a manual upgrade 25.2.0 -&gt; 25.5.0 approved with {@code kubectl annotate}: the DaemonSet controller replaces
 * the driver pod, the node reboots (simulated) into 25.5.0, {@code driver-upgrade-state} empties, and the runbook's
 * step-4 command prints the new image;</li>
 * <li>everything the node started is stopped and nothing stays mounted ({@link RealNode#leftovers}).</li>
 * </ol>
 * Needs root, kubectl, Debian's containerd, runc, containernetworking-plugins and nftables (kubenode installs them
 * with apt-get when missing), the images of the build ({@code <installation>/../images}, made by {@code mvn
 * package}) and helm ({@link HelmBinary}).
 */
public final class RealNodeDemo {

    /** The demo's node name. */
    static final String NODE = "npu-node-0";
    static final String NS = NodeKeys.DRIVER_NAMESPACE;
    static final String RELEASE = "npu-lifecycle";
    static final String FROM = "25.2.0";
    static final String TO = "25.5.0";
    static final String CR = "npuoperatorctl-sample";
    static final String JOBS = "npu-jobs";
    static final String JOB = "npu-training-job";
    static final String SIMULATOR = "io.npulifecycle:type=Simulator";
    private static final io.npulifecycle.simulator.cluster.ApiResource TYPE =
            io.npulifecycle.simulator.cluster.EmbeddedCluster.NPU_OPERATOR_CTL;
    private static final ResourceDefinitionContext CTL = new ResourceDefinitionContext.Builder()
            .withGroup(TYPE.group()).withVersion(TYPE.version()).withKind(TYPE.kind()).withPlural(TYPE.plural())
            .withNamespaced(true).build();

    private final Path work;
    private final Path install;
    private final PrintStream out;
    private RealNode node;
    private RealApiServer api;
    private KubernetesClient client;
    private Path kubeconfig;
    private final Set<String> tagged = ConcurrentHashMap.newKeySet();
    volatile boolean tagging = true;
    private final List<String> tagErrors = new ArrayList<>();

    private final String nodeName;
    private final Map<String, String> nodeLabels;
    private final List<String> helmSets;
    private final int controlPlanes;

    private RealNodeDemo(Path work, Path install, PrintStream out) {
        this(work, install, out, NODE, Map.of(NodeKeys.CHIP, "910b"), List.of(), 2);
    }

    /**
     * The set-up and tear-down of a real node with the chart installed, for {@link RealNodeCluster} too.
     *
     * @param nodeName the node's name
     * @param nodeLabels labels of the node besides {@code openfuyao.com/npu.present=true}, e.g. its chip type
     * @param helmSets further {@code helm install --set} (or {@code --set-json}) arguments, in pairs
     * @param controlPlanes the control-plane replicas the values give ({@code controlPlane.replicas}), waited for
     */
    RealNodeDemo(Path work, Path install, PrintStream out, String nodeName, Map<String, String> nodeLabels,
            List<String> helmSets, int controlPlanes) {
        this.work = work;
        this.install = install;
        this.out = out;
        this.nodeName = nodeName;
        this.nodeLabels = Map.copyOf(nodeLabels);
        this.helmSets = List.copyOf(helmSets);
        this.controlPlanes = controlPlanes;
    }

    /** A step that failed: its message says what was expected and what was seen. */
    static final class StepFailed extends Exception {
        private static final long serialVersionUID = 1L;

        StepFailed(String message) {
            super(message);
        }
    }

    interface Body {
        String run() throws Exception;
    }

    /**
     * Runs the demo.
     *
     * @param work the work folder (the node's state, the runtime logs, the kubeconfig)
     * @param install the installation (bin/, conf/helm/, kube/apiserver/)
     * @param out where to print
     * @return 0 when every step passed, 1 otherwise
     */
    public static int run(Path work, Path install, PrintStream out) {
        long start = System.nanoTime();
        out.println("npu-lifecycle demo on a real node: this machine as node " + NODE + " (containerd, kubelet, "
                + "kube-proxy) of a real kube-apiserver, the chart installed with helm, emulated 910B chips; work "
                + "folder " + work);
        RealNodeDemo d = new RealNodeDemo(work, install, out);
        List<String[]> results = new ArrayList<>();
        boolean ok = true;
        Thread tagger = null;
        try {
            ok = d.step(results, "1 a real node, the API server, helm install", d::setUp);
            if (ok) {
                tagger = new Thread(d::tagDriverImages, "driver-image-registry");
                tagger.setDaemon(true);
                tagger.start();
                ok = d.step(results, "2 NPUOperatorCtl " + FROM + ": the driver pod on the node becomes Ready",
                        d::installDriver)
                        && d.step(results, "3 the node agent's Jolokia through kubectl port-forward", d::jolokia)
                        && d.step(results, "4 leader election: delete the leader's pod", d::leaderHandover)
                        && d.step(results, "5 self-healing through the real pods (approved, PDB-aware drain)",
                                d::selfHeal)
                        && d.step(results, "6 manual upgrade " + FROM + " -> " + TO + " through the DaemonSet",
                                d::upgrade);
            }
        } finally {
            d.tagging = false;
            d.tearDown(results);
        }
        out.println();
        out.println("Summary");
        boolean all = true;
        for (String[] r : results) {
            out.printf("  %-4s %-62s %6s s  %s%n", r[0], r[1], r[2], r[3]);
            all &= "PASS".equals(r[0]);
        }
        out.printf("%s in %.1f s%n", all && ok ? "PASS" : "FAIL", (System.nanoTime() - start) / 1e9);
        return all && ok ? 0 : 1;
    }

    /**
     * {@code npu-lifecycle cluster --api real --kubelet}: steps 1 and 2 of the demo (this machine a Ready node, the
     * chart installed, the NPUOperatorCtl at 25.2.0 and its driver pod Ready), an admin kubeconfig written, then
     * runs until {@code stop} (SIGINT, SIGTERM); then stops the node and the server, removes its work folder and says
     * whether anything was left behind.
     *
     * @param install the installation
     * @param kubeconfig where to write the admin kubeconfig (its first line {@code marker})
     * @param marker the first line of the kubeconfig (ClusterCommand's: it removes only files it wrote)
     * @param out standard output
     * @param err standard error
     * @param stop counted down to stop (the JVM's shutdown hook does)
     * @param stopTimeout how long the shutdown hook waits for the clean stop
     * @return 0 stopped cleanly, 1 the node or the install failed, or something was left behind
     */
    static int cluster(Path install, Path kubeconfig, String marker, PrintStream out, PrintStream err,
            java.util.concurrent.CountDownLatch stop, Duration stopTimeout) {
        Path work;
        try {
            work = Files.createTempDirectory("npu-lifecycle-cluster-node-");
        } catch (IOException e) {
            err.println("npu-lifecycle cluster: cannot create a work folder: " + e.getMessage());
            return 1;
        }
        RealNodeDemo d = new RealNodeDemo(work, install, out);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread hook = new Thread(() -> {
            stop.countDown();
            try {
                done.await(stopTimeout.toSeconds() + RealNode.STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "npu-lifecycle-cluster-node-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        List<String[]> results = new ArrayList<>();
        Thread tagger = new Thread(d::tagDriverImages, "driver-image-registry");
        tagger.setDaemon(true);
        boolean ok;
        try {
            ok = d.step(results, "1 a real node, the API server, helm install", d::setUp);
            if (ok) {
                tagger.start();
                ok = d.step(results, "2 NPUOperatorCtl " + FROM + ": the driver pod on the node becomes Ready",
                        d::installDriver);
            }
            if (ok) {
                Files.writeString(kubeconfig, marker + "\n" + Files.readString(d.kubeconfig));
                out.println("npu-lifecycle cluster: ready: node " + NODE + " (this machine), the chart installed in "
                        + NS + "; export KUBECONFIG=" + kubeconfig + "; runs until stopped (Ctrl-C or SIGTERM)");
                out.flush();
                stop.await();
                out.println("npu-lifecycle cluster: stopping");
            }
        } catch (IOException e) {
            err.println("npu-lifecycle cluster: cannot write " + kubeconfig + ": " + e.getMessage());
            ok = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ok = false;
        } finally {
            d.tagging = false;
            d.tearDown(results);
            try {
                Files.deleteIfExists(kubeconfig);
                if (results.stream().allMatch(r -> "PASS".equals(r[0]))) {
                    io.npulifecycle.simulator.cluster.internal.RunRecords.deleteTree(work);
                } else {
                    out.println("npu-lifecycle cluster: work folder kept: " + work);
                }
            } catch (IOException e) {
                err.println("npu-lifecycle cluster: " + e.getMessage());
            }
            done.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down: the hook is running
            }
        }
        return ok && results.stream().allMatch(r -> "PASS".equals(r[0])) ? 0 : 1;
    }

    private boolean step(List<String[]> results, String name, Body body) {
        out.println();
        out.println("== step " + name);
        long t0 = System.nanoTime();
        String status;
        String detail;
        try {
            detail = Objects.toString(body.run(), "");
            status = "PASS";
        } catch (Exception | AssertionError e) {
            detail = e instanceof StepFailed ? e.getMessage() : e.toString();
            status = "FAIL";
        }
        String secs = String.format(java.util.Locale.ROOT, "%.1f", (System.nanoTime() - t0) / 1e9);
        out.println("   " + status + " " + detail);
        results.add(new String[] {status, name, secs, "PASS".equals(status) ? "" : detail});
        return "PASS".equals(status);
    }

    // ---- set-up and tear-down ----

    String setUp() throws Exception {
        // what can be missing is checked first, before kube-apiserver and the kubelet are built or found
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new StepFailed("a real node needs root (the kubelet and containerd create cgroups, mounts and network "
                    + "namespaces): run it as root");
        }
        Path kubectl = onPath("kubectl");
        if (kubectl == null) {
            throw new StepFailed("no kubectl on PATH (the runbook's commands run it): install kubectl");
        }
        Path images = install.resolve("..").resolve("images").normalize();
        String arch = archOfThisMachine();
        Path agentImage = single(images, "npu-lifecycle-node-agent-*-linux-" + arch + ".oci.tar");
        Path controlPlaneImage = single(images, "npu-lifecycle-control-plane-*-linux-" + arch + ".oci.tar");
        String prefix = "npu-lifecycle-node-agent-";
        String version = agentImage.getFileName().toString().substring(prefix.length())
                .replace("-linux-" + arch + ".oci.tar", "");
        Path helm = helm();
        Path chart = install.resolve("conf/helm/npu-lifecycle");
        Path values = install.resolve("conf/helm/simulator-values.yaml");
        for (Path p : List.of(chart, values)) {
            if (!Files.exists(p)) {
                throw new StepFailed("broken installation: " + p + " is missing (mvn -B -DskipTests package)");
            }
        }
        KubeBinaries bin = KubeBinarySource.ofInstall(install).get();
        long t0 = System.nanoTime();
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(NodeKeys.NPU_PRESENT, "true");
        labels.putAll(nodeLabels);
        Map<Path, String> load = new LinkedHashMap<>();
        load.put(agentImage, "registry.local/npu-lifecycle/node-agent");
        load.put(controlPlaneImage, "registry.local/npu-lifecycle/control-plane");
        node = RealNode.start(bin, work.resolve("node"), nodeName, labels, load, agentImage,
                line -> out.println("   " + line));
        api = RealApiServer.builder().binaries(bin).realNode(nodeName).start();
        node.attach(api, Duration.ofMinutes(4));
        double ready = (System.nanoTime() - t0) / 1e9;
        out.printf("   node %s Ready in %.1f s (kubelet, containerd, images %s loaded)%n", nodeName, ready, version);
        client = api.client();
        kubeconfig = api.writeKubeconfig(work.resolve("kubeconfig"));
        out.println("   export KUBECONFIG=" + kubeconfig + "; logs in " + node.work().resolve("logs"));
        Path host = Files.createDirectories(work.resolve("host"));
        List<String> install = new ArrayList<>(List.of(helm.toString(), "--kubeconfig", kubeconfig.toString(),
                "install", RELEASE, chart.toString(), "-n", NS, "--create-namespace", "-f", values.toString(),
                "--set", "images.registry=registry.local", "--set", "images.nodeAgent.tag=" + version, "--set",
                "images.controlPlane.tag=" + version));
        for (String[] hp : new String[][] {{"node.hostPaths.runNpuOperator", "run-npu-operator"},
            {"node.hostPaths.varLibNpuOperator", "var-lib-npu-operator"}, {"node.hostPaths.ascend", "var-lib-ascend"},
            {"simulator.stateHostPath", "simulator"}}) {
            install.addAll(List.of("--set", hp[0] + "=" + host.resolve(hp[1])));
        }
        install.addAll(helmSets);
        command(install, Duration.ofMinutes(2));
        await(controlPlanes + " control-plane replica(s) Ready", Duration.ofMinutes(4),
                () -> readyPods("app=npu-lifecycle-control-plane") >= controlPlanes,
                () -> podsState("app=npu-lifecycle-control-plane"));
        await("a control-plane replica holds the lease", Duration.ofMinutes(2), () -> leaseHolder() != null,
                () -> "lease: " + leaseHolder());
        return String.format(java.util.Locale.ROOT, "node Ready in %.1f s; helm release %s in %s; leader %s", ready,
                RELEASE, NS, leaseHolder());
    }

    /**
     * Stops the API server and the node (its pods, containerd, the kubelet, kube-proxy).
     *
     * @return what the node left behind ({@link RealNode#leftovers}): empty when nothing
     */
    List<String> stop() {
        tagging = false;
        if (api != null) {
            try {
                api.close();
            } catch (RuntimeException e) {
                out.println("   stopping the API server: " + e);
            }
        }
        List<String> left = List.of();
        if (node != null) {
            node.close();
            left = RealNode.leftovers(node.work());
        }
        return left;
    }

    /** @return the admin client of the API server (after {@link #setUp()}) */
    KubernetesClient client() {
        return client;
    }

    /** @return the API server (after {@link #setUp()}) */
    RealApiServer api() {
        return api;
    }

    /** @return the node (after {@link #setUp()}) */
    RealNode node() {
        return node;
    }

    private void tearDown(List<String[]> results) {
        long t0 = System.nanoTime();
        List<String> left = stop();
        String secs = String.format(java.util.Locale.ROOT, "%.1f", (System.nanoTime() - t0) / 1e9);
        out.println();
        out.println("== step 7 nothing left running or mounted");
        if (left.isEmpty()) {
            out.println("   PASS the node's pods, containerd, kubelet and kube-proxy stopped; no mount, cgroup, bridge "
                    + "or nftables table left");
            results.add(new String[] {"PASS", "7 nothing left running or mounted", secs, ""});
        } else {
            out.println("   FAIL left behind: " + left);
            results.add(new String[] {"FAIL", "7 nothing left running or mounted", secs, "left: " + left});
        }
    }

    /** @return the program on PATH, or null */
    static Path onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * @return helm as the build found it ({@link HelmBinary}: from the working folder's source tree), else the one
     *         the build cached in {@code ~/.cache/npu-lifecycle/helm/<version>/helm} (the demo run from elsewhere)
     * @throws StepFailed when there is none, saying how to get it
     */
    private static Path helm() throws StepFailed, IOException {
        try {
            return HelmBinary.locate();
        } catch (IllegalStateException e) {
            Path cache = Path.of(System.getProperty("user.home"), ".cache", "npu-lifecycle", "helm");
            if (Files.isDirectory(cache)) {
                try (var versions = Files.list(cache)) {
                    Path newest = versions.map(v -> v.resolve("helm")).filter(Files::isExecutable)
                            .max(java.util.Comparator.comparing(Path::toString)).orElse(null);
                    if (newest != null) {
                        return newest;
                    }
                }
            }
            throw new StepFailed(e.getMessage() + " (or run the demo from the source tree after mvn -B -DskipTests "
                    + "package, which builds helm into " + cache + ")");
        }
    }

    static String archOfThisMachine() {
        String a = System.getProperty("os.arch");
        return "aarch64".equals(a) || "arm64".equals(a) ? "arm64" : "amd64";
    }

    private static Path single(Path folder, String glob) throws StepFailed, IOException {
        if (!Files.isDirectory(folder)) {
            throw new StepFailed("no images at " + folder + ": build them with mvn -B -DskipTests package (module images)");
        }
        List<Path> found = new ArrayList<>();
        try (var s = Files.newDirectoryStream(folder, glob)) {
            s.forEach(found::add);
        }
        if (found.size() != 1) {
            throw new StepFailed("expected one image " + glob + " in " + folder + ", found " + found
                    + " (mvn -B -DskipTests package builds them)");
        }
        return found.get(0);
    }

    /**
     * The vendor's registry, as the node sees it: every driver image a driver DaemonSet names is the simulated
     * driver image, tagged under that name in the node's containerd as soon as the DaemonSet appears.
     */
    void tagDriverImages() {
        while (tagging) {
            try {
                for (DaemonSet ds : client.apps().daemonSets().inNamespace(NS)
                        .withLabel(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP).list().getItems()) {
                    String image = ds.getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
                    if (tagged.add(image)) {
                        node.tagImage(RealNode.SIMULATED_DRIVER_IMAGE, image);
                        out.println("   . driver image " + image + " available on the node (the simulated driver)");
                    }
                }
            } catch (RuntimeException e) {
                synchronized (tagErrors) {
                    tagErrors.add(e.toString());
                }
            }
            try {
                TimeUnit.MILLISECONDS.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    // ---- the runbook ----

    private String installDriver() throws Exception {
        GenericKubernetesResource ctl = new GenericKubernetesResource();
        ctl.setApiVersion(TYPE.groupVersion());
        ctl.setKind(TYPE.kind());
        ctl.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(CR).withNamespace(NS).build());
        Map<String, Object> driver = new LinkedHashMap<>();
        driver.put("version", FROM);
        driver.put("registry", "registry.local");
        driver.put("upgradePolicy", Map.of("autoUpgrade", false));
        driver.put("recoveryPolicy", Map.of("autoRecover", false));
        ctl.setAdditionalProperty("spec", Map.of("driver", driver));
        client.genericKubernetesResources(CTL).inNamespace(NS).resource(ctl).create();
        await("the driver pod on " + nodeName + " Ready (probes passed)", Duration.ofMinutes(4),
                () -> driverPod() != null && allReady(driverPod()), () -> podsState(NodeKeys.DRIVER_APP_LABEL + "="
                        + NodeKeys.DRIVER_APP) + tagErrorsText());
        await("driver " + FROM + " validated on " + nodeName, Duration.ofMinutes(3),
                () -> annotation(NodeKeys.DRIVER_VALIDATED).startsWith(FROM + "@")
                        && FROM.equals(label(NodeKeys.DRIVER_VERSION)), this::nodeState);
        return "pod " + driverPod().getMetadata().getName() + " Ready, image " + driverImage(driverPod())
                + "; driver-validated " + annotation(NodeKeys.DRIVER_VALIDATED);
    }

    private String jolokia() throws Exception {
        try (PortForward pf = new PortForward(driverPod().getMetadata().getName())) {
            Object chips = pf.read("io.npulifecycle:type=HealthWatch", "ExpectedChips");
            Object boot = pf.read(SIMULATOR, "BootId");
            return "kubectl port-forward pod/" + driverPod().getMetadata().getName() + " " + pf.port + ":8778: "
                    + "HealthWatch ExpectedChips " + chips + ", Simulator BootId " + boot;
        }
    }

    private String leaderHandover() throws Exception {
        String leader = leaseHolder();
        client.pods().inNamespace(NS).withName(leader).delete();
        out.println("   kubectl delete pod -n " + NS + " " + leader);
        await("another replica takes the lease", Duration.ofMinutes(3), () -> {
            String h = leaseHolder();
            return h != null && !h.equals(leader) && client.pods().inNamespace(NS).withName(h).get() != null;
        }, () -> "lease held by " + leaseHolder() + "; " + podsState("app=npu-lifecycle-control-plane"));
        return "lease " + leader + " -> " + leaseHolder();
    }

    private String selfHeal() throws Exception {
        // a training job protected by a PodDisruptionBudget that allows no disruption
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata()
                .withName(JOBS).endMetadata().build()).serverSideApply();
        client.apps().deployments().inNamespace(JOBS).resource(new io.fabric8.kubernetes.api.model.apps
                .DeploymentBuilder().withNewMetadata().withName(JOB).endMetadata().withNewSpec().withReplicas(1)
                .withNewSelector().addToMatchLabels("app", JOB).endSelector().withNewTemplate().withNewMetadata()
                .addToLabels("app", JOB).endMetadata().withNewSpec().withTerminationGracePeriodSeconds(1L)
                .withAutomountServiceAccountToken(false).withNewSecurityContext().withRunAsNonRoot(true)
                .withRunAsUser(65535L).withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .endSecurityContext().addNewContainer().withName("train").withImage(RealNode.PAUSE_IMAGE)
                .withImagePullPolicy("Never").withNewSecurityContext().withAllowPrivilegeEscalation(false)
                .withNewCapabilities().withDrop("ALL").endCapabilities().endSecurityContext().endContainer()
                .endSpec().endTemplate().endSpec().build()).serverSideApply();
        client.policy().v1().podDisruptionBudget().inNamespace(JOBS).resource(new io.fabric8.kubernetes.api.model
                .policy.v1.PodDisruptionBudgetBuilder().withNewMetadata().withName(JOB).endMetadata().withNewSpec()
                .withMinAvailable(new io.fabric8.kubernetes.api.model.IntOrString(1)).withNewSelector()
                .addToMatchLabels("app", JOB).endSelector().endSpec().build()).serverSideApply();
        await("the training job's pod Running on " + nodeName, Duration.ofMinutes(2), () -> runningJobPod() != null,
                () -> podsIn(JOBS));
        String jobPod = runningJobPod().getMetadata().getName();
        String podName = driverPod().getMetadata().getName();
        int restarts = agentRestarts(driverPod());
        String bootBefore;
        try (PortForward pf = new PortForward(podName)) {
            bootBefore = String.valueOf(pf.read(SIMULATOR, "BootId"));
            Object r = pf.jolokia().exec(SIMULATOR, "wedge", 4, 0);
            if (r == null || !r.toString().contains("\"status\":200")) {
                throw new StepFailed("Jolokia exec Simulator wedge(4, 0) through kubectl port-forward: " + r);
            }
            out.println("   Jolokia exec Simulator wedge(4, 0): " + r);
        }
        await("reboot-required=true, Event RebootRequired reason=recovery, taint, NpuHealthy=False",
                Duration.ofMinutes(2), () -> "true".equals(label(NodeKeys.REBOOT_REQUIRED))
                        && event(NodeKeys.EVENT_REBOOT_REQUIRED, "reason=recovery") && tainted()
                        && "False".equals(condition(NodeKeys.CONDITION_NPU_HEALTHY)), this::nodeState);
        out.println("   the wedge seen: " + nodeState());
        command(List.of("kubectl", "--kubeconfig", kubeconfig.toString(), "annotate", "node", nodeName,
                NodeKeys.APPROVE_REBOOT + "=" + NodeKeys.APPROVE_VALUE, "--overwrite"), Duration.ofSeconds(30));
        out.println("   kubectl annotate node " + nodeName + " " + NodeKeys.APPROVE_REBOOT + "=true");
        await("cordoned, and the drain blocked by PodDisruptionBudget " + JOBS + "/" + JOB, Duration.ofMinutes(2),
                () -> unschedulable() && event(NodeKeys.EVENT_DRAIN_BLOCKED, JOB), this::nodeState);
        out.println("   DrainBlocked: " + lastEvent(NodeKeys.EVENT_DRAIN_BLOCKED));
        client.policy().v1().podDisruptionBudget().inNamespace(JOBS).withName(JOB).edit(p -> {
            p.getSpec().setMinAvailable(new io.fabric8.kubernetes.api.model.IntOrString(0));
            return p;
        });
        out.println("   kubectl patch pdb -n " + JOBS + " " + JOB + " minAvailable=0: the budget allows the eviction");
        await("the job's pod " + jobPod + " evicted", Duration.ofMinutes(2),
                () -> client.pods().inNamespace(JOBS).withName(jobPod).get() == null, () -> podsIn(JOBS));
        await("the simulated reboot: the node agent's container restarted with a new boot id", Duration.ofMinutes(4),
                () -> driverPod() != null && podName.equals(driverPod().getMetadata().getName())
                        && agentRestarts(driverPod()) > restarts && allReady(driverPod()),
                () -> podsState(NodeKeys.DRIVER_APP_LABEL + "=" + NodeKeys.DRIVER_APP) + "\n   " + nodeState());
        String bootAfter;
        try (PortForward pf = new PortForward(podName)) {
            bootAfter = String.valueOf(pf.read(SIMULATOR, "BootId"));
        }
        if (bootAfter.equals(bootBefore)) {
            throw new StepFailed("the node agent restarted but the emulated host's boot id is still " + bootBefore);
        }
        await("validated and uncordoned: no reboot-required, no taint, NpuHealthy=True, schedulable",
                Duration.ofMinutes(4), () -> label(NodeKeys.REBOOT_REQUIRED).isEmpty() && !tainted()
                        && "True".equals(condition(NodeKeys.CONDITION_NPU_HEALTHY)) && !unschedulable(),
                this::nodeState);
        await("the training job running again on " + nodeName, Duration.ofMinutes(2), () -> runningJobPod() != null,
                () -> podsIn(JOBS));
        return "boot " + bootBefore + " -> " + bootAfter + ", container restarts " + restarts + " -> "
                + agentRestarts(driverPod()) + ", job pod " + jobPod + " evicted and replaced by "
                + runningJobPod().getMetadata().getName();
    }

    private String upgrade() throws Exception {
        String before = driverPod().getMetadata().getName();
        String bootBefore = annotation(NodeKeys.BOOT_ID);
        client.genericKubernetesResources(CTL).inNamespace(NS).withName(CR).edit(r -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> spec = (Map<String, Object>) r.getAdditionalProperties().get("spec");
            @SuppressWarnings("unchecked")
            Map<String, Object> driver = new LinkedHashMap<>((Map<String, Object>) spec.get("driver"));
            driver.put("version", TO);
            r.setAdditionalProperty("spec", Map.of("driver", driver));
            return r;
        });
        out.println("   kubectl patch npuoperatorctl " + CR + " spec.driver.version=" + TO);
        await("the node waits for its approval (driver-upgrade-state set)", Duration.ofMinutes(3),
                () -> !label(NodeKeys.DRIVER_UPGRADE_STATE).isEmpty(), this::nodeState);
        command(List.of("kubectl", "--kubeconfig", kubeconfig.toString(), "annotate", "node", nodeName,
                NodeKeys.APPROVE_REBOOT + "=" + NodeKeys.APPROVE_VALUE, "--overwrite"), Duration.ofSeconds(30));
        out.println("   kubectl annotate node " + nodeName + " " + NodeKeys.APPROVE_REBOOT + "=true");
        await("the DaemonSet controller replaced the driver pod with " + TO, Duration.ofMinutes(4), () -> {
            Pod p = driverPod();
            return p != null && !before.equals(p.getMetadata().getName()) && driverImage(p).contains(":" + TO + "-");
        }, () -> podsState(NodeKeys.DRIVER_APP_LABEL + "=" + NodeKeys.DRIVER_APP) + "\n   " + nodeState());
        await("rebooted into " + TO + ", validated, driver-upgrade-state empty", Duration.ofMinutes(5),
                () -> TO.equals(label(NodeKeys.DRIVER_VERSION)) && label(NodeKeys.DRIVER_UPGRADE_STATE).isEmpty()
                        && annotation(NodeKeys.DRIVER_VALIDATED).startsWith(TO + "@") && !unschedulable()
                        && driverPod() != null && allReady(driverPod()), this::nodeState);
        String bootAfter = annotation(NodeKeys.BOOT_ID);
        if (bootAfter.equals(bootBefore) || agentRestarts(driverPod()) < 1) {
            throw new StepFailed("validated at " + TO + " without the simulated reboot: boot id " + bootBefore + " -> "
                    + bootAfter + ", node-agent container restarts " + agentRestarts(driverPod()));
        }
        String jsonpath = "{range .items[*]}{.spec.nodeName}{\"\\t\"}{.spec.containers[0].image}{\"\\n\"}{end}";
        String printed = command(List.of("kubectl", "--kubeconfig", kubeconfig.toString(), "get", "pod", "-n", NS,
                "-l", "app=npu-driver-daemonset", "-o", "jsonpath=" + jsonpath), Duration.ofSeconds(30));
        out.println("   $ kubectl get pod -n " + NS + " -l app=npu-driver-daemonset -o jsonpath='" + jsonpath + "'");
        out.print(printed.lines().map(l -> "   " + l + "\n").reduce("", String::concat));
        if (!printed.contains(nodeName) || !printed.contains(":" + TO + "-")) {
            throw new StepFailed("the runbook's step 4 printed no " + TO + " image for " + nodeName + ": " + printed);
        }
        return "driver pod " + before + " -> " + driverPod().getMetadata().getName() + ", image "
                + driverImage(driverPod()) + ", boot " + bootBefore + " -> " + bootAfter;
    }

    // ---- reading the cluster ----

    private Node nodeObject() {
        return client.nodes().withName(nodeName).get();
    }

    private String label(String key) {
        Node n = nodeObject();
        return n == null || n.getMetadata().getLabels() == null ? ""
                : n.getMetadata().getLabels().getOrDefault(key, "");
    }

    private String annotation(String key) {
        Node n = nodeObject();
        return n == null || n.getMetadata().getAnnotations() == null ? ""
                : n.getMetadata().getAnnotations().getOrDefault(key, "");
    }

    private boolean tainted() {
        Node n = nodeObject();
        return n != null && n.getSpec().getTaints() != null
                && n.getSpec().getTaints().stream().anyMatch(t -> NodeKeys.NPU_UNHEALTHY_TAINT.equals(t.getKey()));
    }

    private boolean unschedulable() {
        Node n = nodeObject();
        return n != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
    }

    private String condition(String type) {
        Node n = nodeObject();
        if (n == null || n.getStatus().getConditions() == null) {
            return "";
        }
        return n.getStatus().getConditions().stream().filter(c -> type.equals(c.getType()))
                .map(NodeCondition::getStatus).findFirst().orElse("");
    }

    private List<Event> nodeEvents() {
        return client.v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> e.getInvolvedObject() != null && "Node".equals(e.getInvolvedObject().getKind())
                        && nodeName.equals(e.getInvolvedObject().getName())).toList();
    }

    private boolean event(String reason, String messageContains) {
        return nodeEvents().stream().anyMatch(e -> reason.equals(e.getReason())
                && Objects.toString(e.getMessage(), "").contains(messageContains));
    }

    private String lastEvent(String reason) {
        String m = "";
        for (Event e : nodeEvents()) {
            if (reason.equals(e.getReason())) {
                m = e.getMessage();
            }
        }
        return m;
    }

    String nodeState() {
        Node n = nodeObject();
        if (n == null) {
            return "node " + nodeName + " missing";
        }
        Map<String, String> ours = new java.util.TreeMap<>();
        if (n.getMetadata().getLabels() != null) {
            n.getMetadata().getLabels().forEach((k, v) -> {
                if (k.startsWith(NodeKeys.PREFIX)) {
                    ours.put(k.substring(NodeKeys.PREFIX.length()), v);
                }
            });
        }
        if (n.getMetadata().getAnnotations() != null) {
            n.getMetadata().getAnnotations().forEach((k, v) -> {
                if (k.startsWith(NodeKeys.PREFIX)) {
                    ours.put(k.substring(NodeKeys.PREFIX.length()), v);
                }
            });
        }
        return "node: unschedulable=" + unschedulable() + " taint=" + tainted() + " NpuHealthy="
                + condition(NodeKeys.CONDITION_NPU_HEALTHY) + " " + ours + "; recent events: "
                + nodeEvents().stream().skip(Math.max(0, nodeEvents().size() - 4))
                        .map(e -> e.getReason() + ": " + e.getMessage()).toList();
    }

    Pod driverPod() {
        return client.pods().inNamespace(NS).withLabel(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP).list()
                .getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null
                        && nodeName.equals(p.getSpec().getNodeName())).findFirst().orElse(null);
    }

    private static String driverImage(Pod p) {
        return p.getSpec().getContainers().get(0).getImage();
    }

    static boolean allReady(Pod p) {
        return p.getStatus() != null && p.getStatus().getContainerStatuses() != null
                && !p.getStatus().getContainerStatuses().isEmpty()
                && p.getStatus().getContainerStatuses().stream().allMatch(c -> Boolean.TRUE.equals(c.getReady()));
    }

    static int agentRestarts(Pod p) {
        return p.getStatus().getContainerStatuses().stream().filter(c -> "node-agent".equals(c.getName()))
                .mapToInt(ContainerStatus::getRestartCount).findFirst().orElse(-1);
    }

    private Pod runningJobPod() {
        return client.pods().inNamespace(JOBS).withLabel("app", JOB).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null
                        && "Running".equals(p.getStatus().getPhase())).findFirst().orElse(null);
    }

    private long readyPods(String selector) {
        String[] kv = selector.split("=", 2);
        return client.pods().inNamespace(NS).withLabel(kv[0], kv[1]).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).filter(RealNodeDemo::allReady).count();
    }

    String podsState(String selector) {
        String[] kv = selector.split("=", 2);
        return podsText(client.pods().inNamespace(NS).withLabel(kv[0], kv[1]).list().getItems());
    }

    private String podsIn(String namespace) {
        return podsText(client.pods().inNamespace(namespace).list().getItems());
    }

    private String podsText(List<Pod> pods) {
        StringBuilder b = new StringBuilder("pods:");
        for (Pod p : pods) {
            b.append("\n     ").append(p.getMetadata().getName()).append(' ').append(p.getStatus().getPhase());
            if (p.getStatus().getContainerStatuses() != null) {
                for (ContainerStatus c : p.getStatus().getContainerStatuses()) {
                    b.append(" [").append(c.getName()).append(" ready=").append(c.getReady()).append(" restarts=")
                            .append(c.getRestartCount());
                    if (c.getState() != null && c.getState().getWaiting() != null) {
                        b.append(" waiting ").append(c.getState().getWaiting().getReason()).append(": ")
                                .append(c.getState().getWaiting().getMessage());
                    }
                    b.append(']');
                    if (c.getRestartCount() != null && c.getRestartCount() > 0 || !Boolean.TRUE.equals(c.getReady())) {
                        b.append("\n       log: ").append(containerLog(p, c.getName(), 6).replace("\n", "\n       log: "));
                    }
                }
            } else if (p.getStatus().getConditions() != null) {
                p.getStatus().getConditions().forEach(c -> b.append(" ").append(c.getType()).append('=')
                        .append(c.getStatus()).append(c.getMessage() == null ? "" : " (" + c.getMessage() + ")"));
            }
        }
        return b.toString();
    }

    /** @return the last lines the kubelet logged of a container (all its restarts), or what is missing */
    private String containerLog(Pod p, String container, int lines) {
        Path dir = node.work().resolve("kubelet/pods-logs").resolve(p.getMetadata().getNamespace() + "_"
                + p.getMetadata().getName() + "_" + p.getMetadata().getUid()).resolve(container);
        try (var files = Files.list(dir)) {
            Path last = files.filter(f -> f.toString().endsWith(".log"))
                    .max(java.util.Comparator.comparing(Path::toString)).orElse(null);
            return last == null ? "(no log in " + dir + ")" : RealNodeLogs.tail(last, lines);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    String leaseHolder() {
        Lease l = client.leases().inNamespace(NS).withName("npu-lifecycle-upgrade").get();
        return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
    }

    private String tagErrorsText() {
        synchronized (tagErrors) {
            return tagErrors.isEmpty() ? "" : "\n   driver image tagging: " + tagErrors.get(tagErrors.size() - 1);
        }
    }

    /** {@link Waiter#until}, its timeout a failed step. */
    static void await(String what, Duration timeout, BooleanSupplier condition, Supplier<String> state)
            throws StepFailed, InterruptedException {
        try {
            new Waiter(() -> { }).until(what, timeout, condition, state);
        } catch (Waiter.Timeout e) {
            throw new StepFailed(e.getMessage());
        }
    }

    /** Runs a command (helm, kubectl), failing the step with its output when it fails. */
    private String command(List<String> command, Duration timeout) throws StepFailed, IOException,
            InterruptedException {
        Path output = Files.createTempFile(work, "command-", ".txt");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new StepFailed(String.join(" ", command) + " did not finish in " + timeout.toSeconds() + " s: "
                    + Files.readString(output, StandardCharsets.UTF_8).strip());
        }
        String text = Files.readString(output, StandardCharsets.UTF_8);
        Files.deleteIfExists(output);
        if (p.exitValue() != 0) {
            throw new StepFailed(String.join(" ", command) + " failed (exit " + p.exitValue() + "): " + text.strip());
        }
        return text;
    }

    /** {@code kubectl port-forward} to a driver pod's Jolokia port, with the chart's Jolokia Secret. */
    final class PortForward implements AutoCloseable {
        final int port;
        private final ChildProcess process;

        PortForward(String pod) throws Exception {
            port = io.npulifecycle.simulator.common.LoopbackPorts.shared().allocate();
            process = ChildProcess.builder(List.of("kubectl", "--kubeconfig", kubeconfig.toString(), "port-forward",
                    "-n", NS, "pod/" + pod, port + ":8778", "--address", "127.0.0.1")).name("kubectl port-forward")
                    .recordLines(work.resolve("port-forward-" + port + ".log")).start();
            process.awaitLine(l -> l.contains("Forwarding from"), 0, Duration.ofSeconds(30),
                    "kubectl port-forward to " + pod);
        }

        /**
         * Reads an attribute through the port-forward, trying again for up to 90 s: on a loaded machine the first
         * request through a new port-forward (kube-apiserver, the kubelet, containerd into the pod's network
         * namespace) can take longer than one request's 10 s.
         */
        Object read(String mbean, String attribute) throws StepFailed, InterruptedException {
            Jolokia j = jolokia();
            Object[] value = new Object[1];
            await("Jolokia at " + j.url() + " answers " + mbean + " " + attribute + " through kubectl port-forward",
                    Duration.ofSeconds(90), () -> (value[0] = j.read(mbean, attribute)) != null,
                    () -> "port-forward: " + output());
            return value[0];
        }

        Jolokia jolokia() {
            String[] credentials = jolokiaCredentials();
            return new Jolokia(port, credentials[0], credentials[1]);
        }

        String output() {
            return process.output();
        }

        /** @return whether kubectl port-forward still runs */
        boolean alive() {
            return process.alive();
        }

        @Override
        public void close() {
            process.stop(Duration.ofSeconds(5));
        }
    }

    /**
     * @return the user and password of the chart's Jolokia Secret {@code npu-lifecycle-jolokia}
     * @throws IllegalStateException when the Secret does not exist
     */
    String[] jolokiaCredentials() {
        var secret = client.secrets().inNamespace(NS).withName("npu-lifecycle-jolokia").get();
        if (secret == null) {
            throw new IllegalStateException("no Secret " + NS + "/npu-lifecycle-jolokia");
        }
        return new String[] {decode(secret.getData().get("user")), decode(secret.getData().get("password"))};
    }

    private static String decode(String b64) {
        return new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
    }
}
