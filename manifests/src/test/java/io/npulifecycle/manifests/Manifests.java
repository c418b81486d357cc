package io.npulifecycle.manifests;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/** Reads the repository's manifests (shared by the tests of this module). */
final class Manifests {

    static final KubernetesSerialization SER = new KubernetesSerialization();
    /** The repository root: system property {@code npu.repo.root} (set by the pom), else the parent folder. */
    static final Path ROOT = Path.of(System.getProperty("npu.repo.root", "..")).toAbsolutePath().normalize();
    static final Path K8S = ROOT.resolve("config/kubernetes");
    static final Path TEMPLATE = K8S.resolve("templates/driver-daemonset.yaml");

    private Manifests() {
    }

    /** @return every manifest file: config/kubernetes/*.yaml and config/kubernetes/templates/*.yaml */
    static List<Path> files() throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path dir : List.of(K8S, K8S.resolve("templates"))) {
            try (Stream<Path> s = Files.list(dir)) {
                s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(out::add);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("no manifests found under " + K8S);
        }
        return out;
    }

    /**
     * @param file a YAML file with one or more documents
     * @return its objects, each parsed by fabric8 into its model class
     */
    static List<HasMetadata> load(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            Object o = SER.unmarshal(in);
            List<HasMetadata> list = new ArrayList<>();
            if (o instanceof List<?> l) {
                for (Object e : l) {
                    list.add((HasMetadata) e);
                }
            } else {
                list.add((HasMetadata) o);
            }
            return list;
        }
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
}
