package io.npulifecycle.upgrade.internal.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;

/**
 * {@link ClusterCleanup}'s patches of the NPUOperatorCtl while the control plane writes its status: a 409 (the
 * resource changed between the list and the patch) is met by reading it again and patching the fresh copy, a bounded
 * number of times. Seen on the embedded server in {@code UninstallTest}: the uninstall failed at once with the 409 of
 * its {@code uninstalling} mark.
 */
class ClusterCleanupConflictTest {

    static final String NS = "npu-operator";
    static final String PATH = "/apis/npu.openfuyao.com/v1/namespaces/" + NS + "/npuoperatorctls";
    static final String NAME = "npuoperatorctl-sample";

    KubernetesMockServer server;
    KubernetesClient client;

    @BeforeEach
    void start() {
        server = new KubernetesMockServer(false);
        server.init();
        client = server.createClient();
    }

    @AfterEach
    void stop() {
        client.close();
        server.destroy();
    }

    static GenericKubernetesResource cr(String resourceVersion) {
        return new GenericKubernetesResourceBuilder().withApiVersion("npu.openfuyao.com/v1").withKind("NPUOperatorCtl")
                .withNewMetadata().withName(NAME).withNamespace(NS).withResourceVersion(resourceVersion)
                .endMetadata().build();
    }

    static GenericKubernetesResourceList list(GenericKubernetesResource... items) {
        GenericKubernetesResourceList l = new GenericKubernetesResourceList();
        l.setApiVersion("npu.openfuyao.com/v1");
        l.setKind("NPUOperatorCtlList");
        l.setItems(List.of(items));
        return l;
    }

    void conflicts(int times) {
        server.expect().patch().withPath(PATH + "/" + NAME).andReturn(409, new StatusBuilder().withCode(409)
                .withReason("Conflict").withMessage("the object has been modified").build()).times(times);
    }

    List<String> patchBodies() throws InterruptedException {
        List<String> bodies = new ArrayList<>();
        for (RecordedRequest r; (r = server.takeRequest(1, java.util.concurrent.TimeUnit.SECONDS)) != null;) {
            if ("PATCH".equals(r.getMethod())) {
                bodies.add(r.getBody().readUtf8());
            }
        }
        return bodies;
    }

    @Test
    void aMarkThatMeetsA409IsWrittenOnTheFreshCopy() throws InterruptedException {
        server.expect().get().withPath(PATH).andReturn(200, list(cr("1"))).once();
        conflicts(2);
        server.expect().get().withPath(PATH + "/" + NAME).andReturn(200, cr("2")).once();
        server.expect().get().withPath(PATH + "/" + NAME).andReturn(200, cr("3")).once();
        server.expect().patch().withPath(PATH + "/" + NAME).andReturn(200, cr("4")).once();

        ClusterCleanup cleanup = new ClusterCleanup(client, NS, ClusterCleanup.Scope.UNINSTALL);
        assertEquals(List.of(NAME), cleanup.markUninstalling(Instant.parse("2026-12-05T20:00:00Z")));

        List<String> patches = patchBodies();
        assertEquals(3, patches.size(), patches.toString());
        assertTrue(patches.get(0).contains("\"resourceVersion\":\"1\""), patches.get(0));
        assertTrue(patches.get(1).contains("\"resourceVersion\":\"2\""), patches.get(1));
        assertTrue(patches.get(2).contains("\"resourceVersion\":\"3\"")
                && patches.get(2).contains("\"" + ClusterCleanup.UNINSTALLING + "\":\"2026-12-05T20:00:00Z\""),
                patches.get(2));
    }

    @Test
    void aResourceThatKeepsChangingFailsNamingItAfterTheLastAttempt() {
        server.expect().get().withPath(PATH).andReturn(200, list(cr("1"))).once();
        conflicts(ClusterCleanup.CR_PATCH_ATTEMPTS);
        server.expect().get().withPath(PATH + "/" + NAME).andReturn(200, cr("2")).always();

        ClusterCleanup cleanup = new ClusterCleanup(client, NS, ClusterCleanup.Scope.UNINSTALL);
        ClusterCleanup.CleanupException e = assertThrows(ClusterCleanup.CleanupException.class,
                () -> cleanup.markUninstalling(Instant.parse("2026-12-05T20:00:00Z")));
        assertTrue(e.getMessage().startsWith("cannot patch NPUOperatorCtl " + NS + "/" + NAME + " (mark it "
                + ClusterCleanup.UNINSTALLING + "): the API server answered 409"), e.getMessage());
    }
}
