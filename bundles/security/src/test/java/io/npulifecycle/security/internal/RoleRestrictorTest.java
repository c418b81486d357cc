package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;

import javax.management.ObjectName;

import org.jolokia.server.core.util.HttpMethod;
import org.jolokia.server.core.util.RequestType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.npulifecycle.security.tool.Role;

class RoleRestrictorTest {

    static final String POLICY = "<restrict><commands><command>read</command><command>list</command>"
            + "<command>search</command><command>version</command><command>exec</command><command>write</command>"
            + "</commands><cors><strict-checking/></cors>"
            + "<deny><mbean><name>io.npulifecycle:type=Secret</name><operation>*</operation></mbean></deny></restrict>";

    RoleRestrictor r = new RoleRestrictor();

    @BeforeEach
    void load() {
        r.load(POLICY.getBytes(StandardCharsets.UTF_8), "test policy");
    }

    @AfterEach
    void clear() {
        Caller.clear();
    }

    static ObjectName n(String s) throws Exception {
        return new ObjectName(s);
    }

    @Test
    void noCallerOnTheThreadDeniesEverything() throws Exception {
        assertFalse(r.isTypeAllowed(RequestType.READ));
        assertFalse(r.isTypeAllowed(RequestType.VERSION));
        assertFalse(r.isHttpMethodAllowed(HttpMethod.GET));
        assertFalse(r.isRemoteAccessAllowed("127.0.0.1"));
        assertFalse(r.isAttributeReadAllowed(n("java.lang:type=Memory"), "HeapMemoryUsage"));
        assertFalse(r.isOperationAllowed(n("io.npulifecycle:type=Rebooter"), "approve"));
    }

    @Test
    void viewerReadsButNeverChanges() throws Exception {
        Caller.set(new Caller("alice", Role.VIEWER));
        for (RequestType t : new RequestType[] {RequestType.READ, RequestType.LIST, RequestType.SEARCH,
            RequestType.VERSION}) {
            assertTrue(r.isTypeAllowed(t), t.getName());
        }
        assertFalse(r.isTypeAllowed(RequestType.EXEC));
        assertFalse(r.isTypeAllowed(RequestType.WRITE));
        assertFalse(r.isTypeAllowed(RequestType.NOTIFICATION));
        assertTrue(r.isAttributeReadAllowed(n("io.npulifecycle:type=Runtime"), "Role"));
        assertTrue(r.isAttributeReadAllowed(n("java.lang:type=Memory"), "HeapMemoryUsage"));
        assertFalse(r.isAttributeReadAllowed(n("jolokia:type=Config"), "Debug"));
        assertFalse(r.isOperationAllowed(n("io.npulifecycle:type=Rebooter"), "approve"));
        assertFalse(r.isAttributeWriteAllowed(n("io.npulifecycle:type=Rebooter"), "X"));
    }

    @Test
    void operatorChangesOnlyProductMBeansAllowedByThePolicy() throws Exception {
        Caller.set(new Caller("bob", Role.OPERATOR));
        assertTrue(r.isTypeAllowed(RequestType.EXEC));
        assertTrue(r.isTypeAllowed(RequestType.WRITE));
        assertFalse(r.isTypeAllowed(RequestType.NOTIFICATION));
        assertTrue(r.isOperationAllowed(n("io.npulifecycle:type=Rebooter"), "approve"));
        assertTrue(r.isAttributeWriteAllowed(n("io.npulifecycle:type=Simulator"), "X"));
        assertFalse(r.isOperationAllowed(n("java.lang:type=Memory"), "gc"));
        assertFalse(r.isAttributeWriteAllowed(n("java.lang:type=Memory"), "Verbose"));
        assertFalse(r.isOperationAllowed(n("io.npulifecycle:type=Secret"), "x"), "the policy's deny applies too");
        assertFalse(r.isOperationAllowed(n("io.npulifecycle.other:type=X"), "x"));
    }

    @Test
    void forbiddenMBeansWhateverTheRole() throws Exception {
        Caller.set(new Caller("bob", Role.OPERATOR));
        for (String s : new String[] {"com.sun.management:type=DiagnosticCommand",
            "com.sun.management:type=HotSpotDiagnostic", "jdk.management.jfr:type=FlightRecorder",
            "javax.management.loading:type=MLet", "io.npulifecycle:type=MLet", "*:type=Memory"}) {
            assertTrue(r.forbidden(n(s)), s);
            assertTrue(r.isObjectNameHidden(n(s)), s);
            assertFalse(r.isAttributeReadAllowed(n(s), "X"), s);
            assertFalse(r.isOperationAllowed(n(s), "x"), s);
        }
        assertFalse(r.forbidden(n("java.lang:type=Memory")));
    }

    @Test
    void anMBeanThatIsAClassLoaderIsForbiddenWhateverItsName() throws Exception {
        ObjectName name = n("io.npulifecycle:type=Loader");
        ManagementFactory.getPlatformMBeanServer().registerMBean(new Loader(), name);
        try {
            assertTrue(r.forbidden(name));
        } finally {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        }
    }

