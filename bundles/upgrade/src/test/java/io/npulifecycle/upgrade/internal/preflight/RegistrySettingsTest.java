package io.npulifecycle.upgrade.internal.preflight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The registry access settings of PID {@code io.npulifecycle.upgrade} ({@code registryCaBundle}, {@code registryMirror},
 * {@code registryInsecure}): the mirror's host and prefix, an unusable CA bundle named. Their validation as
 * configuration keys: {@code UpgradeOrchestratorComponentTest}. The checks against a real registry:
 * {@link RegistryPreflightOnRealRegistryTest}.
 */
class RegistrySettingsTest {

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
