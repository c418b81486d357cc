package io.npulifecycle.manifests;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.npulifecycle.simulator.cluster.internal.HelmBinary;

/**
 * Reads the chart's manifests as the build renders them (module charts: {@code charts/target/rendered/}, the chart's
 * defaults with {@code -n npu-operator --include-crds}), and renders the chart with other values through helm
 * (shared by the tests of this module).
 */
final class Manifests {

    static final KubernetesSerialization SER = new KubernetesSerialization();
    /** The repository root: system property {@code npu.repo.root} (set by the pom), else the parent folder. */
    static final Path ROOT = Path.of(System.getProperty("npu.repo.root", "..")).toAbsolutePath().normalize();
    /** The chart's sources. */
    static final Path CHART = ROOT.resolve("charts/npu-lifecycle");
    /** The build's output of module charts. */
    static final Path TARGET = ROOT.resolve("charts/target");
    /** {@code helm template --output-dir} of the defaults: {@code crds/} and {@code templates/} below. */
    static final Path RENDERED = TARGET.resolve("rendered/npu-lifecycle");
    /** The driver DaemonSet template as the ConfigMap npu-lifecycle-driver-daemonset carries it. */
    static final Path TEMPLATE = TARGET.resolve("driver-template/driver-daemonset.yaml");
    /** The namespace the build renders for. */
    static final String NS = "npu-operator";

    private Manifests() {
    }

    /** @return every rendered manifest file: crds/*.yaml and templates/*.yaml, plus the driver DaemonSet template */
    static List<Path> files() throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path dir : List.of(RENDERED.resolve("crds"), RENDERED.resolve("templates"))) {
            if (!Files.isDirectory(dir)) {
                throw new IllegalStateException(dir + " missing: build module charts first (mvn -pl charts,manifests -am verify)");
            }
            try (Stream<Path> s = Files.list(dir)) {
                s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(out::add);
            }
        }
        out.add(TEMPLATE);
        return out;
    }

    /**
     * @param file a YAML file with one or more documents
     * @return its objects, each parsed by fabric8 into its model class
     */
    static List<HasMetadata> load(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return load(in);
        }
    }

    /**
     * @param in YAML with one or more documents (empty documents are skipped)
     * @return its objects, each parsed by fabric8 into its model class
     */
    static List<HasMetadata> load(InputStream in) {
        Object o = SER.unmarshal(in);
        List<HasMetadata> list = new ArrayList<>();
        if (o instanceof List<?> l) {
            for (Object e : l) {
                if (e != null) {
                    list.add((HasMetadata) e);
                }
            }
        } else if (o != null) {
            list.add((HasMetadata) o);
        }
        return list;
    }

    /** @return every object of every manifest file */
    static List<HasMetadata> all() throws IOException {
        List<HasMetadata> all = new ArrayList<>();
        for (Path f : files()) {
            all.addAll(load(f));
        }
        return all;
    }

    /** @return the objects of one kind (a model class) across all manifests */
    static <T extends HasMetadata> List<T> ofType(Class<T> type) throws IOException {
        return all().stream().filter(type::isInstance).map(type::cast).toList();
    }

    /**
     * @return the helm binary: system property {@code npu.helm} (charts/target/helm.properties, set by the pom), else
     *         {@link HelmBinary#locate()} (the properties file, else charts/build-helm.sh)
     */
    static Path helm() {
        return HelmBinary.locate();
    }

    /** The result of one helm run: exit code, standard output and error. */
    record Helm(int exit, String out, String err) {
        /** @return the objects of the output */
        List<HasMetadata> objects() {
            if (exit != 0) {
                throw new AssertionError("helm failed (" + exit + "): " + err);
            }
            return load(new ByteArrayInputStream(out.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /**
     * Runs {@code helm <args>} (60 s at most).
     *
     * @param args the arguments
     * @return what it said
     */
    static Helm runHelm(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(helm().toString());
        cmd.addAll(args);
        Path err = Files.createTempFile("helm", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("helm " + args + " did not finish within 60 s");
            }
            return new Helm(p.exitValue(), new String(out, StandardCharsets.UTF_8), Files.readString(err));
        } finally {
            Files.deleteIfExists(err);
        }
    }

    /**
     * {@code helm template npu-lifecycle charts/npu-lifecycle -n npu-operator --include-crds} with values.
     *
     * @param set {@code --set} values (key to value, in order), or none
     * @param setJson {@code --set-json} values, or none
     * @return what helm said
     */
    static Helm template(Map<String, String> set, Map<String, String> setJson) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("template", "npu-lifecycle", CHART.toString(), "--namespace", NS,
                "--include-crds"));
        set.forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
        setJson.forEach((k, v) -> args.addAll(List.of("--set-json", k + "=" + v)));
        return runHelm(args);
    }
}
