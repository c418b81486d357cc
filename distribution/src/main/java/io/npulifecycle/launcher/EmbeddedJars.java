package io.npulifecycle.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The jars a bundle embeds on its {@code Bundle-ClassPath} ({@code lib/*.jar}), made usable on a plain class path by
 * copying them out (a {@link java.net.URLClassLoader} cannot read a jar inside a jar).
 */
final class EmbeddedJars {

    private EmbeddedJars() {
    }

    /**
     * Copies every {@code lib/*.jar} entry of {@code bundle} into {@code folder}.
     *
     * @param bundle a bundle jar
     * @param folder an existing, writable folder
     * @return the URLs of the copies, in entry order
     * @throws IOException when the bundle cannot be read, the folder written, or the bundle embeds no jar
     */
    static List<URL> extract(Path bundle, Path folder) throws IOException {
        List<URL> out = new ArrayList<>();
        try (JarFile jar = new JarFile(bundle.toFile())) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry e = entries.nextElement();
                String name = e.getName();
                if (e.isDirectory() || !name.startsWith("lib/") || !name.endsWith(".jar") || name.indexOf('/', 4) >= 0) {
                    continue;
                }
                Path target = folder.resolve(name.substring(4));
                try (InputStream in = jar.getInputStream(e)) {
                    Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
                }
                out.add(target.toUri().toURL());
            }
        }
        if (out.isEmpty()) {
            throw new IOException(bundle + " embeds no lib/*.jar");
        }
        return out;
    }

    /**
     * Deletes a folder and what it holds; a failure is ignored (a temporary folder).
     *
     * @param folder the folder, or {@code null}
     */
    static void delete(Path folder) {
        if (folder == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(folder)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary folder: the system cleans it
        }
    }
}
