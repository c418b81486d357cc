package io.npulifecycle.simulator.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;
import io.npulifecycle.simulator.cluster.internal.KubeCommandLines;
import io.npulifecycle.simulator.common.ChildProcess;

/**
 * This machine as a real Kubernetes node for a {@link RealApiServer}: {@code kubenode} (simulator/apiserver/cmd/kubenode)
 * runs Debian's containerd and runc, a kubelet built from {@code k8s.io/kubernetes} and kube-proxy (nftables mode),
 * on a bridge {@code npul0} whose address {@value #ADDRESS} is the node's, kube-apiserver's and the pods' gateway;
 * the pods get addresses of 10.244.0.0/24 in network namespaces containerd creates. Nothing leaves the machine.
 *
 * <pre>
 * try (RealNode node = RealNode.start(bin, work, "npu-node-0", labels, images, driverBase);
 *         RealApiServer api = RealApiServer.builder().binaries(bin).realNode("npu-node-0").start()) {
 *     node.attach(api, Duration.ofMinutes(3));   // the node is Ready
 *     ...
 * }
 * </pre>
 *
 * <p>Order matters: the node first (its bridge carries the address kube-apiserver binds to), then the API server,
 * then {@link #attach}, which writes the kubelet's and kube-proxy's kubeconfigs; kubenode starts containerd and
 * imports the images meanwhile. {@link #close()} (or SIGTERM, or the death of this JVM, which kubenode notices within
 * a second) stops every pod, containerd and the servers and undoes every mount, cgroup, nftables table and the bridge:
 * {@link #leftovers(Path)} lists what would remain. One real node per machine (kubenode holds a lock); needs root.
 * The machine is never rebooted: the charts' pods run the simulator's reboot executor (a simulated reboot restarts
 * the node agent's container).
 */
public final class RealNode implements AutoCloseable {

    /** The node's address (kube-apiserver binds to it; the kubelet listens on it). */
    public static final String ADDRESS = KubeCommandLines.REAL_NODE_ADDRESS;
    /** The bridge kubenode creates. */
    public static final String BRIDGE = "npul0";
    /** The simulated driver image kubenode derives from the node-agent image: a shell plus {@code /driver}. */
    public static final String SIMULATED_DRIVER_IMAGE = "localhost/npu-lifecycle/simulated-driver:latest";
    /** The sandbox image of the node's pods. */
    public static final String PAUSE_IMAGE = "localhost/npu-lifecycle/pause:3.10";
    /**
     * How long {@link #start} waits for another real node of this machine to stop (one at a time: kubenode's lock;
     * the tests of two modules may want one at the same moment).
     */
    public static final Duration LOCK_WAIT = Duration.ofMinutes(15);
    /** How long {@link #close()} waits for kubenode's teardown. */
    public static final Duration STOP_TIMEOUT = Duration.ofSeconds(180);

    private final Path work;
    private final String nodeName;
    private final ChildProcess kubenode;
    private final Thread shutdownHook = new Thread(this::close, "npu-real-node-shutdown");
    private volatile boolean closed;

    private RealNode(Path work, String nodeName, ChildProcess kubenode) {
        this.work = work;
        this.nodeName = nodeName;
        this.kubenode = kubenode;
    }

    /**
     * Starts kubenode and waits until the node's address is up (at most 60 s after another real node of this
     * machine stopped, {@link #LOCK_WAIT}).
     *
     * @param bin the binaries (kubenode, kubelet, kube-proxy, pause)
     * @param work the node's work folder (created; containerd's, the kubelet's and the CNI's state go there)
     * @param nodeName the node's name (the API server's PKI must have its kubelet certificate:
     *        {@link RealApiServer.Builder#realNode})
     * @param labels node labels the kubelet registers with (not in the kubernetes.io namespaces)
     * @param images OCI archives of one platform to import, archive to image name without tag (the archive's tag
     *        is kept), e.g. {@code npu-lifecycle-node-agent-0.1.0-linux-amd64.oci.tar -> registry.local/npu-lifecycle/node-agent}
     * @param driverBase an OCI archive of one platform from which the {@link #SIMULATED_DRIVER_IMAGE} is derived, or
     *        null
     * @return the starting node
     * @throws IllegalStateException when kubenode exits or does not report its network within 60 s (its output in
     *         the message: e.g. another node runs, not root, a package cannot be installed)
     */
    public static RealNode start(KubeBinaries bin, Path work, String nodeName, Map<String, String> labels,
            Map<Path, String> images, Path driverBase) {
        return start(bin, work, nodeName, labels, images, driverBase, line -> { });
    }

