package io.npulifecycle.upgrade.internal.preflight;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Assumptions;

import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.simulator.common.LoopbackPorts;
import io.npulifecycle.testing.support.Waits;

/**
 * A real OCI registry for tests: Debian's {@code docker-registry} (the distribution registry v2) on 127.0.0.1 with
 * TLS from a test CA made with {@code openssl} (the server certificate names IP 127.0.0.1) and basic authentication
 * from an {@code htpasswd} file (bcrypt, {@code apache2-utils}); images are pushed to it with {@code skopeo copy} from
 * an OCI layout made here (one empty layer: nothing is pulled from the internet). The process is started and stopped
 * here (no systemd), on a port of {@link LoopbackPorts}; {@link #close()} stops it and releases the port.
 *
 * <pre>
 * try (RealRegistry r = RealRegistry.start(dir)) {
 *     r.push("ascend/ascend-driver", "25.5.0-910b-...");   // 127.0.0.1:PORT/ascend/ascend-driver:25.5.0-910b-...
 *     r.caCertificate(); r.host(); RealRegistry.USER; RealRegistry.PASSWORD;
 * }
 * </pre>
 */
final class RealRegistry implements AutoCloseable {

    /** The user the registry accepts. */
    static final String USER = "npu-puller";
    /** Its password. */
    static final String PASSWORD = "registry-test-password";
    /** The tools, each with the Debian package that has it. */
    static final List<String[]> TOOLS = List.of(new String[] {"docker-registry", "docker-registry"},
            new String[] {"skopeo", "skopeo"}, new String[] {"htpasswd", "apache2-utils"},
            new String[] {"openssl", "openssl"});
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);

    private final Path dir;
    private final int port;
    private final boolean tls;
    private final ChildProcess process;
    private Path layout;

    private RealRegistry(Path dir, int port, boolean tls, ChildProcess process) {
        this.dir = dir;
        this.tls = tls;
        this.port = port;
        this.process = process;
    }

    /**
     * Skips the test (a local run) or fails it (under {@code CI=true}) when a tool is missing, naming the packages
     * to install ({@code .ci/run} installs them).
     */
    static void requireTools() {
        List<String> missing = new ArrayList<>();
        for (String[] t : TOOLS) {
            if (onPath(t[0]) == null) {
                missing.add(t[0] + " (Debian package " + t[1] + ")");
            }
        }
        if (missing.isEmpty()) {
            return;
        }
        String message = "the real-registry preflight test needs " + String.join(", ", missing)
                + ": apt-get install -y --no-install-recommends docker-registry skopeo apache2-utils openssl"
                + " (as .ci/run does)";
        if ("true".equals(System.getenv("CI"))) {
            fail(message + "; on CI they are required");
        }
        System.err.println("SKIPPED (local run): " + message);
        Assumptions.abort(message);
    }

    private static Path onPath(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path p = Path.of(d, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * Makes the CA, the server certificate and the htpasswd file in {@code dir}, starts the registry and waits (at
     * most 30 s) until {@code GET /v2/} answers 401 over TLS.
     *
     * @param dir a new folder of the test (certificates, htpasswd, configuration, storage, log)
     * @return the running registry; the caller closes it
     * @throws IOException when a file cannot be written or a tool cannot be started
     * @throws AssertionError when a tool fails or the registry does not get ready (with its output)
     */
    static RealRegistry start(Path dir) throws IOException, InterruptedException {
        return start(dir, true);
    }

    /**
     * As {@link #start(Path)}; without TLS when {@code tls} is false (a plain-HTTP registry, as an insecure one in a
     * lab).
     */
    static RealRegistry start(Path dir, boolean tls) throws IOException, InterruptedException {
        requireTools();
        Path pki = Files.createDirectories(dir.resolve("pki"));
        run(dir, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", pki.resolve("ca.key").toString(), "-out", pki.resolve("ca.crt").toString(), "-days", "2",
                "-subj", "/CN=npu-lifecycle test registry CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        run(dir, "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", pki.resolve("server.key").toString(), "-out", pki.resolve("server.csr").toString(),
                "-subj", "/CN=127.0.0.1");
        Files.writeString(pki.resolve("server.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                + "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n");
        run(dir, "openssl", "x509", "-req", "-in", pki.resolve("server.csr").toString(), "-CA",
                pki.resolve("ca.crt").toString(), "-CAkey", pki.resolve("ca.key").toString(), "-CAcreateserial",
                "-out", pki.resolve("server.crt").toString(), "-days", "2", "-extfile",
                pki.resolve("server.ext").toString());
        Files.writeString(dir.resolve("htpasswd"), run(dir, "htpasswd", "-Bbn", USER, PASSWORD));
        int port = LoopbackPorts.shared().allocate();
        Path config = dir.resolve("config.yml");
        Files.writeString(config, String.join("\n",
                "version: 0.1",
                "log:",
                "  level: warn",
                "  accesslog:",
                "    disabled: true",
                "storage:",
                "  filesystem:",
                "    rootdirectory: " + dir.resolve("storage"),
                "  delete:",
                "    enabled: true",
                "http:",
                "  addr: 127.0.0.1:" + port,
                tls ? "  tls:" : "",
                tls ? "    certificate: " + pki.resolve("server.crt") : "",
                tls ? "    key: " + pki.resolve("server.key") : "",
                "auth:",
                "  htpasswd:",
                "    realm: npu-lifecycle-test",
                "    path: " + dir.resolve("htpasswd"),
                ""));
        ChildProcess p = ChildProcess.builder(List.of(onPath("docker-registry").toString(), "serve",
                config.toString())).name("docker-registry").output(dir.resolve("registry.log"), false).start();
        RealRegistry r = new RealRegistry(dir, port, tls, p);
        try {
            r.awaitReady();
        } catch (RuntimeException | Error e) {
            r.close();
            throw e;
        }
        return r;
    }

    private void awaitReady() {
        HttpClient http = HttpClient.newBuilder().sslContext(new RegistrySettings(caCertificate().toString(), "",
                false).sslContext()).connectTimeout(Duration.ofSeconds(2)).build();
        Waits.until("docker-registry answers GET /v2/ with 401 on " + host(), START_TIMEOUT, () -> {
            if (!process.alive()) {
                throw new AssertionError("docker-registry exited (" + process.exitValue() + "): "
                        + process.outputTail(20));
            }
            try {
                return http.send(HttpRequest.newBuilder(URI.create((tls ? "https://" : "http://") + host() + "/v2/"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding())
                        .statusCode() == 401;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }, () -> process.outputTail(20));
    }

    /** @return {@code 127.0.0.1:PORT} */
    String host() {
        return "127.0.0.1:" + port;
    }

    /** @return the test CA (PEM) that signs the registry's certificate */
    Path caCertificate() {
        return dir.resolve("pki/ca.crt");
    }

    /**
     * Pushes a tiny image (one empty layer) with {@code skopeo copy} from an OCI layout, TLS verified with the test
     * CA, with the registry's credentials.
     *
     * @param repository e.g. {@code ascend/ascend-driver}
     * @param tag e.g. {@code 25.5.0-910b-6.6.0-145.0.4.135-oe2403sp3}
     * @return the image reference {@code 127.0.0.1:PORT/<repository>:<tag>}
     * @throws AssertionError when skopeo fails (with its output)
     */
    String push(String repository, String tag) throws IOException, InterruptedException {
        if (layout == null) {
            layout = ociLayout(dir.resolve("layout"));
        }
        Path certs = dir.resolve("skopeo-certs");
        if (!Files.exists(certs)) {
            Files.createDirectories(certs);
            Files.copy(caCertificate(), certs.resolve("ca.crt"));
        }
        String ref = host() + "/" + repository + ":" + tag;
        run(dir, "skopeo", "--insecure-policy", "copy", "--quiet", "--dest-cert-dir", certs.toString(),
                "--dest-tls-verify=" + tls, "--dest-creds", USER + ":" + PASSWORD, "oci:" + layout + ":latest", "docker://" + ref);
        return ref;
    }

    /**
     * Writes an OCI image layout holding one image, tag {@code latest}: linux/amd64, one layer (an empty tar,
     * gzipped).
     */
    static Path ociLayout(Path out) throws IOException {
        Path blobs = Files.createDirectories(out.resolve("blobs/sha256"));
        byte[] tar = new byte[1024]; // two zero blocks: the end of an empty tar archive
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(gz)) {
            z.write(tar);
        }
        byte[] layer = gz.toByteArray();
        String layerDigest = blob(blobs, layer);
        byte[] config = ("{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{},\"rootfs\":{\"type\":\"layers\","
                + "\"diff_ids\":[\"sha256:" + sha256(tar) + "\"]}}").getBytes(StandardCharsets.UTF_8);
        String configDigest = blob(blobs, config);
        byte[] manifest = ("{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"" + configDigest
                + "\",\"size\":" + config.length + "},\"layers\":[{\"mediaType\":"
                + "\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"" + layerDigest + "\",\"size\":"
                + layer.length + "}]}").getBytes(StandardCharsets.UTF_8);
        String manifestDigest = blob(blobs, manifest);
        Files.writeString(out.resolve("index.json"), "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":"
                + "\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" + manifestDigest + "\",\"size\":"
                + manifest.length + ",\"annotations\":{\"org.opencontainers.image.ref.name\":\"latest\"}}]}");
        Files.writeString(out.resolve("oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}");
        return out;
    }

    private static String blob(Path blobs, byte[] content) throws IOException {
        String hex = sha256(content);
        Files.write(blobs.resolve(hex), content);
        return "sha256:" + hex;
    }

    private static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs a tool in {@code dir}, at most 60 s.
     *
     * @return its standard output
     * @throws AssertionError when it exits non-zero or runs over 60 s (with its output)
     */
    static String run(Path dir, String... command) throws IOException, InterruptedException {
        Path err = Files.createTempFile(dir, "stderr-", ".txt");
        Path outFile = Files.createTempFile(dir, "stdout-", ".txt");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectError(err.toFile())
                .redirectOutput(outFile.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " ran over " + COMMAND_TIMEOUT);
        }
        String stdout = Files.readString(outFile);
        if (p.exitValue() != 0) {
            throw new AssertionError(command[0] + " exited " + p.exitValue() + ": " + String.join(" ", command)
                    + "\n" + stdout + Files.readString(err));
        }
        return stdout;
    }

    /** Stops the registry (SIGTERM, SIGKILL after 5 s) and releases its port; the folder is the test's. */
    @Override
    public void close() {
        try {
            process.stop(Duration.ofSeconds(5));
        } finally {
            LoopbackPorts.shared().release(port);
        }
    }

    @Override
    public String toString() {
        return "docker-registry " + (tls ? "https://" : "http://") + host() + " (" + dir + ")";
    }
}
