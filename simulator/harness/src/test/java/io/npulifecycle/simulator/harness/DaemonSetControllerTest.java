package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The simulated DaemonSet controller once stopped: what the harness's shutdown relies on to stop every agent. */
class DaemonSetControllerTest {

    @Test
    void aStoppedControllerNeitherReconcilesNorRestartsAnAgent() throws Exception {
        List<String> calls = new CopyOnWriteArrayList<>();
        // a client that records every call: a reconcile after stop() would call it (and start agents from it)
        KubernetesClient client = (KubernetesClient) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {KubernetesClient.class}, (proxy, method, args) -> {
                    calls.add(method.getName());
                    throw new IllegalStateException("the API server is out");
                });
        DaemonSetController c = new DaemonSetController(client, Map.of(), null, 60, System::nanoTime, s -> { });
        Thread loop = new Thread(c, "sim-daemonset-controller");
        loop.start();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> !calls.isEmpty());
        c.stop();
        int afterStop = calls.size();
        c.reconcile();
        loop.join(TimeUnit.SECONDS.toMillis(30));
        assertTrue(!loop.isAlive(), "the controller's loop ends once stopped");
        assertEquals(afterStop, calls.size(), "no call to the API server after stop() returned: " + calls);
    }
}
