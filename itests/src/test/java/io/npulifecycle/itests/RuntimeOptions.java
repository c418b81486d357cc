package io.npulifecycle.itests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.ops4j.pax.exam.Option;

import io.npulifecycle.itests.FelixTestSupport.BundleSpec;
import io.npulifecycle.launcher.AccessPolicy;
import io.npulifecycle.launcher.Credentials;
import io.npulifecycle.launcher.FrameworkConfig;
import io.npulifecycle.launcher.LaunchException;
import io.npulifecycle.launcher.RuntimeHome;
import io.npulifecycle.launcher.RuntimeSettings;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * Builds the Pax Exam configuration of a real runtime with the launcher's own code. Used only from
 * {@code @Configuration} methods, outside the framework: the launcher's classes are not visible inside it, so this
 * class must never be loaded by a test method.
 */
public final class RuntimeOptions {

    private RuntimeOptions() {
    }

    /**
     * Builds the options.
     *
     * @param role {@code node} or {@code control-plane}
     * @param homePrefix prefix of the home folder under {@code target/itest-work}
     * @param etcFiles extra files written into {@code <home>/etc/} before start (name to content)
     */
    public static Option[] runtime(String role, String homePrefix, Map<String, String> etcFiles) {
        return runtime(role, homePrefix, etcFiles, Map.of());
    }

    /**
     * As {@link #runtime(String, String, Map)}, plus framework properties the test methods read back with
     * {@code property(key)} (the configuration and the tests run in different class loaders).
     */
    public static Option[] runtime(String role, String homePrefix, Map<String, String> etcFiles,
            Map<String, String> testProperties) {
        try {
            Path install = FelixTestSupport.distributionDir();
            Path homeDir = FelixTestSupport.newWorkDir(homePrefix);
            RuntimeHome home = new RuntimeHome(homeDir);
            home.prepare(install.resolve("conf/defaults"));
            Map<String, String> files = new java.util.LinkedHashMap<>();
            if ("node".equals(role)) {
                files.putAll(HostPaths.etcFiles(FelixTestSupport.newWorkDir(homePrefix + "-host")));
            }
            files.putAll(etcFiles);
            for (Map.Entry<String, String> e : files.entrySet()) {
                Files.writeString(home.etc().resolve(e.getKey()), e.getValue(), StandardCharsets.UTF_8);
            }
            int port = LoopbackPorts.shared().allocate();
            RuntimeSettings settings = RuntimeSettings.load(home.etc(), Map.of("NPU_LIFECYCLE_JOLOKIA_USER", NodeRuntimeSupport.USER,
                    "NPU_LIFECYCLE_JOLOKIA_PASSWORD", NodeRuntimeSupport.PASSWORD, "NPU_LIFECYCLE_HTTP_PORT", String.valueOf(port), "NPU_LIFECYCLE_METRICS_PORT", "0"));
            Credentials credentials = Credentials.resolve(settings, home.secrets(), new SecureRandom());
            AccessPolicy policy = AccessPolicy.choose(settings.jolokiaPolicy(), home.run());
            Map<String, String> props = new java.util.LinkedHashMap<>(FrameworkConfig.properties(role, "itest", home,
                    install, settings, credentials, policy));
            props.put("felix.fileinstall.poll", "200");
            props.putAll(testProperties);
            List<BundleSpec> bundles = new ArrayList<>();
            for (BundleSpec b : FelixTestSupport.readBundlesList(install.resolve("conf/bundles.list"), install.resolve("bundles"),
                    role)) {
                if (b.deploy) {
                    home.placeInDeploy(b.file);
                } else if (!b.file.getFileName().toString().startsWith("jline")
                        && !b.file.getFileName().toString().startsWith("org.apache.felix.gogo.jline")) {
                    bundles.add(b);
                }
            }
            return FelixTestSupport.felixOptions(bundles, props, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (LaunchException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

}
