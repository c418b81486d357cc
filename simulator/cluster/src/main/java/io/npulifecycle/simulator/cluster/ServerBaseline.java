package io.npulifecycle.simulator.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * Every object a real API server holds at one instant, so that the server can be handed to the next test or
 * scenario in exactly that state instead of starting a new kube-apiserver, etcd and kube-controller-manager (5 to
 * 10 s), as envtest shares one control plane between the tests of a suite.
 *
 * <p>{@link #restore} deletes every object created since (grace period 0, as a kubelet-less cluster needs; its
 * finalizers removed first, since no controller is left to release them) except
 * namespaces, which stay: without a namespace controller a deleted namespace never finishes terminating (their
 * contents are deleted). It refuses, answering false, when an object of the baseline was changed or deleted, a new
 * resource type appeared (a CRD was installed), or what it deleted is not gone within {@link #RESTORE_TIMEOUT}: the
 * caller then closes the server and starts a new one, so nobody meets what an earlier user of the server did. Objects
 * of the {@code kube-*} namespaces are the server's own bookkeeping (leases, its endpoints) and are left alone, as
 * are APIService objects, whose status the server rewrites.
 *
 * <p>Shape: {@code group/version/plural} → {@code namespace/name} → {@code uid} and the object's
 * {@code metadata.generation} when it has one (status updates do not change it), else its resourceVersion. Found by
 * discovery: every listable, deletable resource of the server's preferred group versions.
 */
public final class ServerBaseline {

    /** How long deleted objects may take to disappear before {@link #restore} gives up. */
    public static final Duration RESTORE_TIMEOUT = Duration.ofSeconds(10);

    private static final Set<String> SYSTEM_NAMESPACES = Set.of("kube-system", "kube-public", "kube-node-lease");
    /** Compared by existence only: their objects change without anyone asking (status) or are only ever added. */
    private static final Set<String> UNTRACKED = Set.of("apiservices", "events");

    private final Map<String, Map<String, String>> objects;

    private ServerBaseline(Map<String, Map<String, String>> objects) {
        this.objects = objects;
    }

    /**
     * @param admin a client of the server with the right to list everything
     * @return what the server holds now
     * @throws KubernetesClientException when the server does not answer
     */
    public static ServerBaseline of(KubernetesClient admin) {
        Map<String, Map<String, String>> all = new HashMap<>();
        for (ResourceDefinitionContext r : resources(admin)) {
            Map<String, String> byName = new HashMap<>();
            for (GenericKubernetesResource o : list(admin, r)) {
                if (!system(o.getMetadata())) {
                    byName.put(key(o.getMetadata()), version(o.getMetadata()));
                }
            }
            all.put(id(r), byName);
        }
        return new ServerBaseline(all);
    }

    /**
     * Deletes what was created since the baseline was taken and checks that nothing of it changed (see the class
     * comment); never throws.
     *
     * @param admin a client of the server with the right to list and delete everything
     * @return true when the server holds exactly the baseline again (namespaces created since stay, emptied); false
     *         when it cannot be brought back (the caller closes it)
     */
    public boolean restore(KubernetesClient admin) {
        return restoreOrWhy(admin) == null;
    }

    /**
     * As {@link #restore}, saying why not.
     *
     * @param admin a client of the server with the right to list and delete everything
     * @return null when the server holds exactly the baseline again; else why it cannot be brought back, naming the
     *         object or resource type (the caller closes the server)
     */
    public String restoreOrWhy(KubernetesClient admin) {
        try {
            return restoreOrRefuse(admin);
        } catch (KubernetesClientException e) {
            return "the server answered " + e.getCode() + ": " + e.getMessage();
        }
    }

    private String restoreOrRefuse(KubernetesClient admin) {
        Map<ResourceDefinitionContext, List<ObjectMeta>> added = new HashMap<>();
        for (ResourceDefinitionContext r : resources(admin)) {
            String plural = r.getPlural();
            Map<String, String> before = objects.get(id(r));
            if (before == null && !UNTRACKED.contains(plural)) {
                return "resource type " + id(r) + " appeared since the baseline (a CRD was installed)";
            }
            Set<String> seen = new HashSet<>();
            for (GenericKubernetesResource o : list(admin, r)) {
                ObjectMeta m = o.getMetadata();
                if (system(m)) {
                    continue;
                }
                String key = key(m);
                seen.add(key);
                String was = before == null ? null : before.get(key);
                if (was != null) {
                    if (!was.equals(version(m)) && !UNTRACKED.contains(plural)) {
                        return id(r) + " " + key + " of the baseline was changed (" + was + " -> " + version(m) + ")";
                    }
                } else if (!"namespaces".equals(plural)) {
                    added.computeIfAbsent(r, k -> new ArrayList<>()).add(m);
                }
            }
            if (before != null && !UNTRACKED.contains(plural) && !seen.containsAll(before.keySet())) {
                Set<String> missing = new HashSet<>(before.keySet());
                missing.removeAll(seen);
                return id(r) + " " + missing + " of the baseline were deleted";
            }
        }
        for (Map.Entry<ResourceDefinitionContext, List<ObjectMeta>> e : added.entrySet()) {
            for (ObjectMeta m : e.getValue()) {
                try {
                    if (m.getFinalizers() != null && !m.getFinalizers().isEmpty()) {
                        // no controller is left to release them (e.g. the NPUOperatorCtl's npu.openfuyao.com/cleanup
                        // of a stopped control plane): the object would stay terminating
                        resource(admin, e.getKey(), m).patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
                                "{\"metadata\":{\"finalizers\":null}}");
                    }
                    resource(admin, e.getKey(), m).withGracePeriod(0).delete();
                } catch (KubernetesClientException ex) {
                    if (ex.getCode() != 404) {
                        return "cannot delete " + id(e.getKey()) + " " + key(m) + ": " + ex.getCode() + " "
                                + ex.getMessage();
                    }
                }
            }
        }
        long deadline = System.nanoTime() + RESTORE_TIMEOUT.toNanos();
        while (!gone(admin, added)) {
            if (System.nanoTime() > deadline) {
                return "what was deleted is not gone within " + RESTORE_TIMEOUT.toSeconds() + " s";
            }
            try {
                TimeUnit.MILLISECONDS.sleep(100); // polling the server for its deletions, not a test's wait
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
        return null;
    }

    private static boolean gone(KubernetesClient admin, Map<ResourceDefinitionContext, List<ObjectMeta>> deleted) {
        for (Map.Entry<ResourceDefinitionContext, List<ObjectMeta>> e : deleted.entrySet()) {
            Set<String> uids = new HashSet<>();
            e.getValue().forEach(m -> uids.add(m.getUid()));
            for (GenericKubernetesResource o : list(admin, e.getKey())) {
                if (uids.contains(o.getMetadata().getUid())) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean system(ObjectMeta m) {
        return m.getNamespace() != null && SYSTEM_NAMESPACES.contains(m.getNamespace());
    }

    private static Resource<GenericKubernetesResource> resource(KubernetesClient admin, ResourceDefinitionContext r,
            ObjectMeta m) {
        var op = admin.genericKubernetesResources(r);
        return m.getNamespace() == null ? op.withName(m.getName())
                : op.inNamespace(m.getNamespace()).withName(m.getName());
    }

    private static List<GenericKubernetesResource> list(KubernetesClient admin, ResourceDefinitionContext r) {
        var op = admin.genericKubernetesResources(r);
        return (r.isNamespaceScoped() ? op.inAnyNamespace().list() : op.list()).getItems();
    }

    private static List<ResourceDefinitionContext> resources(KubernetesClient admin) {
        List<String[]> groupVersions = new ArrayList<>();
        groupVersions.add(new String[] {"", "v1"});
        for (APIGroup g : admin.getApiGroups().getGroups()) {
            groupVersions.add(new String[] {g.getName(), g.getPreferredVersion().getVersion()});
        }
        List<ResourceDefinitionContext> out = new ArrayList<>();
        for (String[] gv : groupVersions) {
            String path = gv[0].isEmpty() ? gv[1] : gv[0] + "/" + gv[1];
            for (APIResource r : admin.getApiResources(path).getResources()) {
                if (r.getName().contains("/") || !r.getVerbs().contains("list") || !r.getVerbs().contains("delete")) {
                    continue;
                }
                out.add(new ResourceDefinitionContext.Builder().withGroup(gv[0]).withVersion(gv[1])
                        .withPlural(r.getName()).withKind(r.getKind()).withNamespaced(r.getNamespaced()).build());
            }
        }
        return out;
    }

    private static String id(ResourceDefinitionContext r) {
        return r.getGroup() + "/" + r.getVersion() + "/" + r.getPlural();
    }

    private static String key(ObjectMeta m) {
        return (m.getNamespace() == null ? "" : m.getNamespace()) + "/" + m.getName();
    }

    private static String version(ObjectMeta m) {
        return m.getUid() + " " + (m.getGeneration() != null ? "g" + m.getGeneration() : "rv" + m.getResourceVersion());
    }
}