    /**
     * As {@link #start(KubeBinaries, Path, String, Map, Map, Path)}, telling {@code progress} when the start waits
     * for another real node of this machine to stop (kubenode's line, e.g. {@code kubenode: waiting up to 15m0s:
     * another real node runs on this machine (...)}).
     *
     * @param bin the binaries
     * @param work the node's work folder
     * @param nodeName the node's name
     * @param labels node labels
     * @param images OCI archives to import, archive to image name without tag
     * @param driverBase the base of the simulated driver image, or null
     * @param progress receives kubenode's waiting line, if any
     * @return the starting node
     * @throws IllegalStateException as the other start
     */
    public static RealNode start(KubeBinaries bin, Path work, String nodeName, Map<String, String> labels,
            Map<Path, String> images, Path driverBase, java.util.function.Consumer<String> progress) {
        List<String> command = new ArrayList<>(List.of(bin.kubenode().toString(), "--work", work.toString(), "--bin",
                bin.folder().toString(), "--node-name", nodeName, "--kubelet-kubeconfig",
                work.resolve("kubelet.kubeconfig").toString(), "--proxy-kubeconfig",
                work.resolve("kube-proxy.kubeconfig").toString(), "--client-ca", work.resolve("ca.crt").toString(),
                "--lock-wait", LOCK_WAIT.toSeconds() + "s"));
        labels.forEach((k, v) -> command.addAll(List.of("--label", k + "=" + v)));
        images.forEach((file, name) -> command.addAll(List.of("--image", file + "=" + name)));
        if (driverBase != null) {
            command.addAll(List.of("--driver-base", driverBase.toString()));
        }
        ChildProcess p;
        try {
            Files.createDirectories(work);
            // a reused work folder's kubeconfigs name an API server that is gone: kubenode waits for new ones
            for (String f : List.of("kubelet.kubeconfig", "kube-proxy.kubeconfig", "ca.crt")) {
                Files.deleteIfExists(work.resolve(f));
            }
            p = ChildProcess.builder(command).name("kubenode").recordLines(work.getParent().resolve(
                    work.getFileName() + "-kubenode.log")).stopGrace(STOP_TIMEOUT).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + bin.kubenode(), e);
        }
        RealNode node = new RealNode(work, nodeName, p);
        Runtime.getRuntime().addShutdownHook(node.shutdownHook);
        try {
            ChildProcess.Line first = p.awaitLine(l -> l.startsWith("kubenode: network ready")
                    || l.startsWith("kubenode: waiting"), 0, Duration.ofSeconds(60), "network of the real node (kubenode)");
            if (first.text().startsWith("kubenode: waiting")) {
                progress.accept(first.text());
                p.awaitLine(l -> l.startsWith("kubenode: network ready"), 0, LOCK_WAIT.plusSeconds(60),
                        "network of the real node (kubenode)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            node.close();
            throw new IllegalStateException("interrupted while the real node started", e);
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
        return node;
    }

    /**
     * Hands the node its credentials for {@code api} (the kubelet's and kube-proxy's kubeconfigs, the client CA)
     * and waits until kubenode runs the kubelet and kube-proxy and the Node is Ready.
     *
     * @param api the server, started with {@link RealApiServer.Builder#realNode} for this node's name
     * @param timeout how long to wait for a Ready node (containerd and the images included)
     * @throws IllegalStateException when kubenode exits or the node is not Ready in time (with the end of the
     *         kubelet's log)
     */
    public void attach(RealApiServer api, Duration timeout) {
        if (!nodeName.equals(api.realNodeName())) {
            throw new IllegalArgumentException("the API server was started for node " + api.realNodeName()
                    + ", not " + nodeName);
        }
        try {
            Files.copy(api.caCertificate(), work.resolve("ca.crt"), StandardCopyOption.REPLACE_EXISTING);
            // kubenode waits for the files: each appears whole (written beside, then renamed)
            Files.move(api.writeKubeProxyKubeconfig(work.resolve("kube-proxy.kubeconfig.tmp")),
                    work.resolve("kube-proxy.kubeconfig"), StandardCopyOption.ATOMIC_MOVE);
            Files.move(api.writeKubeletKubeconfig(work.resolve("kubelet.kubeconfig.tmp")),
                    work.resolve("kubelet.kubeconfig"), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the real node's kubeconfigs into " + work, e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            kubenode.awaitLine(l -> l.startsWith("kubenode: ready"), 0, timeout, "kubelet of the real node");
            KubernetesClient client = api.client();
            while (!ready(client.nodes().withName(nodeName).get())) {
                if (System.nanoTime() > deadline || !kubenode.alive()) {
                    throw new IllegalStateException("node " + nodeName + " not Ready within " + timeout.toSeconds()
                            + " s (kubenode " + (kubenode.alive() ? "running" : "exited") + "); kubelet log tail:\n"
                            + tail(log("kubelet"), 30) + "\nkubenode:\n" + kubenode.outputTail(20));
                }
                TimeUnit.MILLISECONDS.sleep(200);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for node " + nodeName, e);
        }
    }

    private static boolean ready(Node n) {
        return n != null && n.getStatus() != null && n.getStatus().getConditions() != null && n.getStatus()
                .getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /**
     * Tags an image of the node's containerd (namespace {@code k8s.io}, the kubelet's) under another name, as a
     * registry would serve it under that name: e.g. the {@link #SIMULATED_DRIVER_IMAGE} as the vendor's driver image
     * a driver DaemonSet names.
     *
     * @param source an image of the node
     * @param target the new name
     * @throws IllegalStateException when ctr fails (its output in the message)
     */
    public void tagImage(String source, String target) {
        ctr("images", "tag", "--force", source, target);
    }

    /**
     * SIGKILLs a container's main process through containerd ({@code ctr tasks kill --signal SIGKILL}), as the kernel's
     * OOM killer or a crash would end it; the kubelet then restarts the container under its pod's restart policy.
     *
     * @param containerId the container's id as its pod's status gives it ({@code containerd://<id>}, or the bare id)
     * @throws IllegalArgumentException when the id is not a container id (64 lowercase hexadecimal digits)
     * @throws IllegalStateException when ctr fails (e.g. the container is not running; its output in the message)
     */
    public void killContainer(String containerId) {
        String id = containerId.startsWith("containerd://") ? containerId.substring("containerd://".length())
                : containerId;
        if (!id.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("not a containerd container id: '" + containerId + "'");
        }
        ctr("tasks", "kill", "--signal", "SIGKILL", id);
    }

    /**
     * @return the image names of the node's containerd (namespace {@code k8s.io})
     * @throws IllegalStateException when ctr fails
     */
    public List<String> images() {
        return List.of(ctr("images", "list", "--quiet").strip().split("\n"));
    }

    private String ctr(String... args) {
        List<String> command = new ArrayList<>(List.of("ctr", "--address", containerdSocket().toString(),
                "--namespace", "k8s.io"));
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + out.strip());
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run ctr", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running ctr", e);
        }
    }

    /** @return the node's name */
    public String name() {
        return nodeName;
    }

    /** @return the node's work folder */
    public Path work() {
        return work;
    }

    /** @return containerd's socket */
    public Path containerdSocket() {
        return work.resolve("containerd/containerd.sock");
    }

    /**
     * @param server {@code kubelet}, {@code containerd} or {@code kube-proxy}
     * @return its log file
     */
    public Path log(String server) {
        return work.resolve("logs").resolve(server + ".log");
    }

    /** @return kubenode's own output (its steps and teardown) */
    public String kubenodeOutput() {
        return kubenode.output();
    }

    /** @return kubenode's pid (a test kills it to prove the next start cleans up after it) */
    public long pid() {
        return kubenode.pid();
    }

    /** @return whether kubenode still runs */
    public boolean alive() {
        return kubenode.alive();
    }

    static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(" + file + ": " + e.getMessage() + ")";
        }
    }

