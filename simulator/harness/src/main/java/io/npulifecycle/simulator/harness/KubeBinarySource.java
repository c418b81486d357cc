package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;

import io.npulifecycle.simulator.cluster.internal.KubeBinaries;

/**
 * Where the harness finds kube-apiserver and etcd for {@code --api real}: the folder of system property
 * {@value KubeBinaries#BIN_PROPERTY}, else what the installation's {@code kube/apiserver/build.sh} finds in its cache
 * folder or builds from the Go sources beside it.
 */
final class KubeBinarySource {

    private KubeBinarySource() {
    }

    /**
     * @param install an installation (bin/, lib/, conf/, kube/)
     * @return the binaries of its {@code kube/apiserver/build.sh} (see {@link #of(Path)})
     */
    static Supplier<KubeBinaries> ofInstall(Path install) {
        return of(install.resolve("kube").resolve("apiserver").resolve("build.sh"));
    }

    /**
     * @param buildScript {@code build.sh} of the Go sources of kube-apiserver and etcd
     * @return a supplier that looks the binaries up when called; it throws {@link IllegalStateException} when they
     *         are missing and cannot be built (the message says what to install), or when interrupted
     */
    static Supplier<KubeBinaries> of(Path buildScript) {
        return () -> {
            if (System.getProperty(KubeBinaries.BIN_PROPERTY) != null) {
                return KubeBinaries.fromSystemProperties();
            }
            Path properties = null;
            try {
                properties = Files.createTempFile("npu-lifecycle-kube-", ".properties");
                return KubeBinaries.fromBuildScript(buildScript, properties);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a temporary file", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while " + buildScript + " ran", e);
            } finally {
                if (properties != null) {
                    try {
                        Files.deleteIfExists(properties);
                    } catch (IOException e) {
                        // a temporary file; the system cleans it up
                    }
                }
            }
        };
    }
}
