package io.npulifecycle.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.Role;

/**
 * The chart over a matrix of values (issue #25): {@code helm lint}, then {@code helm template} with every switch both
 * ways, the output parsed into fabric8's typed models; and bad values refused by values.schema.json, naming the value.
 */
class HelmChartTest {

    static final String DIGEST = "sha256:" + "0123456789abcdef".repeat(4);

    static List<HasMetadata> render(Map<String, String> set) throws Exception {
        return Manifests.template(set, Map.of()).objects();
    }

    static Map<String, String> set(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static <T extends HasMetadata> List<T> of(List<HasMetadata> objects, Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    static <T extends HasMetadata> T named(List<HasMetadata> objects, Class<T> type, String name) {
        return of(objects, type).stream().filter(o -> name.equals(o.getMetadata().getName())).findFirst().orElse(null);
    }

    static boolean hasKind(List<HasMetadata> objects, String kind) {
        return objects.stream().anyMatch(o -> kind.equals(o.getKind()));
    }

    /** Every pod spec the chart renders: Deployment, DaemonSets, Jobs, and the driver DaemonSet template. */
    static List<PodSpec> podSpecs(List<HasMetadata> objects) {
        List<PodSpec> out = new ArrayList<>();
        of(objects, Deployment.class).forEach(d -> out.add(d.getSpec().getTemplate().getSpec()));
        of(objects, DaemonSet.class).forEach(d -> out.add(d.getSpec().getTemplate().getSpec()));
        of(objects, Job.class).forEach(j -> out.add(j.getSpec().getTemplate().getSpec()));
        ConfigMap t = named(objects, ConfigMap.class, "npu-lifecycle-driver-daemonset");
        if (t != null) {
            DaemonSet ds = (DaemonSet) Manifests.SER.unmarshal(t.getData().get("driver-daemonset.yaml"));
            out.add(ds.getSpec().getTemplate().getSpec());
        }
        return out;
    }

    @Test
    void helmLintPassesWithBothDriverModes() throws Exception {
        for (String enabled : List.of("true", "false")) {
            Manifests.Helm h = Manifests.runHelm(List.of("lint", Manifests.CHART.toString(), "--strict", "--set",
                    "driver.enabled=" + enabled));
            assertEquals(0, h.exit(), h.out() + h.err());
            assertTrue(h.out().contains("0 chart(s) failed"), h.out());
        }
    }

    @Test
    void theChartsAppVersionIsTheProjectVersion() throws Exception {
        String chart = Files.readString(Manifests.CHART.resolve("Chart.yaml"));
        String pom = Files.readString(Manifests.ROOT.resolve("pom.xml"));
        java.util.regex.Matcher v = java.util.regex.Pattern.compile("<artifactId>npu-lifecycle-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
        assertTrue(v.find());
        assertTrue(chart.contains("appVersion: \"" + v.group(1) + "\""), "appVersion " + v.group(1));
    }

    @Test
    void driverEnabledChoosesTheTemplateConfigMapOrTheNodeAgentDaemonSet() throws Exception {
        List<HasMetadata> managed = render(set("driver.enabled", "true"));
        assertNotNull(named(managed, ConfigMap.class, "npu-lifecycle-driver-daemonset"), "managed: the template ConfigMap");
        assertEquals(List.of(), of(managed, DaemonSet.class), "managed: no DaemonSet of the chart's own");
        assertTrue(named(managed, ConfigMap.class, "npu-lifecycle-control-plane-config").getData()
                .get("io.npulifecycle.upgrade.cfg").contains("driverManagement=managed\n"));
        assertTrue(named(managed, ConfigMap.class, "npu-lifecycle-node-config").getData()
                .get("io.npulifecycle.driver.cfg").contains("mode=managed\n"));
        List<HasMetadata> host = render(set("driver.enabled", "false"));
        assertEquals(null, named(host, ConfigMap.class, "npu-lifecycle-driver-daemonset"), "host: no template ConfigMap");
        DaemonSet agent = named(host, DaemonSet.class, "npu-lifecycle-node-agent");
        assertNotNull(agent, "host: the node-agent DaemonSet");
        assertEquals("npu-lifecycle-node-agent", agent.getSpec().getTemplate().getMetadata().getLabels().get("app"));
        assertTrue(agent.getSpec().getTemplate().getSpec().getContainers().get(0).getImage().contains("/npu-lifecycle/node-agent:"));
        assertTrue(named(host, ConfigMap.class, "npu-lifecycle-control-plane-config").getData()
                .get("io.npulifecycle.upgrade.cfg").contains("driverManagement=host\n"));
    }

    @Test
    void aDigestWinsOverTheTagAndTheTagDefaultsToTheAppVersion() throws Exception {
        List<HasMetadata> d = render(set());
        String cp = of(d, Deployment.class).get(0).getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
        assertEquals("registry.local/npu-lifecycle/control-plane:0.1.0-SNAPSHOT", cp);
        List<HasMetadata> dig = render(set("images.controlPlane.digest", DIGEST, "images.controlPlane.tag", "9.9.9",
                "images.nodeAgent.digest", DIGEST, "images.registry", "mirror.example:5000/ops", "driver.enabled", "false"));
        assertEquals("mirror.example:5000/ops/npu-lifecycle/control-plane@" + DIGEST,
                of(dig, Deployment.class).get(0).getSpec().getTemplate().getSpec().getContainers().get(0).getImage());
        assertEquals("mirror.example:5000/ops/npu-lifecycle/node-agent@" + DIGEST,
                of(dig, DaemonSet.class).get(0).getSpec().getTemplate().getSpec().getContainers().get(0).getImage());
        assertEquals("mirror.example:5000/ops/npu-lifecycle/control-plane@" + DIGEST,
                of(dig, Job.class).get(0).getSpec().getTemplate().getSpec().getContainers().get(0).getImage(), "the uninstall hook");
        List<HasMetadata> tag = render(set("images.controlPlane.tag", "9.9.9"));
        assertEquals("registry.local/npu-lifecycle/control-plane:9.9.9",
                of(tag, Deployment.class).get(0).getSpec().getTemplate().getSpec().getContainers().get(0).getImage());
    }

    @Test
    void imagePullSecretsOnEveryPodSpec() throws Exception {
        for (String enabled : List.of("true", "false")) {
            List<PodSpec> none = podSpecs(render(set("driver.enabled", enabled)));
            assertTrue(none.size() >= 3, "pod specs: " + none.size());
            none.forEach(p -> assertTrue(p.getImagePullSecrets() == null || p.getImagePullSecrets().isEmpty()));
            List<PodSpec> with = podSpecs(render(set("driver.enabled", enabled, "imagePullSecrets[0]", "regcred",
                    "imagePullSecrets[1]", "other")));
            assertEquals(none.size(), with.size());
            for (PodSpec p : with) {
                assertEquals(List.of("regcred", "other"), p.getImagePullSecrets().stream().map(LocalObjectReference::getName).toList(),
                        "driver.enabled=" + enabled + ": " + p.getContainers().stream().map(Container::getName).toList());
            }
        }
    }

    @Test
    void noNpuOperatorCtlByDefaultAndItsSpecWhenAsked() throws Exception {
        assertFalse(hasKind(render(set()), "NPUOperatorCtl"), "installing never starts a rollout");
        List<HasMetadata> cr = render(set("npuOperatorCtl.create", "true", "npuOperatorCtl.spec.driver.version", "26.0.0"));
        GenericKubernetesResource g = cr.stream().filter(o -> "NPUOperatorCtl".equals(o.getKind()))
                .map(GenericKubernetesResource.class::cast).findFirst().orElseThrow();
        assertEquals("npuoperatorctl-sample", g.getMetadata().getName());
        assertEquals(Manifests.NS, g.getMetadata().getNamespace());
        assertEquals("26.0.0", g.get("spec", "driver", "version"));
        assertEquals(Boolean.FALSE, g.get("spec", "driver", "upgradePolicy", "autoUpgrade"));
        // made once after the install and the operator's from then on: helm upgrade never rewrites it (a kubectl
        // patch of spec.driver.version would otherwise conflict or be reverted) and helm uninstall keeps it
        assertEquals("post-install", g.getMetadata().getAnnotations().get("helm.sh/hook"));
        assertEquals("keep", g.getMetadata().getAnnotations().get("helm.sh/resource-policy"));
    }

    @Test
    void monitoringSwitches() throws Exception {
        List<HasMetadata> off = render(set());
        assertFalse(hasKind(off, "PodMonitor"));
        assertFalse(hasKind(off, "PrometheusRule"));
        List<HasMetadata> pm = render(set("metrics.podMonitor.enabled", "true", "metrics.podMonitor.labels.release", "prom"));
        assertEquals(2, pm.stream().filter(o -> "PodMonitor".equals(o.getKind())).count());
        assertFalse(hasKind(pm, "PrometheusRule"));
        assertTrue(pm.stream().filter(o -> "PodMonitor".equals(o.getKind())).allMatch(o -> "prom".equals(o.getMetadata().getLabels().get("release"))));
        List<HasMetadata> pr = render(set("metrics.prometheusRule.enabled", "true"));
        GenericKubernetesResource rule = pr.stream().filter(o -> "PrometheusRule".equals(o.getKind()))
                .map(GenericKubernetesResource.class::cast).findFirst().orElseThrow();
        assertFalse(hasKind(pr, "PodMonitor"));
        List<Map<String, Object>> groups = rule.get("spec", "groups");
        assertFalse(groups.isEmpty());
        assertTrue(Manifests.SER.asJson(groups).contains("{{ $labels.node }}"), "alert templates pass through helm untouched");
        List<HasMetadata> port = render(set("metrics.port", "9500"));
        Container c = of(port, Deployment.class).get(0).getSpec().getTemplate().getSpec().getContainers().get(0);
        assertEquals(9500, c.getPorts().get(0).getContainerPort());
    }

    @Test
    void uninstallCleanupHook() throws Exception {
        Job job = of(render(set()), Job.class).stream().findFirst().orElseThrow(() -> new AssertionError("no uninstall Job by default"));
        assertEquals("npu-lifecycle-uninstall", job.getMetadata().getName());
        assertEquals("pre-delete", job.getMetadata().getAnnotations().get("helm.sh/hook"));
        assertEquals("before-hook-creation,hook-succeeded", job.getMetadata().getAnnotations().get("helm.sh/hook-delete-policy"));
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        assertEquals("npu-lifecycle-control-plane", pod.getServiceAccountName());
        Container c = pod.getContainers().get(0);
        assertEquals(List.of("uninstall", "--namespace", Manifests.NS), c.getArgs().subList(0, 3));
        RestrictedPodSecurity.check("uninstall Job", pod);
        assertEquals(List.of(), of(render(set("uninstall.cleanup", "false")), Job.class));
    }

    @Test
    void controlPlaneIsRestrictedCompliant() throws Exception {
        for (String enabled : List.of("true", "false")) {
            PodSpec pod = of(render(set("driver.enabled", enabled)), Deployment.class).get(0).getSpec().getTemplate().getSpec();
            RestrictedPodSecurity.check("control plane", pod);
        }
    }

    @Test
    void jolokiaSecretGeneratedOrExisting() throws Exception {
        List<HasMetadata> a = render(set());
        Secret s = named(a, Secret.class, "npu-lifecycle-jolokia");
        assertNotNull(s, "a generated Secret without jolokia.existingSecret");
        String pw = new String(java.util.Base64.getDecoder().decode(s.getData().get("password")));
        assertTrue(pw.length() >= 24, "a long random password");
        String pw2 = new String(java.util.Base64.getDecoder().decode(named(render(set()), Secret.class, "npu-lifecycle-jolokia").getData().get("password")));
        assertNotEquals(pw, pw2, "random at each install (kept across upgrade by lookup), never a default");
        List<HasMetadata> e = render(set("jolokia.existingSecret", "mine"));
        assertEquals(List.of(), of(e, Secret.class), "no Secret of the chart with jolokia.existingSecret");
        for (PodSpec p : podSpecs(e)) {
            for (Container c : p.getContainers()) {
                c.getEnv().stream().filter(v -> v.getName().startsWith("NPU_LIFECYCLE_JOLOKIA_"))
                        .forEach(v -> assertEquals("mine", v.getValueFrom().getSecretKeyRef().getName(), c.getName()));
            }
        }
    }

    @Test
    void podSecurityLabelsAreRenderedIntoTheControlPlaneConfiguration() throws Exception {
        String on = named(render(set()), ConfigMap.class, "npu-lifecycle-control-plane-config").getData().get("io.npulifecycle.upgrade.cfg");
        assertTrue(on.contains("podSecurityLabels=enforce=privileged,warn=privileged,audit=privileged\n"), on);
        String off = named(render(set("podSecurity.enabled", "false")), ConfigMap.class, "npu-lifecycle-control-plane-config")
                .getData().get("io.npulifecycle.upgrade.cfg");
        assertTrue(off.contains("podSecurityLabels=\n"), off);
        String base = named(render(set("podSecurity.labels.enforce", "baseline")), ConfigMap.class,
                "npu-lifecycle-control-plane-config").getData().get("io.npulifecycle.upgrade.cfg");
        assertTrue(base.contains("podSecurityLabels=enforce=baseline,"), base);
    }

    @Test
    void nodeConfigurationAndPreflightValues() throws Exception {
        List<HasMetadata> o = Manifests.template(set("node.healthWatch.intervalSeconds", "30", "node.healthWatch.timeoutSeconds", "10", "node.healthWatch.failureThreshold", "5",
                "node.healthWatch.probeMethod", "dcmi", "node.reboot.executor", "none", "preflight.mirror", "mirror.local:5000",
                "preflight.insecure", "true", "preflight.registryCABundle", "PEM", "preflight.pullSecret", "regcred"),
                Map.of("driver.loader.command", "[\"/opt/load\",\"{version}\"]")).objects();
        assertTrue(named(render(set()), ConfigMap.class, "npu-lifecycle-node-config").getData().get("io.npulifecycle.driver.cfg")
                .contains("loaderCommand=nsenter -t 1 -m -- /var/lib/npu-operator/driver-packages/{version}/load {version}\n"),
                "the default loader: the package's load script in the host's mount namespace");
        assertFalse(Manifests.template(Map.of(), Map.of("driver.loader.command", "[]")).objects().stream()
                .filter(x -> "npu-lifecycle-node-config".equals(x.getMetadata().getName())).map(ConfigMap.class::cast)
                .findFirst().orElseThrow().getData().get("io.npulifecycle.driver.cfg").contains("loaderCommand"), "no loader: none");
        Map<String, String> node = named(o, ConfigMap.class, "npu-lifecycle-node-config").getData();
        assertEquals("interval=30\ntimeout=10\nfailureThreshold=5\nmethod=dcmi\n", node.get("io.npulifecycle.probe.cfg"));
        Manifests.Helm slow = Manifests.template(set("node.healthWatch.intervalSeconds", "10",
                "node.healthWatch.timeoutSeconds", "10"), Map.of());
        assertTrue(slow.exit() != 0 && slow.err().contains(
                "node.healthWatch.timeoutSeconds (10) must be below node.healthWatch.intervalSeconds (10)"), slow.err());
        Manifests.Helm none = Manifests.template(set("node.healthWatch.timeoutSeconds", "null"), Map.of());
        assertTrue(none.exit() != 0 && none.err().contains("node.healthWatch.timeoutSeconds is required"), none.err());
        assertTrue(node.get("io.npulifecycle.rebooter.executor.cfg").startsWith("type=none\n"));
        assertTrue(node.get("io.npulifecycle.driver.cfg").contains("loaderCommand=/opt/load {version}\n"), node.toString());
        Map<String, String> cp = named(o, ConfigMap.class, "npu-lifecycle-control-plane-config").getData();
        String cfg = cp.get("io.npulifecycle.upgrade.cfg");
        assertTrue(cfg.contains("registryMirror=mirror.local:5000\n") && cfg.contains("registryInsecure=true\n")
                && cfg.contains("registryCaBundle=/var/lib/npu-lifecycle/etc/registry-ca.pem\n") && cfg.contains("pullSecret=regcred\n"), cfg);
        assertEquals("PEM", cp.get("registry-ca.pem").strip());
        Container c = of(o, Deployment.class).get(0).getSpec().getTemplate().getSpec().getContainers().get(0);
        assertTrue(c.getVolumeMounts().stream().anyMatch(m -> "registry-ca.pem".equals(m.getSubPath())), "the CA bundle is mounted");
        // the pull secret: get on exactly that Secret, nothing more
        Role role = named(o, Role.class, "npu-lifecycle-control-plane");
        assertTrue(role.getRules().stream().anyMatch(r -> r.getResources().equals(List.of("secrets"))
                && r.getResourceNames().equals(List.of("regcred")) && r.getVerbs().equals(List.of("get"))));
        assertFalse(named(render(set()), Role.class, "npu-lifecycle-control-plane").getRules().stream()
                .anyMatch(r -> r.getResources().contains("secrets")), "no Secret access without a pull secret");
    }

    @Test
    void schedulingValuesReachTheirWorkloads() throws Exception {
        List<HasMetadata> o = render(set("driver.enabled", "false", "nodeAgent.nodeSelector.pool", "npu",
                "nodeAgent.priorityClassName", "my-prio", "controlPlane.replicas", "3",
                "controlPlane.tolerations[0].key", "infra", "controlPlane.tolerations[0].operator", "Exists",
                "nodeAgent.resources.limits.memory", "300Mi"));
        PodSpec agent = of(o, DaemonSet.class).get(0).getSpec().getTemplate().getSpec();
        assertEquals(Map.of("pool", "npu"), agent.getNodeSelector());
        assertEquals("my-prio", agent.getPriorityClassName());
        assertEquals("300Mi", agent.getContainers().get(0).getResources().getLimits().get("memory").toString());
        Deployment d = of(o, Deployment.class).get(0);
        assertEquals(3, d.getSpec().getReplicas());
        assertEquals("infra", d.getSpec().getTemplate().getSpec().getTolerations().get(0).getKey());
        // the default tolerations of the node agent are today's
        Set<String> tolerated = of(render(set("driver.enabled", "false")), DaemonSet.class).get(0).getSpec().getTemplate().getSpec()
                .getTolerations().stream().map(t -> t.getKey()).collect(Collectors.toSet());
        assertTrue(tolerated.containsAll(List.of("node.kubernetes.io/not-ready", "npu.openfuyao.com/npu-unhealthy", "huawei.com/Ascend910")));
    }

    @Test
    void commonLabelsOnEveryObject() throws Exception {
        for (HasMetadata o : render(set("driver.enabled", "false", "metrics.podMonitor.enabled", "true", "npuOperatorCtl.create", "true"))) {
            if (o instanceof io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition) {
                continue; // crds/ is static: helm never templates nor deletes it
            }
            Map<String, String> l = o.getMetadata().getLabels();
            String what = o.getKind() + " " + o.getMetadata().getName();
            assertNotNull(l, what);
            for (String k : List.of("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                    "app.kubernetes.io/managed-by", "app.kubernetes.io/part-of", "helm.sh/chart")) {
                assertTrue(l.containsKey(k), what + " lacks label " + k);
            }
            assertEquals("Helm", l.get("app.kubernetes.io/managed-by"), what);
        }
    }

    @Test
    void clusterRolesAreTheSameInEveryMode() throws Exception {
        // RBAC does not depend on the driver mode: docs/security.md's table holds for both
        assertEquals(rules(render(set("driver.enabled", "true"))), rules(render(set("driver.enabled", "false"))));
    }

    static String rules(List<HasMetadata> o) {
        return Manifests.SER.asJson(of(o, ClusterRole.class).stream().map(ClusterRole::getRules).toList())
                + Manifests.SER.asJson(of(o, Role.class).stream().map(Role::getRules).toList());
    }

    // ---- the schema ----

    static void assertRefused(Map<String, String> set, String... inMessage) throws Exception {
        Manifests.Helm h = Manifests.template(set, Map.of());
        assertNotEquals(0, h.exit(), "accepted: " + set);
        for (String s : inMessage) {
            assertTrue(h.err().contains(s), "the refusal of " + set + " names " + s + ": " + h.err());
        }
    }

    @Test
    void badValuesAreRefusedByTheSchemaNamingTheValue() throws Exception {
        assertRefused(set("controlPlane.replicas", "two"), "/controlPlane/replicas", "want integer");
        assertRefused(set("driver.enabled", "yes"), "/driver/enabled", "want boolean");
        assertRefused(set("bogus", "1"), "bogus");
        assertRefused(set("controlPlane.bogus", "1"), "/controlPlane", "bogus");
        assertRefused(set("images.nodeAgent.digest", "sha256:abc"), "/images/nodeAgent/digest");
        assertRefused(set("node.healthWatch.probeMethod", "ping"), "/node/healthWatch/probeMethod");
        assertRefused(set("node.reboot.executor", "kexec"), "/node/reboot/executor");
        assertRefused(set("podSecurity.labels.enforce", "open"), "/podSecurity/labels/enforce");
        assertRefused(set("node.healthWatch.failureThreshold", "0"), "/node/healthWatch/failureThreshold");
        Manifests.Helm space = Manifests.template(Map.of(), Map.of("driver.loader.command", "[\"/opt/my load\"]"));
        assertNotEquals(0, space.exit(), "a loader argument with a space (the .cfg line is split on whitespace)");
        assertTrue(space.err().contains("/driver/loader/command/0"), space.err());
        // image references: a scheme, a trailing slash, a space, upper case in a repository, a bad Secret name
        assertRefused(set("images.registry", "https://registry.example.com"), "/images/registry");
        assertRefused(set("images.registry", "registry.example.com/"), "/images/registry");
        assertRefused(set("images.nodeAgent.registry", "bad registry"), "/images/nodeAgent/registry");
        assertRefused(set("images.controlPlane.repository", "Npu/Control"), "/images/controlPlane/repository");
        assertRefused(set("driver.registry", ""), "/driver/registry");
        assertRefused(set("imagePullSecrets[0]", "Bad_Name!"), "/imagePullSecrets/0");
        // the CR's version is checked before anything is applied (the CRD would refuse it only on the server)
        assertRefused(set("npuOperatorCtl.create", "true", "npuOperatorCtl.spec.driver.version", "banana"),
                "/npuOperatorCtl/spec/driver/version");
        // driverManagement follows driver.enabled: no value can contradict it
        assertRefused(set("controlPlane.config.driverManagement", "host"), "/controlPlane/config", "driverManagement");
        // two replicas without leader election would be two leaders: the schema refuses it (helm lint too), and the
        // template once more when the schema is skipped (helm --skip-schema-validation)
        assertRefused(set("controlPlane.config.leaderElection", "false"), "/controlPlane/replicas", "want 1");
        Manifests.Helm lint = Manifests.runHelm(List.of("lint", Manifests.CHART.toString(), "--set",
                "controlPlane.config.leaderElection=false"));
        assertNotEquals(0, lint.exit(), "helm lint refuses it too: " + lint.out());
        Manifests.Helm skipped = Manifests.runHelm(List.of("template", "npu-lifecycle", Manifests.CHART.toString(),
                "--skip-schema-validation", "--set", "controlPlane.config.leaderElection=false"));
        assertNotEquals(0, skipped.exit(), skipped.out());
        assertTrue(skipped.err().contains("leaderElection=false needs controlPlane.replicas=1"), skipped.err());
        // the HTTP server and the metrics server of a runtime cannot share a port (the runtime would exit 2, a crash loop)
        assertRefused(set("jolokia.port", "9464"), "jolokia.port and metrics.port are both 9464");
        Manifests.Helm one = Manifests.template(set("controlPlane.config.leaderElection", "false", "controlPlane.replicas", "1"), Map.of());
        assertEquals(0, one.exit(), one.err());
        Manifests.Helm ok = Manifests.template(set("images.registry", "127.0.0.1:5000/mirror", "imagePullSecrets[0]", "regcred"), Map.of());
        assertEquals(0, ok.exit(), "a registry with a port and a path prefix: " + ok.err());
        Manifests.Helm json = Manifests.template(Map.of(), Map.of("imagePullSecrets", "\"regcred\""));
        assertNotEquals(0, json.exit(), "a string for a list");
        assertTrue(json.err().contains("/imagePullSecrets"), json.err());
    }

    // ---- the simulator (issue #26: the chart's pods on a real kubelet, the NPUs emulated, the host never rebooted) ----

    /** The emulated host's folder inside the node-agent containers (volume simulator-state). */
    static final String SIM = "/var/lib/npu-lifecycle-simulator";
    /** The values of the real-node test. */
    static final Path REAL_NODE_VALUES = Manifests.ROOT.resolve("charts/simulator-values.yaml");

    /** The node-agent container of the node pods: the node-agent DaemonSet's (host) or the driver template's (managed). */
    static PodSpec nodePod(List<HasMetadata> objects) {
        DaemonSet agent = named(objects, DaemonSet.class, "npu-lifecycle-node-agent");
        if (agent != null) {
            return agent.getSpec().getTemplate().getSpec();
        }
        ConfigMap t = named(objects, ConfigMap.class, "npu-lifecycle-driver-daemonset");
        assertNotNull(t, "neither the node-agent DaemonSet nor the driver DaemonSet template");
        return ((DaemonSet) Manifests.SER.unmarshal(t.getData().get("driver-daemonset.yaml"))).getSpec().getTemplate().getSpec();
    }

    static Container container(PodSpec pod, String name) {
        return pod.getContainers().stream().filter(c -> name.equals(c.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no container " + name));
    }

    static Volume volume(PodSpec pod, String name) {
        return pod.getVolumes().stream().filter(v -> name.equals(v.getName())).findFirst().orElse(null);
    }

    static VolumeMount mount(Container c, String name) {
        return c.getVolumeMounts().stream().filter(m -> name.equals(m.getName())).findFirst().orElse(null);
    }

    static Map<String, String> nodeConfig(List<HasMetadata> objects) {
        return named(objects, ConfigMap.class, "npu-lifecycle-node-config").getData();
    }

    /** Every key of the node configuration is mounted into the node agent's etc/, and nothing else from it. */
    static void assertEveryNodeConfigFileMounted(List<HasMetadata> objects) {
        Container agent = container(nodePod(objects), "node-agent");
        Set<String> mounted = agent.getVolumeMounts().stream().filter(m -> "node-config".equals(m.getName()))
                .peek(m -> assertEquals("/var/lib/npu-lifecycle/etc/" + m.getSubPath(), m.getMountPath()))
                .map(VolumeMount::getSubPath).collect(Collectors.toSet());
        assertEquals(nodeConfig(objects).keySet(), mounted, "the node configuration files mounted into etc/");
    }

    @Test
    void simulatorValuesPointTheNodeAgentAtTheEmulatedHostInBothDriverModes() throws Exception {
        for (String enabled : List.of("true", "false")) {
            String mode = "driver.enabled=" + enabled;
            // the default driver.loader.command stays set: the simulator must drop it all the same
            List<HasMetadata> o = render(set("driver.enabled", enabled, "simulator.enabled", "true",
                    "node.reboot.executor", "none", "simulator.chipType", "310p", "simulator.npus", "2",
                    "simulator.chipsPerNpu", "2", "simulator.driverVersion", "25.3.0",
                    "simulator.stateHostPath", "/work/sim-state"));
            Map<String, String> node = nodeConfig(o);
            assertEquals("stateDir=" + SIM + "\nmarkersFolder=/run/npu-operator\nbootIdFile=" + SIM + "/boot_id\n"
                    + "restartMode=exit\nchipType=310p\nnpus=2\nchipsPerNpu=2\ndriverVersion=25.3.0\n"
                    + "loadAtBoot=" + !Boolean.parseBoolean(enabled) + "\n", node.get("io.npulifecycle.simulator.cfg"), mode);
            String probe = node.get("io.npulifecycle.probe.cfg");
            assertTrue(probe.contains("\nnpuSmiCommand=" + SIM + "/bin/npu-smi\n"), probe);
            assertTrue(probe.contains("\ndriverModulesFile=" + SIM + "/proc-modules\n"), probe);
            assertTrue(probe.contains("\ndcmiLibrary=" + SIM + "/lib/libdcmi.so\n"), probe);
            assertTrue(probe.contains("\nexpectedChips=0:0,0:1,1:0,1:1\n"), "npus x chipsPerNpu: " + probe);
            assertEquals("folder=/run/npu-operator/\nbootIdPath=" + SIM + "/boot_id\n", node.get("io.npulifecycle.markers.cfg"));
            String driver = node.get("io.npulifecycle.driver.cfg");
            assertTrue(driver.startsWith("procModules=" + SIM + "/proc-modules\n"), driver);
            assertFalse(driver.contains("loaderCommand"), "the simulator registers its own DriverLoader: " + driver);
            assertFalse(driver.contains("/host/proc"), driver);
            assertTrue(node.get("io.npulifecycle.rebooter.executor.cfg").startsWith("type=none\n"));
            assertEveryNodeConfigFileMounted(o);

            PodSpec pod = nodePod(o);
            Volume state = volume(pod, "simulator-state");
            assertNotNull(state, mode + ": the simulator-state volume");
            assertEquals("/work/sim-state", state.getHostPath().getPath());
            assertEquals("DirectoryOrCreate", state.getHostPath().getType());
            VolumeMount m = mount(container(pod, "node-agent"), "simulator-state");
            assertNotNull(m, mode + ": simulator-state mounted in the node-agent container");
            assertEquals(SIM, m.getMountPath());
            assertTrue(m.getReadOnly() == null || !m.getReadOnly(), "the simulator writes its state");
            if (Boolean.parseBoolean(enabled)) {
                assertEquals(null, mount(container(pod, "driver"), "simulator-state"), "not in the vendor's driver container");
            }
        }
    }

    @Test
    void defaultValuesRenderNoSimulator() throws Exception {
        for (String enabled : List.of("true", "false")) {
            List<HasMetadata> o = render(set("driver.enabled", enabled));
            Map<String, String> node = nodeConfig(o);
            assertFalse(node.containsKey("io.npulifecycle.simulator.cfg"), node.keySet().toString());
            assertFalse(node.get("io.npulifecycle.probe.cfg").contains(SIM), node.get("io.npulifecycle.probe.cfg"));
            assertEquals("folder=/run/npu-operator/\nbootIdPath=/host/proc/sys/kernel/random/boot_id\n",
                    node.get("io.npulifecycle.markers.cfg"));
            assertTrue(node.get("io.npulifecycle.driver.cfg").startsWith("procModules=/host/proc/modules\n"));
            assertEveryNodeConfigFileMounted(o);
            PodSpec pod = nodePod(o);
            assertEquals(null, volume(pod, "simulator-state"), "driver.enabled=" + enabled);
            for (Container c : pod.getContainers()) {
                assertEquals(null, mount(c, "simulator-state"), c.getName());
            }
            // today's host paths
            assertEquals(Map.of("run-npu-operator", "/run/npu-operator", "var-lib-npu-operator", "/var/lib/npu-operator",
                    "ascend", "/var/lib/Ascend", "dev", "/dev", "host-proc", "/proc"), hostPaths(pod));
        }
    }

    static Map<String, String> hostPaths(PodSpec pod) {
        return pod.getVolumes().stream().filter(v -> v.getHostPath() != null)
                .collect(Collectors.toMap(Volume::getName, v -> v.getHostPath().getPath()));
    }

    @Test
    void nodeHostPathsReachTheVolumesOfBothDaemonSets() throws Exception {
        for (String enabled : List.of("true", "false")) {
            PodSpec pod = nodePod(render(set("driver.enabled", enabled, "node.hostPaths.runNpuOperator", "/w/run",
                    "node.hostPaths.varLibNpuOperator", "/w/var-lib", "node.hostPaths.ascend", "/w/ascend",
                    "node.hostPaths.dev", "/w/dev", "node.hostPaths.proc", "/w/proc")));
            assertEquals(Map.of("run-npu-operator", "/w/run", "var-lib-npu-operator", "/w/var-lib", "ascend", "/w/ascend",
                    "dev", "/w/dev", "host-proc", "/w/proc"), hostPaths(pod), "driver.enabled=" + enabled);
            // the paths inside the containers do not move: the node configuration names them
            Container agent = container(pod, "node-agent");
            assertEquals("/run/npu-operator", mount(agent, "run-npu-operator").getMountPath());
            assertEquals("/var/lib/npu-operator", mount(agent, "var-lib-npu-operator").getMountPath());
            assertEquals("/host/proc", mount(agent, "host-proc").getMountPath());
        }
        assertRefused(set("node.hostPaths.varLibNpuOperator", "var/lib/npu-operator"), "/node/hostPaths/varLibNpuOperator");
        assertRefused(set("node.hostPaths.runNpuOperator", ""), "/node/hostPaths/runNpuOperator");
        assertRefused(set("node.hostPaths.other", "/x"), "/node/hostPaths", "other");
        assertRefused(set("simulator.stateHostPath", "sim-state"), "/simulator/stateHostPath");
    }

    @Test
    void theSimulatorClockReachesTheNodeAgentsAndTheControlPlaneAlike() throws Exception {
        List<HasMetadata> o = render(set("simulator.enabled", "true", "node.reboot.executor", "none",
                "simulator.clock.scale", "30", "simulator.clock.anchorEpochMillis", "1764944000000"));
        String clock = "scale=30\nanchorEpochMillis=1764944000000\n";
        assertEquals(clock, nodeConfig(o).get("io.npulifecycle.time.cfg"), "the node agents' clock");
        assertEveryNodeConfigFileMounted(o);
        ConfigMap cp = (ConfigMap) o.stream().filter(x -> "npu-lifecycle-control-plane-config".equals(
                x.getMetadata().getName())).findFirst().orElseThrow();
        assertEquals(clock, cp.getData().get("io.npulifecycle.time.cfg"), "the control plane's clock");
        Deployment d = (Deployment) o.stream().filter(x -> x instanceof Deployment).findFirst().orElseThrow();
        VolumeMount m = d.getSpec().getTemplate().getSpec().getContainers().get(0).getVolumeMounts().stream()
                .filter(v -> "io.npulifecycle.time.cfg".equals(v.getSubPath())).findFirst().orElse(null);
        assertNotNull(m, "the control plane mounts its clock");
        assertEquals("/var/lib/npu-lifecycle/etc/io.npulifecycle.time.cfg", m.getMountPath());
        // production: no clock file anywhere (the runtimes keep real time)
        List<HasMetadata> plain = render(set("simulator.clock.scale", "30"));
        assertFalse(nodeConfig(plain).containsKey("io.npulifecycle.time.cfg"));
        assertFalse(plain.stream().filter(x -> x instanceof ConfigMap).anyMatch(x -> ((ConfigMap) x).getData()
                .containsKey("io.npulifecycle.time.cfg")), "no clock file without simulator.enabled");
        assertRefused(set("simulator.clock.scale", "0"), "/simulator/clock/scale");
        assertRefused(set("simulator.clock.scale", "1001"), "/simulator/clock/scale");
        assertRefused(set("simulator.clock.anchorEpochMillis", "-1"), "/simulator/clock/anchorEpochMillis");
        assertRefused(set("simulator.clock.drift", "1"), "/simulator/clock", "drift");
    }

    @Test
    void simulatorValuesAreChecked() throws Exception {
        assertRefused(set("simulator.npus", "0"), "/simulator/npus");
        assertRefused(set("simulator.npus", "65"), "/simulator/npus");
        assertRefused(set("simulator.chipsPerNpu", "5"), "/simulator/chipsPerNpu");
        assertRefused(set("simulator.chipType", "910c"), "/simulator/chipType");
        assertRefused(set("simulator.driverVersion", "latest"), "/simulator/driverVersion");
        assertRefused(set("simulator.enabled", "yes"), "/simulator/enabled", "want boolean");
        assertRefused(set("simulator.bogus", "1"), "/simulator", "bogus");
        Manifests.Helm ok = Manifests.template(set("simulator.enabled", "true", "node.reboot.executor", "none",
                "simulator.npus", "64", "simulator.chipsPerNpu", "4"), Map.of());
        assertEquals(0, ok.exit(), ok.err());
    }

    @Test
    void theSimulatorCannotSelectARealRebootExecutor() throws Exception {
        // the chart's default executor is command: enabling the simulator alone is refused too
        assertRefused(set("simulator.enabled", "true"), "/node/reboot/executor", "/simulator/enabled");
        for (String executor : List.of("libc", "command")) {
            assertRefused(set("simulator.enabled", "true", "node.reboot.executor", executor),
                    "/node/reboot/executor", "value must be 'none'", "/simulator/enabled", "value must be false");
            Manifests.Helm lint = Manifests.runHelm(List.of("lint", Manifests.CHART.toString(), "--strict", "--set",
                    "simulator.enabled=true", "--set", "node.reboot.executor=" + executor));
            assertNotEquals(0, lint.exit(), "helm lint refuses it too: " + lint.out());
            String said = lint.out() + lint.err();
            assertTrue(said.contains("/node/reboot/executor") && said.contains("/simulator/enabled"), said);
            // the template refuses it once more when the schema is skipped
            for (String driver : List.of("true", "false")) {
                Manifests.Helm skipped = Manifests.runHelm(List.of("template", "npu-lifecycle", Manifests.CHART.toString(),
                        "--skip-schema-validation", "--set", "simulator.enabled=true", "--set", "node.reboot.executor=" + executor,
                        "--set", "driver.enabled=" + driver));
                assertNotEquals(0, skipped.exit(), skipped.out());
                assertTrue(skipped.err().contains("simulator.enabled=true needs node.reboot.executor=none (got " + executor
                        + "): a simulated node must never reboot its host"), skipped.err());
            }
            // without the simulator a real executor is the product's normal choice
            Manifests.Helm real = Manifests.template(set("node.reboot.executor", executor), Map.of());
            assertEquals(0, real.exit(), real.err());
        }
        Manifests.Helm lint = Manifests.runHelm(List.of("lint", Manifests.CHART.toString(), "--strict", "--set",
                "simulator.enabled=true", "--set", "node.reboot.executor=none"));
        assertEquals(0, lint.exit(), lint.out() + lint.err());
    }

    @Test
    void theRealNodeTestValuesSelectTheSimulatorAndNoRebootExecutor() throws Exception {
        assertTrue(Files.isRegularFile(REAL_NODE_VALUES), REAL_NODE_VALUES.toString());
        Manifests.Helm lint = Manifests.runHelm(List.of("lint", Manifests.CHART.toString(), "--strict", "-f",
                REAL_NODE_VALUES.toString()));
        assertEquals(0, lint.exit(), lint.out() + lint.err());
        for (String enabled : List.of("true", "false")) {
            Manifests.Helm h = Manifests.runHelm(List.of("template", "npu-lifecycle", Manifests.CHART.toString(),
                    "--namespace", Manifests.NS, "-f", REAL_NODE_VALUES.toString(), "--set", "driver.enabled=" + enabled,
                    "--set", "node.hostPaths.runNpuOperator=/work/rn/run", "--set", "simulator.stateHostPath=/work/rn/sim"));
            List<HasMetadata> o = h.objects();
            Map<String, String> node = nodeConfig(o);
            assertTrue(node.get("io.npulifecycle.rebooter.executor.cfg").startsWith("type=none\n"),
                    node.get("io.npulifecycle.rebooter.executor.cfg"));
            String sim = node.get("io.npulifecycle.simulator.cfg");
            assertNotNull(sim, "the simulator configuration");
            assertTrue(sim.contains("restartMode=exit\n") && sim.contains("npus=8\n"), sim);
            assertTrue(node.get("io.npulifecycle.probe.cfg").startsWith("interval=3\ntimeout=2\nfailureThreshold=3\n"),
                    node.get("io.npulifecycle.probe.cfg"));
            String cp = named(o, ConfigMap.class, "npu-lifecycle-control-plane-config").getData().get("io.npulifecycle.upgrade.cfg");
            assertTrue(cp.contains("registryCheck=false\n") && cp.contains("imageWhiteListCheck=false\n"), cp);
            assertFalse(hasKind(o, "NPUOperatorCtl"));
            Deployment d = of(o, Deployment.class).get(0);
            assertEquals(2, d.getSpec().getReplicas());
            assertEquals("Never", d.getSpec().getTemplate().getSpec().getContainers().get(0).getImagePullPolicy());
            PodSpec pod = nodePod(o);
            pod.getContainers().forEach(c -> assertEquals("Never", c.getImagePullPolicy(), c.getName()));
            assertEquals("/work/rn/sim", volume(pod, "simulator-state").getHostPath().getPath());
            assertEquals("/work/rn/run", volume(pod, "run-npu-operator").getHostPath().getPath());
            assertEveryNodeConfigFileMounted(o);
        }
    }

    @Test
    void hostPathsOfTheNodeAgentAreFoldersOfTheirOwn() throws Exception {
        // a simulated reboot empties the marker folder (hostPaths.runNpuOperator): never the host's /etc, never the
        // state folder, never through a .. segment
        Manifests.Helm top = Manifests.template(set("node.hostPaths.runNpuOperator", "/etc"), Map.of());
        assertTrue(top.exit() != 0 && top.err().contains("/node/hostPaths/runNpuOperator"), top.err());
        Manifests.Helm same = Manifests.template(set("node.hostPaths.runNpuOperator", "/var/lib/npu-operator"), Map.of());
        assertTrue(same.exit() != 0 && same.err().contains("node.hostPaths.runNpuOperator and "
                + "node.hostPaths.varLibNpuOperator are both \"/var/lib/npu-operator\""), same.err());
        Manifests.Helm dots = Manifests.template(set("simulator.stateHostPath", "/tmp/../etc/x"), Map.of());
        assertTrue(dots.exit() != 0 && dots.err().contains("simulator.stateHostPath: \"/tmp/../etc/x\" has a . or .. segment"),
                dots.err());
        assertEquals(0, Manifests.template(set("node.hostPaths.runNpuOperator", "/tmp/t/run", "simulator.stateHostPath",
                "/tmp/t/sim"), Map.of()).exit());
    }
}
