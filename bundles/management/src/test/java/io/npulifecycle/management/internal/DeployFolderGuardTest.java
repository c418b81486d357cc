package io.npulifecycle.management.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeployFolderGuardTest {

    @TempDir
    Path deploy;

    static Path bundle(Path file, boolean osgi) throws Exception {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        if (osgi) {
            m.getMainAttributes().putValue("Bundle-SymbolicName", "x");
        }
        try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, m)) {
            jar.putNextEntry(new java.util.zip.ZipEntry("payload.txt"));
            jar.write(new byte[4096]);
            jar.closeEntry();
        }
        return file;
    }

    @Test
    void validBundlesPassTruncatedAndPlainJarsAreRejectedWithAReason() throws Exception {
        bundle(deploy.resolve("good.jar"), true);
        bundle(deploy.resolve("plain.jar"), false);
        byte[] whole = Files.readAllBytes(bundle(deploy.resolve("tmp.bin"), true));
        Files.write(deploy.resolve("truncated.jar"), Arrays.copyOf(whole, whole.length / 2));
        Files.writeString(deploy.resolve("notes.txt"), "not a jar, not judged");

        DeployFolderGuard guard = new DeployFolderGuard(List.of(deploy));
        guard.scan();
        List<String> rejected = guard.getRejectedFiles();
        assertEquals(2, rejected.size(), rejected.toString());
        assertTrue(rejected.get(0).startsWith(deploy.resolve("plain.jar").toString())
                && rejected.get(0).contains("Bundle-SymbolicName"), rejected.toString());
        assertTrue(rejected.get(1).startsWith(deploy.resolve("truncated.jar").toString())
                && rejected.get(1).contains("truncated or corrupt"), rejected.toString());
        assertEquals(Result.Status.WARN, guard.execute().getStatus());
        assertTrue(Files.exists(deploy.resolve("truncated.jar")), "the file is never removed");

        Files.delete(deploy.resolve("truncated.jar"));
        bundle(deploy.resolve("plain.jar"), true); // replaced by a real bundle
        guard.scan();
        assertTrue(guard.getRejectedFiles().isEmpty(), guard.getRejectedFiles().toString());
        assertEquals(Result.Status.OK, guard.execute().getStatus());
        assertNull(DeployFolderGuard.check(deploy.resolve("good.jar")));
    }
}
