package io.npulifecycle.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CredentialsTest {

    @TempDir
    Path home;

    @Test
    void generatedOnceStoredOwnerOnlyAndReused() throws Exception {
        RuntimeSettings s = RuntimeSettings.load(home, Map.of());
        Path secrets = home.resolve("secrets");
        Credentials first = Credentials.resolve(s, secrets, new SecureRandom());
        assertEquals("operator", first.user());
        assertTrue(first.password().length() >= 20, "a generated password is long");
        Path file = secrets.resolve(Credentials.FILE);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(secrets)));
        Credentials again = Credentials.resolve(s, secrets, new SecureRandom());
        assertEquals(first.password(), again.password(), "the stored password is reused");

        Path other = home.resolve("other");
        assertNotEquals(first.password(), Credentials.resolve(s, other, new SecureRandom()).password(),
                "no built-in default password");
    }

    @Test
    void environmentWinsAndNothingIsWritten() throws Exception {
        RuntimeSettings s = RuntimeSettings.load(home, Map.of("NPU_LIFECYCLE_JOLOKIA_USER", "ops",
                "NPU_LIFECYCLE_JOLOKIA_PASSWORD", "from-a-secret"));
        Credentials c = Credentials.resolve(s, home.resolve("secrets"), new SecureRandom());
        assertEquals("ops", c.user());
        assertEquals("from-a-secret", c.password());
        assertTrue(!Files.exists(home.resolve("secrets").resolve(Credentials.FILE)));
    }

    @Test
    void aMalformedStoredFileIsReportedAndKept() throws Exception {
        Path secrets = Files.createDirectories(home.resolve("secrets"));
        Path file = secrets.resolve(Credentials.FILE);
        Files.writeString(file, "user=\npassword=short\n");
        LaunchException e = assertThrows(LaunchException.class,
                () -> Credentials.resolve(RuntimeSettings.load(home, Map.of()), secrets, new SecureRandom()));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertEquals("user=\npassword=short\n", Files.readString(file), "the operator's file is left untouched");
    }

    @Test
    void theRuntimeReceivesAnOperatorHashNotThePassword() throws Exception {
        RuntimeSettings settings = RuntimeSettings.load(home, Map.of("NPU_LIFECYCLE_JOLOKIA_USER", "ops",
                "NPU_LIFECYCLE_JOLOKIA_PASSWORD", "pw-from-the-secret-1"));
        Credentials c = Credentials.resolve(settings, home.resolve("secrets"), new SecureRandom());
        String line = c.operatorLine();
        org.junit.jupiter.api.Assertions.assertTrue(line.startsWith("ops=operator:pbkdf2-sha256:210000:"), line);
        org.junit.jupiter.api.Assertions.assertFalse(line.contains("pw-from-the-secret-1"));
        org.junit.jupiter.api.Assertions.assertTrue(io.npulifecycle.security.tool.UsersFile.parseLine(line, "t")
                .hash().verify("pw-from-the-secret-1".toCharArray()));
    }

    @Test
    void theBackgroundHashIsTheLineTheRuntimeReceives() throws Exception {
        RuntimeSettings settings = RuntimeSettings.load(home, Map.of("NPU_LIFECYCLE_JOLOKIA_USER", "ops",
                "NPU_LIFECYCLE_JOLOKIA_PASSWORD", "pw-from-the-secret-2"));
        Credentials c = Credentials.resolve(settings, home.resolve("secrets"), new SecureRandom());
        assertTrue(c == c.hashInBackground());
        String line = c.operatorLine();
        assertEquals(line, c.operatorLine(), "computed once (one salt), whichever thread computed it");
        assertTrue(io.npulifecycle.security.tool.UsersFile.parseLine(line, "t").hash()
                .verify("pw-from-the-secret-2".toCharArray()));
    }
}
