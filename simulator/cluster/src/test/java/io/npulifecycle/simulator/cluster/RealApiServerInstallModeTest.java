package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.simulator.cluster.internal.KubeCommandLines;

/**
 * The install mode of {@link RealApiServer} ({@code builder().installMode(true)}): Pod Security admission
 * {@code restricted} is the default of an unlabelled namespace, and the workload controllers an installation needs
 * run: a Deployment gets its ReplicaSet and an admitted (Pending) pod, a DaemonSet a pod per node, a pod template
 * that Pod Security refuses shows on its ReplicaSet, and deleting a Deployment removes its ReplicaSet and pods
 * (garbage collector). A namespace created as {@code helm install --create-namespace} does gets its {@code default}
 * ServiceAccount.
 */
class RealApiServerInstallModeTest {

    static final Duration TIMEOUT = Duration.ofSeconds(90);
    static final String NS = "apps";

    static RealApiServer api;

    @BeforeAll
    static void start() {
        api = RealApiServer.builder().installMode(true).start();
        // the added start time: compare with the "RealApiServer ready in" line of RealApiServerDisruptionTest
        System.out.println("RealApiServer (install mode) ready in " + api.startDuration().toMillis() + " ms, of which "
                + api.controllerManagerStartDuration().toMillis() + " ms kube-controller-manager with "
                + KubeCommandLines.INSTALL_CONTROLLERS);
        // as helm install --create-namespace: a plain namespace, no labels, no ServiceAccount made by the harness
        api.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata()
                .build()).create();
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
        }
    }

    /** A pod spec that the {@code restricted} level admits. */
    static PodSpec restrictedSpec() {
        return new PodSpecBuilder()
                .withNewSecurityContext().withRunAsNonRoot(true).withNewSeccompProfile().withType("RuntimeDefault")
                .endSeccompProfile().endSecurityContext()
                .addNewContainer().withName("app").withImage("registry.local/app:1")
                .withNewSecurityContext().withAllowPrivilegeEscalation(false).withNewCapabilities().withDrop("ALL")
                .endCapabilities().endSecurityContext().endContainer()
                .build();
    }

    static Deployment deployment(String name, PodSpec spec) {
        return new DeploymentBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewSpec().withReplicas(1).withNewSelector().addToMatchLabels("app", name).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata().withSpec(spec)
                .endTemplate().endSpec().build();
    }

    static List<Pod> pods(String app) {
        return api.client().pods().inNamespace(NS).withLabel("app", app).list().getItems();
    }

    static List<ReplicaSet> replicaSets(String app) {
        return api.client().apps().replicaSets().inNamespace(NS).withLabel("app", app).list().getItems();
    }

    @Test
    void aNewNamespaceGetsItsDefaultServiceAccount() {
        Awaitility.await("the serviceaccount controller creates " + NS + "/default").atMost(TIMEOUT)
                .until(() -> api.client().serviceAccounts().inNamespace(NS).withName("default").get() != null);
    }

    @Test
    void aPrivilegedPodInAnUnlabelledNamespaceIsRefusedNamingTheRestrictedPolicy() {
        Pod privileged = new PodBuilder().withNewMetadata().withName("privileged").withNamespace(NS).endMetadata()
                .withNewSpec().withHostPID(true).addNewContainer().withName("driver").withImage("registry.local/d:1")
                .withNewSecurityContext().withPrivileged(true).endSecurityContext().endContainer().endSpec().build();
        Awaitility.await("the default ServiceAccount (else the refusal names it)").atMost(TIMEOUT)
                .until(() -> api.client().serviceAccounts().inNamespace(NS).withName("default").get() != null);
        KubernetesClientException e = assertThrows(KubernetesClientException.class,
                () -> api.client().pods().inNamespace(NS).resource(privileged).create());
        assertEquals(403, e.getCode(), e.getMessage());
        assertTrue(e.getMessage().contains("violates PodSecurity \"restricted:latest\""), e.getMessage());
        assertTrue(e.getMessage().contains("privileged"), e.getMessage());
        assertNull(api.client().pods().inNamespace(NS).withName("privileged").get());

        // the namespace labelled as the chart's podSecurity.labels do: the same pod is admitted
        api.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS + "-privileged")
                .addToLabels("pod-security.kubernetes.io/enforce", "privileged").endMetadata().build()).create();
        api.ensureServiceAccount(NS + "-privileged", "default");
        privileged.getMetadata().setNamespace(NS + "-privileged");
        assertEquals("privileged", api.client().pods().inNamespace(NS + "-privileged").resource(privileged).create()
                .getMetadata().getName());
    }

    @Test
    void aDeploymentGetsItsReplicaSetAndAnAdmittedPendingPodAndDeletingItRemovesThem() {
        Deployment created = api.client().apps().deployments().inNamespace(NS)
                .resource(deployment("web", restrictedSpec())).create();
        Awaitility.await("the Deployment's ReplicaSet and its pod").atMost(TIMEOUT)
                .until(() -> replicaSets("web").size() == 1 && pods("web").size() == 1);
        ReplicaSet rs = replicaSets("web").get(0);
        assertEquals(created.getMetadata().getUid(), rs.getMetadata().getOwnerReferences().get(0).getUid());
        Pod pod = pods("web").get(0);
        assertEquals(rs.getMetadata().getUid(), pod.getMetadata().getOwnerReferences().get(0).getUid());
        assertEquals("Pending", pod.getStatus().getPhase(), "no scheduler, no kubelet");

        api.client().apps().deployments().inNamespace(NS).withName("web").delete();
        Awaitility.await("the garbage collector removes the ReplicaSet and its pod").atMost(TIMEOUT)
                .until(() -> replicaSets("web").isEmpty() && pods("web").isEmpty());
    }

    @Test
    void aPodTemplateThatPodSecurityRefusesShowsOnTheReplicaSet() {
        PodSpec privileged = restrictedSpec();
        privileged.getContainers().get(0).getSecurityContext().setPrivileged(true);
        privileged.getContainers().get(0).getSecurityContext().setAllowPrivilegeEscalation(null);
        api.client().apps().deployments().inNamespace(NS).resource(deployment("refused", privileged)).create();
        Awaitility.await("the ReplicaSet reports the refusal").atMost(TIMEOUT).until(() -> replicaSets("refused")
                .stream().anyMatch(rs -> rs.getStatus() != null && rs.getStatus().getConditions() != null
                        && rs.getStatus().getConditions().stream().anyMatch(c -> "ReplicaFailure".equals(c.getType())
                                && c.getMessage().contains("violates PodSecurity \"restricted:latest\""))));
        assertTrue(pods("refused").isEmpty());
    }

    @Test
    void aDaemonSetGetsAPodPerNode() {
        api.addNode(EmbeddedCluster.npuNode("ds-node-0"));
        api.addNode(EmbeddedCluster.npuNode("ds-node-1"));
        api.client().apps().daemonSets().inNamespace(NS).resource(new DaemonSetBuilder().withNewMetadata()
                .withName("agent").withNamespace(NS).endMetadata().withNewSpec().withNewSelector()
                .addToMatchLabels("app", "agent").endSelector().withNewTemplate().withNewMetadata()
                .addToLabels("app", "agent").endMetadata().withSpec(restrictedSpec()).endTemplate().endSpec().build())
                .create();
        Awaitility.await("a DaemonSet pod per node").atMost(TIMEOUT).until(() -> nodesOf(pods("agent")).containsAll(
                Set.of("ds-node-0", "ds-node-1")));
        assertTrue(pods("agent").stream().allMatch(p -> "Pending".equals(p.getStatus().getPhase())));
        assertEquals(pods("agent").size(), nodesOf(pods("agent")).size(), "one pod per node");
    }

    /** The node each DaemonSet pod is pinned to (the controller's required node affinity on metadata.name). */
    static Set<String> nodesOf(List<Pod> pods) {
        return pods.stream().map(p -> p.getSpec().getAffinity().getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms().get(0)
                .getMatchFields().get(0).getValues().get(0)).collect(Collectors.toSet());
    }

    @Test
    void theDefaultModeKeepsItsControllers() {
        assertTrue(api.installMode());
        assertEquals(List.of("disruption"), KubeCommandLines.CONTROLLERS);
        assertTrue(KubeCommandLines.INSTALL_CONTROLLERS.containsAll(List.of("deployment", "replicaset", "daemonset",
                "job", "garbagecollector", "serviceaccount", "disruption")));
    }
}
