package io.npulifecycle.management.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
        return bundle(file, osgi ? "x" : null, "1.0.0");
    }

    static Path bundle(Path file, String symbolicName, String version) throws Exception {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        if (symbolicName != null) {
            m.getMainAttributes().putValue("Bundle-SymbolicName", symbolicName + ";singleton:=true");
            m.getMainAttributes().putValue("Bundle-Version", version);
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
        bundle(deploy.resolve("plain.jar"), "y", "1.0.0"); // replaced by a real bundle (its own name)
        guard.scan();
        assertTrue(guard.getRejectedFiles().isEmpty(), guard.getRejectedFiles().toString());
        assertEquals(Result.Status.OK, guard.execute().getStatus());
        assertNull(DeployFolderGuard.check(deploy.resolve("good.jar")));
    }

    static final String PROBE = "io.npulifecycle.probe";

    /** The framework as FileInstall leaves it: what is installed from where. */
    final List<SingleCopyRule.Installed> installed = new java.util.concurrent.CopyOnWriteArrayList<>();

    void installedFrom(Path jar, long id) {
        installed.add(new SingleCopyRule.Installed(PROBE, jar.toUri().toString(), id));
    }

    /** FileInstall's part: offers each file, installs those the guard does not claim, returns the claimed ones. */
    List<Path> fileInstallStarts(DeployFolderGuard guard, List<Path> offerOrder) {
        List<Path> claimed = new java.util.ArrayList<>();
        long id = 20;
        for (Path jar : offerOrder) {
            if (guard.canHandle(jar.toFile())) {
                guard.install(jar.toFile());
                claimed.add(jar);
            } else {
                installedFrom(jar, id++);
            }
        }
        return claimed;
    }

    @Test
    void aSecondCopyDroppedBesideTheInstalledBundleIsRefusedNamingTheInstalledFileAlsoAfterARestart()
            throws Exception {
        Path old = bundle(deploy.resolve(PROBE + ".jar"), PROBE, "1.0.0");
        installedFrom(old, 7);
        DeployFolderGuard guard = new DeployFolderGuard(List.of(deploy), () -> installed);
        guard.scan();
        assertTrue(guard.getRejectedFiles().isEmpty(), guard.getRejectedFiles().toString());
        assertFalse(guard.canHandle(old.toFile()), "the installed file's own update is FileInstall's");

        Path copy = bundle(deploy.resolve("my-new-probe.jar"), PROBE, "1.1.0");
        assertTrue(guard.canHandle(copy.toFile()), "a second copy must be claimed, so FileInstall never installs it");
        guard.install(copy.toFile());
        List<String> rejected = guard.getRejectedFiles();
        assertEquals(1, rejected.size(), rejected.toString());
        assertTrue(rejected.get(0).startsWith(copy + ": Bundle-SymbolicName " + PROBE + " is already installed from "
                + old + " (bundle id 7)"), rejected.toString());
        assertTrue(rejected.get(0).contains("replace " + PROBE + ".jar"), rejected.toString());
        Result health = guard.execute();
        assertEquals(Result.Status.WARN, health.getStatus());
        assertTrue(health.toString().contains("my-new-probe.jar"), health.toString());

        // a restart: the bundle cache is empty, FileInstall offers both files in either order
        for (List<Path> order : List.of(List.of(copy, old), List.of(old, copy))) {
            installed.clear();
            DeployFolderGuard restarted = new DeployFolderGuard(List.of(deploy), () -> installed);
            assertEquals(List.of(copy), fileInstallStarts(restarted, order), "offered " + order);
            assertEquals(1, installed.size(), installed.toString());
            restarted.scan();
            assertEquals(1, restarted.getRejectedFiles().size(), restarted.getRejectedFiles().toString());
            assertTrue(restarted.getRejectedFiles().get(0).startsWith(copy + ": Bundle-SymbolicName " + PROBE
                    + " is already installed from " + old), restarted.getRejectedFiles().toString());
        }

        // the operator removes the copy: nothing is refused any more
        Files.delete(copy);
        guard.uninstall(copy.toFile());
        assertTrue(guard.getRejectedFiles().isEmpty(), guard.getRejectedFiles().toString());
        assertEquals(Result.Status.OK, guard.execute().getStatus());
    }

    @Test
    void theFileNamedAfterTheBundleDroppedBesideACopyUnderAnotherNameIsRefusedUntilARestartInstallsItInstead()
            throws Exception {
        Path other = bundle(deploy.resolve("my-probe.jar"), PROBE, "1.1.0");
        installedFrom(other, 9);
        DeployFolderGuard guard = new DeployFolderGuard(List.of(deploy), () -> installed);
        Path canonical = bundle(deploy.resolve(PROBE + ".jar"), PROBE, "1.0.0");
        assertTrue(guard.canHandle(canonical.toFile()));
        guard.install(canonical.toFile());
        assertEquals(List.of(canonical + ": Bundle-SymbolicName " + PROBE + " is already installed from " + other
                + " (bundle id 9): a second copy is never installed. To update that bundle, replace my-probe.jar "
                + "(copy to a .part name, then rename over it), and remove this file"), guard.getRejectedFiles());

        // a restart: whatever the order, exactly one copy, the file named after the bundle, and the other refused
        for (List<Path> order : List.of(List.of(other, canonical), List.of(canonical, other))) {
            installed.clear();
            DeployFolderGuard restarted = new DeployFolderGuard(List.of(deploy), () -> installed);
            assertEquals(List.of(other), fileInstallStarts(restarted, order), "offered " + order);
            assertEquals(List.of(new SingleCopyRule.Installed(PROBE, canonical.toUri().toString(), 20)).toString(),
                    installed.toString().replace("id=21", "id=20"));
            assertTrue(restarted.getRejectedFiles().get(0).startsWith(other + ": Bundle-SymbolicName " + PROBE),
                    restarted.getRejectedFiles().toString());
        }
    }

    @Test
    void twoNewFilesWithOneNameAndNoneInstalledInstallTheFirstByName() throws Exception {
        Path a = bundle(deploy.resolve("a-probe.jar"), PROBE, "1.0.0");
        Path b = bundle(deploy.resolve("b-probe.jar"), PROBE, "2.0.0");
        DeployFolderGuard guard = new DeployFolderGuard(List.of(deploy), () -> installed);
        assertEquals(List.of(b), fileInstallStarts(guard, List.of(b, a)));
        assertTrue(guard.getRejectedFiles().get(0).startsWith(b + ": Bundle-SymbolicName " + PROBE
                + " is already installed from " + a), guard.getRejectedFiles().toString());
    }

    @Test
    void aGarbageManifestIsNotCalledTruncated() throws Exception {
        Path jar = deploy.resolve("garbage.jar");
        try (OutputStream out = Files.newOutputStream(jar);
                java.util.zip.ZipOutputStream zip = new java.util.zip.ZipOutputStream(out)) {
            zip.putNextEntry(new java.util.zip.ZipEntry("META-INF/MANIFEST.MF"));
            zip.write("this is : not\n a manifest\n\u0000\u0001".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            zip.closeEntry();
        }
        String reason = DeployFolderGuard.check(jar);
        assertTrue(reason != null && reason.startsWith("unreadable META-INF/MANIFEST.MF"), reason);
        assertFalse(DeployFolderGuard.read(jar, "").truncated());
    }
}
