package io.npulifecycle.testing.support;

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
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.npulifecycle.simulator.cluster.RealApiServer;

/**
 * Real API servers kept from one test to the next in a test JVM, as envtest shares one control plane between the
 * tests of a suite: starting kube-apiserver, etcd and kube-controller-manager takes 5 to 10 s, a test on them often
 * less.
 *
 * <p>A server goes back to the pool only in the state it was handed out: its {@link Baseline} is every object that
 * existed then (the product's manifests applied, nothing else). Giving it back deletes every object created since
 * (grace period 0, as a kubelet-less cluster needs) except namespaces, which stay (without a namespace controller a
 * deleted namespace never finishes terminating; their contents are deleted). If an object of the baseline was
 * changed or deleted, an object created since cannot be deleted within {@link #WIPE_TIMEOUT}, or the server does not
 * answer, the server is closed instead and the next test starts a new one: a test never meets what an earlier test
 * did. Objects of the {@code kube-*} namespaces are the server's own bookkeeping (leases, its endpoints) and are left
 * alone, as are APIService objects, whose status the server rewrites.
 *
 * <p>The pool is one per JVM by nature (it outlives every test instance, and the surefire fork is the unit of reuse);
 * it holds at most one idle server, and the server's own shutdown hook stops it when the JVM exits.
 */
final class RealServerPool {

    /** How long deleted objects may take to disappear before the server is given up, seconds. */
    static final Duration WIPE_TIMEOUT = Duration.ofSeconds(10);

    private static final Set<String> SYSTEM_NAMESPACES = Set.of("kube-system", "kube-public", "kube-node-lease");
    private static final Set<String> UNTRACKED = Set.of("apiservices", "events");

    /** One idle server, or none. */
    private static Idle idle;

    private RealServerPool() {
    }

    /** An idle server, the apiserver flags it was started with, and what existed when it was handed out. */
    record Idle(RealApiServer server, List<String> flags, Baseline baseline) {
    }

    /**
     * @param flags the extra kube-apiserver flags the test needs
     * @return an idle server started with exactly those flags, or null (the caller starts one)
     */
    static synchronized Idle take(List<String> flags) {
        Idle i = idle;
        if (i == null) {
            return null;
        }
        idle = null;
        if (i.flags().equals(flags)) {
            return i;
        }
        i.server().close();
        return null;
    }

    /**
     * Wipes the server back to {@code baseline} and keeps it idle, or closes it (see the class comment).
     *
     * @param server a server handed out with that baseline; its test's clients are closed
     * @param flags its extra kube-apiserver flags
     * @param baseline what existed when it was handed out
     */
    static void giveBack(RealApiServer server, List<String> flags, Baseline baseline) {
        boolean clean;
        try {
            clean = wipe(server.client(), baseline);
        } catch (RuntimeException e) {
            clean = false;
        }
        if (!clean) {
            server.close();
            return;
        }
        Idle previous;
        synchronized (RealServerPool.class) {
            previous = idle;
            idle = new Idle(server, flags, baseline);
        }
        if (previous != null) {
            previous.server().close();
        }
    }

    /**
     * Every object of the server that a test may create or change, by resource: {@code group/version/plural} →
     * {@code namespace/name} → {@code uid generation-or-resourceVersion}.
     */
    record Baseline(Map<String, Map<String, String>> objects) {

        /** @return what exists now on the server of {@code admin} */
        static Baseline of(KubernetesClient admin) {
            Map<String, Map<String, String>> all = new HashMap<>();
            for (ResourceDefinitionContext r : resources(admin)) {
                Map<String, String> byName = new HashMap<>();
                for (GenericKubernetesResource o : list(admin, r)) {
                    ObjectMeta m = o.getMetadata();
                    if (m.getNamespace() == null || !SYSTEM_NAMESPACES.contains(m.getNamespace())) {
                        byName.put(key(m), version(m));
                    }
                }
                all.put(id(r), byName);
            }
            return new Baseline(all);
        }
    }

    /** @return whether the server is back to {@code baseline} (nothing of it changed, everything added deleted) */
    static boolean wipe(KubernetesClient admin, Baseline baseline) {
        List<ResourceDefinitionContext> resources = resources(admin);
        List<Runnable> deletions = new ArrayList<>();
        Map<ResourceDefinitionContext, Set<String>> added = new HashMap<>();
        for (ResourceDefinitionContext r : resources) {
            Map<String, String> before = baseline.objects().get(id(r));
            if (before == null && !UNTRACKED.contains(r.getPlural())) {
                return false; // a resource type appeared (a test installed a CRD)
            }
            Set<String> seen = new HashSet<>();
            for (GenericKubernetesResource o : list(admin, r)) {
                ObjectMeta m = o.getMetadata();
                if (m.getNamespace() != null && SYSTEM_NAMESPACES.contains(m.getNamespace())) {
                    continue;
                }
                String key = key(m);
                seen.add(key);
                String was = before == null ? null : before.get(key);
                if (was != null) {
                    if (!was.equals(version(m)) && !UNTRACKED.contains(r.getPlural())) {
                        return false; // a test changed what every test expects as installed
                    }
                } else if (!"namespaces".equals(r.getPlural())) {
                    added.computeIfAbsent(r, k -> new HashSet<>()).add(key);
                    deletions.add(() -> resource(admin, r, m).withGracePeriod(0).delete());
                }
            }
            if (before != null && !UNTRACKED.contains(r.getPlural()) && !seen.containsAll(before.keySet())) {
                return false; // a test deleted an installed object
            }
        }
        for (Runnable d : deletions) {
            try {
                d.run();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404) {
                    return false;
                }
            }
        }
        long deadline = System.nanoTime() + WIPE_TIMEOUT.toNanos();
        while (true) {
            boolean gone = true;
            for (Map.Entry<ResourceDefinitionContext, Set<String>> e : added.entrySet()) {
                for (GenericKubernetesResource o : list(admin, e.getKey())) {
                    if (e.getValue().contains(key(o.getMetadata()))) {
                        gone = false;
                    }
                }
            }
            if (gone) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                TimeUnit.MILLISECONDS.sleep(100); // polling the API server for deletions to finish, not a test wait
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    private static io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource> resource(
            KubernetesClient admin, ResourceDefinitionContext r, ObjectMeta m) {
        var op = admin.genericKubernetesResources(r);
        return m.getNamespace() == null ? op.withName(m.getName())
                : op.inNamespace(m.getNamespace()).withName(m.getName());
    }

    private static List<GenericKubernetesResource> list(KubernetesClient admin, ResourceDefinitionContext r) {
        var op = admin.genericKubernetesResources(r);
        return (r.isNamespaceScoped() ? op.inAnyNamespace().list() : op.list()).getItems();
    }

    /** @return every listable, deletable resource of the server's preferred group versions (discovery) */
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
