package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;

/**
 * The real node itself (kubenode: containerd, runc, a kubelet, kube-proxy) on this machine: it registers with its
 * labels and becomes Ready, runs a pod of the restricted Pod Security level in its own network namespace (an address
 * of the bridge), and leaves nothing mounted, running or configured once closed. Needs root (CI runs as root). The
 * chart's pods on it, reaching kube-apiserver through the {@code kubernetes} Service, are RealNodeIT's.
 */
class RealNodeTest {

    @TempDir
    Path tmp;

    @Test
    void aPodRunsOnTheRealNodeInItsOwnNetworkAndNothingIsLeftAfterwards() throws Exception {
        KubeBinaries bin = KubeBinaries.fromSystemProperties();
        Path work = tmp.resolve("node");
        String probe = "probe-" + Long.toHexString(System.nanoTime());
        try (RealNode node = RealNode.start(bin, work, "npu-node-0", Map.of("openfuyao.com/npu.present", "true"),
                Map.of(), null);
                RealApiServer api = RealApiServer.builder().binaries(bin).realNode("npu-node-0").start()) {
            node.attach(api, Duration.ofMinutes(3));
            KubernetesClient client = api.client();
            assertEquals("true", client.nodes().withName("npu-node-0").get().getMetadata().getLabels()
                    .get("openfuyao.com/npu.present"));
            api.ensureNamespace("default");
            // the pause image has no shell: a pod of it runs, and its sandbox gets a pod address of the bridge
            client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName(probe)
                    .endMetadata().withNewSpec().withAutomountServiceAccountToken(false)
                    .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(65535L).withNewSeccompProfile()
                    .withType("RuntimeDefault").endSeccompProfile().endSecurityContext()
                    .addNewContainer().withName("pause").withImage(RealNode.PAUSE_IMAGE)
                    .withImagePullPolicy("Never").withNewSecurityContext().withAllowPrivilegeEscalation(false)
                    .withNewCapabilities().withDrop("ALL").endCapabilities().endSecurityContext().endContainer()
                    .endSpec().build()).create();
            try {
                Awaitility.await("pod " + probe + " running").atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(200)).until(() -> {
                            Pod p = client.pods().inNamespace("default").withName(probe).get();
                            return p != null && "Running".equals(p.getStatus().getPhase());
                        });
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                throw new AssertionError(e.getMessage() + "\npod: " + client.pods().inNamespace("default")
                        .withName(probe).get().getStatus() + "\nkubelet:\n" + RealNode.tail(node.log("kubelet"), 40)
                        + "\ncontainerd:\n" + RealNode.tail(node.log("containerd"), 20), e);
            }
            Pod p = client.pods().inNamespace("default").withName(probe).get();
            assertTrue(p.getStatus().getPodIP().startsWith("10.244.0."), p.getStatus().toString());
            assertEquals("npu-node-0", p.getSpec().getNodeName());
            assertTrue(node.images().contains(RealNode.PAUSE_IMAGE), node.images().toString());
        }
        List<String> left = RealNode.leftovers(work);
        assertEquals(List.of(), left, "left behind by the real node");
    }

    @Test
    void aNodeKilledWithSigkillIsCleanedUpByTheNextStart() throws Exception {
        KubeBinaries bin = KubeBinaries.fromSystemProperties();
        Path first = tmp.resolve("first");
        RealNode killed = RealNode.start(bin, first, "npu-node-0", Map.of(), Map.of(), null);
        try {
            // containerd runs once its socket answers (kubenode then waits for the kubeconfigs)
            Awaitility.await("containerd of the first node").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100)).until(() -> java.nio.file.Files.exists(killed.containerdSocket())
                            && !killed.images().isEmpty());
            ProcessHandle.of(killed.pid()).ifPresent(ProcessHandle::destroyForcibly);
            Awaitility.await("kubenode gone").atMost(Duration.ofSeconds(10)).until(() -> !killed.alive());
            List<String> left = RealNode.leftovers(first);
            assertTrue(left.stream().anyMatch(l -> l.startsWith("process ") && l.contains("containerd")), left.toString());
            assertTrue(left.contains("bridge " + RealNode.BRIDGE), left.toString());
        } finally {
            killed.close();
        }
        Path second = tmp.resolve("second");
        try (RealNode next = RealNode.start(bin, second, "npu-node-0", Map.of(), Map.of(), null)) {
            assertTrue(next.kubenodeOutput().contains("cleaning up after the previous node (work folder " + first + ")"),
                    next.kubenodeOutput());
            assertEquals(List.of(), RealNode.leftovers(first), "left behind by the killed node after the next start");
        }
        assertEquals(List.of(), RealNode.leftovers(second), "left behind by the second node");
    }

    /** Runs kubenode with every required flag and {@code --work work} plus {@code extra}; @return exit code and output. */
    static String[] kubenode(KubeBinaries bin, Path work, Path tmp, String... extra) throws Exception {
        java.util.List<String> cmd = new java.util.ArrayList<>(List.of(bin.kubenode().toString(), "--work",
                work.toString(), "--bin", bin.folder().toString(), "--node-name", "npu-node-0", "--kubelet-kubeconfig",
                tmp.resolve("k").toString(), "--proxy-kubeconfig", tmp.resolve("p").toString(), "--client-ca",
                tmp.resolve("ca").toString()));
        cmd.addAll(List.of(extra));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "kubenode did not refuse at once: " + out);
        return new String[] {String.valueOf(p.exitValue()), out};
    }

    @Test
    void kubenodeRefusesAWorkFolderItWouldDamageAndBadFlagsBeforeTouchingTheMachine() throws Exception {
        KubeBinaries bin = KubeBinaries.fromSystemProperties();
        // teardown unmounts everything under the work folder: / or a folder of other files is refused, exit 2
        String[] root = kubenode(bin, Path.of("/"), tmp);
        assertEquals("2", root[0], root[1]);
        assertTrue(root[1].contains("too close to /"), root[1]);
        Path userData = java.nio.file.Files.createDirectories(tmp.resolve("user-data"));
        Path kept = java.nio.file.Files.writeString(userData.resolve("notes.txt"), "mine\n");
        String[] foreign = kubenode(bin, userData, tmp);
        assertEquals("2", foreign[0], foreign[1]);
        assertTrue(foreign[1].contains("holds files and is not a kubenode work folder"), foreign[1]);
        assertEquals("mine\n", java.nio.file.Files.readString(kept));
        String[] image = kubenode(bin, tmp.resolve("new"), tmp, "--image", "no-equals-sign.tar");
        assertEquals("2", image[0], image[1]);
        assertTrue(image[1].contains("expected FILE=NAME"), image[1]);
        assertTrue(!java.nio.file.Files.exists(tmp.resolve("new")), "nothing created for a refused start");
        assertEquals(List.of(), RealNode.leftovers(tmp.resolve("new")));
        assertTrue(!java.nio.file.Files.exists(Path.of("/sys/class/net", RealNode.BRIDGE)), "no bridge made");
    }
}
