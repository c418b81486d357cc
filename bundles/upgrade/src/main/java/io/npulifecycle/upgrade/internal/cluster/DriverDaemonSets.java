package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.plan.Combination;

import io.npulifecycle.api.node.NodeKeys;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The driver DaemonSets the control plane writes, one per (chip, kernel, OS) combination, all rendered from one
 * template read at run time from a ConfigMap (PID {@code io.npulifecycle.upgrade} key
 * {@code driverDaemonSetConfigMap}, default {@code npu-lifecycle-driver-daemonset}, key {@value #KEY}, in the control
 * plane's namespace; the chart renders it from {@code charts/npu-lifecycle/files/driver-daemonset.yaml}).
 *
 * <p>Rendering replaces only {@code metadata.name}, the {@code app} and
 * {@value io.npulifecycle.api.node.NodeKeys#DRIVER_COMBINATION} labels of the DaemonSet, its selector and its pod
 * template, the pod's {@code nodeSelector} entry for the combination, {@code containers[0].image} (the vendor's driver
 * image as shipped) and the {@value #DRIVER_VERSION_ENV} environment variable of the container named
 * {@value #NODE_AGENT_CONTAINER} (else of {@code containers[0]}) and of every other container that declares it; it
 * adds the annotation {@value #TEMPLATE_HASH} (the template's digest, which tells a DaemonSet written from an older
 * template). Privileges, host paths, probes, tolerations, the node-agent image and everything else come from the
 * template unchanged (docs/upgrade.md, docs/driver-images.md).
 */
final class DriverDaemonSets {

    /** The key of the ConfigMap that holds the template. */
    static final String KEY = "driver-daemonset.yaml";
    /** The environment variable that carries the pod's driver version (driver bundle). */
    static final String DRIVER_VERSION_ENV = "DRIVER_VERSION";
    /** The name of the node agent's container beside the driver container. */
    static final String NODE_AGENT_CONTAINER = "node-agent";
    /** Annotation with the combination's chip, kernel and OS in clear. */
    static final String COMBINATION_DETAIL = NodeKeys.PREFIX + "driver-combination-detail";
    /** Annotation (DaemonSet metadata) with the digest of the template it was rendered from. */
    static final String TEMPLATE_HASH = NodeKeys.PREFIX + "driver-template-hash";

    private final KubernetesSerialization serialization;
    private final String yaml;
    private final String source;
    private final String hash;

    private DriverDaemonSets(KubernetesSerialization serialization, String yaml, String source) {
        this.serialization = serialization;
        this.yaml = yaml;
        this.source = source;
        this.hash = digest(yaml);
        render(new Combination("check", "0", "0"), "npu-driver-check", "check:0", "0.0.0"); // fails early if unusable
    }

    /**
     * Reads the template from a ConfigMap.
     *
     * @param serialization the client's serialization (YAML)
     * @param cm the ConfigMap as the informer holds it, or null when it does not exist
     * @param namespace its namespace (for the messages)
     * @param name its name (for the messages)
     * @return the renderer
     * @throws IllegalStateException naming the ConfigMap and the field when it is missing, has no key {@value #KEY},
     *         or the key does not hold a DaemonSet with {@code spec.selector} and {@code spec.template.spec.containers[0]}
     */
    static DriverDaemonSets fromConfigMap(KubernetesSerialization serialization, ConfigMap cm, String namespace,
            String name) {
        String where = "ConfigMap " + namespace + "/" + name;
        if (cm == null) {
            throw new IllegalStateException(where + " does not exist (PID io.npulifecycle.upgrade key "
                    + "driverDaemonSetConfigMap; the chart creates it with driver.enabled=true): no driver DaemonSet is written");
        }
        String text = cm.getData() == null ? null : cm.getData().get(KEY);
        if (text == null || text.isBlank()) {
            throw new IllegalStateException(where + " has no key data." + KEY
                    + " (the driver DaemonSet template): no driver DaemonSet is written");
        }
        return new DriverDaemonSets(serialization, text, where + " key " + KEY);
    }

    /**
     * @param serialization the serialization (YAML)
     * @param yaml a DaemonSet manifest
     * @param source where it comes from, for the messages (e.g. {@code ConfigMap npu-operator/x key driver-daemonset.yaml})
     * @return a renderer of that template
     * @throws IllegalStateException when the text is not a DaemonSet with a selector and a container, naming the field
     */
    static DriverDaemonSets of(KubernetesSerialization serialization, String yaml, String source) {
        return new DriverDaemonSets(serialization, yaml, source);
    }

    /** @return where the template comes from (the ConfigMap and key) */
    String source() {
        return source;
    }

    /** @return the digest of the template's text (16 hex digits), the value of {@value #TEMPLATE_HASH} */
    String hash() {
        return hash;
    }

    /** @return the template as read (a fresh copy) */
    DaemonSet template() {
        Object o;
        try {
            o = serialization.unmarshal(yaml);
        } catch (RuntimeException e) {
            throw new IllegalStateException(source + ": the driver DaemonSet template is not valid YAML of a "
                    + "Kubernetes object: " + firstLine(e.getMessage()), e);
        }
        if (!(o instanceof DaemonSet ds)) {
            throw new IllegalStateException(source + ": expected kind DaemonSet (apiVersion apps/v1), got "
                    + (o == null ? "nothing" : o.getClass().getSimpleName()));
        }
        if (ds.getSpec() == null || ds.getSpec().getSelector() == null) {
            throw new IllegalStateException(source + ": field spec.selector is missing");
        }
        if (ds.getSpec().getTemplate() == null || ds.getSpec().getTemplate().getSpec() == null
                || ds.getSpec().getTemplate().getSpec().getContainers() == null
                || ds.getSpec().getTemplate().getSpec().getContainers().isEmpty()) {
            throw new IllegalStateException(source + ": field spec.template.spec.containers[0] (the driver container) "
                    + "is missing");
        }
        return ds;
    }

    /**
     * Renders the DaemonSet of one combination.
     *
     * @param combination the (chip, kernel, OS) combination
     * @param name the DaemonSet name ({@link Combination#daemonSetName()})
     * @param image the driver image of the target version for that combination
     * @param version the target driver version (the node agent's {@code DRIVER_VERSION})
     * @return the DaemonSet to create
     */
    DaemonSet render(Combination combination, String name, String image, String version) {
        Objects.requireNonNull(image, "image");
        Objects.requireNonNull(version, "version");
        DaemonSet ds = template();
        Map<String, String> sel = selector(combination);
        ObjectMeta meta = ds.getMetadata() == null ? new ObjectMeta() : ds.getMetadata();
        meta.setName(name);
        meta.setNamespace(NodeKeys.DRIVER_NAMESPACE);
        meta.setLabels(merged(meta.getLabels(), sel));
        Map<String, String> ann = meta.getAnnotations() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(meta.getAnnotations());
        ann.put(COMBINATION_DETAIL, combination.toString());
        ann.put(TEMPLATE_HASH, hash);
        meta.setAnnotations(ann);
        meta.setResourceVersion(null);
        meta.setUid(null);
        ds.setMetadata(meta);
        ds.getSpec().getSelector().setMatchLabels(new LinkedHashMap<>(sel));
        ds.getSpec().getSelector().setMatchExpressions(null);
        ds.getSpec().setTemplate(podTemplate(ds.getSpec().getTemplate(), combination, image, version));
        return ds;
    }

    /**
     * @return the pod template of a combination (what {@link #render} puts into {@code spec.template})
     */
    PodTemplateSpec podTemplate(Combination combination, String image, String version) {
        return podTemplate(template().getSpec().getTemplate(), combination, image, version);
    }

    private PodTemplateSpec podTemplate(PodTemplateSpec t, Combination combination, String image, String version) {
        Map<String, String> sel = selector(combination);
        ObjectMeta pm = t.getMetadata() == null ? new ObjectMeta() : t.getMetadata();
        pm.setLabels(merged(pm.getLabels(), sel));
        t.setMetadata(pm);
        Map<String, String> nodeSelector = t.getSpec().getNodeSelector() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(t.getSpec().getNodeSelector());
        nodeSelector.put(NodeKeys.DRIVER_COMBINATION, combination.key());
        t.getSpec().setNodeSelector(nodeSelector);
        List<Container> cs = t.getSpec().getContainers();
        cs.get(0).setImage(image);
        Container agent = cs.stream().filter(c -> NODE_AGENT_CONTAINER.equals(c.getName())).findFirst().orElse(cs.get(0));
        for (Container c : cs) {
            setVersion(c, version, c == agent);
        }
        return t;
    }

    private static void setVersion(Container c, String version, boolean always) {
        List<EnvVar> env = c.getEnv() == null ? new ArrayList<>() : new ArrayList<>(c.getEnv());
        boolean set = false;
        for (int i = 0; i < env.size(); i++) {
            if (DRIVER_VERSION_ENV.equals(env.get(i).getName())) {
                env.set(i, new EnvVar(DRIVER_VERSION_ENV, version, null));
                set = true;
            }
        }
        if (!set && always) {
            env.add(0, new EnvVar(DRIVER_VERSION_ENV, version, null));
        }
        if (set || always) {
            c.setEnv(env);
        }
    }

    /**
     * @return a JSON patch (RFC 6902) that replaces the whole pod template of an existing DaemonSet with the rendered
     *         one and sets its {@value #TEMPLATE_HASH} annotation: image and version change together, and a DaemonSet
     *         written from an older template gets the current one (its pods are replaced only when the rollout
     *         deletes them: updateStrategy OnDelete)
     */
    String templatePatch(Combination combination, String image, String version) {
        List<Map<String, Object>> ops = new ArrayList<>();
        Map<String, Object> op = new HashMap<>();
        op.put("op", "replace");
        op.put("path", "/spec/template");
        op.put("value", podTemplate(combination, image, version));
        ops.add(op);
        Map<String, Object> ann = new HashMap<>();
        ann.put("op", "add"); // add replaces an existing member (RFC 6902 4.1); the annotations map exists (render)
        ann.put("path", "/metadata/annotations/" + TEMPLATE_HASH.replace("~", "~0").replace("/", "~1"));
        ann.put("value", hash);
        ops.add(ann);
        return serialization.asJson(ops);
    }

    private static Map<String, String> selector(Combination combination) {
        Map<String, String> sel = new LinkedHashMap<>();
        sel.put(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP);
        sel.put(NodeKeys.DRIVER_COMBINATION, combination.key());
        return sel;
    }

    private static Map<String, String> merged(Map<String, String> base, Map<String, String> over) {
        Map<String, String> m = base == null ? new LinkedHashMap<>() : new LinkedHashMap<>(base);
        m.putAll(over);
        return m;
    }

    private static String digest(String text) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
