package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.authentication.SelfSubjectReview;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.simulator.cluster.internal.KubeBinaries;
import io.npulifecycle.simulator.common.TcpProxy;

/**
 * The fault-injecting front proxy of the simulated cluster on a real kube-apiserver: a {@link TcpProxy} terminating
 * TLS with {@link RealApiServer#servingSslContext()} and reaching the server with
 * {@link RealApiServer#trustingSslContext()}. A bearer-token client (as every runtime is) is served through it as
 * itself; in 503 mode it gets a real {@code 503 Service Unavailable} with the kube Status; after etcd is compacted
 * and its connections are closed, its informer's watch resumes into 410 Gone and the informer lists again.
 */
class FrontProxyOnRealServerTest {

    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String NS = EmbeddedCluster.NPU_NAMESPACE;
    static final String READER = "reader";

    /**
     * A token of ServiceAccount {@value #READER}, allowed get, list and watch of ConfigMaps (a role of its own: the
     * aggregated {@code view} role stays empty without kube-controller-manager).
     */
    static String readerToken(RealApiServer api) {
        api.ensureNamespace(NS);
        api.ensureServiceAccount(NS, READER);
        api.client().rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata().withName("reader")
                .endMetadata().addNewRule().withApiGroups("").withResources("configmaps")
                .withVerbs("get", "list", "watch").endRule().build()).create();
        api.client().rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata()
                .withName("reader-view").endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole").withName("reader").endRoleRef().addNewSubject().withKind("ServiceAccount")
                .withName(READER).withNamespace(NS).endSubject().build()).create();
        return api.client().serviceAccounts().inNamespace(NS).withName(READER).tokenRequest(new TokenRequestBuilder()
                .withNewSpec().withExpirationSeconds(3600L).endSpec().build()).getStatus().getToken();
    }

    static TcpProxy frontProxy(RealApiServer api) throws Exception {
        return new TcpProxy(java.net.URI.create(api.masterUrl()).getPort(), new TcpProxy.Tls(
                api.servingSslContext().getServerSocketFactory(), api.trustingSslContext().getSocketFactory()),
                line -> { });
    }

    @Test
    void aTokenClientIsServedAsItselfThenAnswered503ThenServedAgain() throws Exception {
        try (RealApiServer api = RealApiServer.start(); TcpProxy proxy = frontProxy(api)) {
            String token = readerToken(api);
            try (KubernetesClient client = api.newTokenClient(token, c -> {
                c.setMasterUrl(proxy.url());
                c.setRequestRetryBackoffLimit(0); // the 503 itself, not fabric8's retries
            })) {
                assertEquals("system:serviceaccount:" + NS + ":" + READER, client.authentication().v1()
                        .selfSubjectReviews().create(new SelfSubjectReview()).getStatus().getUserInfo().getUsername(),
                        "the server sees the token the client sent through the proxy");
                assertTrue(client.configMaps().inNamespace(NS).list().getItems() != null);

                proxy.serviceUnavailable(Duration.ofSeconds(1));
                KubernetesClientException down = assertThrows(KubernetesClientException.class,
                        () -> client.configMaps().inNamespace(NS).list());
                assertEquals(503, down.getCode(), down.toString());
                assertEquals("ServiceUnavailable", down.getStatus().getReason(), down.getStatus().toString());
                assertNotNull(api.client().namespaces().withName(NS).get(),
                        "the admin client, talking directly, is served meanwhile");

                proxy.restore();
                assertTrue(client.configMaps().inNamespace(NS).list().getItems() != null, "served again");
            }
        }
    }

    @Test
    void afterCompactionAndClosedConnectionsAnInformerIsGoneAndListsAgain() throws Exception {
        try (RealApiServer api = RealApiServer.start(KubeBinaries.fromSystemProperties(),
                RealApiServer.DEFAULT_START_TIMEOUT, System::nanoTime, List.of("--watch-cache=false"));
                TcpProxy proxy = frontProxy(api)) {
            String token = readerToken(api);
            AtomicInteger lists = new AtomicInteger();
            Interceptor countLists = new Interceptor() {
                @Override
                public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                    if (request.uri().getPath().equals("/api/v1/namespaces/" + NS + "/configmaps")
                            && !String.valueOf(request.uri().getQuery()).contains("watch=true")) {
                        lists.incrementAndGet();
                    }
                }
            };
            try (KubernetesClient client = api.newTokenClient(token, c -> c.setMasterUrl(proxy.url()),
                    h -> h.addOrReplaceInterceptor("count-lists", countLists))) {
                SharedIndexInformer<ConfigMap> informer = client.configMaps().inNamespace(NS).inform();
                Awaitility.await("informer synced").atMost(TIMEOUT).until(informer::hasSynced);
                api.client().configMaps().inNamespace(NS).resource(RealApiServerRestartTest.configMap("seen", "1"))
                        .create();
                Awaitility.await("the informer sees it").atMost(TIMEOUT)
                        .until(() -> informer.getStore().getByKey(NS + "/seen") != null);
                // writes the informer does not watch: etcd's revision moves past the informer's resourceVersion
                api.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("elsewhere")
                        .endMetadata().build()).create();
                api.client().namespaces().withName("elsewhere").edit(n -> {
                    n.getMetadata().setLabels(java.util.Map.of("moved", "yes"));
                    return n;
                });
                int listsBefore = lists.get();

                api.compact();
                assertTrue(proxy.dropConnections() >= 1, "the informer's watch connection was open");

                Awaitility.await("the informer lists again (its watch was answered 410 Gone)").atMost(TIMEOUT)
                        .until(() -> lists.get() > listsBefore);
                api.client().configMaps().inNamespace(NS).resource(RealApiServerRestartTest.configMap("after", "2"))
                        .create();
                Awaitility.await("the informer sees an object created after the 410").atMost(TIMEOUT)
                        .until(() -> informer.getStore().getByKey(NS + "/after") != null);
                assertTrue(informer.getStore().getByKey(NS + "/seen") != null, "nothing lost");
            }
        }
    }
}
