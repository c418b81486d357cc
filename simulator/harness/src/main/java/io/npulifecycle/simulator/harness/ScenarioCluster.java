package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.NodeEdits;

/**
 * The cluster a scenario runs on, as {@link ScenarioRunner} and {@link Expectations} reach it: its API server (the
 * Node objects, Events, the NPUOperatorCtl), its nodes ({@link ScenarioNode}), its workloads, and the faults a step
 * can inject. {@link SimCluster} runs every runtime as a process of the harness (a node agent per emulated node);
 * {@link RealNodeCluster} is this machine as the one node of a real kubelet, the chart installed with helm
 * ({@code scenario --kubelet}). What one cannot do is refused before anything runs ({@link RealNodeCluster#refusals}).
 */
public interface ScenarioCluster extends AutoCloseable {

    /**
     * Starts the cluster: the API server, the NPUOperatorCtl at the scenario's installed version, the nodes and the
     * control plane.
     *
     * @param extraVersions further driver versions the registry must hold (e.g. the upgrade target)
     * @throws IOException when a folder or a process cannot be created
     */
    void start(List<String> extraVersions) throws IOException;

    /** @return the nodes by name, in order */
    Map<String, ? extends ScenarioNode> nodes();

    /** @return the API server (its admin client) */
    ClusterBackend cluster();

    /** @return the scenario's workloads and scheduling edits on this cluster's API server */
    Workloads workloads();

    /**
     * @return the first runtime of the cluster that keeps exiting on its own without reaching ready ({@link CrashLoop}),
     *         or null when none does
     */
    CrashLoopException crashLoop();

    /**
     * Fails fast when a runtime keeps exiting: what every wait of a scenario checks on each poll.
     *
     * @throws CrashLoopException when {@link #crashLoop()} finds one
     */
    default void checkRuntimes() {
        CrashLoopException f = crashLoop();
        if (f != null) {
            throw f;
        }
    }

    /**
     * Writes the Jolokia user and password of the node's agent to {@code jolokia-credentials} in its folder
     * ({@code user=...}, {@code password=...}; owner read/write only), for curl, jolokia.js and Hawtio.
     *
     * @return the file
     * @throws IOException when it cannot be written
     */
    Path writeJolokiaCredentials(ScenarioNode n) throws IOException;

    /**
     * Writes {@code user=...} and {@code password=...} to {@code jolokia-credentials} in {@code folder} (created when
     * absent), readable by its owner only.
     *
     * @return the file
     * @throws IOException when it cannot be written
     */
    static Path writeCredentialsFile(Path folder, String user, String password) throws IOException {
        Path credentials = java.nio.file.Files.createDirectories(folder).resolve("jolokia-credentials");
        java.nio.file.Files.writeString(credentials, "user=" + user + "\npassword=" + password + "\n");
        java.nio.file.Files.setPosixFilePermissions(credentials,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        return credentials;
    }

    /** @return how long the nodes may take to be installed and validated at the scenario's version */
    default Duration installTimeout() {
        return Duration.ofSeconds(150);
    }

    /**
     * SIGKILLs control-plane replicas, optionally restarting them at once as a Deployment would.
     *
     * @param which {@code 0}, {@code 1}, {@code leader} or {@code all}
     * @throws IOException if a runtime cannot be started again
     */
    void killControlPlane(String which, boolean restart) throws IOException;

    /**
     * Starts a control-plane replica that was killed without restart.
     *
     * @throws IOException if it cannot be started
     */
    void startControlPlane(int replica) throws IOException;

    /** Makes the API server unreachable for the runtimes for {@code wall} of wall-clock time, in the background. */
    void unreachableFor(Duration wall);

    /**
     * Makes the runtimes' requests fail with {@code 503} for {@code wall} of wall-clock time, in the background.
     *
     * @return what was done
     * @throws IOException when the forwarder cannot listen again
     */
    String unavailableFor(Duration wall) throws IOException;

    /**
     * Makes the runtimes' watches end and resume with {@code 410 Gone}.
     *
     * @return what was done
     */
    String apiGone(int failNext);

    /** @return what the API faults did over the run, or null */
    String apiFaultSummary();

    /**
     * Moves the wall clock of the control plane by {@code delta}.
     *
     * @throws IOException if the configuration cannot be written
     */
    void jumpControlPlaneClock(Duration delta) throws IOException;

    /**
     * Creates a node's Node object again as its kubelet registers it after a restart ({@code registerNode:}): the
     * kubelet's labels and status, none of ours.
     *
     * @param node the node's name
     * @throws io.fabric8.kubernetes.client.KubernetesClientException 409 when the Node exists
     */
    void registerNode(String node);

    /**
     * Deletes a node's Node object ({@code kubectl delete node}); its runtime runs on.
     *
     * @param node the node's name
     */
    default void deleteNode(String node) {
        if (cluster().client().nodes().withName(node).delete().isEmpty()) {
            throw new IllegalStateException("deleteNode: there is no Node " + node + " (deleted by an earlier step?)");
        }
    }

    /**
     * Requests the deletion of the NPUOperatorCtl ({@code kubectl delete npuoperatorctl --wait=false}).
     *
     * @throws IllegalStateException when there is none
     */
    default void deleteNpuOperatorCtl() {
        if (cluster().npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).delete().isEmpty()) {
            throw new IllegalStateException("deleteCr: there is no NPUOperatorCtl " + EmbeddedCluster.NPU_NAMESPACE
                    + "/" + EmbeddedCluster.NPU_OPERATOR_CTL_NAME + " (deleted by an earlier step?)");
        }
    }

