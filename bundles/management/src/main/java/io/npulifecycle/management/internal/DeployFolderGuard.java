package io.npulifecycle.management.internal;

import io.npulifecycle.api.management.DescribedMBean;
import io.npulifecycle.api.management.DeployMXBean;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

import javax.management.DynamicMBean;
import javax.management.StandardMBean;

import org.apache.felix.fileinstall.ArtifactInstaller;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

import io.npulifecycle.api.management.Mbeans;
import io.npulifecycle.api.time.TimeSource;

/**
 * Says which jars in the FileInstall folders are not installed, and keeps FileInstall from installing them: jars
 * that are not valid bundles, and jars whose {@code Bundle-SymbolicName} is already installed from another file
 * (at most one copy of a bundle runs, see {@link SingleCopyRule}).
 *
 * <p>FileInstall silently waits on a jar it cannot open (it takes it for a copy still in progress), so a truncated
 * or corrupt jar dropped into {@code deploy/} would go unnoticed. This guard scans the folders every
 * {@value #PERIOD_SECONDS} s (wall clock), logs each refused jar once per reason (a second copy's reason names the
 * installed file), lists it in {@code io.npulifecycle:type=Deploy}, and reports a WARN health check (readiness stays up: nothing else is disturbed). It never deletes or moves the file.
 *
 * <p>It is also a FileInstall {@link ArtifactInstaller} that claims every jar it refuses: FileInstall hands an artifact
 * that a registered installer can handle to that installer instead of installing it as a bundle, so a jar FileInstall
 * could open (e.g. one with signature files that do not match, which the framework would otherwise install and start)
 * is never installed: reporting it alone would leave a forged "signed" bundle running; and a second copy of an
 * installed bundle never starts beside it. A claimed jar stays uninstalled until FileInstall offers it again (the file
 * changes). Valid jars whose symbolic name is free are left to FileInstall.
 */
@Component(service = {DynamicMBean.class, HealthCheck.class, ArtifactInstaller.class}, property = {
    Mbeans.OBJECT_NAME_PROPERTY + "=" + Mbeans.DOMAIN + ":type=Deploy",
    HealthCheck.NAME + "=npu-lifecycle deploy folder",
    HealthCheck.TAGS + "=ready"
})
public class DeployFolderGuard extends DescribedMBean implements DeployMXBean, HealthCheck, ArtifactInstaller {

    static final long PERIOD_SECONDS = 2;
    private static final System.Logger LOG = System.getLogger(DeployFolderGuard.class.getName());

    @Reference
    private TimeSource time;

    private final List<Path> folders = new ArrayList<>();
    /** The framework's bundles (UNINSTALLED ones left out), for the one-copy rule. */
    private Supplier<List<SingleCopyRule.Installed>> installed = List::of;
    /** path -> what was read from the version of the file already judged. */
    private final Map<Path, Judged> judged = new TreeMap<>();
    /** Files this guard claimed from FileInstall: not installed until FileInstall offers them again (a change). */
    private final Set<Path> held = new TreeSet<>();
    /** path -> the refusal last logged, so each is logged once. */
    private final Map<Path, String> logged = new TreeMap<>();
    private WallPeriod period;

    /**
     * What one version of a file is.
     *
     * @param version "size/mtime" of the file read
     * @param invalid why it is not a valid bundle, or {@code null}
     * @param symbolicName its Bundle-SymbolicName without directives when valid
     * @param truncated whether the zip itself could not be read (a copy possibly still in progress)
     */
    record Judged(String version, String invalid, String symbolicName, boolean truncated) {
    }

    /** DS constructor. */
    public DeployFolderGuard() {
        super(DeployMXBean.class);
    }

    /** Test constructor: no bundle installed. */
    DeployFolderGuard(List<Path> folders) {
        this(folders, List::of);
    }

    /** Test constructor: {@code installed} stands for the framework's bundles. */
    DeployFolderGuard(List<Path> folders, Supplier<List<SingleCopyRule.Installed>> installed) {
        this();
        this.folders.addAll(folders);
        this.installed = installed;
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
        installed = () -> {
            List<SingleCopyRule.Installed> out = new ArrayList<>();
            for (Bundle b : ctx.getBundles()) {
                if (b.getState() != Bundle.UNINSTALLED && b.getSymbolicName() != null) {
                    out.add(new SingleCopyRule.Installed(b.getSymbolicName(), b.getLocation(), b.getBundleId()));
                }
            }
            return out;
        };
        period = new WallPeriod(time, PERIOD_SECONDS, this::scan);
        period.start();
    }

    @Deactivate
    void deactivate() {
        if (period != null) {
            period.stop();
        }
    }

