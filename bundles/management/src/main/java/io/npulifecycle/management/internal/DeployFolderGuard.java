package io.npulifecycle.management.internal;

import io.npulifecycle.api.management.DeployMXBean;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

import javax.management.DynamicMBean;
import javax.management.StandardMBean;

import org.apache.felix.fileinstall.ArtifactInstaller;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

import io.npulifecycle.api.management.Mbeans;
import io.npulifecycle.api.time.TimeSource;

/**
 * Says which jars in the FileInstall folders are not valid bundles.
 *
 * <p>FileInstall silently waits on a jar it cannot open (it takes it for a copy still in progress), so a truncated
 * or corrupt jar dropped into {@code deploy/} would go unnoticed. This guard scans the folders every
 * {@value #PERIOD_SECONDS} s (wall clock), and logs each invalid jar once per version of the file (path, size,
 * modification time) with the reason, lists it in {@code io.npulifecycle:type=Deploy}, and reports a WARN health
 * check (readiness stays up: nothing else is disturbed). It never deletes or moves the file.
 *
 * <p>It is also a FileInstall {@link ArtifactInstaller} that claims every jar it refuses: FileInstall hands an artifact
 * that a registered installer can handle to that installer instead of installing it as a bundle, so a jar FileInstall
 * could open (e.g. one with signature files that do not match, which the framework would otherwise install and start)
 * is never installed: reporting it alone would leave a forged "signed" bundle running. Valid jars are left to
 * FileInstall.
 */
@Component(service = {DynamicMBean.class, HealthCheck.class, ArtifactInstaller.class}, property = {
    Mbeans.OBJECT_NAME_PROPERTY + "=" + Mbeans.DOMAIN + ":type=Deploy",
    HealthCheck.NAME + "=npu-lifecycle deploy folder",
    HealthCheck.TAGS + "=ready"
})
public class DeployFolderGuard extends StandardMBean implements DeployMXBean, HealthCheck, ArtifactInstaller {

    static final long PERIOD_SECONDS = 2;
    private static final System.Logger LOG = System.getLogger(DeployFolderGuard.class.getName());

    @Reference
    private TimeSource time;

    private final List<Path> folders = new ArrayList<>();
    /** path -> "size/mtime" of the version already judged, and its reason (null = valid). */
    private final Map<Path, String[]> judged = new TreeMap<>();
    private volatile boolean active;
    private volatile TimeSource.Scheduled next;

    /** DS constructor. */
    public DeployFolderGuard() {
        super(DeployMXBean.class, true);
    }

    /** Test constructor. */
    DeployFolderGuard(List<Path> folders) {
        this();
        this.folders.addAll(folders);
    }

    @Activate
    void activate(BundleContext ctx) {
        String dirs = ctx.getProperty("felix.fileinstall.dir");
        if (dirs != null) {
            for (String d : dirs.split(",")) {
                if (!d.isBlank()) {
                    folders.add(Path.of(d.trim()));
                }
            }
        }
        active = true;
        reschedule();
    }

    @Deactivate
    void deactivate() {
        active = false;
        TimeSource.Scheduled s = next;
        if (s != null) {
            s.cancel();
        }
    }

    private void reschedule() {
        if (!active) {
            return;
        }
        // PERIOD_SECONDS of wall-clock time, whatever the clock's scale
        Duration period = Duration.ofMillis(Math.max(1, Math.round(PERIOD_SECONDS * 1000 * time.scale())));
        next = time.schedule(() -> {
            scan();
            reschedule();
        }, period);
    }

