package io.npulifecycle.itests.security;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Map;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

import io.npulifecycle.itests.FelixTestSupport;
import io.npulifecycle.itests.NodeRuntimeSupport;
import io.npulifecycle.itests.RuntimeOptions;

/**
 * Fail closed: a garbled line of the users file locks out the user it was meant for (401), while the others get in;
 * a garbled policy lets nothing through (no restrictor service: Jolokia's DelegatingRestrictor denies), before and
 * after the users file is fixed (re-read without a restart); a deleted users file refuses everyone (the runtime's
 * operator included) with 401. Nothing ever answers status 200.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class JolokiaFailClosedIT extends NodeRuntimeSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Configuration
    public Option[] config() {
        return once(JolokiaFailClosedIT.class, () -> {
            try {
                Path dir = FelixTestSupport.newWorkDir("garbled-policy");
                Path policy = Files.writeString(dir.resolve("jolokia-access.xml"), "<restrict><commands>");
                return RuntimeOptions.runtime("control-plane", "jolokia-fail-closed",
                        Map.of("jolokia-users.properties", "alice=viewer:pbkdf2-sha256:210000:%%%:garbled\n"),
                        Map.of("npu.lifecycle.jolokia.policy", policy.toString(),
                                "itest.valid.users", SecurityRuntime.usersFile()));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    @Test
    public void garbledUsersThenGarbledPolicyThenMissingUsersNeverAnswer200() throws Exception {
        JolokiaClient c = new JolokiaClient("http://127.0.0.1:" + property("org.osgi.service.http.port") + "/jolokia",
                null);
        await("Jolokia answers", TIMEOUT, () -> c.get("/version", USER, PASSWORD).status > 0
                && c.get("/version", USER, PASSWORD).status != 404 && c.get("/version", USER, PASSWORD).status != 503);
        String[] paths = {"/version", "/read/io.npulifecycle:type=Runtime/Role", "/list", "/search/*:*",
            "/exec/io.npulifecycle:type=KubernetesClient/checkConnection"};
        for (String p : paths) {
            assertEquals("the garbled line's user, " + p, 401, c.get(p, "alice", "alice-viewer-password").status);
            JolokiaClient.Reply r = c.get(p, USER, PASSWORD);
            assertTrue("the runtime's operator gets in, the garbled policy refuses, " + p + ": " + r,
                    r.status != 401 && !r.body.contains("\"status\":200") && r.body.contains("403"));
        }
        assertTrue(!c.post("{\"type\":\"version\"}", USER, PASSWORD).body.contains("\"status\":200"));

        Path users = home().resolve("etc/jolokia-users.properties");
        Files.writeString(users, property("itest.valid.users"));
        Files.setLastModifiedTime(users, FileTime.fromMillis(Files.getLastModifiedTime(users).toMillis() + 5000));
        await("users re-read: the file's operator authenticates", TIMEOUT, () -> c.get("/version",
                SecurityRuntime.OPERATOR, SecurityRuntime.OPERATOR_PASSWORD).status != 401);
        for (String p : paths) {
            JolokiaClient.Reply r = c.get(p, USER, PASSWORD);
            assertTrue("garbled policy, " + p + ": " + r, !r.body.contains("\"status\":200") && r.body.contains("403"));
        }
        JolokiaClient.Reply post = c.post("{\"type\":\"version\"}", SecurityRuntime.OPERATOR,
                SecurityRuntime.OPERATOR_PASSWORD);
        assertTrue(post.toString(), !post.body.contains("\"status\":200"));

        Files.delete(users);
        await("missing users file: 401 again", TIMEOUT, () -> c.get("/version", USER, PASSWORD).status == 401);
        // the health endpoints (no Jolokia) still answer
        assertEquals(200, get("/health/live", null, null).status);
    }
}
