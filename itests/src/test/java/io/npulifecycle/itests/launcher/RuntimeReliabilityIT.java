package io.npulifecycle.itests.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * Reliability matrix (issue #7), categories {@code Jolokia request}, {@code configuration} and {@code deploy jar}: bad
 * input against ONE running node agent ({@code bin/npu-lifecycle node} of the assembled distribution, as an operator
 * runs it), with the operator credentials of today ({@code NPU_LIFECYCLE_JOLOKIA_USER}/{@code _PASSWORD}). After
 * every case the runtime must be live, Jolokia must still answer, and nothing may have changed: the same bundles in the
 * same states, the health-watch keeping its previous configuration.
 */
class RuntimeReliabilityIT {

    static final String USER = "reliability-operator";
    static final String PASSWORD = "reliability-password-0123456789";
    static final String RUNTIME = "/jolokia/read/io.npulifecycle:type=Runtime";
    static final String HEALTH_WATCH = "/jolokia/read/io.npulifecycle:type=HealthWatch";
    static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path tmp;
    static RuntimeProcess rt;
    static Path home;
    static int port;
    static String baselineBundles;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        port = LoopbackPorts.shared().allocate();
        home = tmp.resolve("home");
        rt = RuntimeProcess.start(tmp.resolve("out.txt"), port, Map.of("NPU_LIFECYCLE_JOLOKIA_USER", USER,
                "NPU_LIFECYCLE_JOLOKIA_PASSWORD", PASSWORD, "NPU_LIFECYCLE_HTTP_PORT", String.valueOf(port), "NPU_LIFECYCLE_METRICS_PORT", "0"), "node",
                "--no-shell", "--home", home.toString());
        rt.await("the HealthWatch MBean", Duration.ofSeconds(120),
                () -> rt.get(HEALTH_WATCH + "/IntervalSeconds", USER, PASSWORD).body.contains("\"status\":200"));
        // a known, non-default configuration to keep: interval 45 s
        writeCfg("io.npulifecycle.probe.cfg", "interval=45\ntimeout=20\n");
        rt.await("interval 45", WAIT, () -> "45".equals(attr(HEALTH_WATCH, "IntervalSeconds")));
        rt.await("every bundle active", WAIT, () -> !bundles().contains("INSTALLED") && !bundles().contains("RESOLVED"));
        baselineBundles = bundles();
    }

    @AfterAll
    static void stop() {
        if (rt != null) {
            rt.close();
        }
    }

    // ---- helpers ----

    static String auth() {
        return "Basic " + Base64.getEncoder().encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8));
    }

    /** @return "status body" of a request; status -1 when the connection failed */
    static RuntimeProcess.Answer send(HttpRequest.Builder b) {
        try {
            HttpResponse<String> r = HTTP.send(b.header("Authorization", auth()).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new RuntimeProcess.Answer(r.statusCode(), r.body());
        } catch (IOException e) {
            return new RuntimeProcess.Answer(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new RuntimeProcess.Answer(-1, e.toString());
        }
    }

    static HttpRequest.Builder at(String rawPath) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + rawPath));
    }

    static RuntimeProcess.Answer post(String path, byte[] body) {
        return send(at(path).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    static RuntimeProcess.Answer post(String body) {
        return post("/jolokia/", body.getBytes(StandardCharsets.UTF_8));
    }

    /** @return the {@code value} of an attribute as JSON text, or the whole answer when it failed */
    static String attr(String mbeanPath, String attribute) {
        RuntimeProcess.Answer a = rt.get(mbeanPath + "/" + attribute, USER, PASSWORD);
        Matcher m = Pattern.compile("\"value\":(\"(?:[^\"\\\\]|\\\\.)*\"|[^,}\\]]+|\\[.*?\\])").matcher(a.body);
        if (!m.find()) {
            return a.toString();
        }
        String v = m.group(1);
        return v.startsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }

    /** @return each bundle's symbolic name and state, sorted: what must not change */
    static String bundles() {
        String body = rt.get(RUNTIME + "/Bundles", USER, PASSWORD).body;
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\\{[^{}]*\\}").matcher(body);
        while (m.find()) {
            String o = m.group();
            Matcher sn = Pattern.compile("\"symbolicName\":\"([^\"]*)\"").matcher(o);
            Matcher st = Pattern.compile("\"state\":\"([^\"]*)\"").matcher(o);
            Matcher id = Pattern.compile("\"id\":(\\d+)").matcher(o);
            if (sn.find() && st.find()) {
                out.add((id.find() ? id.group(1) : "?") + " " + sn.group(1) + " " + st.group(1));
            }
        }
        out.sort(null);
        return String.join("\n", out);
    }

    /** The runtime is live, Jolokia answers, the bundles are the baseline's, the health-watch kept interval 45. */
    static void assertUnharmed() {
        assertTrue(rt.alive(), "the runtime process died");
        RuntimeProcess.Answer live = rt.get("/health/live", null, null);
        assertEquals(200, live.status, live.toString());
        assertEquals("node", attr(RUNTIME, "Role"));
        assertEquals(baselineBundles, bundles(), "the bundles changed");
        assertEquals("45", attr(HEALTH_WATCH, "IntervalSeconds"), "the health-watch lost its configuration");
    }

    /** A Jolokia answer that refuses: HTTP 4xx, or HTTP 200 with a JSON error status 4xx/5xx. */
    static void assertRefused(RuntimeProcess.Answer a) {
        boolean httpError = a.status >= 400 && a.status < 500;
        boolean jsonError = a.status == 200 && Pattern.compile("\"status\":(4|5)\\d\\d").matcher(a.body).find()
                && !a.body.contains("\"status\":200");
        assertTrue(httpError || jsonError, "expected a 4xx or a Jolokia error status, got " + cut(a.toString()));
        assertFalse(a.body.contains("root:x:0:0"), "a file was served");
    }

    static String cut(String s) {
        return s.length() > 400 ? s.substring(0, 400) + "..." : s;
    }

    static void writeCfg(String name, String text) throws IOException {
        writeCfg(name, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Writes etc/NAME atomically (FileInstall never sees a half-written file). */
    static void writeCfg(String name, byte[] bytes) throws IOException {
        Path t = Files.write(tmp.resolve(name + ".tmp"), bytes);
        Files.move(t, home.resolve("etc").resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static String problems() {
        return rt.get("/jolokia/read/io.npulifecycle:type=Configuration/Problems", USER, PASSWORD).body;
    }

    /** A bad probe configuration: the Configuration MBean names file and key, the previous interval is kept. */
    static void badCfg(String lines, String... named) throws IOException {
        writeCfg("io.npulifecycle.probe.cfg", "interval=45\ntimeout=20\n" + lines);
        rt.await("a problem naming io.npulifecycle.probe.cfg and " + String.join(", ", named), WAIT, () -> {
            String p = problems();
            for (String n : named) {
                if (!p.contains(n)) {
                    return false;
                }
            }
            return p.contains("io.npulifecycle.probe.cfg");
        });
        assertUnharmed();
    }

    static byte[] jar(Manifest mf, Map<String, byte[]> entries) throws IOException {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (JarOutputStream jo = mf == null ? new JarOutputStream(bo) : new JarOutputStream(bo, mf)) {
            for (var e : entries.entrySet()) {
                jo.putNextEntry(new JarEntry(e.getKey()));
                jo.write(e.getValue());
                jo.closeEntry();
            }
        }
        return bo.toByteArray();
    }

    static Manifest manifest(String... kv) {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        for (int i = 0; i + 1 < kv.length; i += 2) {
            m.getMainAttributes().putValue(kv[i], kv[i + 1]);
        }
        return m;
    }

    static final List<String> deployed = new ArrayList<>();

    /** Drops deploy/NAME (copied under another name, then renamed): rejected by name, nothing installed. */
    static void badJar(String name, byte[] bytes, String reason) throws IOException {
        Path t = Files.write(tmp.resolve(name + ".part"), bytes);
        Files.move(t, home.resolve("deploy").resolve(name), StandardCopyOption.ATOMIC_MOVE);
        deployed.add(name);
        rt.await(name + " listed as rejected", WAIT, () -> {
            String r = rt.get("/jolokia/read/io.npulifecycle:type=Deploy/RejectedFiles", USER, PASSWORD).body;
            return r.contains(name) && r.contains(reason);
        });
        assertUnharmed();
    }

    static DynamicTest test(String category, String input, String expected, Executable body) {
        return DynamicTest.dynamicTest(category + " | " + input + " | " + expected, body);
    }

    @TestFactory
    Stream<DynamicTest> cases() {
        List<DynamicTest> l = new ArrayList<>();
        String j = "Jolokia request";
        String ok = "refused (4xx or Jolokia error), runtime healthy, nothing changed";
        l.add(test(j, "POST malformed JSON {\"type\":\"read\",", ok, () -> {
            assertRefused(post("{\"type\":\"read\","));
            assertUnharmed();
        }));
        l.add(test(j, "POST a JSON array of garbage [1,\"x\",null,{},[]]", "each element answered with an error, runtime healthy", () -> {
            RuntimeProcess.Answer a = post("[1,\"x\",null,{},[]]");
            assertFalse(a.body.contains("\"status\":200"), cut(a.toString()));
            assertTrue(a.status >= 400 || a.body.contains("\"status\":4") || a.body.contains("\"error\""), cut(a.toString()));
            assertUnharmed();
        }));
        l.add(test(j, "POST a 2 MiB body with Content-Length", "HTTP 413, runtime healthy", () -> {
            byte[] big = ("{\"type\":\"read\",\"mbean\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}").getBytes(StandardCharsets.UTF_8);
            RuntimeProcess.Answer a = post("/jolokia/", big);
            assertTrue(a.status == 413 || a.status == -1, "expected 413: " + cut(a.toString()));
            assertUnharmed();
        }));
        l.add(test(j, "POST a 2 MiB chunked body (no Content-Length)", "cut at 1 MiB and refused, runtime healthy", () -> {
            byte[] big = ("{\"type\":\"read\",\"mbean\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}").getBytes(StandardCharsets.UTF_8);
            RuntimeProcess.Answer a = send(at("/jolokia/").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big))));
            assertTrue(a.status == -1 || a.status >= 400 || a.body.contains("\"status\":4") || a.body.contains("\"status\":5"),
                    cut(a.toString()));
            assertUnharmed();
        }));
        l.add(test(j, "POST 10,000-deep nested JSON arrays", ok + " (no stack overflow)", () -> {
            assertRefused(post("[".repeat(10_000) + "]".repeat(10_000)));
            assertUnharmed();
        }));
        l.add(test(j, "POST 10,000-deep nested JSON objects", ok + " (no stack overflow)", () -> {
            assertRefused(post("{\"a\":".repeat(10_000) + "1" + "}".repeat(10_000)));
            assertUnharmed();
        }));
        l.add(test(j, "POST unknown type {\"type\":\"frobnicate\"}", ok, () -> {
            assertRefused(post("{\"type\":\"frobnicate\",\"mbean\":\"io.npulifecycle:type=Runtime\"}"));
            assertUnharmed();
        }));
        l.add(test(j, "POST read without mbean", ok, () -> {
            assertRefused(post("{\"type\":\"read\"}"));
            assertUnharmed();
        }));
        l.add(test(j, "GET read with ../ in the MBean name (io.npulifecycle:type=../../../etc/passwd)", ok + ", no file served", () -> {
            assertRefused(rt.get("/jolokia/read/io.npulifecycle:type=..%2F..%2F..%2Fetc%2Fpasswd", USER, PASSWORD));
            assertUnharmed();
        }));
        l.add(test(j, "GET /jolokia/../../../../etc/passwd (../ in the path)", ok + ", no file served", () -> {
            assertRefused(send(at("/jolokia/../../../../etc/passwd").GET()));
            assertUnharmed();
        }));
        l.add(test(j, "GET /jolokia/%2e%2e/%2e%2e/etc/passwd (encoded ../)", ok + ", no file served", () -> {
            assertRefused(send(at("/jolokia/%2e%2e/%2e%2e/%2e%2e/etc/passwd").GET()));
            assertUnharmed();
        }));
        l.add(test(j, "GET /jolokia/read/..%252f..%252fetc%252fpasswd (double-encoded)", ok + ", no file served", () -> {
            assertRefused(send(at("/jolokia/read/..%252f..%252fetc%252fpasswd").GET()));
            assertUnharmed();
        }));
        l.add(test(j, "POST exec of an operation signature that does not exist, scan(java.lang.String)", ok, () -> {
            assertRefused(post("{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=Deploy\",\"operation\":\"scan(java.lang.String)\",\"arguments\":[\"x\"]}"));
            assertUnharmed();
        }));
        l.add(test(j, "POST write to the read-only attribute Runtime Role", ok + ", Role still node", () -> {
            assertRefused(post("{\"type\":\"write\",\"mbean\":\"io.npulifecycle:type=Runtime\",\"attribute\":\"Role\",\"value\":\"control-plane\"}"));
            assertUnharmed();
        }));
        l.add(test(j, "GET an MBean name of 64 KiB in the URL", "4xx (URI too long or not found), runtime healthy", () -> {
            assertRefused(rt.get("/jolokia/read/io.npulifecycle:type=" + "A".repeat(64 * 1024), USER, PASSWORD));
            assertUnharmed();
        }));

        String c = "configuration";
        l.add(test(c, "interval=sixty (not a number)", "Configuration problem naming the file and key interval, interval 45 kept",
                () -> badCfg("interval=sixty\n", "key interval='sixty'")));
        l.add(test(c, "unknown key intervall=30", "problem 'unknown key intervall ignored' naming the file, interval 45 kept",
                () -> badCfg("intervall=30\n", "unknown key intervall")));
        l.add(test(c, "alarmIsFailure=yes (not a Boolean)", "problem naming the file and key alarmIsFailure, default kept",
                () -> badCfg("alarmIsFailure=yes\n", "key alarmIsFailure='yes'", "is not a Boolean")));
        l.add(test(c, "failureThreshold=3.5 (not an Integer)", "problem naming the file and key failureThreshold",
                () -> badCfg("failureThreshold=3.5\n", "key failureThreshold='3.5'")));
        l.add(test(c, "rebooter executor type=reboot-now (not an option)", "problem naming the file and key type, executor stays 'none': no reboot", () -> {
            writeCfg("io.npulifecycle.rebooter.executor.cfg", "type=reboot-now\n");
            rt.await("a problem naming the executor file and key type", WAIT, () -> {
                String p = problems();
                return p.contains("io.npulifecycle.rebooter.executor.cfg") && p.contains("key type='reboot-now'");
            });
            assertTrue(attr("/jolokia/read/io.npulifecycle:type=Rebooter", "Executor").toLowerCase().contains("none"),
                    attr("/jolokia/read/io.npulifecycle:type=Rebooter", "Executor"));
            assertUnharmed();
        }));
        l.add(test(c, "binary garbage appended (NUL and high bytes)", "the file refused by name (Failed to update artifact), previous configuration kept", () -> {
            byte[] head = "interval=45\ntimeout=20\n".getBytes(StandardCharsets.UTF_8);
            byte[] junk = new byte[4096];
            new Random(11).nextBytes(junk);
            for (int i = 0; i < junk.length; i += 64) {
                junk[i] = '\n';
            }
            byte[] all = new byte[head.length + junk.length];
            System.arraycopy(head, 0, all, 0, head.length);
            System.arraycopy(junk, 0, all, head.length, junk.length);
            writeCfg("io.npulifecycle.probe.cfg", all);
            rt.await("FileInstall refusing the file by name", WAIT, () -> rt.output().contains(
                    "Failed to update artifact " + home.resolve("etc/io.npulifecycle.probe.cfg")));
            assertUnharmed();
        }));
        l.add(test(c, "a 4 MiB npuSmiCommand value", "accepted or refused by name, runtime healthy, interval 45 kept", () -> {
            writeCfg("io.npulifecycle.probe.cfg", "interval=45\ntimeout=20\nnpuSmiCommand=" + "x".repeat(4 * 1024 * 1024) + "\n");
            rt.await("the health-watch still answering", WAIT, () -> attr(HEALTH_WATCH, "LastError").length() > 0);
            assertUnharmed();
        }));
        l.add(test(c, "an empty io.npulifecycle.rebooter.executor.cfg", "the defaults (type none): no reboot, runtime healthy", () -> {
            writeCfg("io.npulifecycle.rebooter.executor.cfg", "");
            rt.await("executor none", WAIT, () -> attr("/jolokia/read/io.npulifecycle:type=Rebooter", "Executor").toLowerCase().contains("none"));
            assertUnharmed();
        }));
        l.add(test(c, "timeout=90 with interval=45 (timeout must be below interval)", "logged naming PID and key timeout, previous timeout kept", () -> {
            writeCfg("io.npulifecycle.probe.cfg", "interval=45\ntimeout=90\n");
            rt.await("the log naming io.npulifecycle.probe and key timeout", WAIT,
                    () -> rt.output().contains("io.npulifecycle.probe") && rt.output().contains("key timeout"));
            assertEquals("20", attr(HEALTH_WATCH, "TimeoutSeconds"));
            assertUnharmed();
        }));

        String d = "deploy jar";
        l.add(test(d, "truncated jar (first half of a real bundle)", "listed in the Deploy MBean by name as truncated or corrupt, not installed, bundles untouched", () -> {
            Path real = RuntimeProcess.distribution().resolve("bundles");
            Path any;
            try (Stream<Path> s = Files.list(real)) {
                any = s.filter(p -> p.getFileName().toString().startsWith("io.npulifecycle.probe")).findFirst().orElseThrow();
            }
            byte[] b = Files.readAllBytes(any);
            badJar("io.npulifecycle.truncated.jar", java.util.Arrays.copyOf(b, b.length / 2), "truncated or corrupt");
        }));
        l.add(test(d, "a text file named .jar", "listed by name as truncated or corrupt, not installed", () ->
                badJar("notes.jar", "this is not a jar\n".getBytes(StandardCharsets.UTF_8), "truncated or corrupt")));
        l.add(test(d, "a jar without a manifest", "listed by name: 'no META-INF/MANIFEST.MF', not installed", () ->
                badJar("no-manifest.jar", jar(null, Map.of("a.txt", new byte[] {1})), "no META-INF/MANIFEST.MF")));
        l.add(test(d, "a jar whose manifest has no Bundle-SymbolicName", "listed by name: 'no Bundle-SymbolicName', not installed", () ->
                badJar("plain-library.jar", jar(manifest("Created-By", "test"), Map.of("a.txt", new byte[] {1})), "no Bundle-SymbolicName")));
        l.add(test(d, "a bundle jar with a META-INF/*.SF signature that does not match", "listed by name: signature does not match, not installed", () -> {
            Manifest mf = manifest("Bundle-ManifestVersion", "2", "Bundle-SymbolicName", "io.npulifecycle.forged",
                    "Bundle-Version", "1.0.0");
            mf.getEntries().put("a.txt", new Attributes());
            mf.getEntries().get("a.txt").putValue("SHA-256-Digest", Base64.getEncoder().encodeToString(new byte[32]));
            byte[] sf = ("Signature-Version: 1.0\r\nSHA-256-Digest-Manifest: " + Base64.getEncoder().encodeToString(new byte[32])
                    + "\r\nCreated-By: forger\r\n\r\n").getBytes(StandardCharsets.UTF_8);
            Map<String, byte[]> entries = new java.util.LinkedHashMap<>();
            entries.put("META-INF/FORGED.SF", sf);
            entries.put("META-INF/FORGED.RSA", new byte[] {0x30, 0x03, 0x02, 0x01, 0x00});
            entries.put("a.txt", "payload".getBytes(StandardCharsets.UTF_8));
            badJar("io.npulifecycle.forged.jar", jar(mf, entries), "signature");
        }));
        l.add(test(d, "every bad jar above, after FileInstall's later polls", "none installed, existing bundles untouched, readiness kept", () -> {
            for (String n : deployed) {
                assertFalse(baselineBundles.contains(n.replace(".jar", "")) && !n.startsWith("io.npulifecycle.probe"), n);
            }
            // FileInstall polls every second: wait for the Deploy guard's next scan (2 s) twice, then compare
            // the answers compared without Jolokia's timestamp (seconds: two reads may fall in two seconds)
            String before = rt.get("/jolokia/read/io.npulifecycle:type=Deploy/RejectedFiles", USER, PASSWORD).body
                    .replaceAll("\"timestamp\":\\d+", "");
            rt.await("two more deploy scans", WAIT, () -> {
                rt.get("/jolokia/exec/io.npulifecycle:type=Deploy/scan()", USER, PASSWORD);
                return true;
            });
            assertEquals(before, rt.get("/jolokia/read/io.npulifecycle:type=Deploy/RejectedFiles", USER, PASSWORD).body
                    .replaceAll("\"timestamp\":\\d+", ""));
            assertUnharmed();
            assertFalse(bundles().contains("forged"), "the forged bundle was installed");
            RuntimeProcess.Answer ready = rt.get("/health/ready", null, null);
            assertTrue(ready.status == 200 || ready.status == 503, ready.toString());
        }));
        return l.stream();
    }
}