    /** A class loader exposed as an MBean. */
    public interface LoaderMBean {
        /** @return 1 */
        int getOne();
    }

    /** The loader. */
    public static class Loader extends URLClassLoader implements LoaderMBean {
        public Loader() {
            super(new URL[0]);
        }

        @Override
        public int getOne() {
            return 1;
        }
    }

    @Test
    void corsAllowsNoOriginUnlessConfigured() {
        assertFalse(r.isOriginAllowed("http://evil.example", false));
        assertFalse(r.isOriginAllowed("http://evil.example", true));
        assertFalse(r.isOriginAllowed("http://localhost", true));
        assertFalse(r.isOriginAllowed("null", true));
        assertTrue(r.isOriginAllowed(null, true), "no Origin/Referer: not a browser's cross-site request");
        r.load(POLICY.replace("<strict-checking/>", "<allow-origin>https://console.example:8443</allow-origin>")
                .getBytes(StandardCharsets.UTF_8), "p2");
        assertTrue(r.isOriginAllowed("https://console.example:8443", false));
        assertFalse(r.isOriginAllowed("https://console.example:8444", false));
        assertTrue(r.isOriginAllowed("http://evil.example", true), "without strict checking only preflight checks");
    }

    @Test
    void badPoliciesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> r.load("<restrict>".getBytes(), "p"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> r.load("<allow/>".getBytes(), "p"))
                .getMessage().contains("expected <restrict>"));
        assertThrows(IllegalArgumentException.class, () -> r.load(("<!DOCTYPE x [<!ENTITY e SYSTEM "
                + "\"file:///etc/passwd\">]><restrict>&e;</restrict>").getBytes(), "p"));
    }

    @Test
    void thePolicyFileIsReReadWhenItChangesAndABrokenOrRemovedOneKeepsThePolicyLoadedBefore(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path f = dir.resolve("jolokia-access.xml");
        java.nio.file.Files.writeString(f, POLICY);
        RoleRestrictor fr = new RoleRestrictor();
        fr.loadFile(f);
        String hawtio = "http://localhost:8080";
        assertFalse(fr.isOriginAllowed(hawtio, false));
        long t = java.nio.file.Files.getLastModifiedTime(f).toMillis();

        write(f, POLICY.replace("<strict-checking/>", "<allow-origin>" + hawtio + "</allow-origin><strict-checking/>"),
                t + 2000);
        fr.reload();
        assertTrue(fr.isOriginAllowed(hawtio, false), "a valid new policy applies at once");

        write(f, "<restrict><cors>", t + 4000);
        fr.reload();
        assertTrue(fr.isOriginAllowed(hawtio, false), "a broken new policy keeps the one loaded before");
        Caller.set(new Caller("bob", Role.OPERATOR));
        assertFalse(fr.isOperationAllowed(n("io.npulifecycle:type=Secret"), "x"), "the old deny still applies");

        java.nio.file.Files.delete(f);
        fr.reload();
        assertTrue(fr.isOriginAllowed(hawtio, false), "a removed policy keeps the one loaded before");

        write(f, POLICY, t + 6000);
        fr.reload();
        assertFalse(fr.isOriginAllowed(hawtio, false), "put back, the file applies again");
    }

    static void write(java.nio.file.Path f, String text, long mtime) throws Exception {
        java.nio.file.Files.writeString(f, text);
        java.nio.file.Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.fromMillis(mtime));
    }

    /** Management interface of the test MBean below. */
    public interface ProbeLikeMXBean {
        /** @return a read-only value */
        int getCount();

        /** @return a writable value */
        int getLimit();

        /** @param v the new value */
        void setLimit(int v);
    }

    @Test
    void aWriteOfAReadOnlyAttributeIsDeniedAndAuditedAsSuchNotAllowed() throws Exception {
        ObjectName name = n("io.npulifecycle:type=ReadOnlyTest");
        javax.management.MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
        mbs.registerMBean(new javax.management.StandardMBean(new ProbeLikeMXBean() {
            @Override
            public int getCount() {
                return 1;
            }

            @Override
            public int getLimit() {
                return 2;
            }

            @Override
            public void setLimit(int v) {
            }
        }, ProbeLikeMXBean.class, true), name);
        java.util.List<String> audit = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(Audit.LOGGER);
        java.util.logging.Handler h = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord rec) {
                audit.add(rec.getMessage());
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
            Caller.set(new Caller("bob", Role.OPERATOR));
            assertFalse(r.isAttributeWriteAllowed(name, "Count"));
            assertTrue(audit.stream().anyMatch(l -> l.contains("write user=bob") && l.contains("operation=Count")
                    && l.contains("outcome=denied reason=attribute Count is read-only")), audit.toString());
            assertFalse(r.isAttributeWriteAllowed(name, "Nothing"));
            assertTrue(r.isAttributeWriteAllowed(name, "Limit"));
        } finally {
            logger.removeHandler(h);
            mbs.unregisterMBean(name);
        }
    }
}
