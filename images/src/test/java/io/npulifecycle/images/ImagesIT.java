package io.npulifecycle.images;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The images of {@code target/images/} (made by {@code src/main/images/build-images.sh} in the package phase) checked
 * as a user would: {@code skopeo inspect} of each OCI archive (platform, entrypoint, command, user, environment), each
 * image unpacked with {@code umoci unpack} and its entrypoint run in a chroot inside new mount and PID namespaces with
 * the image's environment and user (a saved {@code npu-smi} output through {@code check-npu-smi}, {@code help}, the
 * tools the pods call), the JVM's default trust store, the multi-architecture archive's index naming each
 * architecture's image, and a second build from the same tarball giving the same bytes.
 * An arm64 image runs through qemu-user-static: through binfmt_misc when the machine has it registered (the build
 * registers it when it can), else the image's {@code java} directly under {@code qemu-aarch64-static -L <rootfs>}; the
 * test says which one it used. Runs as root (the chroot, the control plane's uid 10001) or else in a user namespace
 * ({@code unshare -r}, where the uid cannot be checked).
 */
class ImagesIT {

    private static final Path DIR = Path.of(System.getProperty("npu.images.dir", "target/images"));
    private static final String VERSION = System.getProperty("npu.images.version", "");
    private static final String REGISTRY = System.getProperty("npu.images.registry", "");
    private static final List<String> ARCHES = List.of(System.getProperty("npu.images.arches", "amd64 arm64").trim().split("\\s+"));
    private static final List<String> IMAGES = List.of("node-agent", "control-plane");
    private static final Path FIXTURE = Path.of(System.getProperty("npu.fixtures.dir", "../../shared/fixtures"))
            .resolve("npu-smi/910b2_npu-smi-24.1.0.3_healthy.txt");
    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final boolean ROOT = "root".equals(System.getProperty("user.name"));
    /** A command under qemu (arm64 on an amd64 machine) takes far longer than natively: a JVM starts in 10-30 s. */
    private static final Duration TIMEOUT = Duration.ofMinutes(3);

    @TempDir
    static Path work;

    /** The build's verdict: a skipped build skips these tests, a build that could not run fails them with its reason. */
    @BeforeAll
    static void built() throws IOException {
        Path error = DIR.resolve("images.error");
        if (Files.exists(error)) {
            String why = Files.readString(error).trim();
            Assumptions.assumeFalse(why.contains("-Dnpu.images.skip=true)"), why);
            fail("the images were not built: " + why);
        }
        assertTrue(Files.isDirectory(DIR), DIR + " missing: build the distribution first (mvn -pl distribution -am package)");
    }

    static Path archive(String image, String arch) {
        return DIR.resolve("npu-lifecycle-" + image + "-" + VERSION + "-linux-" + arch + ".oci.tar");
    }

    static Path multiArchive(String image) {
        return DIR.resolve("npu-lifecycle-" + image + "-" + VERSION + ".oci.tar");
    }

    static Stream<Arguments> images() {
        return ARCHES.stream().flatMap(a -> IMAGES.stream().map(i -> Arguments.of(i, a)));
    }

    /**
     * The images whose entrypoint runs from the unpacked image: both on amd64, the node agent on arm64. The two
     * images of one architecture share the base and application layers byte for byte (only the image configuration
     * differs: user, command, checked by {@link #skopeoInspectShowsPlatformEntrypointAndUser} for all four), so a
     * second arm64 run would only repeat 30 to 60 s of qemu emulation beside the integration tests of the same build.
     */
    static Stream<Arguments> unpackedRuns() {
        return Stream.of(Arguments.of("node-agent", "amd64"), Arguments.of("control-plane", "amd64"),
                Arguments.of("node-agent", "arm64"));
    }

    /** What a command printed (standard output and error together) and its exit code. */
    record Result(int exit, String output) {
    }

    /**
     * Runs a command to its end.
     *
     * @param timeout longest wait; the process is killed and the test fails after it
     * @return exit code and output
     */
    static Result run(Duration timeout, List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile(work, "run", ".log");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor();
            fail("no end after " + timeout + ": " + command + "\n" + Files.readString(log));
        }
        return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }

    static Result ok(List<String> command) throws IOException, InterruptedException {
        Result r = run(TIMEOUT, command);
        assertEquals(0, r.exit(), () -> command + " exited " + r.exit() + ":\n" + r.output());
        return r;
    }

    /**
     * Both architectures carry the same Debian OpenJDK package version (base-&lt;arch&gt;.packages, written by the build),
     * which lets {@link #runsFromTheUnpackedImage} start the role's JVM options natively only.
     */
    /** What lets {@link #unpackedRuns} run one image per architecture under qemu: the same base and application layers. */
    @Test
    void theImagesOfAnArchitectureShareTheBaseAndApplicationLayers() throws Exception {
        for (String arch : ARCHES) {
            List<List<String>> layers = new ArrayList<>();
            for (String image : IMAGES) {
                JsonNode inspect = JSON.readTree(ok(List.of("skopeo", "inspect", "oci-archive:" + archive(image, arch))).output());
                layers.add(strings(inspect.path("Layers")).subList(0, 2));
            }
            assertEquals(layers.get(0), layers.get(1), arch + ": base and application layers of " + IMAGES);
        }
    }

    @Test
    void bothArchitecturesCarryTheSameJre() throws IOException {
        java.util.Map<String, String> jre = new java.util.TreeMap<>();
        for (String arch : List.of("amd64", "arm64")) {
            jre.put(arch, Files.readAllLines(DIR.resolve("base-" + arch + ".packages")).stream()
                    .filter(l -> l.startsWith("openjdk-17-jre-headless ")).findFirst()
                    .orElseThrow(() -> new AssertionError("no openjdk-17-jre-headless in base-" + arch + ".packages")));
        }
        assertEquals(jre.get("amd64"), jre.get("arm64"), "the JRE of each architecture: " + jre);
    }

    @Test
    void imagesTxtListsTheChartsDefaultReferences() throws IOException {
        List<String> expected = IMAGES.stream()
                .map(i -> (REGISTRY.isEmpty() ? "" : REGISTRY + "/") + "npu-lifecycle/" + i + ":" + VERSION).toList();
        assertEquals(expected, Files.readAllLines(DIR.resolve("images.txt")));
        for (String arch : ARCHES) {
            assertTrue(Files.size(DIR.resolve("base-" + arch + ".packages")) > 0, "base-" + arch + ".packages");
            for (String image : IMAGES) {
                assertTrue(Files.isRegularFile(archive(image, arch)), archive(image, arch) + " missing");
            }
        }
    }

    /** The multi-architecture archive of an image: an index whose entries are the per-architecture images. */
    @ParameterizedTest
    @MethodSource("imageNames")
    void multiArchitectureArchiveIndexesEachArchitecture(String image) throws Exception {
        JsonNode index = JSON.readTree(ok(List.of("skopeo", "inspect", "--raw", "oci-archive:" + multiArchive(image))).output());
        assertEquals("application/vnd.oci.image.index.v1+json", index.path("mediaType").asText(), index.toString());
        Map<String, String> byArch = new LinkedHashMap<>();
        index.path("manifests").forEach(m -> byArch.put(m.path("platform").path("architecture").asText() + "/"
                + m.path("platform").path("os").asText(), m.path("digest").asText()));
        Map<String, String> expected = new LinkedHashMap<>();
        for (String arch : ARCHES) {
            expected.put(arch + "/linux", ok(List.of("skopeo", "inspect", "--format", "{{.Digest}}", "oci-archive:" + archive(image, arch)))
                    .output().trim());
        }
        assertEquals(expected, byArch, "the index names each architecture's image by its digest");
        // images-digests.txt pins the image by the digest of that index (the bytes skopeo copy --all pushes)
        String raw = ok(List.of("skopeo", "inspect", "--raw", "oci-archive:" + multiArchive(image))).output();
        String digest = "sha256:" + sha256(raw.strip().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String pinned = (REGISTRY.isEmpty() ? "" : REGISTRY + "/") + "npu-lifecycle/" + image + "@" + digest;
        assertTrue(Files.readAllLines(DIR.resolve("images-digests.txt")).contains(pinned),
                pinned + " in images-digests.txt: " + Files.readAllLines(DIR.resolve("images-digests.txt")));
    }

    static Stream<String> imageNames() {
        return IMAGES.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("images")
    void skopeoInspectShowsPlatformEntrypointAndUser(String image, String arch) throws Exception {
        JsonNode config = JSON.readTree(ok(List.of("skopeo", "inspect", "--config", "oci-archive:" + archive(image, arch))).output());
        assertEquals(arch, config.path("architecture").asText());
        assertEquals("linux", config.path("os").asText());
        JsonNode c = config.path("config");
        assertEquals(List.of("/opt/npu-lifecycle/bin/npu-lifecycle"), strings(c.path("Entrypoint")));
        boolean controlPlane = image.equals("control-plane");
        assertEquals(List.of(controlPlane ? "control-plane" : "node", "--no-shell", "--home", "/var/lib/npu-lifecycle"),
                strings(c.path("Cmd")));
        assertEquals(controlPlane ? "10001:10001" : "0:0", c.path("User").asText(), "the control plane is not root, the node agent is");
        assertTrue(strings(c.path("Env")).contains("JAVA_HOME=/usr/lib/jvm/java-17-openjdk-" + arch), c.path("Env").toString());
        assertEquals(VERSION, c.path("Labels").path("org.opencontainers.image.version").asText());
        JsonNode inspect = JSON.readTree(ok(List.of("skopeo", "inspect", "oci-archive:" + archive(image, arch))).output());
        assertEquals(3, inspect.path("Layers").size(), "base, application, runtime home: " + inspect);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("unpackedRuns")
    void runsFromTheUnpackedImage(String image, String arch) throws Exception {
        Path layout = Files.createDirectories(work.resolve("layout-" + image + "-" + arch));
        ok(List.of("tar", "-xf", archive(image, arch).toString(), "-C", layout.toString()));
        Path bundle = work.resolve("bundle-" + image + "-" + arch);
        List<String> unpack = new ArrayList<>(List.of("umoci", "unpack"));
        if (!ROOT) {
            unpack.add("--rootless");
        }
        unpack.addAll(List.of("--image", layout + ":" + VERSION, bundle.toString()));
        ok(unpack);
        Path rootfs = bundle.resolve("rootfs");
        Files.createDirectories(rootfs.resolve("dev"));
        Files.copy(FIXTURE, rootfs.resolve("tmp/npu-smi.txt"));
        JsonNode c = JSON.readTree(Files.readString(layout.resolve(configPath(layout)))).path("config");
        List<String> env = strings(c.path("Env"));
        String user = c.path("User").asText();
        String entry = strings(c.path("Entrypoint")).get(0);

        Runner runner = Runner.forArch(arch, rootfs, user, env);
        System.out.println("[images] " + image + " " + arch + ": " + runner.how());
        if (runner.chroot()) {
            // the entrypoint as the image's user with the image's environment: one JVM for the fixture, one for help
            Result smi = ok(runner.command(entry, "check-npu-smi", "/tmp/npu-smi.txt"));
            assertTrue(smi.output().contains("\"verdict\":\"healthy\""), smi.output());
            // "<role> --help": the JVM starts with the role's own options of bin/npu-lifecycle (the node agent's C1-only,
            // TrimNativeHeapInterval, ... must be known to the image's JVM), then the launcher prints the usage and
            // exits 2 (a role takes no --help). On amd64 only: both architectures carry the same Debian OpenJDK
            // version (base-<arch>.packages), so the options are known to both, and a second JVM start under qemu
            // costs 25 to 60 s of emulation beside the integration tests of the same build
            String role = strings(c.path("Cmd")).get(0);
            if ("amd64".equals(arch)) {
                Result help = run(TIMEOUT, runner.command(entry, role, "--help"));
                assertEquals(2, help.exit(), help.output());
                assertTrue(help.output().contains("unknown option '--help' for " + role) && help.output().contains("Usage: npu-lifecycle"),
                        help.output());
            }
            ok(runner.command("curl", "--version"));
            if (image.equals("node-agent")) {
                ok(runner.command("nsenter", "--version"));
                assertEquals("0", ok(runner.command("id", "-u")).output().trim());
            } else if (ROOT) {
                assertEquals("10001", ok(runner.command("id", "-u")).output().trim());
                ok(runner.command("test", "-w", "/var/lib/npu-lifecycle"));
            }
        } else {
            // no binfmt_misc: the image's JVM and the launcher's java command, run by qemu-user directly
            String javaHome = env.stream().filter(e -> e.startsWith("JAVA_HOME=")).findFirst().orElseThrow().substring(10);
            Result version = ok(runner.command(rootfs + javaHome + "/bin/java", "-version"));
            assertTrue(version.output().contains("17."), version.output());
            Result smi = ok(runner.command(rootfs + javaHome + "/bin/java", "-XX:+UseSerialGC",
                    "-Dnpu.lifecycle.install=" + rootfs.resolve("opt/npu-lifecycle"), "-cp", rootfs.resolve("opt/npu-lifecycle/lib") + "/*",
                    "io.npulifecycle.launcher.Main", "check-npu-smi", rootfs.resolve("tmp/npu-smi.txt").toString()));
            assertTrue(smi.output().contains("\"verdict\":\"healthy\""), smi.output());
        }
        assertTrustStore(rootfs, env);
    }

    /**
     * The JVM's default trust store ({@code $JAVA_HOME/lib/security/cacerts}, a link into /etc/ssl/certs/java) holds
     * Debian's CA certificates and opens without a password, as the JVM opens it: read here, in this JVM, from the
     * unpacked root file system (a keytool run in the image would cost one more JVM start, 10 to 30 s under qemu).
     */
    static void assertTrustStore(Path rootfs, List<String> env) throws Exception {
        String javaHome = env.stream().filter(e -> e.startsWith("JAVA_HOME=")).findFirst().orElseThrow().substring(10);
        Path link = rootfs.resolve(javaHome.substring(1)).resolve("lib/security/cacerts");
        assertTrue(Files.isSymbolicLink(link), link + " is Debian's link to the shared trust store");
        Path target = Files.readSymbolicLink(link);
        Path store = target.isAbsolute() ? rootfs.resolve(target.toString().substring(1)) : link.resolveSibling(target);
        java.security.KeyStore ks = java.security.KeyStore.getInstance(store.toFile(), (char[]) null);
        long certs = java.util.Collections.list(ks.aliases()).stream().filter(a -> {
            try {
                return ks.isCertificateEntry(a);
            } catch (java.security.KeyStoreException e) {
                throw new IllegalStateException(e);
            }
        }).count();
        assertTrue(certs >= 100, "the JVM's default trust store " + target + " holds Debian's CA certificates: " + certs);
    }

    @Test
    void twoBuildsFromTheSameInputsGiveTheSameDigests() throws Exception {
        Path again = work.resolve("again");
        ok(List.of("bash", System.getProperty("npu.images.script"), System.getProperty("npu.images.tarball"), VERSION,
                again.toString(), REGISTRY, System.getProperty("npu.images.sourceDateEpoch"), "false", String.join(" ", ARCHES)));
        Map<String, String> first = new LinkedHashMap<>();
        Map<String, String> second = new LinkedHashMap<>();
        for (String arch : ARCHES) {
            for (String image : IMAGES) {
                String name = archive(image, arch).getFileName().toString();
                first.put(name, sha256(archive(image, arch)));
                second.put(name, sha256(again.resolve(name)));
                Result digest = ok(List.of("skopeo", "inspect", "--format", "{{.Digest}}", "oci-archive:" + again.resolve(name)));
                System.out.println("[images] " + name + ": manifest " + digest.output().trim() + ", archive sha256:" + second.get(name));
            }
        }
        for (String image : IMAGES) {
            String name = multiArchive(image).getFileName().toString();
            first.put(name, sha256(multiArchive(image)));
            second.put(name, sha256(again.resolve(name)));
        }
        assertEquals(first, second, "the archives of a second build from the same tarball");
    }

    /** The configuration blob of the layout's one image: index.json, then the manifest it points at. */
    static Path configPath(Path layout) throws IOException {
        String manifest = JSON.readTree(Files.readString(layout.resolve("index.json"))).path("manifests").get(0).path("digest").asText();
        String config = JSON.readTree(Files.readString(blob(layout, manifest))).path("config").path("digest").asText();
        return blob(layout, config);
    }

    static Path blob(Path layout, String digest) {
        return layout.resolve("blobs").resolve(digest.replace(':', '/'));
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    static String sha256(byte[] bytes) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    static String sha256(Path file) throws IOException, NoSuchAlgorithmException {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        try (var in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /**
     * How a program of the image runs here.
     *
     * @param chroot true: in a chroot of the root file system (natively or through binfmt_misc); false: a host path
     *               of the image's program under {@code qemu-<arch>-static -L <rootfs>}
     * @param prefix the command before the image's program
     * @param how    what the machine allowed, for the test's output
     */
    record Runner(boolean chroot, List<String> prefix, String how) {

        List<String> command(String... args) {
            List<String> c = new ArrayList<>(prefix);
            c.addAll(List.of(args));
            return c;
        }

        /**
         * The chroot runs in new mount and PID namespaces with /proc and /dev mounted for the JVM; as root with the
         * image's user ({@code chroot --userspec}), else in a user namespace as the mapped root.
         *
         * @throws org.opentest4j.TestAbortedException when this machine cannot run the architecture at all
         */
        static Runner forArch(String arch, Path rootfs, String user, List<String> env) throws IOException {
            String host = switch (System.getProperty("os.arch")) {
                case "amd64", "x86_64" -> "amd64";
                case "aarch64", "arm64" -> "arm64";
                default -> System.getProperty("os.arch");
            };
            String qemu = switch (arch) {
                case "amd64" -> "x86_64";
                case "arm64" -> "aarch64";
                default -> arch;
            };
            Path binfmt = Path.of("/proc/sys/fs/binfmt_misc/qemu-" + qemu);
            boolean viaBinfmt = !arch.equals(host) && Files.isReadable(binfmt) && Files.readString(binfmt).startsWith("enabled");
            if (arch.equals(host) || viaBinfmt) {
                List<String> p = new ArrayList<>(ROOT ? List.of("unshare", "--mount", "--pid", "--fork")
                        : List.of("unshare", "--map-root-user", "--mount", "--pid", "--fork"));
                p.addAll(List.of("sh", "-c", "mount -t proc proc \"$0/proc\" && mount --rbind /dev \"$0/dev\" && exec chroot "
                        + (ROOT ? "--userspec=" + user + " " : "") + "\"$0\" \"$@\"", rootfs.toString(), "env", "-i"));
                p.addAll(env);
                return new Runner(true, p, arch.equals(host) ? "chroot, natively"
                        : "chroot through binfmt_misc (" + binfmt + ", qemu-" + qemu + "-static)");
            }
            Path qemuStatic = Path.of("/usr/bin/qemu-" + qemu + "-static");
            Assumptions.assumeTrue(Files.isExecutable(qemuStatic), "cannot run " + arch + " programs here: neither binfmt_misc ("
                    + binfmt + ") nor " + qemuStatic);
            return new Runner(false, List.of(qemuStatic.toString(), "-L", rootfs.toString()),
                    "no binfmt_misc: the image's java under " + qemuStatic + " -L <rootfs>");
        }
    }
}
