package io.npulifecycle.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.BundleWiring;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * The io.npulifecycle.kubeclient bundle in a real node runtime whose {@code etc/io.npulifecycle.kube.cfg} points at an
 * {@code EmbeddedCluster} (started by the configuration, in the failsafe JVM): the {@code KubernetesClient} service
 * appears, creates and reads a Node, an informer started from this (test) bundle receives the add event, the MBean
 * reports the connection, and configuration changes re-create or keep the client.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KubeClientIT extends NodeRuntimeSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final String MASTER = "itests.kube.master";

    @Configuration
    public Option[] config() {
        return once(KubeClientIT.class, () -> {
            String url = KubeCluster.masterUrl();
            return RuntimeOptions.runtime("node", "kube-home",
                    Map.of("io.npulifecycle.kube.cfg", "masterUrl=" + url + "\nrequestTimeoutSeconds=5\n"),
                    Map.of(MASTER, url));
        });
    }

    KubernetesClient client(String filter) {
        ServiceReference<?> ref = awaitService(KubernetesClient.class.getName(), filter, TIMEOUT);
        return (KubernetesClient) bundleContext.getService(ref);
    }

    @Test
    public void theClientServiceTalksToTheCluster() {
        assertRunningInsideFelix();
        KubernetesClient client = client("(masterUrl=" + property(MASTER) + "/)");
        ServiceReference<?> ref = bundleContext.getServiceReference(KubernetesClient.class.getName());
        assertEquals("npu-operator", ref.getProperty("namespace"));
        Bundle kubeclient = findBundle("io.npulifecycle.kubeclient");
        assertSame("the service comes from the kubeclient bundle", kubeclient, ref.getBundle());
        assertSame("the test bundle sees the kubeclient bundle's fabric8 classes", kubeclient,
                FrameworkUtil.getBundle(KubernetesClient.class));
        assertEquals("one KubernetesClient service (fabric8's own OSGi component is not activated)", 1,
                servicesOf(KubernetesClient.class.getName()));

        String name = "itest-node-" + Long.toHexString(System.nanoTime());
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name)
                .addToLabels("openfuyao.com/npu.present", "true").endMetadata().build()).create();
        Node read = client.nodes().withName(name).get();
        assertNotNull(read);
        assertEquals("true", read.getMetadata().getLabels().get("openfuyao.com/npu.present"));
        assertNotNull(read.getMetadata().getResourceVersion());
    }

    @Test
    public void anInformerStartedFromATestBundleReceivesTheAddEvent() {
        KubernetesClient client = client(null);
        Set<String> added = ConcurrentHashMap.newKeySet();
        ResourceEventHandler<Node> handler = new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node obj) {
                added.add(obj.getMetadata().getName());
            }

            @Override
            public void onUpdate(Node oldObj, Node newObj) {
            }

            @Override
            public void onDelete(Node obj, boolean deletedFinalStateUnknown) {
            }
        };
        try (SharedIndexInformer<Node> informer = client.nodes().withLabel("itest", "informer").inform(handler, 0)) {
            assertTrue(informer.isRunning());
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName("informer-node")
                    .addToLabels("itest", "informer").endMetadata().build()).create();
            await("the informer's add event", TIMEOUT, () -> added.contains("informer-node"), added::toString);
            assertNotNull(informer.getStore().getByKey("informer-node"));
        }
    }

    @Test
    public void theMBeanReportsTheConnection() throws Exception {
        KubernetesClient client = client(null);
        client.nodes().list();
        MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("io.npulifecycle:type=KubernetesClient");
        await("the KubernetesClient MBean", TIMEOUT, () -> mbs.isRegistered(name));
        assertEquals(property(MASTER) + "/", mbs.getAttribute(name, "MasterUrl"));
        assertEquals("npu-operator", mbs.getAttribute(name, "Namespace"));
        assertEquals(Boolean.TRUE, mbs.getAttribute(name, "Registered"));
        String answer = (String) mbs.invoke(name, "checkConnection", new Object[0], new String[0]);
        assertTrue(answer, answer.startsWith("connected to " + property(MASTER) + "/: Kubernetes v1.32.0"));
        assertEquals(Boolean.TRUE, mbs.getAttribute(name, "Connected"));

        Answer through = jolokia("/read/io.npulifecycle:type=KubernetesClient/Connected");
        assertTrue(through.body, through.body.contains("\"value\":true"));
    }

    @Test
    public void configurationChangesRecreateTheClientAndBadValuesKeepIt() throws Exception {
        client(null);
        Path cfg = home().resolve("etc/io.npulifecycle.kube.cfg");
        String url = property(MASTER);
        NodeRuntimeIT.writeAtomically(cfg, "masterUrl=" + url + "\nnamespace=npu-test\n");
        KubernetesClient other = client("(namespace=npu-test)");
        assertEquals("npu-test", other.getNamespace());
        assertNotNull(other.nodes().list());

        NodeRuntimeIT.writeAtomically(cfg, "masterUrl=" + url + "\nkubeconfig=/nonexistent/kubeconfig\n");
        MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("io.npulifecycle:type=KubernetesClient");
        await("the kubeconfig problem reported", TIMEOUT,
                () -> String.valueOf(attribute(mbs, name, "LastError")).contains("key kubeconfig='/nonexistent/kubeconfig'"),
                () -> String.valueOf(attribute(mbs, name, "LastError")));
        assertNotNull("the previous client is kept", bundleContext.getServiceReference(KubernetesClient.class.getName()));
        assertEquals("npu-test",
                bundleContext.getServiceReference(KubernetesClient.class.getName()).getProperty("namespace"));

        NodeRuntimeIT.writeAtomically(cfg, "masterUrl=" + url + "\nrequestTimeoutSeconds=5\n");
        client("(namespace=npu-operator)");
        assertAllBundlesActive();
    }

    @Test
    public void theBundleExportsFabric8AndJacksonWithVersions() {
        Bundle kubeclient = findBundle("io.npulifecycle.kubeclient");
        assertEquals(Bundle.ACTIVE, kubeclient.getState());
        String exports = kubeclient.getHeaders().get("Export-Package");
        for (String pkg : new String[] {"io.fabric8.kubernetes.client;version=\"8.0.0\"",
            "io.fabric8.kubernetes.api.model;version=\"8.0.0\"", "io.fabric8.kubernetes.client.informers;version=\"8.0.0\"",
            "io.fabric8.kubernetes.client.dsl;version=\"8.0.0\"",
            "io.fabric8.kubernetes.client.extended.leaderelection;version=\"8.0.0\"",
            "com.fasterxml.jackson.annotation;version=\"2.22\"", "tools.jackson.databind;version=\"3.2.3\""}) {
            assertTrue(pkg, exports.contains(pkg));
        }
        BundleWiring wiring = kubeclient.adapt(BundleWiring.class);
        assertNotNull(wiring);
        assertNull("no ServiceLoader mediator needed", findBundle("org.apache.aries.spifly.dynamic.bundle"));
    }

    int servicesOf(String clazz) {
        try {
            ServiceReference<?>[] refs = bundleContext.getServiceReferences(clazz, null);
            return refs == null ? 0 : refs.length;
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalArgumentException(e);
        }
    }

    static Object attribute(MBeanServer mbs, ObjectName name, String attribute) {
        try {
            return mbs.getAttribute(name, attribute);
        } catch (Exception e) {
            return e.toString();
        }
    }
}
