package io.npulifecycle.simulator.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The ConfigMap the control plane reads the driver DaemonSet template from (PID {@code io.npulifecycle.upgrade} key
 * {@code driverDaemonSetConfigMap}), made the way the chart makes it ({@code 41-driver-daemonset-template.yaml}): name
 * {@value #CONFIG_MAP}, key {@value #KEY}, the text of the template file. The test clusters and the simulator install
 * it where they install the rest.
 */
public final class DriverDaemonSetTemplate {

    /** Name of the ConfigMap (the chart's and the control plane's default). */
    public static final String CONFIG_MAP = "npu-lifecycle-driver-daemonset";
    /** Its key holding the template. */
    public static final String KEY = "driver-daemonset.yaml";
    /** System property: the template file to use (else {@link #CANDIDATES}, found above the working folder). */
    public static final String FILE_PROPERTY = "npu.driverDaemonSetTemplate";
    /**
     * Where the template file is looked for, relative to the repository root (or an installed distribution's
     * {@code conf/kubernetes/}), first found wins: the template as the module {@code charts} renders it from the
     * chart's default values (the chart's own file holds Helm expressions), then a distribution's copy.
     */
    public static final List<String> CANDIDATES = List.of("charts/target/driver-template/driver-daemonset.yaml",
            "templates/driver-daemonset.yaml", "driver-daemonset.yaml");

    private DriverDaemonSetTemplate() {
    }

    /**
     * @param roots folders to look in before the folders above the working folder (e.g. an installed
     *        distribution's {@code conf/kubernetes}); none = only those
     * @return the template file: {@value #FILE_PROPERTY}, else the first of {@link #CANDIDATES} under a root or under
     *         the working folder or one above it
     * @throws IllegalStateException when none exists, naming what was looked for
     */
    public static Path locate(Path... roots) {
        String explicit = System.getProperty(FILE_PROPERTY);
        if (explicit != null && !explicit.isBlank()) {
            Path p = Paths.get(explicit);
            if (!Files.isRegularFile(p)) {
                throw new IllegalStateException("-D" + FILE_PROPERTY + "=" + explicit + ": no such file");
            }
            return p;
        }
        for (Path root : roots) {
            for (String c : CANDIDATES) {
                if (Files.isRegularFile(root.resolve(c))) {
                    return root.resolve(c);
                }
            }
        }
        for (Path dir = Paths.get("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            for (String c : CANDIDATES.subList(0, 1)) {
                if (Files.isRegularFile(dir.resolve(c))) {
                    return dir.resolve(c);
                }
            }
        }
        throw new IllegalStateException("driver DaemonSet template not found: none of " + CANDIDATES
                + " above " + Paths.get("").toAbsolutePath() + " (or set -D" + FILE_PROPERTY + "=<file>)");
    }

    /**
     * @param namespace the control plane's namespace
     * @param file the template file (plain YAML: a chart file with Helm expressions is refused)
     * @return the ConfigMap (not yet created)
     * @throws IllegalStateException when the file holds Helm expressions ({@code {{ }}}) or cannot be read
     */
    public static ConfigMap configMap(String namespace, Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("driver DaemonSet template " + file + ": " + e.getMessage(), e);
        }
        if (text.contains("{{")) {
            throw new IllegalStateException("driver DaemonSet template " + file + " holds Helm expressions: give a "
                    + "rendered template with -D" + FILE_PROPERTY + "=<file>");
        }
        return new ConfigMapBuilder().withNewMetadata().withName(CONFIG_MAP).withNamespace(namespace)
                .addToLabels("app.kubernetes.io/name", "npu-lifecycle").endMetadata().addToData(KEY, text).build();
    }

    /**
     * Creates or replaces the ConfigMap.
     *
     * @param client a client allowed to write ConfigMaps in {@code namespace}
     * @param namespace the control plane's namespace
     * @param file the template file
     * @return the ConfigMap as stored
     */
    public static ConfigMap install(KubernetesClient client, String namespace, Path file) {
        return client.configMaps().inNamespace(namespace).resource(configMap(namespace, file)).createOr(
                c -> c.update());
    }
}
