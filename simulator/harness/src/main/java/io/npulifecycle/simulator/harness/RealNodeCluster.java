package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.RealNode;

/**
 * {@code npu-lifecycle scenario --api real --kubelet}: a scenario on this machine as the one node ({@code node-0}) of
 * a real kube-apiserver, through real pods. The node, the API server and the chart are set up as
 * {@code demo --api real --kubelet} sets them up ({@link RealNodeDemo}), with the scenario's cluster in the chart's
 * simulator values ({@code simulator.chipType}, {@code npus}, {@code chipsPerNpu}, {@code driverVersion},
 * {@code controlPlane.replicas}, {@code driver.enabled} from {@code driverManagement}) and its clock
 * ({@code simulator.clock}: the scenario's {@code timeScale}, anchored at the install, shared by the node agent and the
 * control plane). The steps then act on the real objects: a fault injection goes through {@code kubectl
 * port-forward} to the node agent's Jolokia, {@code killAgent} and {@code killControlPlane} SIGKILL the container
 * through containerd and the kubelet restarts it, workload pods run the pause image on the node (the node advertises
 * {@value Workloads#NPU_RESOURCE} as an extended resource, as a device plugin would), and the markers and the emulated
 * host's state are read from the host paths the chart mounts.
 *
 * <p>What a real node cannot do is refused before anything runs ({@link #refusals}): more than one node, the API
 * faults (the pods reach kube-apiserver through kube-proxy, with no forwarder of the harness in between), a clock jump
 * and the marker-folder faults (their files are ConfigMap and hostPath mounts the harness cannot change under a
 * running pod), a control-plane replica left dead ({@code restart: false}, {@code startControlPlane}: the kubelet
 * restarts it), and workload pods of a StatefulSet or a DaemonSet, or mirror pods (their controllers, or the kubelet,
 * would act on them).
 */
final class RealNodeCluster implements ScenarioCluster {

    /** The node's name: the first node of every scenario. */
    static final String NODE = "node-0";

    private final Scenario scenario;
    private final Path dir;
    private final PrintStream out;
    private final RealNodeDemo setup;
    private final RealNodeAgent agent;
    private volatile boolean started;
    private volatile List<String> leftovers = List.of();
    private Thread tagger;

    /**
     * @param scenario the scenario (its cluster and clock)
     * @param dir the scenario's folder: the node's state ({@code node/}), the host paths ({@code host/}), logs
     * @param install the installation (its chart, helm values and images)
     * @param out where the set-up prints
     */
    RealNodeCluster(Scenario scenario, Path dir, Path install, PrintStream out) {
        this.scenario = scenario;
        this.dir = dir;
        this.out = out;
        int perNpu = perNpu(scenario);
        List<String> sets = new ArrayList<>(List.of(
                "--set", "simulator.chipType=" + scenario.chipType,
                "--set", "simulator.npus=" + scenario.chips / perNpu,
                "--set", "simulator.chipsPerNpu=" + perNpu,
                "--set-string", "simulator.driverVersion=" + scenario.driverVersion,
                "--set", "controlPlane.replicas=" + scenario.controlPlanes,
                "--set", "driver.enabled=" + "managed".equals(scenario.driverManagement),
                // the product's probe period on the scenario's clock, as the harness's own node agents run it
                "--set", "node.healthWatch.intervalSeconds=60", "--set", "node.healthWatch.timeoutSeconds=20",
                "--set-json", "simulator.clock={\"scale\":" + ScenarioCommand.number(scenario.timeScale)
                        + ",\"anchorEpochMillis\":" + System.currentTimeMillis() + "}"));
        this.setup = new RealNodeDemo(dir, install, out, NODE, Map.of(NodeKeys.CHIP, scenario.chipType), sets,
                scenario.controlPlanes);
        this.agent = new RealNodeAgent(NODE, dir.resolve("host"), setup);
    }

    private static int perNpu(Scenario s) {
        return s.chipType.equals("310p") ? 2 : 1;
    }

