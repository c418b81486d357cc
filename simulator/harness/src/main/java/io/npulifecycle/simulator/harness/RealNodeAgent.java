package io.npulifecycle.simulator.harness;

import java.nio.file.Path;
import java.time.Duration;

import io.fabric8.kubernetes.api.model.Pod;
import io.npulifecycle.api.node.NodeKeys;

/**
 * The node agent of the real node ({@link RealNodeCluster}) as a scenario reaches it: its pod (the driver DaemonSet's
 * with managed drivers, the node-agent DaemonSet's with host drivers), its Jolokia through {@code kubectl
 * port-forward} with the chart's Secret (a new port-forward when the pod is replaced, e.g. by an upgrade), and the
 * emulated host's files in the host paths the chart mounts ({@code root}: {@code simulator/}, {@code run-npu-operator/},
 * {@code var-lib-npu-operator/}).
 */
final class RealNodeAgent implements ScenarioNode, AutoCloseable {

    private static final String NODE_AGENT_APP = "npu-lifecycle-node-agent";

    private final String name;
    private final Path root;
    private final RealNodeDemo setup;
    private RealNodeDemo.PortForward forward;
    private String forwardedPod;

    RealNodeAgent(String name, Path root, RealNodeDemo setup) {
        this.name = name;
        this.root = root;
        this.setup = setup;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Path root() {
        return root;
    }

    /** @return the node agent's pod on the node (not terminating), or null */
    Pod pod() {
        return setup.client().pods().inNamespace(RealNodeDemo.NS).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null && name.equals(p.getSpec().getNodeName()))
                .filter(p -> {
                    String app = p.getMetadata().getLabels() == null ? null : p.getMetadata().getLabels().get("app");
                    return NodeKeys.DRIVER_APP.equals(app) || NODE_AGENT_APP.equals(app);
                }).findFirst().orElse(null);
    }

    /**
     * @return a Jolokia client on a port-forward to the node agent's pod, opened (again) when the pod changed or the
     *         port-forward ended
     * @throws IllegalStateException when there is no pod, or the port-forward does not start within 30 s
     */
    @Override
    public synchronized Jolokia jolokia() {
        Pod p = pod();
        if (p == null) {
            throw new IllegalStateException(name + ": no node-agent pod: " + setup.podsState(NodeKeys.DRIVER_APP_LABEL
                    + "=" + NodeKeys.DRIVER_APP));
        }
        String podName = p.getMetadata().getName();
        if (forward == null || !podName.equals(forwardedPod) || !forward.alive()) {
            close();
            try {
                forward = setup.new PortForward(podName);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } catch (Exception e) {
                throw new IllegalStateException(name + ": kubectl port-forward to pod " + podName + ": " + e.getMessage(),
                        e);
            }
            forwardedPod = podName;
        }
        return forward.jolokia();
    }

    /** @return how to reach the node agent's Jolokia: through kubectl port-forward to its pod's port 8778 */
    @Override
    public String jolokiaAddress() {
        return "kubectl port-forward -n " + RealNodeDemo.NS + " pod/<the node agent's pod on " + name
                + "> 8778 (its pod runs once the driver DaemonSet's does)";
    }

    /** SIGKILLs the node agent's container (its JVM) through containerd; the kubelet restarts it. */
    @Override
    public void killAgent() {
        Pod p = pod();
        if (p == null) {
            throw new IllegalStateException(name + ": no node-agent pod to kill");
        }
        setup.node().killContainer(RealNodeCluster.containerId(p, "node-agent"));
    }

    @Override
    public void jumpClock(Duration delta) {
        throw new UnsupportedOperationException("clockJump on the real node: refused before the run");
    }

    @Override
    public void markersReadOnly(boolean on) {
        throw new UnsupportedOperationException("markersReadOnly on the real node: refused before the run");
    }

    @Override
    public void markersFull(boolean on) {
        throw new UnsupportedOperationException("markersFull on the real node: refused before the run");
    }

    /** Stops the port-forward. */
    @Override
    public synchronized void close() {
        if (forward != null) {
            forward.close();
            forward = null;
            forwardedPod = null;
        }
    }
}