    @Override
    public synchronized void scan() {
        Map<Path, String> seen = new TreeMap<>();
        for (Path folder : folders) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(folder, "*.jar")) {
                for (Path jar : ds) {
                    BasicFileAttributes a = Files.readAttributes(jar, BasicFileAttributes.class);
                    seen.put(jar, a.size() + "/" + a.lastModifiedTime().toMillis());
                }
            } catch (IOException e) {
                // a missing folder is FileInstall's business; nothing to judge
            }
        }
        judged.keySet().retainAll(seen.keySet());
        for (Map.Entry<Path, String> e : seen.entrySet()) {
            String[] previous = judged.get(e.getKey());
            if (previous != null && previous[0].equals(e.getValue())) {
                continue;
            }
            String reason = check(e.getKey());
            judged.put(e.getKey(), new String[] {e.getValue(), reason});
            if (reason != null) {
                LOG.log(Level.WARNING, "Bundle file {0} is not a valid bundle ({1}): FileInstall will not install it. "
                        + "Replace it by copying the jar to a name ending in .part, then renaming it.", e.getKey(),
                        reason);
            }
        }
    }

    /**
     * @param jar a file
     * @return {@code null} if it is a readable jar with a Bundle-SymbolicName, else why not
     */
    static String check(Path jar) {
        try (JarFile jf = new JarFile(jar.toFile())) {
            Manifest m = jf.getManifest();
            if (m == null) {
                return "no META-INF/MANIFEST.MF";
            }
            if (m.getMainAttributes().getValue("Bundle-SymbolicName") == null) {
                return "no Bundle-SymbolicName in its manifest: not an OSGi bundle";
            }
            return signature(jf);
        } catch (IOException | SecurityException e) {
            return "truncated or corrupt: " + e.getMessage();
        }
    }

    /**
     * A jar that carries signature files ({@code META-INF/*.SF}) must be validly signed: every entry is read (which
     * makes the JDK check the digests and the signature block) and must have a verified signer. A jar with
     * signature-looking files that do not match is refused, since the framework would install it as if it were signed.
     * A jar without signature files is not checked here (the product's own bundles are not signed).
     *
     * @return {@code null} when the jar has no signature files or is validly signed, else why not
     */
    static String signature(JarFile jf) throws IOException {
        List<String> sigFiles = new ArrayList<>();
        for (java.util.Enumeration<java.util.jar.JarEntry> en = jf.entries(); en.hasMoreElements();) {
            String n = en.nextElement().getName().toUpperCase(java.util.Locale.ROOT);
            if (n.startsWith("META-INF/") && n.indexOf('/', 9) < 0 && n.endsWith(".SF")) {
                sigFiles.add(n);
            }
        }
        if (sigFiles.isEmpty()) {
            return null;
        }
        byte[] buf = new byte[8192];
        for (java.util.Enumeration<java.util.jar.JarEntry> en = jf.entries(); en.hasMoreElements();) {
            java.util.jar.JarEntry e = en.nextElement();
            String n = e.getName().toUpperCase(java.util.Locale.ROOT);
            if (e.isDirectory() || n.startsWith("META-INF/")) {
                continue;
            }
            try (java.io.InputStream in = jf.getInputStream(e)) {
                while (in.read(buf) >= 0) {
                    // reading to the end is what verifies the entry's digest
                }
            } catch (SecurityException se) {
                return "signature " + sigFiles + " does not match: " + se.getMessage();
            }
            if (e.getCodeSigners() == null) {
                return "signature files " + sigFiles + " present but entry " + e.getName()
                        + " has no verified signer: the signature does not match";
            }
        }
        return null;
    }

    /** FileInstall: claims a {@code .jar} that {@link #check} refuses (and nothing else). */
    @Override
    public boolean canHandle(java.io.File artifact) {
        return artifact.getName().endsWith(".jar") && check(artifact.toPath()) != null;
    }

    /** FileInstall: a refused jar is not installed; it is logged and listed by {@link #scan()}. */
    @Override
    public void install(java.io.File artifact) {
        LOG.log(Level.WARNING, "Bundle file {0} refused: not installed ({1})", artifact, check(artifact.toPath()));
        scan();
    }

    /** FileInstall: a refused jar changed and is still refused: still not installed. */
    @Override
    public void update(java.io.File artifact) {
        install(artifact);
    }

    /** FileInstall: a refused jar was removed: nothing was installed, nothing to remove. */
    @Override
    public void uninstall(java.io.File artifact) {
        scan();
    }

    @Override
    public List<String> getFolders() {
        List<String> out = new ArrayList<>();
        for (Path p : folders) {
            out.add(p.toString());
        }
        return out;
    }

    @Override
    public synchronized List<String> getRejectedFiles() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<Path, String[]> e : judged.entrySet()) {
            if (e.getValue()[1] != null) {
                out.add(e.getKey() + ": " + e.getValue()[1]);
            }
        }
        return out;
    }

    @Override
    public Result execute() {
        List<String> rejected = getRejectedFiles();
        return rejected.isEmpty() ? new Result(Result.Status.OK, "Every jar in the FileInstall folders is a bundle")
                : new Result(Result.Status.WARN, "Not installed: " + String.join("; ", rejected));
    }
}