    /**
     * What of a scenario cannot run on the real node, each naming the file, the line and why; checked before anything
     * runs.
     *
     * @return the refusals, empty when the scenario can run with {@code --kubelet}
     */
    static List<String> refusals(Scenario s) {
        List<String> why = new ArrayList<>();
        if (s.nodes != 1) {
            why.add(s.file + ": cluster.nodes " + s.nodes + ": --kubelet runs scenarios of one node (" + NODE
                    + "): the real node is this machine, one per run");
        }
        if (s.startTime != null) {
            why.add(s.file + ": cluster.startTime: the real node's clock is the chart's ConfigMap, mounted into "
                    + "running pods; it cannot be set at time 0 without rolling them");
        }
        List<Scenario.Step> all = new ArrayList<>(s.steps);
        s.cases.forEach(c -> all.addAll(c.steps()));
        all.sort(Comparator.comparingInt(Scenario.Step::line));
        for (Scenario.Step st : all) {
            String reason = refusal(st.action());
            if (reason == null && st.when() != null) {
                reason = refusal(st.when());
            }
            if (reason != null) {
                why.add(s.file + ":line " + st.line() + ": " + st.kind() + " cannot run on the real node (--kubelet): "
                        + reason);
            }
        }
        return why;
    }

    /** The longest path of containerd's socket (a Unix socket's path: 108 bytes, less containerd's margin). */
    static final int SOCKET_PATH_MAX = 104;
    /** The characters the chart accepts in a host path ({@code node.hostPaths.*}: the values' schema). */
    private static final java.util.regex.Pattern HOST_PATH = java.util.regex.Pattern.compile("[A-Za-z0-9._/-]+");

    /**
     * Checks a work folder for the real node before anything is created: its containerd socket
     * ({@code <work>/<sub>/node/containerd/containerd.sock}) must fit a Unix socket's path, and the host paths the chart
     * mounts from it may hold letters, digits, {@code .}, {@code _}, {@code -} and {@code /} only.
     *
     * @param work the work folder (absolute or relative)
     * @param sub the run's folder below it, e.g. {@code scenario-12}, or "" (the demo)
     * @return why it cannot be used, or null
     */
    static String workFolderProblem(Path work, String sub) {
        Path abs = work.toAbsolutePath().normalize();
        if (!HOST_PATH.matcher(abs.toString()).matches()) {
            return "--work " + work + ": the real node's host paths may hold letters, digits, '.', '_', '-' and '/' "
                    + "only (the chart's node.hostPaths); give a folder whose path has no other character";
        }
        Path socket = (sub.isEmpty() ? abs : abs.resolve(sub)).resolve("node/containerd/containerd.sock");
        if (socket.toString().length() > SOCKET_PATH_MAX) {
            return "--work " + work + ": too long for the real node: containerd's socket " + socket + " has "
                    + socket.toString().length() + " characters, at most " + SOCKET_PATH_MAX
                    + " fit a Unix socket; give a shorter folder";
        }
        return null;
    }

    private static String refusal(Action a) {
        if (a instanceof Action.ApiOutage || a instanceof Action.ApiUnreachable || a instanceof Action.ApiGone) {
            return "the pods reach kube-apiserver through kube-proxy's Service address, with no forwarder of the "
                    + "harness in between to fail their requests";
        }
        if (a instanceof Action.RestartApiServer) {
            return "the real node's kubelet and kube-proxy talk to kube-apiserver directly; its restart is tried on the "
                    + "simulated nodes only (--api real without --kubelet)";
        }
        if (a instanceof Action.ClockJump) {
            return "the clock's configuration is a ConfigMap file mounted into running pods (a change rolls them)";
        }
        if (a instanceof Action.MarkersReadOnly || a instanceof Action.MarkersFull) {
            return "the marker folder is a host path mounted into the running node agent, not a tmpfs of the harness";
        }
        if (a instanceof Action.KillControlPlane k && Boolean.FALSE.equals(k.restart())) {
            return "restart: false: the kubelet restarts a killed control-plane container at once (give restart: true)";
        }
        if (a instanceof Action.StartControlPlane) {
            return "no control-plane replica is ever left dead: the kubelet restarts a killed one";
        }
        if (a instanceof Action.NodeNotReady || a instanceof Action.NodeReady) {
            return "the real kubelet's heartbeat is the kubelet's own; stopping it would stop the run's node";
        }
        if (a instanceof Action.DeleteNode || a instanceof Action.RegisterNode) {
            return "the real kubelet holds its Node: it registers it again only when it restarts, which the run "
                    + "does not do";
        }
        if (a instanceof Action.SetPodReady || a instanceof Action.PodStep p0 && !p0.ready()) {
            return "the real kubelet reports a pod's readiness from its probes; the pause image has none to fail";
        }
        if (a instanceof Action.Expect e && e.apiRequests() != null) {
            return "expect.apiRequests reads the audit log of the harness's own kube-apiserver; the real node's "
                    + "server records none";
        }
        if (a instanceof Action.Expect e && e.metrics() != null) {
            return "expect.metrics reads the node agent's /metrics on loopback, which the pod does not expose to the "
                    + "harness (use expect.mbean)";
        }
        if (a instanceof Action.PodStep p && !"ReplicaSet".equals(p.controller()) && !"none".equals(p.controller())) {
            return "controller " + p.controller() + ": on a real node " + switch (p.controller()) {
                case "mirror" -> "the kubelet deletes a mirror pod without its static pod";
                case "StatefulSet" -> "the StatefulSet controller would create its own pod " + p.name() + "-0";
                default -> "the DaemonSet controller would create its own pod on the node beside " + p.name();
            } + " (use ReplicaSet or none)";
        }
        return null;
    }

