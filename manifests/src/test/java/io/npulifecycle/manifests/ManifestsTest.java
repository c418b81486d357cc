package io.npulifecycle.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.npulifecycle.launcher.LaunchOptions;
import io.npulifecycle.simulator.cluster.RbacTable;
import io.npulifecycle.simulator.cluster.RbacTable.Permission;

/**
 * The invariants of the Kubernetes manifests the chart {@code charts/npu-lifecycle} renders with its defaults
 * ({@code charts/target/rendered/}, module charts; issues #7 and #25): every object parses to a typed
 * fabric8 model; least privilege without wildcards; RBAC equal to the table of {@code docs/security.md}, whose code
 * paths exist; the driver DaemonSet template and the control-plane Deployment have the properties the node runtime
 * and the leader election need; the admission policy covers Node updates and is bound; the Containerfiles match the
 * distribution.
 */
class ManifestsTest {

    static final String NS = "npu-operator";
    static final Path SECURITY = Manifests.ROOT.resolve("docs/security.md");

    // ---- parsing ----

    @Test
    void everyManifestParsesToATypedModel() throws IOException {
        Set<String> kinds = new TreeSet<>();
        for (Path f : Manifests.files()) {
            List<HasMetadata> objects = Manifests.load(f);
            assertFalse(objects.isEmpty(), f + " has no object");
            for (HasMetadata o : objects) {
                String what = f.getFileName() + ": " + o.getKind() + " " + o.getMetadata().getName();
                assertNotNull(o.getMetadata().getName(), what + " has no name");
                assertFalse(o instanceof GenericKubernetesResource, what + " is not a known Kubernetes kind (typo in apiVersion or kind?)");
                if (!(o instanceof CustomResourceDefinition) && !(o instanceof ClusterRole) && !(o instanceof ClusterRoleBinding)
                        && !(o instanceof ValidatingAdmissionPolicy) && !(o instanceof ValidatingAdmissionPolicyBinding)
                        && !"default".equals(o.getMetadata().getNamespace())) {
                    assertEquals(NS, o.getMetadata().getNamespace(), what + ": in the release namespace");
                }
                kinds.add(o.getKind());
            }
        }
        assertTrue(kinds.containsAll(List.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                "RoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "DaemonSet", "Deployment",
                "CustomResourceDefinition", "ConfigMap", "Secret", "Job", "Service", "PodDisruptionBudget")), kinds.toString());
        // the namespace is helm install --create-namespace's, not a chart object; installing starts no rollout
        assertEquals(List.of(), Manifests.ofType(Namespace.class), "no Namespace object in the chart");
        assertTrue(Manifests.all().stream().noneMatch(o -> "NPUOperatorCtl".equals(o.getKind())), "no NPUOperatorCtl by default");
        CustomResourceDefinition crd = Manifests.ofType(CustomResourceDefinition.class).get(0);
        assertEquals("npuoperatorctls.npu.openfuyao.com", crd.getMetadata().getName());
    }

    // ---- RBAC ----

    static Set<Permission> manifestPerms() throws IOException {
        Set<Permission> perms = new TreeSet<>();
        for (ClusterRole r : Manifests.ofType(ClusterRole.class)) {
            addRules(perms, "ClusterRole/" + r.getMetadata().getName(), r.getRules());
        }
        for (Role r : Manifests.ofType(Role.class)) {
            addRules(perms, "Role/" + r.getMetadata().getNamespace() + "/" + r.getMetadata().getName(), r.getRules());
        }
        return perms;
    }

    static void addRules(Set<Permission> perms, String role, List<PolicyRule> rules) {
        for (PolicyRule rule : rules) {
            Set<String> names = new TreeSet<>(rule.getResourceNames() == null ? List.of() : rule.getResourceNames());
            for (String g : rule.getApiGroups()) {
                for (String res : rule.getResources()) {
                    for (String v : rule.getVerbs()) {
                        perms.add(new Permission(role, g, res, v, names));
                    }
                }
            }
        }
    }

    @Test
    void noWildcardsAndNoDangerousVerbs() throws IOException {
        List<String> problems = new ArrayList<>();
        List<Map.Entry<String, List<PolicyRule>>> roles = new ArrayList<>();
        Manifests.ofType(ClusterRole.class).forEach(r -> roles.add(Map.entry(r.getMetadata().getName(), r.getRules())));
        Manifests.ofType(Role.class).forEach(r -> roles.add(Map.entry(r.getMetadata().getName(), r.getRules())));
        assertFalse(roles.isEmpty());
        for (var e : roles) {
            for (PolicyRule rule : e.getValue()) {
                List<String> all = new ArrayList<>();
                all.addAll(rule.getApiGroups());
                all.addAll(rule.getResources());
                all.addAll(rule.getVerbs());
                if (rule.getResourceNames() != null) {
                    all.addAll(rule.getResourceNames());
                }
                if (all.stream().anyMatch(s -> s.contains("*"))) {
                    problems.add(e.getKey() + ": wildcard in " + rule);
                }
                if (rule.getNonResourceURLs() != null && !rule.getNonResourceURLs().isEmpty()) {
                    problems.add(e.getKey() + ": nonResourceURLs " + rule.getNonResourceURLs());
                }
                for (String v : rule.getVerbs()) {
                    if (List.of("escalate", "bind", "impersonate", "deletecollection").contains(v)) {
                        problems.add(e.getKey() + ": verb " + v);
                    }
                }
                for (String r : rule.getResources()) {
                    if (List.of("secrets", "pods/exec", "pods/portforward", "serviceaccounts/token", "nodes/proxy",
                            "validatingadmissionpolicies", "validatingadmissionpolicybindings", "roles", "clusterroles",
                            "rolebindings", "clusterrolebindings").contains(r)) {
                        problems.add(e.getKey() + ": resource " + r + " (not needed by any code path)");
                    }
                }
            }
        }
        assertEquals(List.of(), problems);
    }

    static final Pattern CELL = Pattern.compile("`([^`]*)`");

    /** @return the `quoted` values of a text, in order */
    static List<String> cells(String cell) {
        List<String> out = new ArrayList<>();
        Matcher m = CELL.matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    void rbacEqualsTheTableOfSecurityMd() throws IOException {
        Set<Permission> doc = new TreeSet<>();
        for (RbacTable.Row row : RbacTable.read(SECURITY).rows()) {
            for (Permission p : row.permissions()) {
                assertTrue(doc.add(p), "listed twice in docs/security.md: " + p);
            }
        }
        Set<Permission> manifests = manifestPerms();
        Set<Permission> undocumented = new TreeSet<>(manifests);
        undocumented.removeAll(doc);
        Set<Permission> notGranted = new TreeSet<>(doc);
        notGranted.removeAll(manifests);
        assertEquals(Set.of(), undocumented, "granted by a manifest but not in the table of docs/security.md");
        assertEquals(Set.of(), notGranted, "in the table of docs/security.md but granted by no manifest");
    }

    @Test
    void everyCodePathOfTheTableExists() throws IOException {
        Map<String, List<Path>> sources = new HashMap<>();
        try (Stream<Path> s = Files.walk(Manifests.ROOT.resolve("bundles"))) {
            s.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
                    .forEach(p -> sources.computeIfAbsent(p.getFileName().toString().replace(".java", ""), k -> new ArrayList<>()).add(p));
        }
        List<String> missing = new ArrayList<>();
        for (RbacTable.Row row : RbacTable.read(SECURITY).rows()) {
            StringBuilder bodies = new StringBuilder();
            for (String cp : row.codePaths()) {
                String[] parts = cp.split("#");
                if (parts.length != 2) {
                    missing.add(cp + " (expected Class#method)");
                    continue;
                }
                List<Path> files = sources.get(parts[0]);
                if (files == null) {
                    missing.add(cp + " (no class " + parts[0] + " under bundles/*/src/main/java)");
                    continue;
                }
                String body = null;
                for (Path f : files) {
                    String b = methodBody(Files.readString(f), parts[1]);
                    body = b != null ? b : body;
                }
                if (body == null) {
                    missing.add(cp + " (no method " + parts[1] + " declared in " + files + ")");
                } else {
                    bodies.append(body);
                }
            }
            // the named code really makes the call: a client call on that resource, with that verb
            String code = bodies.toString();
            for (Permission p : row.permissions()) {
                List<String> res = RESOURCE_CALLS.get(p.resource());
                List<String> verb = p.resource().equals("leases") || p.resource().equals("pods/eviction") ? res
                        : VERB_CALLS.get(p.verb());
                if (res == null || verb == null || res.stream().noneMatch(code::contains) || verb.stream().noneMatch(code::contains)) {
                    missing.add(p + ": none of " + row.codePaths() + " calls " + res + " with " + verb);
                }
            }
        }
        assertEquals(List.of(), missing);
    }

    /** fabric8 calls that address a resource (leases: fabric8's LeaseLock does get, create and patch itself). */
    static final Map<String, List<String>> RESOURCE_CALLS = Map.ofEntries(Map.entry("nodes", List.of(".nodes()")),
            Map.entry("pods", List.of(".pods()")), Map.entry("events", List.of(".events()")),
            Map.entry("daemonsets", List.of(".daemonSets()")),
            Map.entry("npuoperatorctls", List.of("genericKubernetesResources(", "resources(NpuOperatorCtl.class)")),
            Map.entry("npuoperatorctls/status", List.of(".updateStatus()")), Map.entry("leases", List.of("new LeaseLock(")),
            Map.entry("imagewhitelists", List.of("genericKubernetesResources(")),
            Map.entry("pods/eviction", List.of(".evict(")), Map.entry("poddisruptionbudgets", List.of(".podDisruptionBudget()")),
            Map.entry("nodes/status", List.of(".patchStatus(", ".editStatus(", "subresource(\"status\")")),
            Map.entry("namespaces", List.of(".namespaces()")), Map.entry("configmaps", List.of(".configMaps()")));
    /** fabric8 calls that send a verb. */
    static final Map<String, List<String>> VERB_CALLS = Map.of("list", List.of("Informer(", ".list()"), "watch", List.of("Informer("),
            "get", List.of(".get()"), "update", List.of(".update()", ".updateStatus()"), "patch", List.of(".patch(", ".patchStatus(", ".edit(", ".editStatus("),
            "create", List.of(".create()"), "delete", List.of(".delete()"));

    /** @return the text of a method's (or constructor's) body, or null when it is not declared in the source */
    static String methodBody(String src, String method) {
        Matcher m = Pattern.compile("\\b" + Pattern.quote(method) + "\\([^;{]*\\)\\s*(throws [^{]*)?\\{").matcher(src);
        boolean declaration = false;
        while (!declaration && m.find()) {
            // a declaration follows a type or a modifier (`void patchNode(`, `public Foo(`), a call site does not
            // (`if (!patchNode(p)) {`, `return patchNode(p) {`...)
            String before = src.substring(0, m.start()).stripTrailing();
            Matcher last = Pattern.compile("([\\w>\\]]+)$").matcher(before);
            declaration = last.find() && !Set.of("return", "new", "else", "throw", "case").contains(last.group(1));
        }
        if (!declaration) {
            return null;
        }
        int depth = 1;
        int i = m.end();
        while (i < src.length() && depth > 0) {
            char c = src.charAt(i++);
            depth += c == '{' ? 1 : c == '}' ? -1 : 0;
        }
        return src.substring(m.start(), i);
    }

    @Test
    void everyRoleIsBoundToOurServiceAccountsOnly() throws IOException {
        Set<String> accounts = Manifests.ofType(ServiceAccount.class).stream()
                .map(a -> a.getMetadata().getNamespace() + "/" + a.getMetadata().getName()).collect(Collectors.toSet());
        assertEquals(Set.of(NS + "/npu-lifecycle-node-agent", NS + "/npu-lifecycle-control-plane"), accounts);
        Set<String> bound = new TreeSet<>();
        List<String> problems = new ArrayList<>();
        for (ClusterRoleBinding b : Manifests.ofType(ClusterRoleBinding.class)) {
            check(b.getRoleRef(), b.getSubjects(), accounts, problems, b.getMetadata().getName());
            bound.add("ClusterRole/" + b.getRoleRef().getName());
        }
        for (RoleBinding b : Manifests.ofType(RoleBinding.class)) {
            check(b.getRoleRef(), b.getSubjects(), accounts, problems, b.getMetadata().getName());
            bound.add(b.getRoleRef().getKind() + "/" + ("Role".equals(b.getRoleRef().getKind()) ? b.getMetadata().getNamespace() + "/" : "")
                    + b.getRoleRef().getName());
        }
        Set<String> roles = new TreeSet<>();
        Manifests.ofType(ClusterRole.class).forEach(r -> roles.add("ClusterRole/" + r.getMetadata().getName()));
        Manifests.ofType(Role.class).forEach(r -> roles.add("Role/" + r.getMetadata().getNamespace() + "/" + r.getMetadata().getName()));
        assertEquals(roles, bound, "every role bound, every binding to an existing role");
        assertEquals(List.of(), problems);
    }

    static void check(RoleRef ref, List<Subject> subjects, Set<String> accounts, List<String> problems, String binding) {
        for (Subject s : subjects) {
            if (!"ServiceAccount".equals(s.getKind()) || !accounts.contains(s.getNamespace() + "/" + s.getName())) {
                problems.add(binding + " binds " + s.getKind() + " " + s.getNamespace() + "/" + s.getName());
            }
        }
    }

    // ---- the admission policy ----

    @Test
    void admissionPolicyCoversNodeUpdatesAndIsBound() throws IOException {
        ValidatingAdmissionPolicy p = Manifests.ofType(ValidatingAdmissionPolicy.class).get(0);
        assertEquals("admissionregistration.k8s.io/v1", p.getApiVersion());
        boolean nodesUpdate = false;
        for (NamedRuleWithOperations r : p.getSpec().getMatchConstraints().getResourceRules()) {
            nodesUpdate |= r.getApiGroups().contains("") && r.getResources().contains("nodes") && r.getOperations().contains("UPDATE");
        }
        assertTrue(nodesUpdate, "matchConstraints must cover nodes UPDATE (a PATCH is an UPDATE at admission)");
        assertEquals("Fail", p.getSpec().getFailurePolicy());
        assertTrue(p.getSpec().getMatchConditions().stream().anyMatch(m -> m.getExpression()
                .contains("'system:serviceaccount:" + NS + ":npu-lifecycle-node-agent'")), "matched on the node agent's ServiceAccount");
        assertTrue(p.getSpec().getValidations().stream().anyMatch(v -> v.getExpression().contains("object.metadata.name == variables.nodeNames[0]"))
                && p.getSpec().getVariables().stream().anyMatch(v -> v.getExpression().contains("authentication.kubernetes.io/node-name")),
                "own node through the node-name claim");
        List<ValidatingAdmissionPolicyBinding> bindings = Manifests.ofType(ValidatingAdmissionPolicyBinding.class);
        assertTrue(bindings.stream().anyMatch(b -> p.getMetadata().getName().equals(b.getSpec().getPolicyName())
                && b.getSpec().getValidationActions().contains("Deny")), "the policy is bound with Deny");
    }

    // ---- /metrics: the port, its Service and the Prometheus discovery ----

    /**
     * Both pod templates: the container port named {@code metrics} is the port the runtime binds
     * ({@code NPU_LIFECYCLE_METRICS_PORT}, else runtime.properties, else 9464), the {@code prometheus.io/*}
     * annotations say the same port and path, and Jolokia stays on loopback.
     */
    @Test
    void metricsPortInBothPodTemplates() throws IOException {
        Deployment d = Manifests.ofType(Deployment.class).get(0);
        for (io.fabric8.kubernetes.api.model.PodTemplateSpec t : List.of(template().getSpec().getTemplate(),
                d.getSpec().getTemplate())) {
            Container c = t == d.getSpec().getTemplate() ? t.getSpec().getContainers().get(0) : nodeAgent(t.getSpec());
            String port = env(c, "NPU_LIFECYCLE_METRICS_PORT") != null ? env(c, "NPU_LIFECYCLE_METRICS_PORT")
                    : runtimeDefault("metrics.port") != null ? runtimeDefault("metrics.port") : "9464";
            io.fabric8.kubernetes.api.model.ContainerPort cp = c.getPorts().stream()
                    .filter(p -> "metrics".equals(p.getName())).findFirst()
                    .orElseThrow(() -> new AssertionError(c.getName() + ": no container port named metrics"));
            assertEquals(Integer.parseInt(port), cp.getContainerPort(), c.getName() + ": the port the runtime binds");
            assertEquals("TCP", cp.getProtocol());
            assertEquals(1, c.getPorts().size(), c.getName() + ": only /metrics is a pod port (Jolokia is loopback)");
            assertEquals(null, env(c, "NPU_LIFECYCLE_METRICS_HOST"), c.getName()
                    + ": the default host inside a pod is every address; loopback would hide /metrics from Prometheus");
            Map<String, String> ann = t.getMetadata().getAnnotations();
            assertEquals("true", ann.get("prometheus.io/scrape"), c.getName());
            assertEquals(port, ann.get("prometheus.io/port"), c.getName());
            assertEquals("/metrics", ann.get("prometheus.io/path"), c.getName());
            assertEquals("127.0.0.1", env(c, "NPU_LIFECYCLE_HTTP_HOST"), c.getName() + ": Jolokia on loopback");
        }
    }

    /** The control plane's metrics Service selects the Deployment's pods and targets the named port. */
    @Test
    void controlPlaneMetricsService() throws IOException {
        Deployment d = Manifests.ofType(Deployment.class).get(0);
        io.fabric8.kubernetes.api.model.Service svc = Manifests.ofType(io.fabric8.kubernetes.api.model.Service.class)
                .stream().filter(x -> x.getMetadata().getName().equals("npu-lifecycle-control-plane-metrics"))
                .findFirst().orElseThrow(() -> new AssertionError("no Service npu-lifecycle-control-plane-metrics"));
        assertEquals(NS, svc.getMetadata().getNamespace());
        assertEquals("ClusterIP", svc.getSpec().getType());
        Map<String, String> labels = d.getSpec().getTemplate().getMetadata().getLabels();
        svc.getSpec().getSelector().forEach((k, v) -> assertEquals(v, labels.get(k), "selector " + k));
        assertEquals(1, svc.getSpec().getPorts().size());
        assertEquals("metrics", svc.getSpec().getPorts().get(0).getTargetPort().getStrVal());
        assertEquals(9464, svc.getSpec().getPorts().get(0).getPort());
    }

    /**
     * The optional PodMonitors (Prometheus Operator; not a kind fabric8 knows, so parsed generically): one per pod
     * template, in npu-operator, selecting that template's labels, scraping the port named metrics at /metrics.
     */
    @Test
    void optionalPodMonitorsSelectBothPodTemplates() throws Exception {
        List<HasMetadata> monitors = Manifests.template(Map.of("metrics.podMonitor.enabled", "true"), Map.of()).objects()
                .stream().filter(o -> "PodMonitor".equals(o.getKind())).toList();
        Map<String, Map<String, String>> podLabels = Map.of(
                "npu-lifecycle-node-agent", template().getSpec().getTemplate().getMetadata().getLabels(),
                "npu-lifecycle-control-plane",
                Manifests.ofType(Deployment.class).get(0).getSpec().getTemplate().getMetadata().getLabels());
        assertEquals(podLabels.keySet(), monitors.stream().map(m -> m.getMetadata().getName())
                .collect(Collectors.toSet()));
        for (HasMetadata m : monitors) {
            GenericKubernetesResource g = (GenericKubernetesResource) m;
            assertEquals("monitoring.coreos.com/v1", g.getApiVersion());
            assertEquals("PodMonitor", g.getKind());
            assertEquals(NS, g.getMetadata().getNamespace());
            Map<String, String> match = g.get("spec", "selector", "matchLabels");
            Map<String, String> labels = podLabels.get(g.getMetadata().getName());
            if (match == null) {
                // the node agents: the driver DaemonSets' pods or the node-agent DaemonSet's (driver.enabled=false)
                List<Map<String, Object>> exprs = g.get("spec", "selector", "matchExpressions");
                assertEquals(1, exprs.size(), g.getMetadata().getName());
                assertEquals("app", exprs.get(0).get("key"));
                assertEquals("In", exprs.get(0).get("operator"));
                assertEquals(List.of(labels.get("app"), "npu-lifecycle-node-agent"), exprs.get(0).get("values"));
            } else {
                match.forEach((k, v) -> assertEquals(v, labels.get(k), g.getMetadata().getName() + " selector " + k));
            }
            List<Map<String, Object>> endpoints = g.get("spec", "podMetricsEndpoints");
            assertEquals(1, endpoints.size());
            assertEquals("metrics", endpoints.get(0).get("port"));
            assertEquals("/metrics", endpoints.get(0).get("path"));
        }
    }

    // ---- the driver DaemonSet template (node agent) ----

    /** @return the node agent's container of the driver DaemonSet template ({@code node-agent}), else the only one */
    static Container agent(PodSpec pod) {
        return pod.getContainers().stream().filter(k -> "node-agent".equals(k.getName())).findFirst()
                .orElse(pod.getContainers().get(0));
    }

    static DaemonSet template() throws IOException {
        List<HasMetadata> l = Manifests.load(Manifests.TEMPLATE);
        assertEquals(1, l.size());
        return (DaemonSet) l.get(0);
    }

    /** @return the container named node-agent of a node pod */
    static Container nodeAgent(PodSpec pod) {
        return pod.getContainers().stream().filter(c -> "node-agent".equals(c.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no container node-agent in " + pod.getContainers().stream().map(Container::getName).toList()));
    }

    /** The file the build extracted is the ConfigMap's key, as the control plane reads it. */
    @Test
    void theDriverTemplateIsTheConfigMapsKey() throws IOException {
        ConfigMap cm = Manifests.ofType(ConfigMap.class).stream()
                .filter(m -> "npu-lifecycle-driver-daemonset".equals(m.getMetadata().getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no ConfigMap npu-lifecycle-driver-daemonset with the defaults"));
        assertEquals(cm.getData().get("driver-daemonset.yaml").strip(), Files.readString(Manifests.TEMPLATE).strip());
    }

    static String env(Container c, String name) {
        return c.getEnv().stream().filter(e -> name.equals(e.getName())).map(EnvVar::getValue).findFirst().orElse(null);
    }

    static EnvVar envVar(Container c, String name) {
        return c.getEnv().stream().filter(e -> name.equals(e.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no env " + name + " in container " + c.getName()));
    }

    static String runtimeDefault(String key) throws IOException {
        java.util.Properties p = new java.util.Properties();
        try (var r = Files.newBufferedReader(Manifests.ROOT.resolve("config/etc/runtime.properties"))) {
            p.load(r);
        }
        return p.getProperty(key);
    }

    /** Probes: exec curl against 127.0.0.1 at the port the runtime binds (env, else runtime.properties). */
    static void checkProbes(Container c) throws IOException {
        String host = env(c, "NPU_LIFECYCLE_HTTP_HOST") != null ? env(c, "NPU_LIFECYCLE_HTTP_HOST") : runtimeDefault("http.host");
        String port = env(c, "NPU_LIFECYCLE_HTTP_PORT") != null ? env(c, "NPU_LIFECYCLE_HTTP_PORT") : runtimeDefault("http.port");
        assertEquals("127.0.0.1", host, "HTTP (Jolokia) on the pod's loopback only");
        String live = "http://" + host + ":" + port + "/health/live";
        String ready = "http://" + host + ":" + port + "/health/ready";
        for (Probe p : List.of(c.getLivenessProbe(), c.getStartupProbe())) {
            assertNotNull(p, c.getName() + ": liveness and startup probes");
            assertTrue(p.getExec().getCommand().contains(live), c.getName() + ": " + p.getExec().getCommand() + " should probe " + live);
        }
        assertNotNull(c.getReadinessProbe(), c.getName() + ": readiness probe");
        assertTrue(c.getReadinessProbe().getExec().getCommand().contains(ready), c.getName() + ": readiness on " + ready);
        assertEquals("curl", c.getLivenessProbe().getExec().getCommand().get(0));
    }

    static void checkJolokiaSecret(Container c) {
        for (String n : List.of("NPU_LIFECYCLE_JOLOKIA_USER", "NPU_LIFECYCLE_JOLOKIA_PASSWORD")) {
            EnvVar v = envVar(c, n);
            assertTrue(v.getValue() == null && v.getValueFrom() != null && v.getValueFrom().getSecretKeyRef() != null,
                    n + " must come from a secretKeyRef, never a literal");
            assertEquals("npu-lifecycle-jolokia", v.getValueFrom().getSecretKeyRef().getName());
        }
    }

    @Test
    void driverDaemonSetTemplate() throws IOException {
        DaemonSet ds = template();
        assertEquals(NS, ds.getMetadata().getNamespace());
        assertEquals("npu-driver-daemonset", ds.getSpec().getTemplate().getMetadata().getLabels().get("app"));
        assertEquals("OnDelete", ds.getSpec().getUpdateStrategy().getType());
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertEquals("npu-lifecycle-node-agent", pod.getServiceAccountName());
        assertEquals(Boolean.TRUE, pod.getHostPID(), "hostPID");
        assertFalse(Boolean.TRUE.equals(pod.getHostNetwork()), "no host network: Jolokia stays on the pod's loopback");
        assertEquals("system-node-critical", pod.getPriorityClassName());
        Container driver = pod.getContainers().get(0);
        assertTrue(driver.getImage().matches("[^ ]+/mlops/ascend-driver:[0-9.]+-[a-z0-9]+-.+"), "containers[0] is the driver image (DESIGN.md): " + driver.getImage());
        assertFalse(Boolean.TRUE.equals(driver.getSecurityContext().getPrivileged()), "the vendor's driver container is not privileged");
        assertNotNull(driver.getCommand(), "the driver image's own entrypoint never runs");
        Container c = nodeAgent(pod);
        assertEquals(1, pod.getContainers().indexOf(c), "containers[1] is the node agent");
        assertTrue(c.getImage().matches("[^ ]+/npu-lifecycle/node-agent:.+"), "the node-agent image: " + c.getImage());
        for (Container x : List.of(driver, c)) {
            assertEquals(driver.getImage().replaceAll(".*:([0-9.]+)-.*", "$1"), env(x, "DRIVER_VERSION"), x.getName() + ": DRIVER_VERSION = the image tag's version");
        }
        checkNodeAgent(pod, c);
    }

    /** The node-agent DaemonSet (driver.enabled=false) has every property of the node agent beside a driver. */
    @Test
    void nodeAgentDaemonSetOfHostDrivers() throws Exception {
        List<HasMetadata> objects = Manifests.template(Map.of("driver.enabled", "false"), Map.of()).objects();
        DaemonSet ds = objects.stream().filter(DaemonSet.class::isInstance).map(DaemonSet.class::cast).findFirst()
                .orElseThrow(() -> new AssertionError("driver.enabled=false renders no DaemonSet"));
        assertEquals("npu-lifecycle-node-agent", ds.getMetadata().getName());
        assertEquals("npu-lifecycle-node-agent", ds.getSpec().getTemplate().getMetadata().getLabels().get("app"));
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertEquals(1, pod.getContainers().size(), "the node-agent image alone");
        assertEquals("openfuyao.com/npu.present", pod.getAffinity().getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms().get(0).getMatchExpressions().get(0).getKey(),
                "on the NPU nodes");
        checkNodeAgent(pod, nodeAgent(pod));
        ConfigMap cm = objects.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
                .filter(m -> "npu-lifecycle-node-config".equals(m.getMetadata().getName())).findFirst().orElseThrow();
        assertTrue(cm.getData().get("io.npulifecycle.driver.cfg").contains("mode=host"), "the driver bundle never stages nor loads");
    }

    /** The node agent's pod and container: privileges, host paths, JVM options, probes, credentials, tolerations. */
    static void checkNodeAgent(PodSpec pod, Container c) throws IOException {
        assertEquals("npu-lifecycle-node-agent", pod.getServiceAccountName());
        assertEquals(Boolean.TRUE, pod.getHostPID(), "hostPID");
        assertFalse(Boolean.TRUE.equals(pod.getHostNetwork()), "no host network: Jolokia stays on the pod's loopback");
        assertEquals("system-node-critical", pod.getPriorityClassName());
        assertEquals(Boolean.TRUE, c.getSecurityContext().getPrivileged(), "privileged");
        // the small-footprint JVM options (issue #8): the same as the launcher script's default for the node role
        String script = Files.readString(Manifests.ROOT.resolve("distribution/src/main/dist/bin/npu-lifecycle"));
        java.util.regex.Matcher opts = java.util.regex.Pattern.compile("\\n\\s*node\\) default_opts=\"([^\"]*)\"")
                .matcher(script);
        assertTrue(opts.find(), "bin/npu-lifecycle has a default_opts line for the node role");
        assertEquals(opts.group(1).replaceAll("\\\\\\n", "").replaceAll("\\s+", " ").trim(),
                env(c, "NPU_LIFECYCLE_JAVA_OPTS"), "the DaemonSet's JVM options = bin/npu-lifecycle's node defaults");
        // no Attach API: an attach-started local JMX agent would listen on all interfaces (docs/security.md)
        assertTrue(env(c, "NPU_LIFECYCLE_JAVA_OPTS").contains("-XX:+DisableAttachMechanism"), "attach disabled");
        // the command line of the node runtime
        assertEquals("/opt/npu-lifecycle/bin/npu-lifecycle", c.getCommand().get(0));
        LaunchOptions o = parse(c.getCommand().subList(1, c.getCommand().size()));
        assertEquals(LaunchOptions.Role.NODE, o.role());
        // host paths
        Map<String, String> hostPaths = new HashMap<>();
        for (Volume v : pod.getVolumes()) {
            if (v.getHostPath() != null) {
                hostPaths.put(v.getName(), v.getHostPath().getPath());
            }
        }
        assertEquals(Set.of("/run/npu-operator", "/var/lib/npu-operator", "/var/lib/Ascend", "/dev", "/proc"),
                Set.copyOf(hostPaths.values()), "exactly the five host paths of issue #7");
        Map<String, String> mountOfHostPath = new HashMap<>();
        for (VolumeMount m : c.getVolumeMounts()) {
            if (hostPaths.containsKey(m.getName())) {
                mountOfHostPath.put(hostPaths.get(m.getName()), m.getMountPath());
            }
        }
        assertEquals("/run/npu-operator", mountOfHostPath.get("/run/npu-operator"), "markers folder (io.npulifecycle.markers folder)");
        assertEquals("/var/lib/npu-operator", mountOfHostPath.get("/var/lib/npu-operator"), "rebooter and driver stateDir");
        assertEquals("/var/lib/Ascend", mountOfHostPath.get("/var/lib/Ascend"), "npu-smi and the driver libraries (DESIGN.md)");
        assertEquals("/dev", mountOfHostPath.get("/dev"));
        assertEquals("/host/proc", mountOfHostPath.get("/proc"));
        assertTrue(c.getVolumeMounts().stream().filter(m -> "/host/proc".equals(m.getMountPath())).allMatch(m -> Boolean.TRUE.equals(m.getReadOnly())));
        // probes, credentials, node name
        checkProbes(c);
        checkJolokiaSecret(c);
        EnvVar nodeName = envVar(c, "NODE_NAME");
        assertEquals("spec.nodeName", nodeName.getValueFrom().getFieldRef().getFieldPath(), "node name from the downward API");
        assertTrue(source("bundles/kube", "NodeSyncComponent").contains("System.getenv(\"NODE_NAME\")"), "the kube bundle reads NODE_NAME");
        assertTrue(source("bundles/driver", "DriverComponent").contains("System.getenv(\"DRIVER_VERSION\")"), "the driver bundle reads DRIVER_VERSION");
        // tolerations
        Set<String> tolerated = pod.getTolerations().stream().map(t -> t.getKey() + ":" + t.getOperator()).collect(Collectors.toSet());
        for (String k : List.of("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/unschedulable",
                "huawei.com/Ascend910", "huawei.com/Ascend310P", "npu.openfuyao.com/npu-unhealthy")) {
            assertTrue(tolerated.contains(k + ":Exists"), "tolerates " + k);
        }
        assertTrue(pod.getTolerations().stream().allMatch(t -> t.getKey() != null), "no blanket toleration");
        assertNotNull(c.getResources().getLimits().get("memory"), "memory limit");
        assertNotNull(c.getResources().getRequests().get("memory"), "memory request");
        // the configuration files mounted into etc/ exist in the ConfigMap and set keys the components declare
        ConfigMap cm = Manifests.ofType(ConfigMap.class).stream()
                .filter(m -> "npu-lifecycle-node-config".equals(m.getMetadata().getName())).findFirst().orElseThrow();
        assertEquals(cm.getData().keySet(), c.getVolumeMounts().stream().filter(m -> m.getSubPath() != null)
                .map(VolumeMount::getSubPath).collect(Collectors.toSet()), "every node configuration file is mounted");
        for (VolumeMount m : c.getVolumeMounts()) {
            if (m.getSubPath() != null) {
                assertTrue(cm.getData().containsKey(m.getSubPath()), "ConfigMap key " + m.getSubPath());
                assertEquals("/var/lib/npu-lifecycle/etc/" + m.getSubPath(), m.getMountPath(), "into <home>/etc/");
            }
        }
        assertTrue(cm.getData().get("io.npulifecycle.markers.cfg").contains("bootIdPath=/host/proc/"));
        assertTrue(cm.getData().get("io.npulifecycle.driver.cfg").contains("procModules=/host/proc/modules"));
        assertTrue(source("bundles/markers", "MarkerStoreComponent").contains("String bootIdPath()"));
        assertTrue(source("bundles/driver", "DriverComponent").contains("String procModules()"));
        assertTrue(source("bundles/rebooter", "ExecutorComponent").contains("@org.osgi.service.metatype.annotations.Option(value = \"command\")"));
    }

    static String source(String module, String className) throws IOException {
        try (Stream<Path> s = Files.walk(Manifests.ROOT.resolve(module).resolve("src/main/java"))) {
            Path p = s.filter(f -> f.getFileName().toString().equals(className + ".java")).findFirst()
                    .orElseThrow(() -> new AssertionError("no " + className + " in " + module));
            return Files.readString(p);
        }
    }

    static LaunchOptions parse(List<String> args) {
        try {
            return LaunchOptions.parse(args.toArray(String[]::new), Map.of());
        } catch (Exception e) {
            throw new AssertionError("not a valid npu-lifecycle command line: " + args + ": " + e.getMessage(), e);
        }
    }

    // ---- the control plane ----

    /** The metatype default of a String attribute: a literal, or a constant of the contract class NpuOperatorCtlType. */
    static String componentDefault(String method) throws IOException {
        Matcher m = Pattern.compile("String " + method + "\\(\\) default (?:\"([^\"]*)\"|NpuOperatorCtlType\\.(\\w+));")
                .matcher(source("bundles/upgrade", "UpgradeOrchestratorComponent"));
        assertTrue(m.find(), "default of " + method);
        if (m.group(1) != null) {
            return m.group(1);
        }
        try {
            return (String) io.npulifecycle.api.upgrade.NpuOperatorCtlType.class.getField(m.group(2)).get(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("NpuOperatorCtlType." + m.group(2) + " is not a String constant", e);
        }
    }

    @Test
    void controlPlaneDeployment() throws IOException {
        Deployment d = Manifests.ofType(Deployment.class).get(0);
        assertEquals(NS, d.getMetadata().getNamespace());
        assertEquals(2, d.getSpec().getReplicas(), "two replicas, one leader");
        PodSpec pod = d.getSpec().getTemplate().getSpec();
        assertEquals("npu-lifecycle-control-plane", pod.getServiceAccountName());
        assertNotNull(pod.getAffinity().getPodAntiAffinity(), "anti-affinity");
        assertEquals(Boolean.TRUE, pod.getSecurityContext().getRunAsNonRoot());
        assertTrue(pod.getSecurityContext().getRunAsUser() > 0);
        RestrictedPodSecurity.check("control plane", pod);
        Container c = pod.getContainers().get(0);
        // its configuration: the ConfigMap's .cfg files mounted into <home>/etc/
        ConfigMap cfg = Manifests.ofType(ConfigMap.class).stream()
                .filter(m -> "npu-lifecycle-control-plane-config".equals(m.getMetadata().getName())).findFirst().orElseThrow();
        for (String key : cfg.getData().keySet()) {
            assertTrue(c.getVolumeMounts().stream().anyMatch(m -> key.equals(m.getSubPath())
                    && ("/var/lib/npu-lifecycle/etc/" + key).equals(m.getMountPath())), "mounted: " + key);
        }
        String upgrade = cfg.getData().get("io.npulifecycle.upgrade.cfg");
        for (String key : List.of("namespace=" + NS, "leaseName=" + componentDefault("leaseName"), "driverManagement=managed",
                "driverDaemonSetConfigMap=npu-lifecycle-driver-daemonset", "podSecurityLabels=enforce=privileged,warn=privileged,audit=privileged")) {
            assertTrue(upgrade.lines().anyMatch(key::equals), "io.npulifecycle.upgrade.cfg: " + key + " in " + upgrade);
        }
        assertEquals(Boolean.TRUE, c.getSecurityContext().getReadOnlyRootFilesystem());
        assertEquals(Boolean.FALSE, c.getSecurityContext().getAllowPrivilegeEscalation());
        assertEquals(List.of("ALL"), c.getSecurityContext().getCapabilities().getDrop());
        assertFalse(Boolean.TRUE.equals(c.getSecurityContext().getPrivileged()));
        assertEquals(LaunchOptions.Role.CONTROL_PLANE, parse(c.getArgs()).role());
        checkProbes(c);
        checkJolokiaSecret(c);
        assertEquals("metadata.name", envVar(c, "POD_NAME").getValueFrom().getFieldRef().getFieldPath(), "Lease identity");
        // the Lease: the configured name in the configured namespace, and the RBAC for exactly that
        String leaseNs = componentDefault("namespace");
        String lease = componentDefault("leaseName");
        assertEquals(NS, leaseNs);
        String role = "Role/" + leaseNs + "/npu-lifecycle-control-plane";
        Set<Permission> perms = manifestPerms();
        for (String verb : List.of("get", "patch")) {
            assertTrue(perms.contains(new Permission(role, "coordination.k8s.io", "leases", verb, Set.of(lease))),
                    role + " must allow " + verb + " on lease " + lease);
        }
        assertTrue(perms.contains(new Permission(role, "coordination.k8s.io", "leases", "create", Set.of())));
        assertTrue(perms.stream().filter(p -> p.resource().equals("leases")).allMatch(p -> p.role().equals(role)),
                "no other Lease permission");
        assertTrue(Manifests.ofType(RoleBinding.class).stream().anyMatch(b -> leaseNs.equals(b.getMetadata().getNamespace())
                && "npu-lifecycle-control-plane".equals(b.getRoleRef().getName())
                && b.getSubjects().stream().anyMatch(s -> pod.getServiceAccountName().equals(s.getName()))));
    }

    // ---- the Containerfiles ----

    static Set<String> tarEntries(Path tgz) throws IOException {
        Set<String> names = new TreeSet<>();
        try (InputStream in = new GZIPInputStream(Files.newInputStream(tgz))) {
            byte[] header = new byte[512];
            while (in.readNBytes(header, 0, 512) == 512) {
                String name = new String(header, 0, 100, java.nio.charset.StandardCharsets.US_ASCII).replace("\0", "").trim();
                String prefix = new String(header, 345, 155, java.nio.charset.StandardCharsets.US_ASCII).replace("\0", "").trim();
                if (name.isEmpty()) {
                    break;
                }
                String sizeText = new String(header, 124, 12, java.nio.charset.StandardCharsets.US_ASCII).replace("\0", "").trim();
                long size = sizeText.isEmpty() ? 0 : Long.parseLong(sizeText, 8);
                names.add((prefix.isEmpty() ? "" : prefix + "/") + name.replaceAll("/+$", "").replaceAll("//+", "/"));
                in.skipNBytes((size + 511) / 512 * 512);
            }
        }
        return names;
    }

    @Test
    void containerfilesMatchTheDistribution() throws IOException {
        Path target = Manifests.ROOT.resolve("distribution/target");
        Path tgz;
        try (Stream<Path> s = Files.list(target)) {
            tgz = s.filter(p -> p.getFileName().toString().matches("npu-lifecycle-.+\\.tar\\.gz")).findFirst()
                    .orElseThrow(() -> new AssertionError("no npu-lifecycle-*.tar.gz in " + target + ": build the distribution first"));
        } catch (java.nio.file.NoSuchFileException e) {
            throw new AssertionError(target + " missing: build the distribution first (mvn -pl manifests -am verify)");
        }
        String version = tgz.getFileName().toString().replaceAll("^npu-lifecycle-(.+)\\.tar\\.gz$", "$1");
        Set<String> entries = tarEntries(tgz);
        assertTrue(entries.contains("npu-lifecycle/bin/npu-lifecycle"), "tarball layout npu-lifecycle/bin/npu-lifecycle: " + entries.stream().limit(5).toList());
        Map<String, LaunchOptions.Role> images = Map.of("node-agent", LaunchOptions.Role.NODE, "control-plane", LaunchOptions.Role.CONTROL_PLANE);
        for (var e : images.entrySet()) {
            Path cf = Manifests.ROOT.resolve("config/images/" + e.getKey() + "/Containerfile");
            String text = Files.readString(cf);
            assertTrue(text.contains("FROM docker.io/library/eclipse-temurin:17-jre"), cf + ": Temurin 17 JRE base");
            Matcher add = Pattern.compile("(?m)^ADD (npu-lifecycle-\\$\\{VERSION}\\.tar\\.gz) /opt/$").matcher(text);
            assertTrue(add.find(), cf + ": ADD npu-lifecycle-${VERSION}.tar.gz /opt/");
            assertEquals(tgz.getFileName().toString(), add.group(1).replace("${VERSION}", version), "the build context's tarball");
            Matcher paths = Pattern.compile("/opt/(npu-lifecycle(/[A-Za-z0-9._-]+)*)").matcher(text);
            int n = 0;
            while (paths.find()) {
                n++;
                String p = paths.group(1);
                assertTrue(entries.contains(p) || entries.stream().anyMatch(x -> x.startsWith(p + "/")), cf + " uses /opt/" + p + ", not in " + tgz);
            }
            assertTrue(n >= 3, cf + ": paths checked");
            Matcher entry = Pattern.compile("(?m)^ENTRYPOINT \\[\"([^\"]+)\"]$").matcher(text);
            assertTrue(entry.find(), cf + ": exec-form ENTRYPOINT");
            assertEquals("/opt/npu-lifecycle/bin/npu-lifecycle", entry.group(1));
            Matcher cmd = Pattern.compile("(?m)^CMD \\[(.+)]$").matcher(text);
            assertTrue(cmd.find(), cf + ": CMD");
            List<String> args = cells(cmd.group(1).replace('"', '`'));
            LaunchOptions o = parse(args);
            assertEquals(e.getValue(), o.role(), cf.toString());
            assertTrue(args.contains("--no-shell"), cf + ": --no-shell");
        }
        String cp = Files.readString(Manifests.ROOT.resolve("config/images/control-plane/Containerfile"));
        Deployment d = Manifests.ofType(Deployment.class).get(0);
        long uid = d.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsUser();
        assertTrue(cp.contains("USER " + uid + ":"), "the control-plane image runs as the Deployment's uid " + uid);
        Matcher cmd = Pattern.compile("(?m)^CMD \\[(.+)]$").matcher(cp);
        assertTrue(cmd.find());
        assertEquals(cells(cmd.group(1).replace('"', '`')), d.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs(),
                "the Deployment's args are the image's CMD");
        List<String> dsCommand = nodeAgent(template().getSpec().getTemplate().getSpec()).getCommand();
        String na = Files.readString(Manifests.ROOT.resolve("config/images/node-agent/Containerfile"));
        Matcher ncmd = Pattern.compile("(?m)^CMD \\[(.+)]$").matcher(na);
        assertTrue(ncmd.find());
        assertEquals(cells(ncmd.group(1).replace('"', '`')), dsCommand.subList(1, dsCommand.size()), "the DaemonSet's command is the node-agent image's");
    }

}
