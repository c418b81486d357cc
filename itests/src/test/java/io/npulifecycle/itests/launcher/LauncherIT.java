package io.npulifecycle.itests.launcher;

import static io.npulifecycle.itests.launcher.RuntimeProcess.PASSWORD;
import static io.npulifecycle.itests.launcher.RuntimeProcess.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * The launcher as an operator uses it: {@code bin/npu-lifecycle} of the assembled distribution, run as a process.
 */
class LauncherIT {

    static final String RUNTIME = "/jolokia/read/io.npulifecycle:type=Runtime";

    @TempDir
    Path tmp;

    static Map<String, String> env(int port) {
        return RuntimeProcess.operatorEnv(port, 0);
    }

    @Test
    void unknownSubcommandPrintsUsageAndFails() throws Exception {
        Path out = tmp.resolve("out.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 60, "frobnicate");
        String text = Files.readString(out);
        assertEquals(2, rc, text);
        assertTrue(text.contains("unknown command 'frobnicate'"), text);
        assertTrue(text.contains("Usage: npu-lifecycle"), text);
    }

    @Test
    void homeThatIsNotWritableIsAClearError() throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        Path out = tmp.resolve("out.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 60, "node", "--no-shell", "--home",
                file.resolve("home").toString());
        String text = Files.readString(out);
        assertEquals(3, rc, text);
        assertTrue(text.contains(file.resolve("home").toString()) && text.contains("cannot be used"), text);
    }

