package io.npulifecycle.itests.security;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

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
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * TLS: a keystore made by {@code keytool}, {@code https.port} and {@code https.keystore} in
 * {@code etc/runtime.properties}: Jolokia answers over HTTPS (authentication still required), the plain HTTP port is
 * closed, and the server stays bound to 127.0.0.1.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class JolokiaTlsIT extends NodeRuntimeSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String STORE_PASSWORD = "itest-keystore-password";

    @Configuration
    public Option[] config() {
        return once(JolokiaTlsIT.class, () -> {
            try {
                Path dir = FelixTestSupport.newWorkDir("tls");
                Path ks = dir.resolve("runtime.p12");
                Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                        "-genkeypair", "-alias", "runtime", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-validity", "2",
                        "-keystore", ks.toString(), "-storetype", "PKCS12", "-storepass", STORE_PASSWORD,
                        "-keypass", STORE_PASSWORD).redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes());
                if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    throw new IllegalStateException("keytool failed: " + out);
                }
                int httpsPort = LoopbackPorts.shared().allocate();
                return RuntimeOptions.runtime("control-plane", "jolokia-tls",
                        Map.of("runtime.properties", "https.port=" + httpsPort + "\nhttps.keystore=" + ks
                                + "\nhttps.keystore.password=" + STORE_PASSWORD + "\n"),
                        Map.of("itest.keystore", ks.toString()));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    public void jolokiaAnswersOverHttpsOnlyOnLoopback() throws Exception {
        assertEquals("true", property("org.apache.felix.https.enable"));
        assertEquals("false", property("org.apache.felix.http.enable"));
        assertEquals("127.0.0.1", property("org.apache.felix.http.host"));
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(property("itest.keystore")))) {
            trust.load(in, STORE_PASSWORD.toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        JolokiaClient https = new JolokiaClient("https://127.0.0.1:" + property("org.osgi.service.http.port.secure")
                + "/jolokia", ssl);
        await("Jolokia over HTTPS", TIMEOUT, () -> https.get("/read/io.npulifecycle:type=Runtime/Role", USER, PASSWORD)
                .body.contains("\"status\":200"));
        assertEquals(401, https.get("/version", null, null).status);
        JolokiaClient.Reply r = https.get("/read/io.npulifecycle:type=Runtime/Role", USER, PASSWORD);
        assertTrue(r.toString(), r.body.contains("\"value\":\"control-plane\""));

        JolokiaClient plain = new JolokiaClient("http://127.0.0.1:" + property("org.osgi.service.http.port")
                + "/jolokia", null);
        JolokiaClient.Reply closed = plain.get("/version", USER, PASSWORD);
        assertEquals("plain HTTP must be closed: " + closed, -1, closed.status);
        assertTrue(closed.body, closed.body.contains("ConnectException"));
    }
}
