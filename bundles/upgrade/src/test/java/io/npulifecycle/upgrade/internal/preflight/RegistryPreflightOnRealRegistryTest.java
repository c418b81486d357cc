package io.npulifecycle.upgrade.internal.preflight;

import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;
import io.npulifecycle.upgrade.internal.plan.ImageStatus;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;

/**
 * The registry preflight ({@link ImagePreflight} with the {@link RegistryClient} it builds from the configuration and
 * the pull secret) against a real registry: Debian's {@code docker-registry} on loopback with TLS from a test CA and
 * htpasswd basic authentication, driver images pushed with {@code skopeo copy} ({@link RealRegistry}). It passes with
 * the CA ({@code registryCaBundle}) and the credentials; without the CA it fails closed naming the registry and what to
 * configure; refused credentials, a missing tag (with the exact image reference), a mirror, the insecure switch and
 * an unusable CA file each give their own answer.
 */
class RegistryPreflightOnRealRegistryTest {

    static final String REPOSITORY = "ascend/ascend-driver";
    static final String TAG = "25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3";
    static final String OLD_TAG = "25.2.0-910b-6.6.0-145.0.4.135-oe2403sp3";
    static final String SECRET = "registry-pull";
    static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    static RealRegistry registry;
    static String image;

    ClusterFixture cluster;
    ImagePreflight preflight;

    @BeforeAll
    static void startRegistry() throws Exception {
        registry = RealRegistry.start(dir.resolve("registry"));
        image = registry.push(REPOSITORY, TAG);
        registry.push(REPOSITORY, OLD_TAG);
    }

    @AfterAll
    static void stopRegistry() {
        if (registry != null) {
            registry.close();
        }
    }