    /** Reads the folders: judges new and changed jars, forgets removed ones. */
    private void refresh() {
        Map<Path, String> seen = new TreeMap<>();
        for (Path folder : folders) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(folder, "*.jar")) {
                for (Path jar : ds) {
                    BasicFileAttributes a = Files.readAttributes(jar, BasicFileAttributes.class);
                    seen.put(jar.toAbsolutePath().normalize(), a.size() + "/" + a.lastModifiedTime().toMillis());
                }
            } catch (IOException e) {
                // a missing folder is FileInstall's business; nothing to judge
            }
        }
        judged.keySet().retainAll(seen.keySet());
        held.retainAll(seen.keySet());
        logged.keySet().retainAll(seen.keySet());
        for (Map.Entry<Path, String> e : seen.entrySet()) {
            Judged previous = judged.get(e.getKey());
            if (previous == null || !previous.version().equals(e.getValue())) {
                judged.put(e.getKey(), read(e.getKey(), e.getValue()));
            }
        }
    }

    /**
     * @param jar a judged file
     * @param offered whether FileInstall is offering it now (a file held earlier is judged afresh)
     * @return why it is not installed, or {@code null}
     */
    private String reason(Path jar, boolean offered) {
        Judged j = judged.get(jar);
        if (j == null) {
            return null;
        }
        if (j.invalid() != null) {
            return j.invalid();
        }
        Map<Path, String> candidates = new TreeMap<>();
        for (Map.Entry<Path, Judged> e : judged.entrySet()) {
            if (e.getValue().invalid() == null && !held.contains(e.getKey())) {
                candidates.put(e.getKey(), e.getValue().symbolicName());
            }
        }
        String refusal = SingleCopyRule.refusal(jar, j.symbolicName(), installed.get(), candidates);
        if (refusal == null && !offered && held.contains(jar)) {
            return "refused earlier, no longer in conflict; FileInstall installs it when the file changes "
                    + "(touch it, or copy it again)";
        }
        return refusal;
    }

    @Override
    public synchronized void scan() {
        refresh();
        for (Path jar : judged.keySet()) {
            String reason = reason(jar, false);
            if (reason == null) {
                logged.remove(jar);
            } else if (!reason.equals(logged.get(jar))) {
                logged.put(jar, reason);
                LOG.log(Level.WARNING, "Bundle file {0} is not installed: {1}. {2}", jar, reason,
                        judged.get(jar).truncated() ? "If it is a copy in progress, copy the jar to a name ending "
                                + "in .part, then rename it" : "It stays as it is until the file changes");
            }
        }
    }

    /**
     * @param jar a file
     * @return {@code null} if it is a readable jar with a Bundle-SymbolicName, else why not
     */
    static String check(Path jar) {
        return read(jar, "").invalid();
    }

    /** Reads a jar's manifest and signature; never throws. */
    static Judged read(Path jar, String version) {
        JarFile jf;
        try {
            jf = new JarFile(jar.toFile());
        } catch (IOException | SecurityException e) {
            return new Judged(version, "truncated or corrupt: " + e.getMessage(), null, true);
        }
        try (jf) {
            Manifest m;
            try {
                m = jf.getManifest();
            } catch (IOException e) {
                return new Judged(version, "unreadable META-INF/MANIFEST.MF (" + e.getMessage()
                        + "): not a bundle", null, false);
            }
            if (m == null) {
                return new Judged(version, "no META-INF/MANIFEST.MF", null, false);
            }
            String bsn = m.getMainAttributes().getValue("Bundle-SymbolicName");
            if (bsn == null || bsn.split(";", 2)[0].isBlank()) {
                return new Judged(version, "no Bundle-SymbolicName in its manifest: not an OSGi bundle", null, false);
            }
            String sig = signature(jf);
            return new Judged(version, sig, sig == null ? bsn.split(";", 2)[0].trim() : null, false);
        } catch (IOException | SecurityException e) {
            return new Judged(version, "truncated or corrupt: " + e.getMessage(), null, true);
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

    /**
     * FileInstall: claims a {@code .jar} that is not a valid bundle or whose symbolic name another file or location
     * holds ({@link SingleCopyRule}), and nothing else.
     */
    @Override
    public synchronized boolean canHandle(java.io.File artifact) {
        if (!artifact.getName().endsWith(".jar")) {
            return false;
        }
        refresh();
        Path jar = artifact.toPath().toAbsolutePath().normalize();
        if (!judged.containsKey(jar)) {
            judged.put(jar, read(jar, ""));
        }
        return reason(jar, true) != null;
    }

    /** FileInstall: a refused jar is not installed; it is held, logged and listed by {@link #scan()}. */
    @Override
    public void install(java.io.File artifact) {
        synchronized (this) {
            held.add(artifact.toPath().toAbsolutePath().normalize());
        }
        scan();
    }

    /** FileInstall: a refused jar changed and is still refused: still not installed. */
    @Override
    public void update(java.io.File artifact) {
        install(artifact);
    }

    /** FileInstall: a refused jar was removed (or is now installable): nothing was installed, nothing to remove. */
    @Override
    public void uninstall(java.io.File artifact) {
        synchronized (this) {
            held.remove(artifact.toPath().toAbsolutePath().normalize());
        }
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
        for (Path jar : judged.keySet()) {
            String reason = reason(jar, false);
            if (reason != null) {
                out.add(jar + ": " + reason);
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
