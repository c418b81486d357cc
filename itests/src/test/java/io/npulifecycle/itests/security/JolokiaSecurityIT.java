package io.npulifecycle.itests.security;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

import io.npulifecycle.itests.NodeRuntimeSupport;
import io.npulifecycle.itests.RuntimeOptions;

/**
 * Jolokia access control on a real control-plane runtime (the distribution's bundles, the launcher's framework
 * properties, a users file with a viewer and an operator): 401 without credentials on every endpoint, the viewer
 * reads but is refused (status 403) every exec and write, the operator drives io.npulifecycle MBeans only, the forbidden
 * MBeans stay out of reach, no JSR-160 proxy, no CORS for a foreign origin, and the audit log names the user.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class JolokiaSecurityIT extends NodeRuntimeSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String V = SecurityRuntime.VIEWER;
    static final String VP = SecurityRuntime.VIEWER_PASSWORD;
    static final String O = SecurityRuntime.OPERATOR;
    static final String OP = SecurityRuntime.OPERATOR_PASSWORD;
    static final String EXEC_NPU = "/exec/io.npulifecycle:type=KubernetesClient/checkConnection";
    static final String PROXY = "{\"type\":\"read\",\"mbean\":\"java.lang:type=Memory\",\"attribute\":\"Verbose\","
            + "\"target\":{\"url\":\"service:jmx:rmi:///jndi/rmi://127.0.0.1:1099/jmxrmi\"}}";

    @Configuration
    public Option[] config() {
        return once(JolokiaSecurityIT.class, () -> RuntimeOptions.runtime("control-plane", "jolokia-security",
                Map.of("jolokia-users.properties", SecurityRuntime.usersFile())));
    }

    JolokiaClient client() {
        return new JolokiaClient("http://127.0.0.1:" + property("org.osgi.service.http.port") + "/jolokia", null);
    }

    void awaitJolokia() {
        await("Jolokia answers the operator", TIMEOUT, () -> client().get("/read/io.npulifecycle:type=Runtime/Role",
                USER, PASSWORD).body.contains("\"status\":200"));
    }

    @Test
    public void unauthenticatedRequestsGet401OnEveryEndpoint() {
        awaitJolokia();
        JolokiaClient c = client();
        for (String path : new String[] {"", "/", "/version", "/read/io.npulifecycle:type=Runtime/Role",
            "/read/java.lang:type=Memory", "/list", "/list/io.npulifecycle", "/search/*:*", EXEC_NPU,
            "/exec/java.lang:type=Memory/gc", "/write/java.lang:type=Memory/Verbose/true"}) {
            assertEquals("GET " + path, 401, c.get(path, null, null).status);
            assertEquals("GET " + path + " wrong password", 401, c.get(path, O, "wrong-password-123").status);
            assertEquals("GET " + path + " unknown user", 401, c.get(path, "mallory", OP).status);
        }
        // refused POSTs in a row on one keep-alive connection: each refusal reads the body, so the next request on
        // that connection is answered too instead of failing on a connection closed under it
        for (int i = 0; i < 20; i++) {
            JolokiaClient.Reply anonymous = c.post("{\"type\":\"version\"}", null, null);
            assertEquals("POST #" + i + " without credentials: " + anonymous, 401, anonymous.status);
            JolokiaClient.Reply wrong = c.post("[{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=KubernetesClient\","
                    + "\"operation\":\"checkConnection\"}]", V, OP);
            assertEquals("POST #" + i + " with the wrong password: " + wrong, 401, wrong.status);
            JolokiaClient.Reply foreign = c.send("POST", "", O, OP, "{\"type\":\"version\"}",
                    "Origin", "http://evil.example");
            assertEquals("POST #" + i + " from a foreign origin: " + foreign, 403, foreign.status);
        }
        assertEquals(401, c.send("OPTIONS", "/version", null, null, null, "Origin", "http://evil.example",
                "Access-Control-Request-Method", "POST").status);
        // Jolokia's service authentication sends no challenge (documented in docs/security.md, "Jolokia")
        assertNull(c.get("/version", null, null).header("WWW-Authenticate"));
        // the 401 body is a Jolokia-style JSON error, not Jetty's HTML page
        JolokiaClient.Reply unauthorized = c.post("{\"type\":\"version\"}", O, "wrong-password-123");
        assertTrue(unauthorized.toString(), unauthorized.body.startsWith("{\"status\":401,")
                && unauthorized.body.contains("\"error\":\"authentication required") && !unauthorized.body.contains("<"));
        assertTrue(String.valueOf(unauthorized.header("Content-Type")),
                String.valueOf(unauthorized.header("Content-Type")).startsWith("application/json"));
    }

    @Test
    public void viewerReadsListsSearchesButGets403ForEveryExecAndWrite() {
        awaitJolokia();
        JolokiaClient c = client();
        for (String path : new String[] {"/version", "/read/io.npulifecycle:type=Runtime/Role",
            "/read/java.lang:type=Memory/HeapMemoryUsage", "/read/java.lang:type=Runtime/Uptime",
            "/list/io.npulifecycle", "/list/java.lang", "/search/io.npulifecycle:*", "/search/java.lang:*",
            "/read/io.npulifecycle:type=Health"}) {
            JolokiaClient.Reply r = c.get(path, V, VP);
            assertEquals(path + ": " + r, 200, r.status);
            assertTrue(path + ": " + r, r.body.contains("\"status\":200"));
        }
        JolokiaClient.Reply bulkRead = c.post("[{\"type\":\"read\",\"mbean\":\"io.npulifecycle:type=Runtime\","
                + "\"attribute\":\"Role\"},{\"type\":\"version\"}]", V, VP);
        assertEquals(bulkRead.toString(), 200, bulkRead.status);
        assertTrue(bulkRead.body, bulkRead.body.contains("\"value\":\"control-plane\""));

        for (String path : new String[] {EXEC_NPU, "/exec/java.lang:type=Memory/gc",
            "/write/java.lang:type=Memory/Verbose/true", "/write/io.npulifecycle:type=Runtime/Role/x",
            "/EXEC/io.npulifecycle:type=KubernetesClient/checkConnection", "?p=/exec/java.lang:type=Memory/gc"}) {
            JolokiaClient.Reply r = c.get(path, V, VP);
            // a Jolokia error entry (HTTP 200, status 403): jolokia.js sends single requests as GETs
            assertEquals(path + ": " + r, 200, r.status);
            assertTrue(path + ": " + r, r.body.startsWith("{\"status\":403,") && r.body.contains("role viewer may not"));
        }
        // POST (jolokia.js, Hawtio): a refused request is a Jolokia error entry (HTTP 200, status 403), which
        // jolokia.js hands to its error callback
        for (String body : new String[] {
            "{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=KubernetesClient\",\"operation\":\"checkConnection\"}",
            "{\"type\":\"write\",\"mbean\":\"java.lang:type=Memory\",\"attribute\":\"Verbose\",\"value\":true}"}) {
            JolokiaClient.Reply r = c.post(body, V, VP);
            assertEquals(body + ": " + r, 200, r.status);
            assertTrue(r.body, r.body.startsWith("{\"status\":403,") && r.body.contains("role viewer may not")
                    && r.body.contains("\"request\":{"));
        }
        // in a bulk, each refused item gets its own 403 entry and the others are served, in order
        JolokiaClient.Reply mixed = c.post("[{\"type\":\"read\",\"mbean\":\"io.npulifecycle:type=Runtime\","
                + "\"attribute\":\"Role\"},{\"type\":\"exec\",\"mbean\":\"java.lang:type=Memory\",\"operation\":\"gc\"},"
                + "{\"type\":\"version\"},{\"type\":\"write\",\"mbean\":\"io.npulifecycle:type=Runtime\",\"attribute\":"
                + "\"Role\",\"value\":\"x\"}]", V, VP);
        assertEquals(mixed.toString(), 200, mixed.status);
        int read = mixed.body.indexOf("\"value\":\"control-plane\"");
        int exec = mixed.body.indexOf("role viewer may not exec");
        int version = mixed.body.indexOf("\"agent\"");
        int write = mixed.body.indexOf("role viewer may not write");
        assertTrue(mixed.body, read > 0 && exec > read && version > exec && write > version);
        JolokiaClient.Reply allRefused = c.post("[{\"type\":\"exec\",\"mbean\":\"java.lang:type=Memory\","
                + "\"operation\":\"gc\"}]", V, VP);
        assertEquals(allRefused.toString(), 200, allRefused.status);
        assertTrue(allRefused.body, allRefused.body.startsWith("[{\"status\":403,"));
        // an empty bulk (Hawtio sends one on every refresh) is answered with an empty array
        JolokiaClient.Reply empty = c.post("[]", V, VP);
        assertEquals(empty.toString(), 200, empty.status);
        assertEquals("[]", empty.body.trim());
        assertEquals(400, c.post("{\"type\":", V, VP).status);
        // a bulk larger than the limit is refused before Jolokia builds its answer (3,000 lists ran the agent out of
        // memory); the limit itself is served, and the runtime answers afterwards
        String list = "{\"type\":\"list\",\"path\":\"io.npulifecycle\"}";
        JolokiaClient.Reply tooMany = c.post("[" + String.join(",", java.util.Collections.nCopies(3000, list)) + "]",
                V, VP);
        assertEquals(tooMany.toString(), 400, tooMany.status);
        assertTrue(tooMany.body, tooMany.body.contains("at most 100 per request"));
        String versionItem = "{\"type\":\"version\"}";
        JolokiaClient.Reply atLimit = c.post("["
                + String.join(",", java.util.Collections.nCopies(100, versionItem)) + "]", V, VP);
        assertEquals(atLimit.toString(), 200, atLimit.status);
        assertEquals(atLimit.body, 100, atLimit.body.split("\"status\":200").length - 1);
        assertTrue(c.get("/read/io.npulifecycle:type=Runtime/Role", V, VP).body.contains("\"status\":200"));
    }

    @Test
    public void operatorExecsOnProductMBeansOnlyAndTheAuditLogNamesTheUser() {
        awaitJolokia();
        List<String> audit = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger("io.npulifecycle.audit");
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                audit.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(h);
        try {
            JolokiaClient c = client();
            JolokiaClient.Reply ok = c.get(EXEC_NPU, O, OP);
            assertEquals(ok.toString(), 200, ok.status);
            assertTrue(ok.toString(), ok.body.contains("\"status\":200"));
            assertTrue(audit.toString(), audit.stream().anyMatch(l -> l.contains("exec user=" + O + " role=operator "
                    + "mbean=io.npulifecycle:type=KubernetesClient operation=checkConnection outcome=allowed")));
            JolokiaClient.Reply viaPost = c.post("{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=KubernetesClient\","
                    + "\"operation\":\"checkConnection\"}", O, OP);
            assertTrue(viaPost.toString(), viaPost.body.contains("\"status\":200"));
            // the runtime's own operator (NPU_LIFECYCLE_JOLOKIA_USER) too
            assertTrue(c.get(EXEC_NPU, USER, PASSWORD).body.contains("\"status\":200"));

            for (String path : new String[] {"/exec/java.lang:type=Memory/gc", "/write/java.lang:type=Memory/Verbose/true",
                "/exec/java.lang:type=Threading/resetPeakThreadCount",
                "/exec/com.sun.management:type=DiagnosticCommand/vmVersion",
                "/exec/com.sun.management:type=HotSpotDiagnostic/dumpHeap/!/tmp!/x.hprof/true",
                "/exec/jdk.management.jfr:type=FlightRecorder/newRecording",
                "/exec/JMImplementation:type=MBeanServerDelegate/x"}) {
                JolokiaClient.Reply r = c.get(path, O, OP);
                assertTrue(path + ": " + r, r.status == 200 && r.body.startsWith("{\"status\":403,"));
                assertTrue(r.body, r.body.contains("only on io.npulifecycle MBeans") || r.body.contains("never reachable"));
            }
            JolokiaClient.Reply gcByPost = c.post("{\"type\":\"exec\",\"mbean\":\"java.lang:type=Memory\","
                    + "\"operation\":\"gc\"}", O, OP);
            assertTrue(gcByPost.toString(), gcByPost.status == 200 && gcByPost.body.startsWith("{\"status\":403,"));
            assertTrue(audit.toString(), audit.stream().anyMatch(l -> l.contains("exec user=" + O + " role=operator "
                    + "mbean=java.lang:type=Memory operation=gc outcome=denied")));
            // reads of the forbidden MBeans: refused by the restrictor (Jolokia's JSON status 403), whatever the role
            for (String path : new String[] {"/read/com.sun.management:type=HotSpotDiagnostic/DiagnosticOptions",
                "/read/com.sun.management:type=DiagnosticCommand", "/read/jdk.management.jfr:type=FlightRecorder",
                "/read/jolokia:type=Config"}) {
                for (String[] u : new String[][] {{O, OP}, {V, VP}}) {
                    JolokiaClient.Reply r = c.get(path, u[0], u[1]);
                    assertTrue(u[0] + " " + path + ": " + r, r.body.contains("\"status\":403")
                            || r.body.contains("\"status\":404"));
                    assertTrue(u[0] + " " + path + ": " + r, !r.body.contains("\"status\":200"));
                }
            }
            // hidden from list and search
            String search = c.get("/search/*:*", O, OP).body;
            assertTrue(search, search.contains("\"status\":200") && search.contains("java.lang:type=Memory"));
            assertTrue(search, !search.contains("DiagnosticCommand") && !search.contains("HotSpotDiagnostic")
                    && !search.contains("jdk.management.jfr"));
        } finally {
            logger.removeHandler(h);
        }
    }

    @Test
    public void exactlyOneJolokiaServletAndNoJolokiaManagedService() throws Exception {
        awaitJolokia();
        org.osgi.framework.ServiceReference<?>[] servlets = bundleContext.getAllServiceReferences(null,
                "(&(objectClass=jakarta.servlet.Servlet)(osgi.http.whiteboard.servlet.name=jolokia))");
        assertEquals("Jolokia servlets (start-up race, see JolokiaConfigAdminHider)", 1, servlets.length);
        assertNull("ConfigAdmin is hidden from Jolokia: no org.jolokia.osgi ManagedService",
                bundleContext.getAllServiceReferences("org.osgi.service.cm.ManagedService", "(service.pid=org.jolokia.osgi)"));
    }

    @Test
    public void boundToLoopbackOnly() throws Exception {
        awaitJolokia();
        assertEquals("127.0.0.1", property("org.apache.felix.http.host"));
        for (java.net.NetworkInterface ni : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            for (java.net.InetAddress a : java.util.Collections.list(ni.getInetAddresses())) {
                if (a.isLoopbackAddress() || !(a instanceof java.net.Inet4Address)) {
                    continue;
                }
                JolokiaClient.Reply r = new JolokiaClient("http://" + a.getHostAddress() + ":"
                        + property("org.osgi.service.http.port") + "/jolokia", null).get("/version", O, OP);
                assertEquals(a + ": " + r, -1, r.status);
            }
        }
    }

    @Test
    public void jsr160ProxyRequestsAreRefused() {
        awaitJolokia();
        JolokiaClient c = client();
        for (String body : new String[] {PROXY, "[{\"type\":\"version\"}," + PROXY + "]"}) {
            JolokiaClient.Reply r = c.post(body, O, OP);
            assertEquals(r.toString(), 403, r.status);
            assertTrue(r.body, r.body.contains("JSR-160 proxy"));
        }
        assertEquals(403, c.get("/read/java.lang:type=Memory/Verbose?target=service:jmx:rmi:///jndi/rmi://127.0.0.1"
                + ":1099/jmxrmi", O, OP).status);
    }

    @Test
    public void noRoleLearnsTheAgentsConfigurationThroughConfigNotificationOrVersion() {
        awaitJolokia();
        JolokiaClient c = client();
        String[][] users = {{V, VP, "viewer"}, {O, OP, "operator"}};
        for (String[] u : users) {
            for (JolokiaClient.Reply r : new JolokiaClient.Reply[] {c.post("{\"type\":\"config\"}", u[0], u[1]),
                c.get("/config", u[0], u[1]),
                c.post("{\"type\":\"notification\",\"command\":\"register\"}", u[0], u[1])}) {
                assertEquals(r.toString(), 200, r.status);
                assertTrue(u[2] + ": " + r.body, r.body.startsWith("{\"status\":403,\"error_type\":"
                        + "\"java.lang.SecurityException\",\"error\":\"role " + u[2] + " may not "));
                assertFalse(u[2] + ": " + r.body, r.body.contains("\"value\"") || r.body.contains("security"));
            }
            JolokiaClient.Reply bulk = c.post("[{\"type\":\"version\"},{\"type\":\"config\"}]", u[0], u[1]);
            assertTrue(bulk.body, bulk.body.contains("\"agent\":\"") && bulk.body.contains("may not config"));
            for (JolokiaClient.Reply r : new JolokiaClient.Reply[] {c.get("/version", u[0], u[1]), c.get("/", u[0], u[1]),
                bulk}) {
                assertTrue(r.body, r.body.contains("\"protocol\":\""));
                assertFalse(u[2] + ": " + r.body, r.body.contains("policyLocation") || r.body.contains("\"config\":{")
                        || r.body.contains("jolokia-access.xml"));
            }
        }
    }

    @Test
    public void aFieldOfTheWrongJsonTypeIsNamedAndNoAnswerCarriesLoadersOrStackTraces() {
        awaitJolokia();
        JolokiaClient c = client();
        String exec = "{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=Runtime\",\"operation\":\"x\","
                + "\"arguments\":{\"a\":1}}";
        JolokiaClient.Reply single = c.post(exec, O, OP);
        assertEquals(single.toString(), 400, single.status);
        assertTrue(single.body, single.body.startsWith("{\"status\":400,\"error_type\":\"java.lang."
                + "IllegalArgumentException\",\"error\":\"field \\\"arguments\\\" is an object: expected an array"));
        JolokiaClient.Reply bulk = c.post("[" + exec + ",{\"type\":\"read\",\"mbean\":5},{\"type\":\"version\"}]",
                O, OP);
        assertEquals(bulk.toString(), 200, bulk.status);
        assertTrue(bulk.body, bulk.body.contains("field \\\"mbean\\\" is a number: expected a string")
                && bulk.body.contains("\"agent\":\""));
        for (JolokiaClient.Reply r : new JolokiaClient.Reply[] {single, bulk,
            c.get("/read/io.npulifecycle:type=Runtime/NoSuchAttribute?includeStackTrace=true&serializeException=true",
                    O, OP),
            c.post("{\"type\":\"read\",\"mbean\":\"io.npulifecycle:type=Runtime\",\"attribute\":\"NoSuchAttribute\","
                    + "\"config\":{\"includeStackTrace\":\"true\",\"serializeException\":\"true\"}}", O, OP)}) {
            assertTrue(r.body, r.body.contains("\"error\":\""));
            assertFalse(r.body, r.body.contains("loader") || r.body.contains("stacktrace")
                    || r.body.contains("error_value") || r.body.contains("\tat "));
        }
    }

    @Test
    public void aForeignOriginGetsNoCorsHeaderAndIsRefused() {
        awaitJolokia();
        JolokiaClient c = client();
        for (String origin : new String[] {"http://evil.example", "http://localhost", "http://127.0.0.1", "null"}) {
            JolokiaClient.Reply r = c.get("/read/io.npulifecycle:type=Runtime/Role", O, OP, "Origin", origin);
            assertNull(origin + ": " + r.response.headers().map(), r.header("Access-Control-Allow-Origin"));
            assertTrue(origin + ": " + r, !r.body.contains("\"status\":200"));
        }
        JolokiaClient.Reply referer = c.get("/read/io.npulifecycle:type=Runtime/Role", O, OP, "Referer",
                "http://evil.example/page");
        assertTrue(referer.toString(), !referer.body.contains("\"status\":200"));
        JolokiaClient.Reply post = c.send("POST", "", O, OP, "{\"type\":\"version\"}", "Origin", "http://evil.example");
        assertNull(post.header("Access-Control-Allow-Origin"));
        assertTrue(post.toString(), !post.body.contains("\"status\":200"));
    }

    /**
     * Hawtio's proxy forwards the browser's Origin: one {@code <allow-origin>} line in the policy lets it in, without a
     * restart; the refusal before is audited with the origin and the fix; a broken policy keeps the one before.
     */
    @Test
    public void anAllowedOriginIsOneLineOfThePolicyReReadWhenItChangesAndEveryRefusalIsAuditedWithTheFix()
            throws Exception {
        awaitJolokia();
        JolokiaClient c = client();
        String hawtio = "http://localhost:8080";
        List<String> audit = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger("io.npulifecycle.audit");
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                audit.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(h);
        java.nio.file.Path policy = java.nio.file.Path.of(property("npu.lifecycle.jolokia.policy"));
        String original = java.nio.file.Files.readString(policy);
        long mtime = java.nio.file.Files.getLastModifiedTime(policy).toMillis();
        try {
            JolokiaClient.Reply refused = c.send("POST", "", V, VP, "{\"type\":\"version\"}", "Origin", hawtio);
            assertEquals(refused.toString(), 403, refused.status);
            assertTrue(refused.body, refused.body.contains("<allow-origin>" + hawtio + "</allow-origin>"));
            assertTrue(audit.toString(), audit.stream().anyMatch(l -> l.contains("origin user=" + V)
                    && l.contains("origin=" + hawtio) && l.contains("<allow-origin>" + hawtio + "</allow-origin>")));

            write(policy, original.replace("<strict-checking/>", "<allow-origin>" + hawtio
                    + "</allow-origin><strict-checking/>"), mtime + 2000);
            JolokiaClient.Reply allowed = c.send("POST", "", V, VP, "{\"type\":\"version\"}", "Origin", hawtio);
            assertTrue(allowed.toString(), allowed.status == 200 && allowed.body.contains("\"status\":200"));
            assertEquals(hawtio, allowed.header("Access-Control-Allow-Origin"));

            write(policy, "<restrict><cors>", mtime + 4000);
            JolokiaClient.Reply kept = c.send("POST", "", V, VP, "{\"type\":\"version\"}", "Origin", hawtio);
            assertTrue("a broken policy keeps the one before: " + kept, kept.body.contains("\"status\":200"));
            assertTrue(audit.toString(), audit.stream().anyMatch(l -> l.contains(policy.toString())
                    && l.contains("cannot be used") && l.contains("keeping the policy loaded before")));
        } finally {
            logger.removeHandler(h);
            write(policy, original, mtime + 6000);
        }
        JolokiaClient.Reply again = c.send("POST", "", V, VP, "{\"type\":\"version\"}", "Origin", hawtio);
        assertEquals("the restored policy applies: " + again, 403, again.status);
    }

    /**
     * Every error answer of /jolokia is Jolokia's JSON error entry with Content-Type application/json, Jolokia's own
     * 400s (unknown type, malformed MBean name), the refusal of JSONP (403) and the container's (405, 413) included; in a bulk, an
     * item Jolokia cannot build gets a 400 entry of its own and the other items are served, in order.
     */
    @Test
    public void everyErrorOfJolokiaIsAJsonEntryAndABadBulkItemFailsOnlyItself() {
        awaitJolokia();
        JolokiaClient c = client();
        JolokiaClient.Reply[] errors = {
            c.get("/bogus/x", O, OP),
            c.get("/read/bad%20name/x", O, OP),
            c.get("/read/io.npulifecycle:type=Runtime/Role?callback=%3Cscript%3E", O, OP),
            c.post("{\"type\":", O, OP),
            c.post("{\"type\":\"bogus\"}", O, OP),
            c.send("PUT", "/version", O, OP, "{}"),
            c.post("[\"" + "x".repeat(1_100_000) + "\"]", O, OP)};
        int[] statuses = {400, 400, 403, 400, 400, 405, 413};
        for (int i = 0; i < errors.length; i++) {
            JolokiaClient.Reply r = errors[i];
            assertEquals(i + ": " + r, statuses[i], r.status);
            assertTrue(i + ": " + r.header("Content-Type"), String.valueOf(r.header("Content-Type"))
                    .startsWith("application/json"));
            assertTrue(i + ": " + r, r.body.startsWith("{\"status\":" + statuses[i] + ",\"error_type\":\"")
                    && r.body.contains("\"error\":\"") && !r.body.contains("<"));
        }
        assertTrue(errors[0].body, errors[0].body.contains("No type with name 'bogus' exists"));
        assertTrue(errors[2].body, errors[2].body.contains("JSONP (the query parameter callback) is not served"));

        JolokiaClient.Reply bulk = c.post("[{\"type\":\"read\",\"mbean\":\"io.npulifecycle:type=Runtime\","
                + "\"attribute\":\"Role\"},{\"type\":\"bogus\"},42,{\"type\":\"read\",\"mbean\":\"bad name\"},"
                + "{\"type\":\"version\"}]", O, OP);
        assertEquals(bulk.toString(), 200, bulk.status);
        int read = bulk.body.indexOf("\"value\":\"control-plane\"");
        int type = bulk.body.indexOf("No type with name 'bogus' exists");
        int element = bulk.body.indexOf("element 2 of the bulk request is not a JSON object");
        int name = bulk.body.indexOf("\"request\":{\"mbean\":\"bad name\"");
        int version = bulk.body.indexOf("\"agent\"");
        assertTrue(bulk.body, read > 0 && type > read && element > type && name > element && version > name);
        assertEquals(bulk.body, 3, bulk.body.split("\"status\":400").length - 1);
    }

    /**
     * One malformed line in the users file, added while the runtime runs: the user it was meant for gets 401, every
     * other user keeps working, and the log names the file, the line and what was expected, never the value.
     */
    @Test
    public void aMalformedUsersFileLineLocksOutOnlyItsUserAndTheLogNamesFileAndLine() throws Exception {
        awaitJolokia();
        JolokiaClient c = client();
        List<String> audit = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger("io.npulifecycle.audit");
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                audit.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(h);
        java.nio.file.Path users = java.nio.file.Path.of(property("npu.lifecycle.jolokia.users"));
        String original = java.nio.file.Files.readString(users);
        long mtime = java.nio.file.Files.getLastModifiedTime(users).toMillis();
        long line = original.lines().count() + 1;
        try {
            write(users, original + "mallory=operator:clear-text-secret-password\n", mtime + 2000);
            String expected = users + ", line " + line + ": user 'mallory'";
            await("the bad line reported", TIMEOUT, () -> c.get("/version", V, VP).status == 200
                    && audit.stream().anyMatch(l -> l.contains(expected)), audit::toString);
            assertTrue(audit.toString(), audit.stream().anyMatch(l -> l.contains(expected)
                    && l.contains("expected pbkdf2-sha256:<iterations>:<salt>:<hash>")
                    && l.contains("this line is ignored")));
            assertTrue(audit.toString(), audit.stream().noneMatch(l -> l.contains("clear-text-secret-password")));
            assertTrue(c.get("/read/io.npulifecycle:type=Runtime/Role", V, VP).body.contains("\"status\":200"));
            assertTrue(c.get(EXEC_NPU, O, OP).body.contains("\"status\":200"));
            assertTrue(c.get(EXEC_NPU, USER, PASSWORD).body.contains("\"status\":200"));
            assertEquals(401, c.get("/version", "mallory", "clear-text-secret-password").status);
        } finally {
            logger.removeHandler(h);
            write(users, original, mtime + 4000);
        }
    }

    /**
     * What the README says about content types: Jolokia answers application/json, and a POST body is read as JSON
     * whatever its Content-Type (curl -d sends application/x-www-form-urlencoded).
     */
    @Test
    public void answersAreApplicationJsonAndAPostIsReadWhateverItsContentType() throws Exception {
        awaitJolokia();
        JolokiaClient.Reply get = client().get("/read/io.npulifecycle:type=Runtime/Role", V, VP);
        assertTrue(String.valueOf(get.header("Content-Type")), String.valueOf(get.header("Content-Type"))
                .startsWith("application/json"));
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
        for (String type : new String[] {"application/x-www-form-urlencoded", "text/plain"}) {
            java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + property("org.osgi.service.http.port") + "/jolokia"))
                    .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                            (V + ":" + VP).getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                    .header("Content-Type", type).timeout(Duration.ofSeconds(20))
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"type\":\"read\",\"mbean\":"
                            + "\"io.npulifecycle:type=Runtime\",\"attribute\":\"Role\"}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertTrue(type + ": " + r.body(), r.statusCode() == 200 && r.body().contains("\"value\":\"control-plane\""));
            assertTrue(type, r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        }
    }

    static void write(java.nio.file.Path f, String text, long mtime) throws java.io.IOException {
        java.nio.file.Files.writeString(f, text);
        java.nio.file.Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.fromMillis(mtime));
    }

    /**
     * jolokia.js 2.6 from npm, driven by node, as the README shows it: an operator reads, searches and execs; a
     * viewer's bulk with a forbidden exec gets the read in its success callback and the exec, status 403 with the
     * reason, in its error callback; a single refused exec reaches the error callback too. Needs node and npm
     * (jolokia.js is installed into target/ once, from the npm cache when offline).
     */
    @Test
    public void jolokiaJsFromNpmReadsSearchesExecsAndHandsEachRefusedItemToItsErrorCallback() throws Exception {
        awaitJolokia();
        java.nio.file.Path js = java.nio.file.Path.of("src/test/js").toAbsolutePath();
        java.nio.file.Path prefix = java.nio.file.Path.of("target/jolokia-js").toAbsolutePath();
        org.junit.Assume.assumeTrue("node and npm are needed for the jolokia.js test",
                run(List.of("node", "--version"), js, Duration.ofSeconds(20)) != null
                        && run(List.of("npm", "--version"), js, Duration.ofSeconds(20)) != null);
        if (!java.nio.file.Files.isDirectory(prefix.resolve("node_modules/jolokia.js"))) {
            java.nio.file.Files.createDirectories(prefix);
            String installed = run(List.of("npm", "install", "--prefix", prefix.toString(), "--no-save", "--no-audit",
                    "--no-fund", "--prefer-offline", "jolokia.js@" + JOLOKIA_JS_VERSION), prefix, Duration.ofMinutes(3));
            assertTrue("npm install jolokia.js@" + JOLOKIA_JS_VERSION + " failed: " + installed, installed != null);
        }
        java.nio.file.Path script = prefix.resolve("jolokia-client.mjs");
        java.nio.file.Files.copy(js.resolve("jolokia-client.mjs"), script,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        String url = "http://127.0.0.1:" + property("org.osgi.service.http.port") + "/jolokia";
        String out = run(List.of("node", script.toString(), url, O, OP, V, VP), prefix, Duration.ofSeconds(60));
        assertTrue("node " + script + " failed", out != null);
        String line = out.trim().lines().reduce((x, y) -> y).orElse("");
        for (String expected : new String[] {"{\"readValue\":\"control-plane\",", "\"searchFindsRuntime\":true,",
            "\"execStatus\":200,", "\"bulkSuccess\":[[0,\"control-plane\"]],",
            "\"bulkError\":[[1,403,\"role viewer may not exec\"]],", "\"bulkFetchError\":null,",
            "\"single\":[\"error\",403,\"role viewer may not exec\"]}"}) {
            assertTrue("jolokia.js: expected " + expected + " in " + out, line.contains(expected));
        }
    }

    static final String JOLOKIA_JS_VERSION = "2.6.1";

    /** @return the process's standard output when it exits with 0 within {@code timeout}, else {@code null} */
    static String run(List<String> command, java.nio.file.Path dir, Duration timeout) {
        try {
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
            java.util.concurrent.CompletableFuture<String> output = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                        } catch (java.io.IOException e) {
                            return "";
                        }
                    });
            if (!p.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                return null;
            }
            String text = output.get(10, java.util.concurrent.TimeUnit.SECONDS);
            if (p.exitValue() != 0) {
                System.err.println(command + " exited " + p.exitValue() + ": " + text);
                return null;
            }
            return text;
        } catch (java.io.IOException e) {
            return null;
        } catch (Exception e) {
            throw new IllegalStateException(command + ": " + e, e);
        }
    }
}
