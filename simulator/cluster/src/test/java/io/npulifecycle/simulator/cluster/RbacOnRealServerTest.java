package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.npulifecycle.simulator.cluster.RbacTable.Permission;

/**
 * RBAC proven on a real kube-apiserver: after every manifest of {@code charts/target/kubectl/} (the chart rendered by module charts) is applied, what the server
 * grants each ServiceAccount of the manifests ({@code kubectl auth can-i --list
 * --as=system:serviceaccount:npu-operator:<sa>}) equals the permission table of {@code docs/security.md}, in every
 * namespace the table names and in one it does not name (where only the ClusterRoles apply).
 *
 * <p>A role of the table belongs to the ServiceAccount whose name it is or starts with followed by {@code -}
 * ({@code npu-lifecycle-node-agent-events} is the node agent's), as docs/security.md says. What every authenticated
 * user may do (discovery, self reviews: the server's bootstrap roles) is what an unbound ServiceAccount of the same
 * namespace gets; it is taken off before comparing. Without the binaries (no Go) or kubectl this test fails, saying what
 * to install.
 */
class RbacOnRealServerTest {

    static final String NS = EmbeddedCluster.NPU_NAMESPACE;
    /** A ServiceAccount no manifest binds: what it may do, everybody may. */
    static final String UNBOUND = "npu-lifecycle-rbac-baseline";
    /** A namespace without any Role of the manifests. */
    static final String OTHER_NAMESPACE = "kube-system";
    /** One row of {@code kubectl auth can-i --list}: resource, non-resource URLs, resource names, verbs. */
    static final Pattern ROW = Pattern.compile("^(\\S*)\\s+\\[([^\\]]*)\\]\\s+\\[([^\\]]*)\\]\\s+\\[([^\\]]*)\\]$");

    @TempDir
    static Path dir;
    static RealApiServer api;
    static Path kubectl;
    static Path kubeconfig;
    static List<String> serviceAccounts;

