package io.npulifecycle.upgrade.internal.cluster;

import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * The Pod Security labels of the control plane's namespace (PID {@code io.npulifecycle.upgrade} key
 * {@code podSecurityLabels}, chart values {@code podSecurity.enabled} and {@code podSecurity.labels}): the privileged
 * node pods (driver DaemonSets, node agents) are refused in a namespace whose Pod Security level is
 * {@code restricted}, the default of many clusters, so the leader writes
 * {@code pod-security.kubernetes.io/<mode>=<level>} onto its own namespace (JSON merge patch of those labels only) and
 * writes them again when someone removes or changes them (an informer on that one namespace). Empty: the namespace is
 * left alone. As NVIDIA gpu-operator's {@code psa.enabled}.
 */
public final class PodSecurityLabels implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(PodSecurityLabels.class.getName());
    /** Label prefix of Pod Security admission. */
    static final String PREFIX = "pod-security.kubernetes.io/";
    /** The modes of Pod Security admission. */
    static final Set<String> MODES = Set.of("enforce", "warn", "audit");
    /** The levels of the Pod Security Standards. */
    static final Set<String> LEVELS = Set.of("privileged", "baseline", "restricted");

    private final KubernetesClient client;
    private final String namespace;
    private final Map<String, String> labels;
    private final BooleanSupplier leader;
    private SharedIndexInformer<Namespace> informer;
    private volatile String lastProblem;

    /**
     * @param client the client
     * @param namespace the control plane's namespace
     * @param labels the labels to keep ({@link #parse}), full keys
     * @param leader whether this replica leads now (only the leader writes)
     */
    PodSecurityLabels(KubernetesClient client, String namespace, Map<String, String> labels, BooleanSupplier leader) {
        this.client = client;
        this.namespace = namespace;
        this.labels = Map.copyOf(labels);
        this.leader = leader;
    }

    /**
     * Parses the configuration value.
     *
     * @param value comma-separated {@code mode=level}, e.g. {@code enforce=privileged,warn=privileged,audit=privileged};
     *        blank = none
     * @return the labels, full keys ({@code pod-security.kubernetes.io/enforce}), in the order given
     * @throws IllegalArgumentException naming the bad entry and what is expected: an entry without {@code =}, a mode
     *         other than enforce, warn, audit, a level other than privileged, baseline, restricted, a mode given twice
     */
    public static Map<String, String> parse(String value) {
        Map<String, String> out = new LinkedHashMap<>();
        if (value == null || value.isBlank()) {
            return out;
        }
        for (String raw : value.split(",")) {
            String e = raw.trim();
            int eq = e.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("'" + e + "' is not mode=level (e.g. enforce=privileged)");
            }
            String mode = e.substring(0, eq).trim();
            String level = e.substring(eq + 1).trim();
            if (mode.startsWith(PREFIX)) {
                mode = mode.substring(PREFIX.length());
            }
            if (!MODES.contains(mode)) {
                throw new IllegalArgumentException("'" + e + "': mode '" + mode + "' is not one of enforce, warn, audit");
            }
            if (!LEVELS.contains(level)) {
                throw new IllegalArgumentException("'" + e + "': level '" + level
                        + "' is not one of privileged, baseline, restricted");
            }
            if (out.put(PREFIX + mode, level) != null) {
                throw new IllegalArgumentException("'" + e + "': mode " + mode + " is given twice");
            }
        }
        return out;
    }

    /**
     * Starts the informer on the namespace; each of its events (and {@link #apply()}) writes the labels when the
     * namespace lacks one of them and this replica leads. Nothing when there is no label to keep.
     *
     * @param onEvent called on every event of the informer (the controller runs {@link #apply()} on its thread)
     */
    synchronized void start(Runnable onEvent) {
        if (labels.isEmpty()) {
            return;
        }
        informer = client.namespaces().withName(namespace).runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Namespace obj) {
                onEvent.run();
            }

            @Override
            public void onUpdate(Namespace o, Namespace n) {
                onEvent.run();
            }

            @Override
            public void onDelete(Namespace obj, boolean unknown) {
                // the namespace is going away: nothing to label
            }
        });
        informer.start();
    }

    /**
     * @param current the namespace's labels, or null
     * @return the labels of ours it lacks or holds with another value (the merge patch's content)
     */
    Map<String, String> missing(Map<String, String> current) {
        Map<String, String> m = new LinkedHashMap<>();
        labels.forEach((k, v) -> {
            if (current == null || !Objects.equals(current.get(k), v)) {
                m.put(k, v);
            }
        });
        return m;
    }

    /**
     * Writes the missing labels while leader (one JSON merge patch of the namespace's labels); a refusal is logged
     * once per message (RBAC: {@code patch} on {@code namespaces} named {@link #namespace}).
     *
     * @return the labels written, empty when none was needed or this replica does not lead or the informer has not
     *         delivered the namespace yet (its event runs this again)
     */
    Map<String, String> apply() {
        SharedIndexInformer<Namespace> inf;
        synchronized (this) {
            inf = informer;
        }
        // not hasSynced(): the informer's first onAdd may run before its list is marked synced; the store has the
        // namespace as soon as it was delivered
        if (inf == null || !leader.getAsBoolean()) {
            return Map.of();
        }
        Namespace ns = inf.getStore().getByKey(namespace);
        if (ns == null) {
            return Map.of();
        }
        Map<String, String> patch = missing(ns.getMetadata().getLabels());
        if (patch.isEmpty()) {
            return patch;
        }
        Namespace stub = new Namespace();
        stub.setMetadata(new ObjectMetaBuilder().withName(namespace).build());
        try {
            client.namespaces().resource(stub).patch(PatchContext.of(PatchType.JSON_MERGE),
                    client.getKubernetesSerialization().asJson(Map.of("metadata", Map.of("labels", patch))));
            LOG.log(Level.INFO, "namespace " + namespace + ": Pod Security labels " + patch
                    + " written (PID io.npulifecycle.upgrade key podSecurityLabels)");
            lastProblem = null;
            return patch;
        } catch (KubernetesClientException e) {
            String p = "namespace " + namespace + ": cannot write the Pod Security labels " + patch + " ("
                    + e.getCode() + " " + e.getMessage() + "): the privileged node pods may be refused";
            if (!p.equals(lastProblem)) {
                LOG.log(Level.ERROR, p);
                lastProblem = p;
            }
            return Map.of();
        }
    }

    /** @return the labels kept, full keys */
    Map<String, String> labels() {
        return labels;
    }

    /** @return the informer (tests), or null */
    synchronized List<SharedIndexInformer<Namespace>> informers() {
        return informer == null ? List.of() : List.of(informer);
    }

    @Override
    public synchronized void close() {
        if (informer != null) {
            informer.stop();
            informer = null;
        }
    }
}