    /**
     * Creates the NPUOperatorCtl again ({@code createCr}, an operator's {@code kubectl apply} of their file) with the
     * given {@code spec}.
     *
     * @param spec the CR's {@code spec} (its {@code driver} map ...), as kept from before its deletion
     * @throws IllegalStateException naming the CR while one exists (a terminating one included)
     */
    default void createNpuOperatorCtl(Map<String, Object> spec) {
        GenericKubernetesResource now = npuOperatorCtl();
        if (now != null) {
            throw new IllegalStateException("createCr: the NPUOperatorCtl " + EmbeddedCluster.NPU_NAMESPACE + "/"
                    + EmbeddedCluster.NPU_OPERATOR_CTL_NAME + " exists" + (now.getMetadata().getDeletionTimestamp()
                            == null ? "" : " (terminating since " + now.getMetadata().getDeletionTimestamp()
                                    + ": wait for its end with expect: {npuOperatorCtl: absent, within: ...})"));
        }
        cluster().npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE).resource(
                new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
                        .withApiVersion(EmbeddedCluster.NPU_OPERATOR_CTL.groupVersion())
                        .withKind(EmbeddedCluster.NPU_OPERATOR_CTL.kind())
                        .withNewMetadata().withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME)
                        .withNamespace(EmbeddedCluster.NPU_NAMESPACE).endMetadata()
                        .withAdditionalProperties(Map.of("spec", spec)).build()).create();
    }

    /**
     * Kills kube-apiserver and starts it again with the same command line, etcd kept ({@code restartApiServer}).
     *
     * @return how long it was away, from the kill to {@code /readyz} answering
     * @throws UnsupportedOperationException on a cluster without a real API server
     */
    default Duration restartApiServer() {
        throw new UnsupportedOperationException("restartApiServer: this cluster has no kube-apiserver to restart "
                + "(run with --api real)");
    }

    /**
     * @param node a node of the cluster
     * @return the text of its node agent's {@code /metrics} (the Prometheus text format)
     * @throws IOException when it cannot be read
     */
    String metrics(ScenarioNode node) throws IOException;

    /**
     * @return the requests the API server received so far (its audit log)
     * @throws IOException when the log cannot be read
     * @throws IllegalStateException when this cluster records none: {@code expect.apiRequests} needs {@code --api real}
     */
    default List<AuditLog.Request> apiRequests() throws IOException {
        throw new IllegalStateException("expect.apiRequests reads kube-apiserver's audit log: run with --api real");
    }

    /**
     * Silences a node's kubelet ({@code nodeNotReady}): no heartbeat, no pod status, no end of its pods' deletions;
     * the node-lifecycle controller marks the Node NotReady after its grace; the node's runtime runs on.
     *
     * @param node the node
     * @throws UnsupportedOperationException where no node-lifecycle controller runs
     */
    default void nodeNotReady(String node) {
        throw new UnsupportedOperationException("nodeNotReady: this cluster runs no node-lifecycle controller");
    }

    /**
     * The node's kubelet speaks again ({@code nodeReady}): heartbeat and {@code Ready=True}.
     *
     * @param node the node
     */
    default void nodeReady(String node) {
        throw new UnsupportedOperationException("nodeReady: this cluster runs no node-lifecycle controller");
    }

    /**
     * Sets every runtime's simulated clock to {@code at} now (a scenario's {@code cluster.startTime}, at its time 0).
     *
     * @param at the simulated instant
     * @return the jump made, simulated milliseconds
     * @throws IOException when a runtime's clock configuration cannot be written
     * @throws UnsupportedOperationException where the clocks cannot be set (the real node: a ConfigMap)
     */
    default long setSimulatedTime(java.time.Instant at) throws IOException {
        throw new UnsupportedOperationException("cluster.startTime: the clocks of this cluster cannot be set");
    }

    /** Stops everything the cluster started. */
    @Override
    void close();

    /** @return after {@link #close()}: what went wrong stopping the cluster (e.g. left behind), or null */
    default String failure() {
        return null;
    }

    /**
     * Merges fields into {@code spec.driver} of the CR (a JSON merge patch, like {@code kubectl patch --type=merge}),
     * again on a conflict as a person's {@code kubectl edit} would.
     *
     * @param fields e.g. {@code version=25.5.0}, or nested maps such as {@code upgradePolicy={autoUpgrade=false}}
     */
    default void patchDriver(Map<String, Object> fields) {
        if (npuOperatorCtl() == null) {
            throw new IllegalStateException("there is no NPUOperatorCtl " + EmbeddedCluster.NPU_NAMESPACE + "/"
                    + EmbeddedCluster.NPU_OPERATOR_CTL_NAME + " to change (deleted by a deleteCr step?)");
        }
        NodeEdits.retryOnConflict(() -> cluster().npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).edit(r -> {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> spec = (Map<String, Object>) r.getAdditionalProperties()
                            .computeIfAbsent("spec", k -> new LinkedHashMap<>());
                    @SuppressWarnings("unchecked")
                    Map<String, Object> driver = (Map<String, Object>) spec.computeIfAbsent("driver",
                            k -> new LinkedHashMap<>());
                    SimCluster.merge(driver, fields);
                    return r;
                }));
    }

    /** @return the CR as stored, or null */
    default GenericKubernetesResource npuOperatorCtl() {
        return cluster().npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE)
                .withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME).get();
    }

    /** Sets (value non-null) or removes (null) an annotation of a node, like {@code kubectl annotate}. */
    default void annotate(String node, String key, String value) {
        NodeEdits.annotate(cluster().client(), node, key, value);
    }

    /** Approves one reboot of {@code node} ({@code npu.openfuyao.com/approve-reboot=true}). */
    default void approve(String node) {
        annotate(node, NodeKeys.APPROVE_REBOOT, NodeKeys.APPROVE_VALUE);
    }

    /** @return the Node object, or null */
    default Node node(String name) {
        return cluster().client().nodes().withName(name).get();
    }

    /** @return the node's labels (never null) */
    default Map<String, String> labels(String name) {
        Node n = node(name);
        return n == null || n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
    }

    /** @return the node's annotations (never null) */
    default Map<String, String> annotations(String name) {
        Node n = node(name);
        return n == null || n.getMetadata().getAnnotations() == null ? Map.of() : n.getMetadata().getAnnotations();
    }

    /** @return every core/v1 Event whose involved object is {@code node} */
    default List<Event> events(String node) {
        return cluster().client().v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> e.getInvolvedObject() != null && node.equals(e.getInvolvedObject().getName()))
                .toList();
    }

    /** @return every core/v1 Event of the cluster */
    default List<Event> allEvents() {
        return cluster().client().v1().events().inAnyNamespace().list().getItems();
    }
}