    @AfterEach
    void close() {
        if (preflight != null) {
            preflight.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * @param user, password the pull secret's credentials for {@code host}, or null for no pull secret
     * @return the answer of the preflight for {@code img}, once it has one
     */
    ImageStatus check(String img, RegistrySettings settings, String host, String user, String password) {
        cluster = ClusterFixture.startEmbedded();
        if (user != null) {
            String auth = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
            String json = "{\"auths\":{\"" + host + "\":{\"auth\":\"" + auth + "\"}}}";
            cluster.admin().secrets().inNamespace("npu-operator").resource(new SecretBuilder().withNewMetadata()
                    .withName(SECRET).withNamespace("npu-operator").endMetadata()
                    .withType("kubernetes.io/dockerconfigjson").addToData(".dockerconfigjson", Base64.getEncoder()
                            .encodeToString(json.getBytes(StandardCharsets.UTF_8))).build()).create();
        }
        ScaledTestClock time = cluster.own(new ScaledTestClock(1));
        ControllerConfig d = ControllerConfig.defaults();
        ControllerConfig cfg = new ControllerConfig("npu-operator", d.resourceName(), true, "https",
                user == null ? "" : SECRET, d.reconcileDelay(), d.resync(), d.statusInterval(), false, d.leaseName(),
                d.leaseDuration(), d.renewDeadline(), d.retryPeriod(), "t").withImageWhiteList(false, "cpaas-system",
                        "ascend-driver").withRegistry(settings);
        preflight = new ImagePreflight(cluster.client("npu-controller"), time, cfg.preflight(), null, () -> { },
                Executors.newSingleThreadExecutor());
        preflight.request(List.of(img), time.monotonicNanos());
        Waits.until("the preflight's answer for " + img, WAIT, () -> preflight.results().get(img) != null);
        ImageStatus s = preflight.results().get(img);
        System.out.println("preflight of " + img + ": " + s);
        return s;
    }

    ImageStatus check(String img, RegistrySettings settings) {
        return check(img, settings, registry.host(), RealRegistry.USER, RealRegistry.PASSWORD);
    }

    static RegistrySettings withCa() {
        return new RegistrySettings(registry.caCertificate().toString(), "", false);
    }

    @Test
    void passesWithTheCaConfiguredAndTheCredentials() {
        ImageStatus s = check(image, withCa());
        assertTrue(s.present(), s.toString());
    }

    @Test
    void withoutTheCaItFailsClosedNamingTheRegistryAndWhatToConfigure() {
        ImageStatus s = check(image, RegistrySettings.DEFAULT);
        assertFalse(s.present(), "fail closed: " + s);
        assertFalse(s.missing(), "not confirmed, not missing: " + s);
        assertTrue(s.detail().contains("registry " + registry.host()), s.detail());
        assertTrue(s.detail().contains("no trusted CA signs"), s.detail());
        assertTrue(s.detail().contains("set registryCaBundle (chart value preflight.registryCABundle)"), s.detail());
        assertTrue(s.detail().contains("registryInsecure=true (preflight.insecure)"), s.detail());
    }

    @Test
    void wrongCredentialsAreNamed() {
        ImageStatus s = check(image, withCa(), registry.host(), RealRegistry.USER, "not-the-password");
        assertFalse(s.present(), s.toString());
        assertFalse(s.missing(), s.toString());
        assertTrue(s.detail().contains("registry " + registry.host() + " refused the pull secret's credentials for "
                + registry.host() + " (HTTP 401)"), s.detail());
    }

    @Test
    void noCredentialsAtAllSaySoAndWhatToSet() {
        ImageStatus s = check(image, withCa(), registry.host(), null, null);
        assertFalse(s.present(), s.toString());
        assertTrue(s.detail().contains("requires credentials and the pull secret has none for " + registry.host()),
                s.detail());
        assertTrue(s.detail().contains("set pullSecret"), s.detail());
    }

    @Test
    void aMissingTagIsMissingNamingTheExactImageReference() {
        String absent = registry.host() + "/" + REPOSITORY + ":25.9.9-910b-6.6.0-145.0.4.135-oe2403sp3";
        ImageStatus s = check(absent, withCa());
        assertFalse(s.present(), s.toString());
        assertTrue(s.missing(), s.toString());
        assertTrue(s.detail().contains(absent + " is not in registry " + registry.host()), s.detail());
    }

    @Test
    void aMirrorIsCheckedInsteadOfTheImagesRegistryWithItsCredentials() {
        String upstream = "registry.example.com/" + REPOSITORY + ":" + TAG;
        ImageStatus s = check(upstream, new RegistrySettings(registry.caCertificate().toString(),
                registry.host(), false));
        assertTrue(s.present(), s.toString());

        close();
        String notMirrored = "registry.example.com/" + REPOSITORY + ":25.9.9-910b";
        s = check(notMirrored, new RegistrySettings(registry.caCertificate().toString(), registry.host(), false));
        assertTrue(s.missing(), s.toString());
        assertTrue(s.detail().contains(notMirrored + " is not in mirror " + registry.host()
                + " (registryMirror) of registry.example.com"), s.detail());
    }

    @Test
    void insecureSkipsTheVerificationWithoutTheCa() {
        ImageStatus s = check(image, new RegistrySettings("", "", true));
        assertTrue(s.present(), s.toString());
    }

    @Test
    void aPlainHttpRegistrySaysSoOverHttpsAndInsecureFallsBackToHttp() throws Exception {
        try (RealRegistry plain = RealRegistry.start(dir.resolve("plain-registry"), false)) {
            String img = plain.push(REPOSITORY, TAG);
            ImageStatus s = check(img, RegistrySettings.DEFAULT, plain.host(), RealRegistry.USER,
                    RealRegistry.PASSWORD);
            assertFalse(s.present() || s.missing(), s.toString());
            assertTrue(s.detail().startsWith("registry " + plain.host() + " does not speak TLS"), s.detail());
            assertTrue(s.detail().contains("set registryScheme=http, or registryInsecure=true"), s.detail());

            close();
            s = check(img, new RegistrySettings("", "", true), plain.host(), RealRegistry.USER, RealRegistry.PASSWORD);
            assertTrue(s.present(), "registryInsecure: plain HTTP when the registry does not speak TLS (Docker's"
                    + " insecure-registries): " + s);
        }
    }

    @Test
    void aCaFileThatIsNotACertificateIsNamed() throws Exception {
        Path notPem = Files.writeString(dir.resolve("not-a-ca.pem"), "this is not a certificate\n");
        ImageStatus s = check(image, new RegistrySettings(notPem.toString(), "", false));
        assertFalse(s.present(), s.toString());
        assertTrue(s.detail().contains("registryCaBundle " + notPem), s.detail());

        close();
        s = check(image, new RegistrySettings(dir.resolve("absent.pem").toString(), "", false));
        assertFalse(s.present(), s.toString());
        assertTrue(s.detail().contains("registryCaBundle " + dir.resolve("absent.pem") + " cannot be read"),
                s.detail());
    }

    @Test
    void aCaFileOfAnotherCaFailsClosedSayingItDoesNotHoldTheRightCa() throws Exception {
        Path other = Files.createDirectories(dir.resolve("other-ca"));
        RealRegistry.run(other, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
                "-subj", "/CN=another CA");
        ImageStatus s = check(image, new RegistrySettings(other.resolve("ca.crt").toString(), "", false));
        assertFalse(s.present(), s.toString());
        assertTrue(s.detail().contains("registryCaBundle " + other.resolve("ca.crt")
                + " does not hold the CA that signs it"), s.detail());
    }
}