    /**
     * What a real node with this work folder would leave behind: mounts under it, its kubenode, containerd, shim,
     * kubelet, kube-proxy or pod processes (their command lines name the folder), and, unless another real node
     * runs now, the bridge, the cgroups of the pods and kube-proxy's nftables tables. Empty after a clean
     * {@link #close()}.
     *
     * @param work the node's work folder
     * @return one line per leftover, e.g. {@code mount /tmp/x/containerd/state/.../rootfs}
     */
    public static List<String> leftovers(Path work) {
        List<String> out = new ArrayList<>();
        try {
            // the kernel records mounts under the resolved path
            work = work.toRealPath();
        } catch (IOException e) {
            work = work.toAbsolutePath().normalize();
        }
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
                String[] f = line.split(" ");
                String mount = f.length > 4 ? f[4].replace("\\040", " ") : "";
                if (mount.equals(work.toString()) || mount.startsWith(work + "/")) {
                    out.add("mount " + f[4]);
                }
            }
        } catch (IOException e) {
            out.add("cannot read /proc/self/mountinfo: " + e.getMessage());
        }
        boolean otherNode = false;
        for (ProcessHandle p : ProcessHandle.allProcesses().toList()) {
            String cmd = p.info().commandLine().orElse("");
            if (cmd.contains(work + "/") || cmd.endsWith(work.toString()) || cmd.contains(work + " ")) {
                out.add("process " + p.pid() + " " + cmd);
            } else if (cmd.contains("kubenode --work")) {
                otherNode = true;
            }
        }
        if (otherNode) {
            // the bridge, the cgroups and the nftables tables are the machine's one node's: another node runs now
            return out;
        }
        if (Files.exists(Path.of("/sys/class/net", BRIDGE))) {
            out.add("bridge " + BRIDGE);
        }
        // the v1 hierarchies, and the v2 tree of a hybrid machine (runc makes the pods' cgroups there too)
        for (String h : new String[] {"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids",
            "systemd", "unified"}) {
            if (Files.exists(Path.of("/sys/fs/cgroup", h, "npu-lifecycle-node"))) {
                out.add("cgroup /sys/fs/cgroup/" + h + "/npu-lifecycle-node");
            }
        }
        Map<String, String> tables = new LinkedHashMap<>();
        tables.put("ip", "kube-proxy");
        tables.put("ip6", "kube-proxy");
        tables.forEach((family, table) -> {
            try {
                Process p = new ProcessBuilder("nft", "list", "table", family, table).redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    out.add("nftables table " + family + " " + table);
                }
            } catch (IOException e) {
                // no nft: kubenode could not have made a table either
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return out;
    }

    /**
     * Stops the node: SIGTERM to kubenode, which stops the pods, kube-proxy, the kubelet and containerd and undoes
     * what it set up; waits up to {@link #STOP_TIMEOUT}. Idempotent; also run by a JVM shutdown hook.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        // an interrupted caller must not cut the teardown short: ChildProcess.stop would SIGKILL kubenode at once
        // (its servers and pods, in their own process groups, would go on until the next start)
        boolean interrupted = Thread.interrupted();
        try {
            kubenode.stop(STOP_TIMEOUT);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down (this may be the hook itself)
        }
    }
}
