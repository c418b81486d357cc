package io.npulifecycle.itests.install;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;

/**
 * The chart installed, upgraded and uninstalled as an operator does, with the real {@code helm} on the install mode of
 * the real API server ({@link RealApiServer.Builder#installMode(boolean)}: Pod Security {@code restricted} is the
 * cluster default; the Deployment, ReplicaSet, DaemonSet, Job and garbage-collector controllers run; no scheduler or
 * kubelet, so pods stay Pending once admitted):
 * <ol>
 * <li>{@code helm install} with the defaults creates every object of its manifest, the control plane's pods are
 * admitted, and no NPUOperatorCtl exists (installing never starts a rollout);</li>
 * <li>{@code helm upgrade} with changed values changes what it must and keeps the generated Jolokia password;</li>
 * <li>the node agent's privileged pods ({@code driver.enabled=false}) are refused by the cluster's {@code restricted}
 * default until the namespace carries the chart's Pod Security labels, which the control plane writes at its start
 * (played here: no kubelet runs the control plane), then admitted, one per NPU node;</li>
 * <li>a bad value is refused by the chart's schema, naming it;</li>
 * <li>the combined manifest applies with {@code kubectl apply --server-side} on a server of its own;</li>
 * <li>{@code helm uninstall} after a rollout and a wedge (their traces on the nodes written as the product writes
 * them) runs the pre-delete hook Job: this test plays the kubelet for that one pod (runs its command, the
 * distribution's {@code npu-lifecycle uninstall}, with a token of the Job's ServiceAccount bound to the pod, then
 * marks the pod Succeeded); afterwards no object, label, annotation, taint or cordon of ours is left and an
 * administrator's cordon is kept.</li>
 * </ol>
 * Needs helm, the chart and kubectl ({@link InstallTools}); the uninstall test also the distribution's launcher with
 * its {@code uninstall} command. Without them the test is skipped with the reason (failed under {@code CI=true}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HelmInstallIT {

    static final String NS = "npu-operator";
    static final String RELEASE = "npu-lifecycle";
    static final String CONTROL_PLANE = "npu-lifecycle-control-plane";
    static final String NODE_AGENT = "npu-lifecycle-node-agent";
    static final String JOLOKIA_SECRET = "npu-lifecycle-jolokia";
    static final String UNINSTALL_JOB = "npu-lifecycle-uninstall";
    static final Duration TIMEOUT = Duration.ofSeconds(120);
    static final List<String> NPU_NODES = List.of("npu-0", "npu-1", "npu-2");
    /**
     * The {@code npu.openfuyao.com/} keys that are not ours to remove (DESIGN.md; {@code npu-lifecycle uninstall
     * --help}): the installer's chip label and the administrators' approvals.
     */
    static final java.util.Set<String> NOT_OURS = java.util.Set.of(NodeKeys.CHIP, NodeKeys.APPROVE_REBOOT);
    /** A node without NPUs: no node pod of ours goes there. */
    static final String CPU_NODE = "cpu-0";

    @TempDir
    static Path work;
    static Path chart;
    static Path helm;
    static Path kubectl;
    static RealApiServer api;
    static Path kubeconfig;
    static String installedPassword;

    @BeforeAll
    static void start() throws Exception {
        chart = InstallTools.chart();
        helm = InstallTools.helm();
        kubectl = InstallTools.kubectl();
        api = RealApiServer.builder().binaries(KubeBinaries.locate()).installMode(true).start();
        System.out.println("RealApiServer (install mode) ready in " + api.startDuration().toMillis() + " ms; chart "
                + chart + ", helm " + helm);
        kubeconfig = api.writeKubeconfig(work.resolve("kubeconfig"));
        for (String n : NPU_NODES) {
            api.addNode(EmbeddedCluster.npuNode(n));
        }
        Node cpu = EmbeddedCluster.npuNode(CPU_NODE);
        cpu.getMetadata().getLabels().keySet().removeIf(k -> k.contains("npu"));
        api.addNode(cpu);
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
        }
    }

    static InstallTools.Run helm(String... args) throws Exception {
        return InstallTools.run(work, InstallTools.concat(List.of(helm.toString(), "--kubeconfig",
                kubeconfig.toString()), args));
    }

    static KubernetesClient client() {
        return api.client();
    }

    /** @return the objects of the release's manifest ({@code helm get manifest}) */
    static List<HasMetadata> manifest() throws Exception {
        String yaml = helm("get", "manifest", RELEASE, "-n", NS).ok().out();
        return client().load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
    }

    static String describe(HasMetadata o) {
        return o.getKind() + " " + (o.getMetadata().getNamespace() == null ? "" : o.getMetadata().getNamespace() + "/")
                + o.getMetadata().getName();
    }

    static List<Pod> pods(String app) {
        return client().pods().inNamespace(NS).withLabel("app", app).list().getItems();
    }

    static String jolokiaPassword() {
        Secret s = client().secrets().inNamespace(NS).withName(JOLOKIA_SECRET).get();
        assertNotNull(s, "Secret " + JOLOKIA_SECRET);
        return new String(Base64.getDecoder().decode(s.getData().get("password")), StandardCharsets.UTF_8);
    }

    @Test
    @Order(1)
    void installWithTheDefaultsCreatesEveryObjectAdmitsItsPodsAndNoNpuOperatorCtl() throws Exception {
        helm("install", RELEASE, chart.toString(), "-n", NS, "--create-namespace").ok();

        List<HasMetadata> objects = manifest();
        assertFalse(objects.isEmpty());
        List<String> absent = objects.stream().filter(o -> client().resource(o).get() == null)
                .map(HelmInstallIT::describe).toList();
        assertEquals(List.of(), absent, "every object of the manifest exists");
        assertNotNull(client().apiextensions().v1().customResourceDefinitions()
                .withName("npuoperatorctls.npu.openfuyao.com").get(), "the CRD (crds/)");
        assertEquals(List.of(), api.npuOperatorCtls().inAnyNamespace().list().getItems(),
                "installing never starts a rollout: no NPUOperatorCtl");

        Deployment cp = client().apps().deployments().inNamespace(NS).withName(CONTROL_PLANE).get();
        int replicas = cp.getSpec().getReplicas();
        Awaitility.await("the control plane's " + replicas + " pods admitted by Pod Security restricted")
                .atMost(TIMEOUT).until(() -> pods(CONTROL_PLANE).size() == replicas);
        assertTrue(pods(CONTROL_PLANE).stream().allMatch(p -> "Pending".equals(p.getStatus().getPhase())));
        installedPassword = jolokiaPassword();
        assertTrue(installedPassword.length() >= 16, "a generated password");
    }

    @Test
    @Order(2)
    void upgradeWithChangedValuesChangesWhatItMustAndKeepsTheGeneratedPassword() throws Exception {
        ConfigMap nodeConfigBefore = client().configMaps().inNamespace(NS).withName("npu-lifecycle-node-config").get();
        String rsBefore = pods(CONTROL_PLANE).get(0).getMetadata().getOwnerReferences().get(0).getName();
        helm("upgrade", RELEASE, chart.toString(), "-n", NS, "--reuse-values", "--set", "controlPlane.replicas=1",
                "--set", "node.healthWatch.intervalSeconds=30", "--set", "driver.enabled=false").ok();

        assertEquals(1, client().apps().deployments().inNamespace(NS).withName(CONTROL_PLANE).get().getSpec()
                .getReplicas());
        String probe = client().configMaps().inNamespace(NS).withName("npu-lifecycle-node-config").get().getData()
                .get("io.npulifecycle.probe.cfg");
        assertTrue(probe.contains("interval=30"), probe);
        assertNotEquals(nodeConfigBefore.getData().get("io.npulifecycle.probe.cfg"), probe);
        assertNull(client().configMaps().inNamespace(NS).withName("npu-lifecycle-driver-daemonset").get(),
                "driver.enabled=false: no driver DaemonSet template");
        assertNotNull(client().apps().daemonSets().inNamespace(NS).withName(NODE_AGENT).get(),
                "driver.enabled=false: the node-agent DaemonSet");
        assertEquals(installedPassword, jolokiaPassword(), "helm upgrade keeps the generated Jolokia password");
        Awaitility.await("the control plane rolled to one pod of a new ReplicaSet").atMost(TIMEOUT).until(() -> {
            List<Pod> p = pods(CONTROL_PLANE);
            return p.size() == 1 && !rsBefore.equals(p.get(0).getMetadata().getOwnerReferences().get(0).getName());
        });
    }

    @Test
    @Order(3)
    void theNodeAgentPodsAreAdmittedOnceTheNamespaceCarriesTheChartsPodSecurityLabels() throws Exception {
        Awaitility.await("the DaemonSet controller reports Pod Security's refusal").atMost(TIMEOUT).until(() ->
                client().v1().events().inNamespace(NS).list().getItems().stream()
                        .filter(e -> NODE_AGENT.equals(e.getInvolvedObject().getName()))
                        .map(Event::getMessage).anyMatch(m -> m.contains("violates PodSecurity \"restricted:latest\"")));
        assertEquals(List.of(), pods(NODE_AGENT), "refused while the namespace has no Pod Security labels");

        // what the control plane does at its start (podSecurityLabels of its configuration; no kubelet runs it here)
        String cfg = client().configMaps().inNamespace(NS).withName("npu-lifecycle-control-plane-config").get()
                .getData().get("io.npulifecycle.upgrade.cfg");
        String labels = cfg.lines().filter(l -> l.startsWith("podSecurityLabels=")).findFirst()
                .orElseThrow(() -> new AssertionError("no podSecurityLabels in " + cfg)).substring(18);
        assertEquals("enforce=privileged,warn=privileged,audit=privileged", labels);
        client().namespaces().withName(NS).edit(n -> {
            for (String ml : labels.split(",")) {
                String[] kv = ml.split("=");
                n.getMetadata().getLabels().put("pod-security.kubernetes.io/" + kv[0], kv[1]);
            }
            return n;
        });
        Awaitility.await("a node-agent pod per NPU node").atMost(TIMEOUT).until(() ->
                nodesOf(pods(NODE_AGENT)).containsAll(NPU_NODES));
        assertFalse(nodesOf(pods(NODE_AGENT)).contains(CPU_NODE),
                "no node agent on a node without NPUs");
    }

    @Test
    @Order(4)
    void aBadValueIsRefusedByTheSchemaNamingIt() throws Exception {
        String revision = helm("history", RELEASE, "-n", NS, "--max", "1", "-o", "json").ok().out();
        InstallTools.Run wrongType = helm("upgrade", RELEASE, chart.toString(), "-n", NS, "--reuse-values",
                "--set-string", "controlPlane.replicas=two");
        assertNotEquals(0, wrongType.exit(), wrongType.toString());
        assertTrue(wrongType.err().contains("at '/controlPlane/replicas': got string, want integer"),
                wrongType.toString());
        InstallTools.Run unknown = helm("upgrade", RELEASE, chart.toString(), "-n", NS, "--reuse-values",
                "--set", "controlPlane.replicaz=2");
        assertNotEquals(0, unknown.exit(), unknown.toString());
        assertTrue(unknown.err().contains("at '/controlPlane': additional properties 'replicaz' not allowed"),
                unknown.toString());
        assertEquals(revision, helm("history", RELEASE, "-n", NS, "--max", "1", "-o", "json").ok().out(),
                "no new revision");
    }

    @Test
    @Order(5)
    void theCombinedManifestAppliesServerSide() throws Exception {
        Path combined = chart.getParent().resolve("target/npu-lifecycle.yaml");
        if (!Files.isRegularFile(combined)) {
            // as charts/render.sh makes it: the defaults, no hooks, the Jolokia Secret left to the user
            combined = Files.writeString(work.resolve("npu-lifecycle.yaml"), InstallTools.run(work, helm.toString(),
                    "template", RELEASE, chart.toString(), "-n", NS, "--include-crds", "--no-hooks", "--set",
                    "jolokia.existingSecret=" + JOLOKIA_SECRET).ok().out());
        }
        try (RealApiServer other = RealApiServer.builder().binaries(KubeBinaries.locate()).installMode(true)
                .start()) {
            Path kc = other.writeKubeconfig(work.resolve("other-kubeconfig"));
            other.client().namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                    .withNewMetadata().withName(NS).endMetadata().build()).serverSideApply();
            InstallTools.run(work, kubectl.toString(), "--kubeconfig", kc.toString(), "apply", "--server-side", "-f",
                    combined.toString()).ok();
            List<HasMetadata> objects = other.client().load(Files.newInputStream(combined)).items();
            List<String> absent = objects.stream().filter(o -> other.client().resource(o).get() == null)
                    .map(HelmInstallIT::describe).toList();
            assertEquals(List.of(), absent, "every object of " + combined + " exists");
        }
    }

    /** @return the node each DaemonSet pod is pinned to (the controller's required node affinity on metadata.name) */
    static java.util.Set<String> nodesOf(List<Pod> pods) {
        return pods.stream().map(p -> p.getSpec().getAffinity().getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms().get(0)
                .getMatchFields().get(0).getValues().get(0)).collect(java.util.stream.Collectors.toSet());
    }

    /** The traces a rollout and a wedge leave on an NPU node, as the product writes them. */
    static void rolloutAndWedgeTraces(String node, boolean cordonedByUs) {
        client().nodes().withName(node).edit(n -> {
            if (n.getMetadata().getAnnotations() == null) {
                n.getMetadata().setAnnotations(new java.util.HashMap<>());
            }
            if (n.getSpec().getTaints() == null) {
                n.getSpec().setTaints(new ArrayList<>());
            }
            n.getMetadata().getLabels().put(NodeKeys.DRIVER_UPGRADE_STATE, "upgrade-done");
            n.getMetadata().getLabels().put(NodeKeys.DRIVER_VERSION, "25.5.0");
            n.getMetadata().getLabels().put(NodeKeys.NPU_HEALTH, "wedged");
            n.getMetadata().getAnnotations().put(NodeKeys.DRIVER_VALIDATED, "25.5.0@boot-1");
            n.getMetadata().getAnnotations().put(NodeKeys.BOOT_ID, "boot-1");
            n.getSpec().getTaints().add(new TaintBuilder().withKey(NodeKeys.PREFIX + "npu-unhealthy")
                    .withValue("true").withEffect("NoSchedule").build());
            if (cordonedByUs) {
                n.getSpec().setUnschedulable(true);
                n.getMetadata().getAnnotations().put(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE);
            }
            return n;
        });
        Node n = client().nodes().withName(node).get();
        n.getStatus().getConditions().add(new NodeConditionBuilder().withType("NpuHealthy").withStatus("False")
                .withReason("ChipWedged").withMessage("chips 4:0 wedged").build());
        client().nodes().resource(n).updateStatus();
    }

    @Test
    @Order(6)
    void uninstallAfterARolloutAndAWedgeLeavesNothingOfOursAndKeepsAnAdministratorsCordon() throws Exception {
        Path launcher = InstallTools.launcher();
        InstallTools.Run help = InstallTools.run(work, launcher.toString(), "uninstall", "--help");
        if (help.exit() != 0) {
            InstallTools.missing("the launcher " + launcher + " has no uninstall command (issue 25 part D): " + help);
        }
        // back to managed drivers, and what a rollout and a wedge leave behind
        helm("upgrade", RELEASE, chart.toString(), "-n", NS, "--reuse-values", "--set", "driver.enabled=true").ok();
        client().apps().daemonSets().inNamespace(NS).resource(new DaemonSetBuilder().withNewMetadata()
                .withName("npu-driver-daemonset-910b").withNamespace(NS).addToLabels("app", NodeKeys.DRIVER_APP)
                .endMetadata().withNewSpec().withNewSelector().addToMatchLabels("app", NodeKeys.DRIVER_APP)
                .endSelector().withNewTemplate().withNewMetadata().addToLabels("app", NodeKeys.DRIVER_APP).endMetadata()
                .withNewSpec().addNewContainer().withName("driver").withImage("registry.local/mlops/ascend-driver:25.5.0")
                .withNewSecurityContext().withPrivileged(true).endSecurityContext().endContainer().endSpec()
                .endTemplate().endSpec().build()).create();
        rolloutAndWedgeTraces("npu-0", true);
        rolloutAndWedgeTraces("npu-1", false);
        client().nodes().withName("npu-2").edit(n -> { // an administrator's cordon and approval: not ours to lift
            n.getSpec().setUnschedulable(true);
            if (n.getMetadata().getAnnotations() == null) {
                n.getMetadata().setAnnotations(new java.util.HashMap<>());
            }
            n.getMetadata().getAnnotations().put(NodeKeys.APPROVE_REBOOT, "true");
            return n;
        });
        List<HasMetadata> objects = manifest();

        InstallTools.Started uninstall = InstallTools.start(work, Map.of(), helm.toString(), "--kubeconfig",
                kubeconfig.toString(), "uninstall", RELEASE, "-n", NS, "--timeout", "3m");
        try {
            playTheKubeletForTheUninstallJob(launcher, uninstall);
        } finally {
            if (uninstall.alive() && !uninstall.process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                uninstall.process.destroyForcibly(); // the hook failed: helm would wait for the Job's retries
            }
        }
        InstallTools.Run done = uninstall.await().ok();
        System.out.println("helm uninstall: " + done.out());

        List<String> left = objects.stream().filter(o -> client().resource(o).get() != null)
                .map(HelmInstallIT::describe).toList();
        assertEquals(List.of(), left, "no object of the release is left");
        assertEquals(List.of(), client().apps().daemonSets().inNamespace(NS).withLabel("app", NodeKeys.DRIVER_APP)
                .list().getItems().stream().map(HelmInstallIT::describe).toList(), "no driver DaemonSet");
        Awaitility.await("the garbage collector removes the release's pods").atMost(TIMEOUT)
                .until(() -> client().pods().inNamespace(NS).list().getItems().isEmpty());
        for (Node n : client().nodes().list().getItems()) {
            String name = n.getMetadata().getName();
            List<String> ours = new ArrayList<>();
            n.getMetadata().getLabels().keySet().stream().filter(k -> k.startsWith(NodeKeys.PREFIX)
                    && !NOT_OURS.contains(k)).forEach(k -> ours.add("label " + k));
            if (n.getMetadata().getAnnotations() != null) {
                n.getMetadata().getAnnotations().keySet().stream().filter(k -> k.startsWith(NodeKeys.PREFIX)
                        && !NOT_OURS.contains(k))
                        .forEach(k -> ours.add("annotation " + k));
            }
            if (n.getSpec().getTaints() != null) {
                n.getSpec().getTaints().stream().filter(t -> t.getKey().startsWith(NodeKeys.PREFIX))
                        .forEach(t -> ours.add("taint " + t.getKey()));
            }
            n.getStatus().getConditions().stream().filter(c -> "NpuHealthy".equals(c.getType()))
                    .forEach(c -> ours.add("condition NpuHealthy"));
            assertEquals(List.of(), ours, "node " + name + " keeps nothing of ours");
        }
        assertFalse(Boolean.TRUE.equals(client().nodes().withName("npu-0").get().getSpec().getUnschedulable()),
                "our cordon is lifted");
        Node admins = client().nodes().withName("npu-2").get();
        assertTrue(admins.getSpec().getUnschedulable(), "the administrator's cordon is kept");
        assertEquals("true", admins.getMetadata().getAnnotations().get(NodeKeys.APPROVE_REBOOT),
                "the administrator's approval is kept");
        assertNotNull(client().nodes().withName("npu-0").get().getMetadata().getLabels().get(NodeKeys.CHIP),
                "the installer's chip label is kept");
        assertNotNull(client().apiextensions().v1().customResourceDefinitions()
                .withName("npuoperatorctls.npu.openfuyao.com").get(), "helm uninstall keeps the CRD");
        Namespace ns = client().namespaces().withName(NS).get();
        assertNotNull(ns, "helm uninstall keeps the namespace (it is not a chart object)");
    }

    /**
     * Waits for the pod of the pre-delete hook Job, runs its command ({@code npu-lifecycle uninstall ...}, the
     * arguments of its container) from the distribution with a token of its ServiceAccount bound to the pod, then
     * writes the pod Succeeded (exit 0) or Failed as the kubelet would.
     */
    static void playTheKubeletForTheUninstallJob(Path launcher, InstallTools.Started uninstall) throws Exception {
        Awaitility.await("the pre-delete hook Job's pod").atMost(TIMEOUT).until(() -> {
            if (!uninstall.alive()) {
                throw new AssertionError("helm uninstall ended before its hook ran: " + uninstall.await());
            }
            return !pods(UNINSTALL_JOB).isEmpty();
        });
        Pod pod = pods(UNINSTALL_JOB).get(0);
        Job job = client().batch().v1().jobs().inNamespace(NS).withName(UNINSTALL_JOB).get();
        assertNotNull(job, "the hook Job " + UNINSTALL_JOB);
        String sa = pod.getSpec().getServiceAccountName();
        List<String> args = pod.getSpec().getContainers().get(0).getArgs();
        assertEquals("uninstall", args.get(0), "the hook runs npu-lifecycle uninstall: " + args);
        String token = api.podBoundToken(NS, sa, pod.getMetadata().getName(), Duration.ofMinutes(30));
        Path kc = api.writeTokenKubeconfig(work.resolve("uninstall-kubeconfig"), token);
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(args);
        command.addAll(List.of("--kubeconfig", kc.toString()));
        InstallTools.Run ran = InstallTools.run(work, command.toArray(String[]::new));
        System.out.println("the hook's command: " + ran);
        pod = client().pods().inNamespace(NS).withName(pod.getMetadata().getName()).get();
        pod.setStatus(new PodStatusBuilder().withPhase(ran.exit() == 0 ? "Succeeded" : "Failed")
                .addToContainerStatuses(new ContainerStatusBuilder().withName(pod.getSpec().getContainers().get(0)
                        .getName()).withImage(pod.getSpec().getContainers().get(0).getImage()).withImageID("")
                        .withReady(false).withRestartCount(0).withNewState().withNewTerminated().withExitCode(ran.exit())
                        .withReason(ran.exit() == 0 ? "Completed" : "Error").endTerminated().endState().build())
                .build());
        client().pods().inNamespace(NS).resource(pod).updateStatus();
        assertEquals(0, ran.exit(), "the uninstall hook's command: " + ran);
    }
}
