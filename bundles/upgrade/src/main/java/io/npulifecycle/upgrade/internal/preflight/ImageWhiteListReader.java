package io.npulifecycle.upgrade.internal.preflight;

import io.npulifecycle.upgrade.internal.plan.WhiteListState;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIGroupList;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * Reads the platform's {@code ImageWhiteList} ({@link WhiteListState}) with fabric8: API discovery finds the group,
 * version and plural that serve kind {@value WhiteListState#KIND} ({@code GET /apis}, then {@code GET
 * /apis/<group>/<version>} for each group, its preferred version first), then one {@code GET} of the object by name
 * (RBAC: {@code get} on it, docs/security.md). Nothing is cached here; {@link ImagePreflight} decides when to read.
 * Never throws: every failure is a {@link WhiteListState.Status#FAILED} state with the cause.
 */
final class ImageWhiteListReader {

    /**
     * Where discovery found the kind.
     *
     * @param context the type for fabric8's generic client
     * @param resource e.g. {@code imagewhitelists.cpaas.io/v1}
     */
    record Found(ResourceDefinitionContext context, String resource) {
    }

    /**
     * What discovery answered.
     *
     * @param found where the kind is served, or null when nowhere
     * @param skipped the group versions whose discovery failed (named in the status when the kind was not found)
     */
    record Discovery(Found found, List<String> skipped) {
    }

    private final KubernetesClient client;

    /** @param client the control plane's client (its ServiceAccount) */
    ImageWhiteListReader(KubernetesClient client) {
        this.client = client;
    }

    /**
     * @return where kind {@value WhiteListState#KIND} is served, or not found; a group version whose discovery fails
     *         (an aggregated API that is down) is skipped and named
     * @throws KubernetesClientException when {@code GET /apis} itself fails
     */
    Discovery discover() {
        APIGroupList groups = client.getApiGroups();
        List<String> skipped = new ArrayList<>();
        if (groups == null || groups.getGroups() == null) {
            return new Discovery(null, skipped);
        }
        for (APIGroup g : groups.getGroups()) {
            List<String> versions = new ArrayList<>();
            if (g.getPreferredVersion() != null) {
                versions.add(g.getPreferredVersion().getGroupVersion());
            }
            for (GroupVersionForDiscovery v : g.getVersions()) {
                if (!versions.contains(v.getGroupVersion())) {
                    versions.add(v.getGroupVersion());
                }
            }
            for (String gv : versions) {
                Found f;
                try {
                    f = find(g.getName(), gv, client.getApiResources(gv));
                } catch (KubernetesClientException e) {
                    skipped.add(gv + ": " + (e.getCode() > 0 ? "HTTP " + e.getCode() : e.getMessage()));
                    continue;
                }
                if (f != null) {
                    return new Discovery(f, skipped);
                }
            }
        }
        return new Discovery(null, skipped);
    }

    private static Found find(String group, String groupVersion, APIResourceList list) {
        if (list == null || list.getResources() == null) {
            return null;
        }
        for (APIResource r : list.getResources()) {
            if (WhiteListState.KIND.equals(r.getKind()) && r.getName() != null && !r.getName().contains("/")) {
                String version = groupVersion.substring(groupVersion.indexOf('/') + 1);
                ResourceDefinitionContext ctx = new ResourceDefinitionContext.Builder().withGroup(group)
                        .withVersion(version).withKind(WhiteListState.KIND).withPlural(r.getName())
                        .withNamespaced(!Boolean.FALSE.equals(r.getNamespaced())).build();
                return new Found(ctx, r.getName() + "." + group + "/" + version);
            }
        }
        return null;
    }

    /**
     * Reads the whitelist.
     *
     * @param found where discovery found the kind
     * @param namespace the whitelist's namespace (ignored when the kind is cluster-scoped)
     * @param name the whitelist's name
     * @param asked the tags the rollout needs now
     * @return {@code LISTED}, {@code INVALID}, {@code NOT_FOUND} (also when the kind stopped being served: the
     *         caller discovers again) or {@code FAILED} (403 names the RBAC rule to add)
     */
    WhiteListState read(Found found, String namespace, String name, Set<String> asked) {
        try {
            GenericKubernetesResource wl = found.context().isNamespaceScoped()
                    ? client.genericKubernetesResources(found.context()).inNamespace(namespace).withName(name).get()
                    : client.genericKubernetesResources(found.context()).withName(name).get();
            if (wl == null) {
                return WhiteListState.of(WhiteListState.Status.NOT_FOUND, namespace, name, found.resource(), "");
            }
            return WhiteListState.parse(wl.getAdditionalProperties(), namespace, name, found.resource(), asked);
        } catch (KubernetesClientException e) {
            String detail = e.getCode() == 403
                    ? "forbidden (HTTP 403): the control plane's ServiceAccount needs get on " + found.resource()
                            + " named " + name + " (charts/npu-lifecycle/templates/11-rbac-control-plane.yaml, docs/security.md)"
                    : (e.getCode() > 0 ? "HTTP " + e.getCode() + ": " : "") + e.getMessage();
            return WhiteListState.of(WhiteListState.Status.FAILED, namespace, name, found.resource(), detail);
        }
    }
}
