package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

class LaunchOptionsTest {

    static final Map<String, String> ENV = Map.of("HOME", "/home/op");

    @Test
    void nodeWithHomeAndNoShell() throws Exception {
        LaunchOptions o = LaunchOptions.parse(new String[] {"node", "--no-shell", "--home", "/tmp/h"}, ENV);
        assertEquals(LaunchOptions.Role.NODE, o.role());
        assertEquals(Path.of("/tmp/h"), o.home());
        assertTrue(o.noShell());
    }

    @Test
    void controlPlaneDefaultsItsHomeFromTheEnvironment() throws Exception {
        assertEquals(Path.of("/home/op/.npu-lifecycle/control-plane"),
                LaunchOptions.parse(new String[] {"control-plane"}, ENV).home());
        assertEquals(Path.of("/srv/npu"),
                LaunchOptions.parse(new String[] {"control-plane"}, Map.of("NPU_LIFECYCLE_HOME", "/srv/npu")).home());
    }

    @Test
    void unknownCommandIsAUsageError() {
        LaunchException e = assertThrows(LaunchException.class,
                () -> LaunchOptions.parse(new String[] {"nod"}, ENV));
        assertEquals(LaunchException.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("unknown command 'nod'"), e.getMessage());
        assertTrue(e.getMessage().contains("Usage: npu-lifecycle"), e.getMessage());
    }

    @Test
    void noCommandUnknownOptionAndMissingValueAreUsageErrors() {
        for (String[] args : new String[][] {{}, {"node", "--shell"}, {"node", "--home"}, {"node", "--home", " "}}) {
            LaunchException e = assertThrows(LaunchException.class, () -> LaunchOptions.parse(args, ENV),
                    String.join(" ", args));
            assertEquals(LaunchException.USAGE, e.exitCode());
        }
    }

    @Test
    void helpAndCheckNpuSmiPassTheirArguments() throws Exception {
        assertEquals("help", LaunchOptions.parse(new String[] {"--help"}, ENV).command());
        LaunchOptions o = LaunchOptions.parse(new String[] {"check-npu-smi", "f.txt", "--exit-code", "1"}, ENV);
        assertEquals("check-npu-smi", o.command());
        assertEquals(java.util.List.of("f.txt", "--exit-code", "1"), o.rest());
        LaunchOptions u = LaunchOptions.parse(new String[] {"uninstall", "--namespace", "ns", "--timeout", "60"}, ENV);
        assertEquals("uninstall", u.command());
        assertEquals(java.util.List.of("--namespace", "ns", "--timeout", "60"), u.rest());
    }

    @Test
    void clusterPassesItsWholeCommandLineToTheHarness() throws Exception {
        LaunchOptions o = LaunchOptions.parse(new String[] {"cluster", "--api", "real", "--nodes", "2"}, ENV);
        assertEquals("cluster", o.command());
        assertEquals(java.util.List.of("cluster", "--api", "real", "--nodes", "2"), o.rest());
        assertTrue(LaunchOptions.USAGE.contains("cluster         [--api real|embedded] [--nodes N] [--kubeconfig FILE]"),
                LaunchOptions.USAGE);
    }

    @Test
    void theUsageNamesEveryOptionOfDemoAndScenario() {
        assertTrue(LaunchOptions.USAGE.contains("demo            [--api embedded|real] [--nodes N] [--chips N] "
                + "[--scale X] [--work DIR]"), LaunchOptions.USAGE);
        assertTrue(LaunchOptions.USAGE.contains("scenario        FILE... [--api embedded|real] [--parallel N] "
                + "[--work DIR] [--junit FILE]"), LaunchOptions.USAGE);
        assertTrue(LaunchOptions.USAGE.contains("--list FILE..."), LaunchOptions.USAGE);
    }

