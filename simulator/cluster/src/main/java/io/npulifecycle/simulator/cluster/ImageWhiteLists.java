package io.npulifecycle.simulator.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * The platform's {@code ImageWhiteList} on a simulated cluster (either {@link ClusterBackend}): its CRD
 * ({@value #CRD_RESOURCE} on the class path, an open schema) and the whitelist object the runbook edits
 * ({@code kubectl edit imagewhitelist ascend-driver -n cpaas-system}, each tag under {@code spec.repoList}). The seed
 * names no API group or version; {@value #GROUP}/{@value #VERSION} is this simulator's assumption (the product finds
 * the kind by discovery, whatever its group).
 */
public final class ImageWhiteLists {

    /** API group of the simulated CRD (an assumption: the seed names none). */
    public static final String GROUP = "cpaas.io";
    /** API version of the simulated CRD. */
    public static final String VERSION = "v1";
    /** Kind (the seed: {@code imagewhitelist}). */
    public static final String KIND = "ImageWhiteList";
    /** Plural resource name. */
    public static final String PLURAL = "imagewhitelists";
    /** Namespace of the runbook's whitelist. */
    public static final String NAMESPACE = "cpaas-system";
    /** Name of the runbook's whitelist. */
    public static final String NAME = "ascend-driver";
    /** The CRD, next to this class. */
    public static final String CRD_RESOURCE = "crd-imagewhitelist.yaml";

    private static final ResourceDefinitionContext CONTEXT = new ResourceDefinitionContext.Builder().withGroup(GROUP)
            .withVersion(VERSION).withKind(KIND).withPlural(PLURAL).withNamespaced(true).build();

    private ImageWhiteLists() {
    }

    /**
     * Serves the kind: installs the CRD ({@link ClusterBackend#installCrd(Path)}, which on a real server waits until it
     * is Established).
     *
     * @param backend the cluster
     * @throws UncheckedIOException when the CRD cannot be copied to a temporary file
     */
    public static void installCrd(ClusterBackend backend) {
        try (InputStream in = ImageWhiteLists.class.getResourceAsStream(CRD_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("no " + CRD_RESOURCE + " next to " + ImageWhiteLists.class.getName());
            }
            Path file = Files.createTempFile("crd-imagewhitelist", ".yaml");
            try {
                Files.copy(in, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                backend.installCrd(file);
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot install the ImageWhiteList CRD", e);
        }
    }

    /**
     * @param client a client of the cluster
     * @return the ImageWhiteList resources
     */
    public static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> resources(KubernetesClient client) {
        return client.genericKubernetesResources(CONTEXT);
    }

    /**
     * Creates or replaces the runbook's whitelist ({@value #NAMESPACE}/{@value #NAME}) listing {@code tags}.
     *
     * @param backend the cluster (the CRD installed)
     * @param tags image tags, e.g. {@code 25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3}
     * @return the stored object
     */
    public static GenericKubernetesResource seed(ClusterBackend backend, List<String> tags) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("repoList", new ArrayList<>(tags));
        return put(backend, NAMESPACE, NAME, spec);
    }

    /**
     * Creates or replaces a whitelist with any {@code spec} (also a malformed one), creating the namespace.
     *
     * @param backend the cluster (the CRD installed)
     * @param namespace its namespace
     * @param name its name
     * @param spec the {@code spec}; null = an object without {@code spec}
     * @return the stored object
     */
    public static GenericKubernetesResource put(ClusterBackend backend, String namespace, String name, Object spec) {
        backend.ensureNamespace(namespace);
        GenericKubernetesResourceBuilder b = new GenericKubernetesResourceBuilder().withApiVersion(GROUP + "/" + VERSION)
                .withKind(KIND).withNewMetadata().withName(name).withNamespace(namespace).endMetadata();
        if (spec != null) {
            b.withAdditionalProperties(Map.of("spec", spec));
        }
        GenericKubernetesResource wl = b.build();
        Resource<GenericKubernetesResource> r = resources(backend.client()).inNamespace(namespace).withName(name);
        GenericKubernetesResource existing = r.get();
        if (existing == null) {
            return resources(backend.client()).inNamespace(namespace).resource(wl).create();
        }
        wl.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
        return resources(backend.client()).inNamespace(namespace).resource(wl).update();
    }

    /**
     * Adds tags under {@code spec.repoList} of the runbook's whitelist, as the product's status tells the operator:
     * one JSON patch {@code add /spec/repoList/-} per tag.
     *
     * @param client a client of the cluster
     * @param tags the tags to add
     * @return the stored object
     */
    public static GenericKubernetesResource addTags(KubernetesClient client, List<String> tags) {
        StringBuilder ops = new StringBuilder();
        for (String t : tags) {
            ops.append(ops.isEmpty() ? "" : ",").append("{\"op\":\"add\",\"path\":\"/spec/repoList/-\",\"value\":\"")
                    .append(t).append("\"}");
        }
        return resources(client).inNamespace(NAMESPACE).withName(NAME).patch(PatchContext.of(PatchType.JSON),
                "[" + ops + "]");
    }

    /**
     * @param client a client of the cluster
     * @return {@code spec.repoList} of the runbook's whitelist as stored, or an empty list when it has none
     */
    @SuppressWarnings("unchecked")
    public static List<Object> repoList(KubernetesClient client) {
        GenericKubernetesResource wl = resources(client).inNamespace(NAMESPACE).withName(NAME).get();
        Object spec = wl == null ? null : wl.getAdditionalProperties().get("spec");
        Object list = spec instanceof Map<?, ?> m ? m.get("repoList") : null;
        return list instanceof List<?> l ? (List<Object>) l : List.of();
    }
}
