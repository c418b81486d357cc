package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.node.NodeKeys;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The driver DaemonSets the control plane writes, one per (chip, kernel, OS) combination, all rendered from one
 * template: the manifest {@code charts/npu-lifecycle/files/driver-daemonset.yaml}, embedded in this bundle as the
 * resource {@value #RESOURCE} (copied at build time, so the two cannot differ). Rendering replaces only
 * {@code metadata.name}, the {@code app} and {@value io.npulifecycle.api.node.NodeKeys#DRIVER_COMBINATION} labels of the DaemonSet, its selector and its
 * pod template, the pod's {@code nodeSelector} entry for the combination, {@code containers[0].image} and the
 * {@code DRIVER_VERSION} environment variable of {@code containers[0]}; privileges, host paths, probes, tolerations,
 * the Jolokia Secret and everything else come from the template unchanged (docs/upgrade.md).
 */
final class DriverDaemonSets {

    /** Class-path resource (next to this class) holding the template. */
    static final String RESOURCE = "driver-daemonset.yaml";
    /** The environment variable of {@code containers[0]} that carries the pod's driver version (driver bundle). */
    static final String DRIVER_VERSION_ENV = "DRIVER_VERSION";
    /** Annotation with the combination's chip, kernel and OS in clear. */
    static final String COMBINATION_DETAIL = NodeKeys.PREFIX + "driver-combination-detail";

    private final KubernetesSerialization serialization;
    private final String yaml;

    private DriverDaemonSets(KubernetesSerialization serialization, String yaml) {
        this.serialization = serialization;
        this.yaml = yaml;
        render(new Combination("check", "0", "0"), "npu-driver-check", "check:0", "0.0.0"); // fails early if unusable
    }

    /**
     * Loads the embedded template.
     *
     * @param serialization the client's serialization (YAML)
     * @return the renderer
     * @throws IllegalStateException when the resource is missing, is not a DaemonSet or has no container
     */
    static DriverDaemonSets load(KubernetesSerialization serialization) {
        try (InputStream in = DriverDaemonSets.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("driver DaemonSet template " + RESOURCE + " missing from the bundle");
            }
            return new DriverDaemonSets(serialization, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("driver DaemonSet template " + RESOURCE + " unreadable: " + e, e);
        }
    }

    /**
     * @param serialization the serialization (YAML)
     * @param yaml a DaemonSet manifest
     * @return a renderer of that template (tests)
     * @throws IllegalStateException when the text is not a DaemonSet with a container
     */
    static DriverDaemonSets of(KubernetesSerialization serialization, String yaml) {
        return new DriverDaemonSets(serialization, yaml);
    }

    /** @return the template as read (a fresh copy) */
    DaemonSet template() {
        Object o;
        try {
            o = serialization.unmarshal(yaml);
        } catch (RuntimeException e) {
            throw new IllegalStateException("driver DaemonSet template " + RESOURCE + " does not parse: " + e.getMessage(), e);
        }
        if (!(o instanceof DaemonSet ds) || ds.getSpec() == null || ds.getSpec().getTemplate() == null
                || ds.getSpec().getTemplate().getSpec() == null
                || ds.getSpec().getTemplate().getSpec().getContainers() == null
                || ds.getSpec().getTemplate().getSpec().getContainers().isEmpty()) {
            throw new IllegalStateException("driver DaemonSet template " + RESOURCE
                    + ": expected a DaemonSet with spec.template.spec.containers[0], got " + (o == null ? "nothing" : o.getClass().getSimpleName()));
        }
        return ds;
    }

    /**
     * Renders the DaemonSet of one combination.
     *
     * @param combination the (chip, kernel, OS) combination
     * @param name the DaemonSet name ({@link Combination#daemonSetName()})
     * @param image the driver image of the target version for that combination
     * @param version the target driver version (the pod's {@code DRIVER_VERSION})
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
        Container c = t.getSpec().getContainers().get(0);
        c.setImage(image);
        List<EnvVar> env = c.getEnv() == null ? new ArrayList<>() : new ArrayList<>(c.getEnv());
        boolean set = false;
        for (int i = 0; i < env.size(); i++) {
            if (DRIVER_VERSION_ENV.equals(env.get(i).getName())) {
                env.set(i, new EnvVar(DRIVER_VERSION_ENV, version, null));
                set = true;
            }
        }
        if (!set) {
            env.add(0, new EnvVar(DRIVER_VERSION_ENV, version, null));
        }
        c.setEnv(env);
        return t;
    }

    /**
     * @return a JSON patch (RFC 6902) that replaces the whole pod template of an existing DaemonSet with the rendered
     *         one: image and version change together, and a DaemonSet written by an older control plane gets the
     *         current template (its pods are replaced only when the rollout deletes them: updateStrategy OnDelete)
     */
    String templatePatch(Combination combination, String image, String version) {
        Map<String, Object> op = new HashMap<>();
        op.put("op", "replace");
        op.put("path", "/spec/template");
        op.put("value", podTemplate(combination, image, version));
        return serialization.asJson(List.of(op));
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
}