    @Test
    void invalidRuntimeSettingStopsTheLaunchNamingFileAndKey() throws Exception {
        Path home = tmp.resolve("home");
        Files.createDirectories(home.resolve("etc"));
        Files.writeString(home.resolve("etc/runtime.properties"), "http.port=eighty\n");
        Path out = tmp.resolve("out.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 60, "node", "--no-shell", "--home", home.toString());
        String text = Files.readString(out);
        assertEquals(2, rc, text);
        assertTrue(text.contains("runtime.properties") && text.contains("http.port='eighty'"), text);
        assertEquals("http.port=eighty\n", Files.readString(home.resolve("etc/runtime.properties")));
    }

    /**
     * Starts a node agent and polls Jolokia without credentials from the first moment: no answer may ever be 200.
     * Then the Runtime MBean is readable with the credentials (role node) and refused without (401).
     */
    @Test
    void nodeAgentServesJolokiaOnlyWithAuthenticationFromTheFirstMoment() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Path home = tmp.resolve("home");
        List<String> unauthenticated = new ArrayList<>();
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "node", "--no-shell",
                "--home", home.toString())) {
            rt.await("the Runtime MBean to be readable", Duration.ofSeconds(90), () -> {
                RuntimeProcess.Answer open = rt.get("/jolokia/version", null, null);
                if (open.status != -1) {
                    unauthenticated.add(open.status + "");
                }
                assertFalse(open.status == 200, "Jolokia answered without authentication: " + open);
                RuntimeProcess.Answer read = rt.get(RUNTIME + "/Role", USER, PASSWORD);
                return read.status == 200 && read.body.contains("\"status\":200");
            });
            RuntimeProcess.Answer read = rt.get(RUNTIME, USER, PASSWORD);
            assertTrue(read.body.contains("\"Role\":\"node\""), read.body);
            assertTrue(read.body.contains("io.npulifecycle.management"), read.body);
            assertFalse(read.body.contains("\"symbolicName\":\"io.npulifecycle.simulator\""),
                    "a node runtime without etc/io.npulifecycle.simulator.cfg has no simulator: " + read.body);
            assertEquals(401, rt.get(RUNTIME, null, null).status);
            assertEquals(401, rt.get(RUNTIME, USER, "wrong-password").status);
            // the launcher prints its start line once the framework has started its bundles, which can be after
            // Jolokia first answers (as the credentials' line of the next test)
            rt.awaitAsserted("the start line naming Jolokia's URL and the home", Duration.ofSeconds(30), () -> {
                assertTrue(rt.output().contains("npu-lifecycle node runtime"), rt.output());
                assertTrue(rt.output().contains("http://127.0.0.1:" + port + "/jolokia"), rt.output());
                assertTrue(rt.output().contains(home.toString()), rt.output());
            });
            assertFalse(rt.output().contains(PASSWORD), "the password must never be logged");

            RuntimeProcess.Answer ready = rt.get("/health/ready", null, null);
            RuntimeProcess.Answer live = rt.get("/health/live", null, null);
            assertEquals(200, live.status, live.body);
            assertEquals("{\"status\":\"OK\"}", live.body);
            rt.await("readiness", Duration.ofSeconds(90), () -> rt.get("/health/ready", null, null).status == 200);
            assertTrue(ready.status == 200 || ready.status == 503, ready.toString());
        }
        assertFalse(unauthenticated.isEmpty(), "the test never reached Jolokia before it was ready");
    }

    @Test
    void generatedCredentialsAreStoredOwnerOnlyAndNeverLogged() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Path home = tmp.resolve("home");
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port,
                Map.of("NPU_LIFECYCLE_HTTP_PORT", String.valueOf(port), "NPU_LIFECYCLE_METRICS_PORT", "0"), "node", "--no-shell", "--home",
                home.toString())) {
            Path secrets = home.resolve("secrets/jolokia-credentials");
            rt.await("generated credentials", Duration.ofSeconds(60), () -> Files.exists(secrets));
            java.util.Properties p = new java.util.Properties();
            try (var r = Files.newBufferedReader(secrets)) {
                p.load(r);
            }
            String user = p.getProperty("user");
            String password = p.getProperty("password");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(secrets)));
            rt.await("the Runtime MBean with generated credentials", Duration.ofSeconds(90),
                    () -> rt.get(RUNTIME + "/Role", user, password).body.contains("\"value\":\"node\""));
            // the launcher logs the credentials' source once the framework has started, possibly after Jolokia answers
            rt.await("the log line naming the credentials file", Duration.ofSeconds(30),
                    () -> rt.output().contains(secrets.toString()));
            assertFalse(rt.output().contains(password), "the password must never be logged");
        }
    }

    @Test
    void brokenPolicyFailsClosed() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Path home = tmp.resolve("home");
        Files.createDirectories(home.resolve("etc"));
        Files.writeString(home.resolve("etc/jolokia-access.xml"), "<restrict><commands>"); // truncated
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "node", "--no-shell",
                "--home", home.toString())) {
            rt.await("Jolokia to answer", Duration.ofSeconds(90),
                    () -> rt.get("/jolokia/version", USER, PASSWORD).status == 200);
            for (String path : new String[] {"/jolokia/version", RUNTIME, "/jolokia/list",
                "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage"}) {
                RuntimeProcess.Answer a = rt.get(path, USER, PASSWORD);
                assertTrue(a.body.contains("\"status\":403"), path + " must be refused: " + a);
            }
            // logged once the framework is up, which can be after Jolokia first answers
            rt.await("the deny-all line in the log", Duration.ofSeconds(30),
                    () -> rt.output().contains("every Jolokia request will be refused"));
            assertTrue(rt.output().contains(home.resolve("etc/jolokia-access.xml").toString()), rt.output());
            assertEquals("<restrict><commands>", Files.readString(home.resolve("etc/jolokia-access.xml")),
                    "the operator's file is left as it was");
        }
    }

    @Test
    void missingPolicyFailsClosed() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Path home = tmp.resolve("home");
        Files.createDirectories(home.resolve("etc"));
        Files.writeString(home.resolve("etc/runtime.properties"), "jolokia.policy=" + tmp.resolve("gone.xml") + "\n");
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "node", "--no-shell",
                "--home", home.toString())) {
            rt.await("Jolokia to answer", Duration.ofSeconds(90),
                    () -> rt.get("/jolokia/version", USER, PASSWORD).status == 200);
            RuntimeProcess.Answer a = rt.get(RUNTIME, USER, PASSWORD);
            assertTrue(a.body.contains("\"status\":403"), a.toString());
            rt.await("the missing policy in the log", Duration.ofSeconds(30),
                    () -> rt.output().contains("gone.xml does not exist"));
        }
    }

    @Test
    void malformedUsersFileLineIsLoggedWithFileAndLineAndTheRuntimeStarts() throws Exception {
        Path home = tmp.resolve("home");
        Files.createDirectories(home.resolve("etc"));
        Files.writeString(home.resolve("etc/jolokia-users.properties"), "# users\nalice=viewer:clear-text-password\n");
        int port = LoopbackPorts.shared().allocate();
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "control-plane",
                "--no-shell", "--home", home.toString())) {
            rt.await("Jolokia up for the runtime's operator", Duration.ofSeconds(90),
                    () -> rt.get(RUNTIME + "/Role", USER, PASSWORD).body.contains("\"status\":200"));
            String line = home.resolve("etc/jolokia-users.properties") + ", line 2: user 'alice'";
            rt.await("the bad line in the log", Duration.ofSeconds(30), () -> rt.output().contains(line));
            assertFalse(rt.output().contains("clear-text-password"), "the bad value is not echoed: " + rt.output());
            assertEquals(401, rt.get(RUNTIME + "/Role", "alice", "clear-text-password").status);
        }
    }

    @Test
    void operatorExecIsWrittenToTheAuditLogWithTheUser() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Path home = tmp.resolve("cp");
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "control-plane",
                "--no-shell", "--home", home.toString())) {
            rt.await("Jolokia up", Duration.ofSeconds(90),
                    () -> rt.get(RUNTIME + "/Role", USER, PASSWORD).body.contains("\"status\":200"));
            RuntimeProcess.Answer a = rt.get("/jolokia/exec/io.npulifecycle:type=KubernetesClient/checkConnection",
                    USER, PASSWORD);
            assertTrue(a.body.contains("\"status\":200"), a.toString());
            assertEquals(401, rt.get(RUNTIME, USER, "wrong-password-123").status);
            Path audit = home.resolve("logs/audit.log");
            rt.await("the audit lines", Duration.ofSeconds(30), () -> {
                try {
                    String log = Files.exists(audit) ? Files.readString(audit) : "";
                    return log.contains("exec user=" + USER + " role=operator mbean=io.npulifecycle:type="
                            + "KubernetesClient operation=checkConnection outcome=allowed")
                            && log.contains("login user=" + USER + " remote=127.0.0.1 outcome=denied reason=wrong "
                            + "password");
                } catch (java.io.IOException e) {
                    return false;
                }
            });
            assertFalse(Files.readString(audit).contains("wrong-password-123"));
        }
    }

    @Test
    void controlPlaneRuntimeHasItsRoleAndNoNodeBundles() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "control-plane",
                "--no-shell", "--home", tmp.resolve("cp").toString())) {
            rt.await("the Runtime MBean", Duration.ofSeconds(90),
                    () -> rt.get(RUNTIME + "/Role", USER, PASSWORD).body.contains("\"value\":\"control-plane\""));
            RuntimeProcess.Answer bundles = rt.get(RUNTIME + "/Bundles", USER, PASSWORD);
            assertFalse(bundles.body.contains("io.npulifecycle.probe"), bundles.body);
            assertTrue(bundles.body.contains("io.npulifecycle.management"), bundles.body);
        }
    }

    @Test
    void aSecondRuntimeOnTheSameHomeIsRefused() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Path home = tmp.resolve("home");
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "control-plane",
                "--no-shell", "--home", home.toString())) {
            rt.await("the first runtime up", Duration.ofSeconds(90),
                    () -> rt.get(RUNTIME + "/Role", USER, PASSWORD).body.contains("\"status\":200"));
            Path out = tmp.resolve("second.txt");
            int second = LoopbackPorts.shared().allocate();
            int rc = RuntimeProcess.runToExit(out, env(second), 60, "control-plane", "--no-shell", "--home",
                    home.toString());
            String text = Files.readString(out);
            assertEquals(3, rc, text);
            assertTrue(text.contains("is in use by another runtime") && text.contains("role=control-plane"), text);
            assertTrue(rt.alive(), "the first runtime is undisturbed");
        }
    }

    @Test
    void aForeignFolderOrAnEmptyHomeIsNeverUsed() throws Exception {
        Path foreign = Files.createDirectories(tmp.resolve("var"));
        Path precious = Files.createDirectories(foreign.resolve("cache")).resolve("precious.txt");
        Files.writeString(precious, "keep me");
        Path out = tmp.resolve("out.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 60, "control-plane", "--no-shell", "--home",
                foreign.toString());
        assertEquals(3, rc, Files.readString(out));
        assertTrue(Files.readString(out).contains("not an npu-lifecycle runtime home"), Files.readString(out));
        assertEquals("keep me", Files.readString(precious), "nothing in a foreign folder is touched");
        rc = RuntimeProcess.runToExit(out, Map.of(), 60, "node", "--home=");
        assertEquals(2, rc, Files.readString(out));
        assertTrue(Files.readString(out).contains("--home= needs a folder"), Files.readString(out));
    }

    @Test
    void oversizedRequestsAreRefusedAndForeignOriginsGetNoCorsHeaders() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env(port), "control-plane",
                "--no-shell", "--home", tmp.resolve("cp").toString())) {
            rt.await("Jolokia up", Duration.ofSeconds(90),
                    () -> rt.get(RUNTIME + "/Role", USER, PASSWORD).body.contains("\"status\":200"));
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            String auth = "Basic " + java.util.Base64.getEncoder().encodeToString((USER + ":" + PASSWORD).getBytes());
            byte[] big = new byte[3 * 1024 * 1024];
            java.util.Arrays.fill(big, (byte) 'a');
            java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + port + "/jolokia/")).header("Authorization", auth)
                    .header("Content-Type", "application/json")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(big)).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(413, r.statusCode(), r.body());
            java.net.http.HttpResponse<String> cors = http.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + port + RUNTIME + "/Role")).header("Authorization", auth)
                    .header("Origin", "http://evil.example").GET().build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertTrue(cors.headers().firstValue("Access-Control-Allow-Origin").isEmpty(),
                    "no CORS header for a foreign origin: " + cors.headers().map());
            assertTrue(rt.alive());
            assertEquals(200, rt.get(RUNTIME + "/Role", USER, PASSWORD).status);
        }
    }

    @Test
    void debugLoggingNeverWritesTheAuthorizationHeader() throws Exception {
        int port = LoopbackPorts.shared().allocate();
        Map<String, String> env = new java.util.HashMap<>(env(port));
        env.put("NPU_LIFECYCLE_LOG_LEVEL", "TRACE");
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, env, "control-plane",
                "--no-shell", "--home", tmp.resolve("cp").toString())) {
            rt.await("Jolokia up", Duration.ofSeconds(90),
                    () -> rt.get(RUNTIME + "/Role", USER, PASSWORD).body.contains("\"status\":200"));
            String header = java.util.Base64.getEncoder().encodeToString((USER + ":" + PASSWORD).getBytes());
            assertFalse(rt.output().contains(header), "the Basic credentials must never be logged");
            assertFalse(rt.output().contains(PASSWORD));
        }
    }

    @Test
    void portInUseIsAClearError() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            Path out = tmp.resolve("out.txt");
            int rc = RuntimeProcess.runToExit(out, env(taken.getLocalPort()), 60, "node", "--no-shell", "--home",
                    tmp.resolve("home").toString());
            String text = Files.readString(out);
            assertEquals(2, rc, text);
            assertTrue(text.contains("http.port: cannot listen on 127.0.0.1:" + taken.getLocalPort()), text);
        }
    }
}
