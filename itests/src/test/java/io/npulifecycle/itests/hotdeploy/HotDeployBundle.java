package io.npulifecycle.itests.hotdeploy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/** Builds the hot-deploy test bundle (symbolic name {@value #BSN}) in a given version. */
public final class HotDeployBundle {

    /** Symbolic name of the test bundle. */
    public static final String BSN = "io.npulifecycle.itests.hotdeploy";

    private HotDeployBundle() {
    }

    /**
     * Writes the bundle.
     *
     * @param file where to write the jar
     * @param version its Bundle-Version
     * @return {@code file}
     */
    public static Path write(Path file, String version) throws IOException {
        Manifest m = new Manifest();
        Attributes a = m.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", BSN);
        a.putValue("Bundle-Version", version);
        a.putValue("Bundle-Activator", HotDeployActivator.class.getName());
        a.putValue("Import-Package", "javax.management,org.osgi.framework");
        try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, m)) {
            for (Class<?> c : new Class<?>[] {HotDeployActivator.class, HotDeployMBean.class}) {
                String name = c.getName().replace('.', '/') + ".class";
                jar.putNextEntry(new JarEntry(name));
                try (InputStream in = c.getClassLoader().getResourceAsStream(name)) {
                    in.transferTo(jar);
                }
                jar.closeEntry();
            }
        }
        return file;
    }
}
