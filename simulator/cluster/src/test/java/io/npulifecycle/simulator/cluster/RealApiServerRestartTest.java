package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;

/**
 * {@link RealApiServer#restartApiServer()} and {@link RealApiServer#compact()}: a restarted kube-apiserver keeps the
 * port, the data (etcd is untouched) and the credentials, and an informer goes on after it; a watch from a
 * resourceVersion older than a compaction is answered {@code 410 Gone}.
 */
class RealApiServerRestartTest {

    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String NS = EmbeddedCluster.NPU_NAMESPACE;

    static ConfigMap configMap(String name, String value) {
        return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .addToData("v", value).build();
    }

    @Test
    void restartKeepsPortDataAndCredentialsAndAnInformerGoesOn() {
        try (RealApiServer api = RealApiServer.start()) {
            api.ensureNamespace(NS);
            api.ensureServiceAccount(NS, "agent");
            api.client().pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("agent-0")
                    .endMetadata().withNewSpec().withServiceAccountName("agent").withNodeName("node-0")
                    .addNewContainer().withName("a").withImage("x").endContainer().endSpec().build()).create();
            String token = api.podBoundToken(NS, "agent", "agent-0", Duration.ofHours(1));
            api.client().configMaps().inNamespace(NS).resource(configMap("kept", "1")).create();
            String url = api.masterUrl();
            long oldPid = api.pids().get(1);

            KubernetesClient watcher = api.newClient();
            SharedIndexInformer<ConfigMap> informer = watcher.configMaps().inNamespace(NS).inform();
            try (watcher) {
                Awaitility.await("informer synced").atMost(TIMEOUT).until(informer::hasSynced);

                Duration away = api.restartApiServer();

                assertEquals(url, api.masterUrl(), "the same port");
                assertNotEquals(oldPid, api.pids().get(1), "a new kube-apiserver process");
                assertTrue(away.compareTo(TIMEOUT) < 0, away.toString());
                assertEquals("1", api.client().configMaps().inNamespace(NS).withName("kept").get().getData().get("v"),
                        "etcd's data kept");
                try (KubernetesClient agent = api.newTokenClient(token, c -> { })) {
                    assertEquals("node-0", agent.authentication().v1().selfSubjectReviews()
                            .create(new io.fabric8.kubernetes.api.model.authentication.SelfSubjectReview())
                            .getStatus().getUserInfo().getExtra().get("authentication.kubernetes.io/node-name")
                            .get(0), "a token minted before the restart is still valid (same signing key)");
                }
                api.client().configMaps().inNamespace(NS).resource(configMap("after", "2")).create();
                Awaitility.await("the informer sees an object created after the restart").atMost(TIMEOUT)
                        .until(() -> informer.getStore().getByKey(NS + "/after") != null);
            }
        }
    }

    @Test
    void aWatchFromACompactedResourceVersionIsGone() throws Exception {
        try (RealApiServer api = RealApiServer.start(KubeBinaries.fromSystemProperties(),
                RealApiServer.DEFAULT_START_TIMEOUT, System::nanoTime, List.of("--watch-cache=false"))) {
            api.ensureNamespace(NS);
            KubernetesClient c = api.client();
            String oldRv = c.configMaps().inNamespace(NS).resource(configMap("compacted", "1")).create()
                    .getMetadata().getResourceVersion();
            for (int i = 2; i <= 3; i++) {
                c.configMaps().inNamespace(NS).withName("compacted").edit(m -> {
                    m.getData().put("v", "x");
                    m.getMetadata().setAnnotations(Map.of("n", String.valueOf(System.nanoTime())));
                    return m;
                });
            }
            long rev = api.compact();
            assertTrue(rev > Long.parseLong(oldRv), rev + " > " + oldRv);

            CompletableFuture<WatcherException> closed = new CompletableFuture<>();
            try (Watch w = c.configMaps().inNamespace(NS).watch(new ListOptionsBuilder().withResourceVersion(oldRv)
                    .build(), new Watcher<ConfigMap>() {
                        @Override
                        public void eventReceived(Action action, ConfigMap resource) {
                        }

                        @Override
                        public void onClose(WatcherException cause) {
                            closed.complete(cause);
                        }
                    })) {
                WatcherException gone = closed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                assertTrue(gone.isHttpGone(), "410 Gone: " + gone);
            }
        }
    }
}
