package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.Eviction;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The disruption controller of the real API server's kube-controller-manager: a PodDisruptionBudget gets its status
 * computed over the Ready pods it selects, and the Eviction API ({@code policy/v1}) refuses with 429 an eviction that
 * would violate it and allows one once a replica is added.
 */
class RealApiServerDisruptionTest {

    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String NS = "training";

    static RealApiServer api;

    @BeforeAll
    static void start() {
        api = RealApiServer.start();
        System.out.println("RealApiServer ready in " + api.startDuration().toMillis() + " ms, of which "
                + api.controllerManagerStartDuration().toMillis() + " ms kube-controller-manager");
        api.ensureNamespace(NS);
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
        }
    }

    static Pod readyPod(KubernetesClient client, String name) {
        Pod pod = client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(name)
                .withNamespace(NS).addToLabels("job", "train").endMetadata().withNewSpec().withNodeName("node-0")
                .addNewContainer().withName("c").withImage("train:1").endContainer().endSpec().build()).create();
        pod.setStatus(new PodStatusBuilder().withPhase("Running").addNewCondition().withType("Ready")
                .withStatus("True").endCondition().build());
        return client.pods().inNamespace(NS).resource(pod).updateStatus();
    }

    static Eviction eviction(String name) {
        return new EvictionBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata().build();
    }

    static PodDisruptionBudget pdb(KubernetesClient client) {
        return client.policy().v1().podDisruptionBudget().inNamespace(NS).withName("train").get();
    }

    @Test
    void aBudgetOverReadyPodsIsComputedAndGuardsEvictions() {
        KubernetesClient client = api.client();
        readyPod(client, "train-0");
        readyPod(client, "train-1");
        PodDisruptionBudget created = client.policy().v1().podDisruptionBudget().inNamespace(NS)
                .resource(new PodDisruptionBudgetBuilder().withNewMetadata().withName("train").withNamespace(NS)
                        .endMetadata().withNewSpec().withMinAvailable(new IntOrString(2)).withNewSelector()
                        .addToMatchLabels("job", "train").endSelector().endSpec().build()).create();

        Awaitility.await("the disruption controller observes the budget").atMost(TIMEOUT).until(() -> {
            PodDisruptionBudget p = pdb(client);
            return p.getStatus() != null && created.getMetadata().getGeneration()
                    .equals(p.getStatus().getObservedGeneration()) && p.getStatus().getCurrentHealthy() == 2;
        });
        PodDisruptionBudget observed = pdb(client);
        assertEquals(0, observed.getStatus().getDisruptionsAllowed());
        assertEquals(2, observed.getStatus().getDesiredHealthy());
        assertEquals(2, observed.getStatus().getExpectedPods());

        // fabric8 answers false for the API server's 429 Too Many Requests
        assertFalse(client.pods().inNamespace(NS).withName("train-0").evict(eviction("train-0")),
                "two of two Ready pods are needed: the eviction is refused");
        assertNotNull(client.pods().inNamespace(NS).withName("train-0").get().getMetadata().getName());

        readyPod(client, "train-2");
        Awaitility.await("one disruption allowed with a third Ready replica").atMost(TIMEOUT)
                .until(() -> pdb(client).getStatus().getDisruptionsAllowed() == 1);
        assertTrue(client.pods().inNamespace(NS).withName("train-0").evict(eviction("train-0")));
        Pod evicted = client.pods().inNamespace(NS).withName("train-0").get();
        assertTrue(evicted == null || evicted.getMetadata().getDeletionTimestamp() != null,
                "the evicted pod is deleted (Terminating until a kubelet ends it)");
        Awaitility.await("the budget counts the evicted pod out").atMost(TIMEOUT)
                .until(() -> pdb(client).getStatus().getDisruptionsAllowed() == 0);
        assertFalse(client.pods().inNamespace(NS).withName("train-1").evict(eviction("train-1")),
                "the next eviction would again leave fewer than two");
    }
}
