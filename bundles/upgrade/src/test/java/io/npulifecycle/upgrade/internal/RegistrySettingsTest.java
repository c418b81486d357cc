package io.npulifecycle.upgrade.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The registry access settings of PID {@code io.npulifecycle.upgrade} ({@code registryCaBundle}, {@code registryMirror},
 * {@code registryInsecure}): defaults, validation with the key named, the mirror's host and prefix, an unusable CA
 * bundle named. The checks against a real registry: {@link RegistryPreflightOnRealRegistryTest}.
 */
class RegistrySettingsTest {

    @Test
    void theConfigurationKeysAreValidated() {
        assertEquals(RegistrySettings.DEFAULT, UpgradeOrchestratorComponent.validate(
                ImageWhiteListConfigTest.config(Map.of())).registry());
        ControllerConfig c = UpgradeOrchestratorComponent.validate(ImageWhiteListConfigTest.config(Map.of(
                "registryCaBundle", "/etc/npu-lifecycle/registry-ca/ca.crt", "registryMirror", "mirror.local:5000/ascend",
                "registryInsecure", true)));
        assertEquals(new RegistrySettings("/etc/npu-lifecycle/registry-ca/ca.crt", "mirror.local:5000/ascend", true),
                c.registry());
        List<io.npulifecycle.api.management.ConfigurationRefusals.Refusal> why = new java.util.ArrayList<>();
        assertNull(UpgradeOrchestratorComponent.validate(ImageWhiteListConfigTest.config(Map.of(
                "registryCaBundle", "ca.crt")), why));
        assertEquals("registryCaBundle", why.get(0).key());
        assertTrue(why.get(0).reason().contains("not an absolute path"), why.get(0).reason());
        why.clear();
        assertNull(UpgradeOrchestratorComponent.validate(ImageWhiteListConfigTest.config(Map.of(
                "registryMirror", "https://mirror.local")), why));
        assertEquals("registryMirror", why.get(0).key());
        assertTrue(why.get(0).reason().contains("expected host[:port][/path]"), why.get(0).reason());
    }

    @Test
    void theMirrorsHostAndPrefix() {
        RegistrySettings plain = new RegistrySettings("", "mirror.local:5000", false);
        assertEquals("mirror.local:5000", plain.mirrorHost());
        assertEquals("", plain.mirrorPrefix());
        RegistrySettings prefixed = new RegistrySettings(null, " mirror.local:5000/ascend/cache ", false);
        assertEquals("mirror.local:5000", prefixed.mirrorHost());
        assertEquals("ascend/cache", prefixed.mirrorPrefix());
        assertEquals("", prefixed.caBundle(), "null reads as empty");
        assertNull(RegistrySettings.DEFAULT.mirrorHost());
        assertNull(RegistrySettings.DEFAULT.problem());
        assertTrue(new RegistrySettings("", "mirror.local:5000/", false).problem().startsWith("registryMirror:"));
    }

    @Test
    void aCaBundleWithoutACertificateIsNamed() throws Exception {
        java.nio.file.Path empty = java.nio.file.Files.createTempFile("registry-ca-", ".pem");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new RegistrySettings(empty.toString(), "", false).sslContext());
            assertTrue(e.getMessage().startsWith("registryCaBundle " + empty), e.getMessage());
        } finally {
            java.nio.file.Files.delete(empty);
        }
        assertNull(RegistrySettings.DEFAULT.sslContext(), "the HTTP client's default");
    }
}