    @Override
    public void start(List<String> extraVersions) throws IOException {
        Files.createDirectories(dir);
        try {
            out.println("   " + setup.setUp());
        } catch (RealNodeDemo.StepFailed e) {
            throw new IOException("the real node: " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while setting up the real node", e);
        } catch (Exception e) {
            throw new IOException("the real node: " + e, e);
        }
        started = true;
        // NPU workloads request the chips as a device plugin would advertise them
        int chips = scenario.chips;
        // the kubelet writes the node's status too: again on a conflict, as every edit of the harness
        io.npulifecycle.simulator.cluster.NodeEdits.retryOnConflict(() -> setup.client().nodes().withName(NODE)
                .editStatus(n -> {
                    n.getStatus().getCapacity().put(Workloads.NPU_RESOURCE, new Quantity(Integer.toString(chips)));
                    n.getStatus().getAllocatable().put(Workloads.NPU_RESOURCE, new Quantity(Integer.toString(chips)));
                    return n;
                }));
        tagger = new Thread(setup::tagDriverImages, "driver-image-registry");
        tagger.setDaemon(true);
        tagger.start();
        cluster().createNpuOperatorCtl(scenario.driverVersion, false, false);
        patchDriver(Map.of("registry", "registry.local"));
    }

    @Override
    public Map<String, RealNodeAgent> nodes() {
        return Map.of(NODE, agent);
    }

    @Override
    public ClusterBackend cluster() {
        return setup.api();
    }

    @Override
    public Workloads workloads() {
        return new Workloads(setup.api(), RealNode.PAUSE_IMAGE, "Never");
    }

    /**
     * A container of ours in {@code CrashLoopBackOff} (the node agent, a control-plane replica), or one that
     * restarted 5 times or more without becoming ready: what it is, its restarts and its last log lines.
     */
    @Override
    public CrashLoopException crashLoop() {
        if (!started) {
            return null;
        }
        List<Pod> pods;
        try {
            pods = setup.client().pods().inNamespace(RealNodeDemo.NS).list().getItems();
        } catch (RuntimeException e) {
            return null; // the API server is busy: not a crash loop of ours
        }
        for (Pod p : pods) {
            if (p.getStatus() == null || p.getStatus().getContainerStatuses() == null) {
                continue;
            }
            for (ContainerStatus c : p.getStatus().getContainerStatuses()) {
                boolean backOff = c.getState() != null && c.getState().getWaiting() != null
                        && "CrashLoopBackOff".equals(c.getState().getWaiting().getReason());
                int restarts = c.getRestartCount() == null ? 0 : c.getRestartCount();
                // a simulated reboot restarts the node agent's container (exit 75): only a back-off is a crash loop
                if (backOff && restarts >= 3 && !Boolean.TRUE.equals(c.getReady())) {
                    String what = p.getMetadata().getName() + "/" + c.getName();
                    Integer code = c.getLastState() != null && c.getLastState().getTerminated() != null
                            ? c.getLastState().getTerminated().getExitCode() : null;
                    String log = setup.podsState("app=" + p.getMetadata().getLabels().getOrDefault("app", ""));
                    return new CrashLoopException(what, restarts, code == null ? -1 : code, log,
                            what + " keeps exiting (CrashLoopBackOff after " + restarts + " restarts, last exit code "
                                    + code + "): " + log);
                }
            }
        }
        return null;
    }

    @Override
    public Path writeJolokiaCredentials(ScenarioNode n) throws IOException {
        String[] credentials;
        try {
            credentials = setup.jolokiaCredentials();
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
        return ScenarioCluster.writeCredentialsFile(n.root(), credentials[0], credentials[1]);
    }

    /** The driver pod's probes, the images and the first validation on a real kubelet: longer than in-process. */
    @Override
    public Duration installTimeout() {
        return Duration.ofMinutes(6);
    }

    /**
     * SIGKILLs the main process of control-plane containers through containerd; the kubelet restarts them.
     *
     * @param which {@code leader} (the Lease holder's pod), {@code all}, or {@code 0}/{@code 1} (the pods in name
     *        order)
     * @param restart always true here ({@link #refusals} refuses false)
     */
    @Override
    public void killControlPlane(String which, boolean restart) {
        List<Pod> pods = setup.client().pods().inNamespace(RealNodeDemo.NS)
                .withLabel("app", "npu-lifecycle-control-plane").list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .sorted(Comparator.comparing(p -> p.getMetadata().getName())).toList();
        List<Pod> targets = new ArrayList<>();
        switch (which) {
            case "all" -> targets.addAll(pods);
            case "leader" -> {
                String holder = setup.leaseHolder();
                pods.stream().filter(p -> p.getMetadata().getName().equals(holder)).findFirst()
                        .or(() -> pods.stream().findFirst()).ifPresent(targets::add);
            }
            default -> {
                int i = Integer.parseInt(which);
                if (i < pods.size()) {
                    targets.add(pods.get(i));
                }
            }
        }
        if (targets.isEmpty()) {
            throw new IllegalStateException("no running control-plane pod " + which + " to kill: "
                    + setup.podsState("app=npu-lifecycle-control-plane"));
        }
        for (Pod p : targets) {
            setup.node().killContainer(containerId(p, "control-plane"));
            out.println("   control plane: container of pod " + p.getMetadata().getName() + " killed (SIGKILL)");
        }
    }

    /**
     * @return the container's id in its pod's status
     * @throws IllegalStateException when it has none (not started yet)
     */
    static String containerId(Pod p, String container) {
        return p.getStatus().getContainerStatuses().stream().filter(c -> container.equals(c.getName()))
                .map(ContainerStatus::getContainerID).filter(id -> id != null && !id.isEmpty()).findFirst()
                .orElseThrow(() -> new IllegalStateException("pod " + p.getMetadata().getName() + " has no running "
                        + "container " + container));
    }

    private static UnsupportedOperationException refused(String what) {
        return new UnsupportedOperationException(what + " on the real node: refused before the run (refusals)");
    }

    @Override
    public void startControlPlane(int replica) {
        throw refused("startControlPlane");
    }

    @Override
    public void unreachableFor(Duration wall) {
        throw refused("apiUnreachable");
    }

    @Override
    public String unavailableFor(Duration wall) {
        throw refused("apiOutage");
    }

    @Override
    public String apiGone(int failNext) {
        throw refused("apiGone");
    }

    @Override
    public String apiFaultSummary() {
        return null;
    }

    @Override
    public void registerNode(String node) {
        throw refused("registerNode");
    }

    @Override
    public String metrics(ScenarioNode node) {
        throw refused("expect.metrics");
    }

    @Override
    public void deleteNode(String node) {
        throw refused("deleteNode");
    }

    @Override
    public void jumpControlPlaneClock(Duration delta) {
        throw refused("clockJump");
    }

    /** Stops the port-forward, the API server and the node; {@link #failure()} says what was left behind. */
    @Override
    public void close() {
        agent.close();
        long t0 = System.nanoTime();
        leftovers = setup.stop();
        out.println(String.format(Locale.ROOT, "   real node stopped in %.1f s: %s", (System.nanoTime() - t0) / 1e9,
                leftovers.isEmpty() ? "nothing left running or mounted" : "LEFT BEHIND " + leftovers));
    }

    @Override
    public String failure() {
        return leftovers.isEmpty() ? null : "the real node left behind " + leftovers;
    }
}