    /**
     * Every NPU_LIFECYCLE_* variable the launcher, its script or the Kubernetes client bundle reads is in the help
     * text: the names are taken from their sources, so a new variable cannot be left out of it.
     */
    @Test
    void theHelpNamesEveryEnvironmentVariableThatIsRead() throws Exception {
        java.util.Set<String> read = new java.util.TreeSet<>();
        java.util.regex.Pattern name = java.util.regex.Pattern.compile("NPU_LIFECYCLE_[A-Z_]+[A-Z]");
        java.util.List<java.nio.file.Path> sources = new java.util.ArrayList<>();
        try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.walk(java.nio.file.Path.of(
                "src/main/java"))) {
            s.filter(p -> p.toString().endsWith(".java")).forEach(sources::add);
        }
        sources.add(java.nio.file.Path.of("src/main/dist/bin/npu-lifecycle"));
        sources.add(java.nio.file.Path.of("../bundles/kubeclient/src/main/java/io/npulifecycle/kubeclient/internal/"
                + "ClientSettings.java"));
        for (java.nio.file.Path p : sources) {
            java.util.regex.Matcher m = name.matcher(java.nio.file.Files.readString(p));
            while (m.find()) {
                read.add(m.group());
            }
        }
        assertTrue(read.contains("NPU_LIFECYCLE_METRICS_PORT") && read.contains("NPU_LIFECYCLE_KUBE_MASTER"),
                read.toString());
        for (String v : read) {
            assertTrue(LaunchOptions.USAGE.contains(v), v + " is read but not in the help text");
        }
        assertTrue(LaunchOptions.USAGE.contains("JAVA_HOME"), LaunchOptions.USAGE);
    }

    /**
     * Every option the command-line parsers read (the launcher's, check-npu-smi's, hash-password's, uninstall's, and
     * the harness' for demo, scenario and cluster) is in the help text: the names are taken from their sources, so a new option
     * cannot be left out of it.
     */
    @Test
    void theHelpNamesEveryOptionThatIsParsed() throws Exception {
        java.util.Set<String> parsed = new java.util.TreeSet<>();
        java.util.regex.Pattern option = java.util.regex.Pattern.compile("\"(--[a-z][a-z-]*)[\"=]");
        String harness = "../simulator/harness/src/main/java/io/npulifecycle/simulator/harness/";
        for (String source : new String[] {"src/main/java/io/npulifecycle/launcher/LaunchOptions.java",
            "../bundles/probe/src/main/java/io/npulifecycle/probe/check/CheckNpuSmi.java",
            "../bundles/security/src/main/java/io/npulifecycle/security/tool/HashPassword.java",
            "../bundles/upgrade/src/main/java/io/npulifecycle/upgrade/internal/cluster/UninstallCommand.java",
            harness + "HarnessMain.java", harness + "ClusterCommand.java"}) {
            java.util.regex.Matcher m = option.matcher(java.nio.file.Files.readString(java.nio.file.Path.of(source)));
            while (m.find()) {
                parsed.add(m.group(1));
            }
        }
        assertTrue(parsed.containsAll(java.util.List.of("--home", "--alarm-is-failure", "--role", "--junit",
                "--kubeconfig", "--namespace", "--timeout")), parsed.toString());
        for (String o : parsed) {
            assertTrue(java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(o) + "(?![a-z-])")
                    .matcher(LaunchOptions.USAGE).find(), o + " is parsed but not in the help text");
        }
    }

    /** The README's synopsis of the launcher ("The launcher") has every command of the help text. */
    @Test
    void theReadmeSynopsisHasEveryCommand() throws Exception {
        String readme = java.nio.file.Files.readString(java.nio.file.Path.of("../README.md"));
        String commands = LaunchOptions.USAGE.substring(LaunchOptions.USAGE.indexOf("Commands:"),
                LaunchOptions.USAGE.indexOf("Options:"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^  ([a-z][a-z-]+) ").matcher(commands);
        int n = 0;
        while (m.find()) {
            n++;
            String c = m.group(1).equals("node") || m.group(1).equals("control-plane") ? "node|control-plane"
                    : m.group(1);
            assertTrue(readme.contains("\nnpu-lifecycle " + c + " ") || readme.contains("\nnpu-lifecycle " + c + "\n"),
                    "README.md, 'The launcher': no line for npu-lifecycle " + c);
        }
        assertEquals(10, n, commands);
    }
}
