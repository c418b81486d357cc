package io.npulifecycle.testing.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.ServerBaseline;

/**
 * A real server handed to the next fixture holds exactly what was installed: what a test created is gone, and a
 * server whose installed objects a test changed is not handed out again.
 */
class RealServerPoolTest {

    static final String NS = "jobs";

    @Test
    void theNextFixtureGetsTheSameServerWithoutWhatTheTestBeforeCreated() {
        String url;
        try (ClusterFixture a = ClusterFixture.start(ClusterBackend.REAL)) {
            url = a.masterUrl();
            KubernetesClient k = a.admin();
            a.backend().addNode(EmbeddedCluster.npuNode("n1"));
            a.createDriver(Map.of("version", "25.2.0"));
            a.backend().ensureNamespace(NS);
            k.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("job-0").endMetadata()
                    .withNewSpec().withNodeName("n1").addNewContainer().withName("c").withImage("x").endContainer()
                    .endSpec().build()).create();
            k.policy().v1().podDisruptionBudget().inNamespace(NS).resource(new PodDisruptionBudgetBuilder()
                    .withNewMetadata().withName("pdb").endMetadata().withNewSpec().withMinAvailable(
                            new io.fabric8.kubernetes.api.model.IntOrString(1)).withNewSelector()
                    .addToMatchLabels("app", "job").endSelector().endSpec().build()).create();
            a.serviceAccountToken("npu-lifecycle-node-agent", "n1");
            a.annotate("n1", "example.com/a", "1");
        }
        try (ClusterFixture b = ClusterFixture.start(ClusterBackend.REAL)) {
            assertEquals(url, b.masterUrl(), "the same server is reused");
            KubernetesClient k = b.admin();
            assertNull(b.node("n1"));
            assertNull(b.npuOperatorCtl());
            assertTrue(k.pods().inAnyNamespace().list().getItems().isEmpty());
            assertTrue(k.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems().isEmpty());
            assertNotNull(k.namespaces().withName(NS).get(), "a namespace stays (it could not finish terminating)");
            assertNotNull(k.serviceAccounts().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                    .withName("npu-lifecycle-node-agent").get(), "what was installed is still there");
            // a change to what was installed: this server is not handed out again
            k.configMaps().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(new ConfigMapBuilder()
                    .withNewMetadata().withName("probe").endMetadata().build()).create();
            var sa = k.serviceAccounts().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                    .withName("npu-lifecycle-node-agent").get();
            sa.getMetadata().setLabels(Map.of("changed", "by-a-test"));
            k.serviceAccounts().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(sa).update();
        }
        try (ClusterFixture c = ClusterFixture.start(ClusterBackend.REAL)) {
            assertNotEquals(url, c.masterUrl(), "a server with a changed installed object is not reused");
            assertNull(c.admin().serviceAccounts().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                    .withName("npu-lifecycle-node-agent").get().getMetadata().getLabels().get("changed"));
        }
    }

    @Test
    void aServerWithOtherFlagsIsNotReused() {
        String url;
        try (ClusterFixture a = ClusterFixture.start(ClusterBackend.REAL)) {
            url = a.masterUrl();
        }
        try (ClusterFixture b = ClusterFixture.startReal(List.of("--watch-cache=false"))) {
            assertNotEquals(url, b.masterUrl());
        }
    }

    /**
     * {@link ServerBaseline#restoreOrWhy}: what a file or test created is deleted (Events and finalizers included) and
     * the answer is null; a change to an object of the baseline is named, with its type, namespace and name.
     */
    @Test
    void aRestoreDeletesWhatWasCreatedAndNamesWhatItCannotUndo() {
        try (ClusterFixture a = ClusterFixture.start(ClusterBackend.REAL)) {
            KubernetesClient k = a.admin();
            ServerBaseline baseline = ServerBaseline.of(k);
            k.configMaps().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(new ConfigMapBuilder()
                    .withNewMetadata().withName("held").addToFinalizers("example.com/hold").endMetadata().build())
                    .create();
            k.v1().events().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(new io.fabric8.kubernetes.api.model
                    .EventBuilder().withNewMetadata().withName("e1").endMetadata().withReason("Test")
                    .withNewInvolvedObject().withKind("Pod").withNamespace(EmbeddedCluster.NPU_NAMESPACE).withName("p1")
                    .endInvolvedObject().build()).create();
            assertNull(baseline.restoreOrWhy(k));
            assertNull(k.configMaps().inNamespace(EmbeddedCluster.NPU_NAMESPACE).withName("held").get(),
                    "deleted, its finalizer removed first");
            assertNull(k.v1().events().inNamespace(EmbeddedCluster.NPU_NAMESPACE).withName("e1").get(),
                    "an Event of the run is deleted: the next user never reads it");

            var sa = k.serviceAccounts().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                    .withName("npu-lifecycle-node-agent").get();
            sa.getMetadata().setLabels(Map.of("changed", "by-a-test"));
            k.serviceAccounts().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(sa).update();
            String why = baseline.restoreOrWhy(k);
            assertTrue(why != null && why.contains("/v1/serviceaccounts " + EmbeddedCluster.NPU_NAMESPACE
                    + "/npu-lifecycle-node-agent of the baseline was changed"), why);
        }
    }
}