    @BeforeAll
    static void startAndApplyTheManifests() throws IOException {
        kubectl = RealApiServerTest.findKubectl();
        Path manifests = RealApiServerTest.findManifests();
        api = RealApiServer.start();
        kubeconfig = api.writeKubeconfig(dir.resolve("kubeconfig"));
        List<HasMetadata> applied = new ArrayList<>();
        try (Stream<Path> files = Files.list(manifests)) {
            // file order: the namespace (00-) first, the CRD before the sample that needs it
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                applied.addAll(api.apply(f));
            }
        }
        serviceAccounts = applied.stream().filter(ServiceAccount.class::isInstance)
                .filter(o -> NS.equals(o.getMetadata().getNamespace())).map(o -> o.getMetadata().getName()).sorted()
                .toList();
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
        }
    }

    @Test
    void everyServiceAccountHasExactlyThePermissionsOfSecurityMd() throws Exception {
        assertEquals(List.of("npu-lifecycle-control-plane", "npu-lifecycle-node-agent"), serviceAccounts,
                "the ServiceAccounts of the chart");
        RbacTable table = RbacTable.read(RealApiServerTest.findManifests().resolve("../../../docs/security.md")
                .normalize());
        Set<String> namespaces = new TreeSet<>(List.of(OTHER_NAMESPACE));
        List<String> problems = new ArrayList<>();
        for (Permission p : table.permissions()) {
            if (p.namespace() != null) {
                namespaces.add(p.namespace());
            }
            if (owner(p) == null) {
                problems.add(p + ": the role belongs to none of " + serviceAccounts + " (its name must start with "
                        + "the ServiceAccount's)");
            }
        }
        assertTrue(namespaces.containsAll(List.of(NS, "default")), namespaces.toString());

        int compared = 0;
        for (String namespace : namespaces) {
            Set<Permission> everybody = granted(UNBOUND, namespace, "");
            for (String sa : serviceAccounts) {
                String who = sa + " in namespace " + namespace;
                Set<Permission> actual = granted(sa, namespace, who);
                actual.removeAll(everybody.stream().map(p -> p.withRole(who)).toList());
                Set<Permission> expected = new TreeSet<>();
                for (Permission p : table.permissions()) {
                    if (sa.equals(owner(p)) && (p.namespace() == null || p.namespace().equals(namespace))) {
                        expected.add(p.withRole(who));
                    }
                }
                Set<Permission> undocumented = new TreeSet<>(actual);
                undocumented.removeAll(expected);
                Set<Permission> missing = new TreeSet<>(expected);
                missing.removeAll(actual);
                if (!undocumented.isEmpty()) {
                    problems.add("granted by the server but not in docs/security.md: " + undocumented);
                }
                if (!missing.isEmpty()) {
                    problems.add("in docs/security.md but not granted by the server: " + missing);
                }
                compared += expected.size();
                System.out.println(who + ": " + actual.size() + " permissions beyond everybody's");
            }
        }
        assertEquals(List.of(), problems, "RBAC on a real API server against " + table.file());
        assertTrue(compared >= table.permissions().size(), compared + " permissions compared, the table has "
                + table.permissions().size());
    }

    /**
     * The preflight reads the platform's ImageWhiteList by name ({@code ImageWhiteListReader#read}): the control plane
     * may get {@code cpaas-system/ascend-driver} (whatever the namespace: it is configurable), nothing else of that
     * type, and never list or change it; the node agent may not read it.
     */
    @Test
    void theControlPlaneMayGetTheImageWhiteListByNameOnly() throws Exception {
        String cp = "--as=system:serviceaccount:" + NS + ":npu-lifecycle-control-plane";
        String agent = "--as=system:serviceaccount:" + NS + ":npu-lifecycle-node-agent";
        String type = ImageWhiteLists.PLURAL + "." + ImageWhiteLists.GROUP;
        ImageWhiteLists.installCrd(api); // kubectl maps the type through discovery, as on the platform
        assertEquals("yes", canI("get", type + "/" + ImageWhiteLists.NAME, ImageWhiteLists.NAMESPACE, cp));
        assertEquals("yes", canI("get", type + "/" + ImageWhiteLists.NAME, "platform-elsewhere", cp));
        assertEquals("no", canI("get", type + "/another-list", ImageWhiteLists.NAMESPACE, cp));
        for (String verb : List.of("list", "watch", "update", "patch", "create", "delete")) {
            assertEquals("no", canI(verb, type, ImageWhiteLists.NAMESPACE, cp), verb);
        }
        assertEquals("no", canI("get", type + "/" + ImageWhiteLists.NAME, ImageWhiteLists.NAMESPACE, agent));
    }

    /** @return {@code yes} or {@code no}: {@code kubectl auth can-i} (exit 1 means no) */
    static String canI(String verb, String resource, String namespace, String as) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", dir.resolve("kube-cache").toString(), "--request-timeout", "30s", "auth", "can-i", verb,
                resource, "-n", namespace, as));
        Path out = dir.resolve("can-i.txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(dir.resolve("can-i.err").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().put("HOME", dir.toString());
        pb.environment().remove("KUBECONFIG");
        Process p = pb.start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kubectl auth can-i " + verb + " " + resource + " did not finish in 90 s");
        }
        String answer = Files.readString(out, StandardCharsets.UTF_8).strip();
        assertTrue(answer.startsWith("yes") || answer.startsWith("no"), "kubectl auth can-i: " + answer + " "
                + RealApiServerTest.read(dir.resolve("can-i.err")));
        return answer.startsWith("yes") ? "yes" : "no";
    }

    /** @return the ServiceAccount a role of the table belongs to, or null */
    static String owner(Permission p) {
        String name = p.roleName();
        return serviceAccounts.stream().filter(sa -> name.equals(sa) || name.startsWith(sa + "-"))
                .max((a, b) -> Integer.compare(a.length(), b.length())).orElse(null);
    }

    /**
     * @param sa a ServiceAccount of {@value #NS}
     * @param namespace where to ask
     * @param role what the permissions are labelled with
     * @return each (API group, resource, verb, resource names) the server grants it there; non-resource URLs as a
     *         resource of group {@code <non-resource>}
     */
    static Set<Permission> granted(String sa, String namespace, String role) throws Exception {
        String out = ok("auth", "can-i", "--list", "-n", namespace, "--as=system:serviceaccount:" + NS + ":" + sa);
        Set<Permission> perms = new TreeSet<>();
        List<String> lines = out.lines().map(String::stripTrailing).filter(l -> !l.isBlank()).toList();
        assertTrue(lines.get(0).startsWith("Resources") && lines.get(0).contains("Verbs"), out);
        for (String line : lines.subList(1, lines.size())) {
            Matcher m = ROW.matcher(line);
            assertTrue(m.matches(), "unexpected line of kubectl auth can-i --list: '" + line + "' in\n" + out);
            Set<String> names = new TreeSet<>(words(m.group(3)));
            for (String verb : words(m.group(4))) {
                if (m.group(1).isEmpty()) {
                    for (String url : words(m.group(2))) {
                        perms.add(new Permission(role, "<non-resource>", url, verb, names));
                    }
                } else {
                    // resource.group/subresource, e.g. npuoperatorctls.npu.openfuyao.com/status
                    String[] sub = m.group(1).split("/", 2);
                    String[] rg = sub[0].split("\\.", 2);
                    String resource = rg[0] + (sub.length == 2 ? "/" + sub[1] : "");
                    perms.add(new Permission(role, rg.length == 2 ? rg[1] : "", resource, verb, names));
                }
            }
        }
        assertFalse(perms.isEmpty(), out);
        return perms;
    }

    static List<String> words(String s) {
        return s.isBlank() ? List.of() : Arrays.asList(s.strip().split("\\s+"));
    }

    static String ok(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", dir.resolve("kube-cache").toString(), "--request-timeout", "30s"));
        cmd.addAll(Arrays.asList(args));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().put("HOME", dir.toString());
        pb.environment().remove("KUBECONFIG");
        Process p = pb.start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kubectl " + String.join(" ", args) + " did not finish in 90 s");
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), () -> "kubectl " + String.join(" ", args) + ": " + stdout + "\n"
                + RealApiServerTest.read(err));
        return stdout;
    }
}
