package io.npulifecycle.upgrade.internal.preflight;

import io.npulifecycle.upgrade.internal.plan.ImageStatus;
import io.npulifecycle.upgrade.internal.plan.Plan;
import io.npulifecycle.upgrade.internal.plan.WhiteListState;

import java.lang.System.Logger.Level;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.time.TimeSource;

/**
 * The preflight of the driver images (docs/upgrade.md "Preflight"), on a thread of its own; the answers are what the
 * next plan goes by, so the rollout holds before any node is touched while an image is missing or unconfirmed.
 *
 * <ul>
 * <li>Registry: every image the plan names ({@link Plan#imagesToCheck()}) is checked with a {@code HEAD}
 * of its manifest. A present image is checked again after {@link #OK_TTL}, a missing one or an error after
 * {@link #BAD_TTL}. With {@code registryCheck=false} every image counts as present and nothing is checked.
 * Credentials come from the pull secret {@code pullSecret} (a dockerconfigjson in the control plane's namespace),
 * read at each check. TLS and where: {@link RegistrySettings} ({@code registryCaBundle}, read at each check;
 * {@code registryMirror}; {@code registryInsecure}); a registry whose certificate is not trusted fails closed (the
 * image counts as unconfirmed) and the message says what to configure.</li>
 * <li>ImageWhiteList ({@link WhiteListState}, {@link ImageWhiteListReader}): while the plan needs images, the
 * whitelist {@code imageWhiteListNamespace}/{@code imageWhiteListName} is read, after discovery found the kind
 * (discovery again after {@link #DISCOVERY_TTL}, or at once when the object was not found). It is read again after
 * {@link #OK_TTL} when it listed every needed tag or the kind is not served, after {@link #BAD_TTL} otherwise, and
 * at once when the plan needs a tag it was not read for. With {@code imageWhiteListCheck=false} it is never read.</li>
 * </ul>
 */
public final class ImagePreflight implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ImagePreflight.class.getName());
    /** How long a present image is taken as present. */
    static final Duration OK_TTL = Duration.ofMinutes(5);
    /** How long a missing image, or a failed check, stands before the next check. */
    static final Duration BAD_TTL = Duration.ofSeconds(30);
    /** How long where the ImageWhiteList kind is served (or that it is not) is taken as known. */
    static final Duration DISCOVERY_TTL = Duration.ofMinutes(5);

    private record Cached(ImageStatus status, long atNanos) {
    }

    private final KubernetesClient client;
    private final TimeSource time;
    private final PreflightSettings cfg;
    private final RegistryClient registryOverride;
    private final Runnable onResult;
    private final ExecutorService checker;
    private final Map<String, Cached> images = new ConcurrentHashMap<>();
    private final Set<String> checking = ConcurrentHashMap.newKeySet();
    private final ImageWhiteListReader whiteListReader;
    private final AtomicBoolean readingWhiteList = new AtomicBoolean();
    /** The last whitelist read and when (monotonic nanos); written by the checker thread only. */
    private volatile CachedWhiteList whiteList;
    /** The last discovery and when (monotonic nanos), or null; checker thread only. */
    private ImageWhiteListReader.Discovery discovery;
    private long discoveredAt;

    private record CachedWhiteList(WhiteListState state, long atNanos) {
    }

    /**
     * @param client reads the pull secret, the API discovery and the ImageWhiteList
     * @param time the monotonic clock of the cache
     * @param cfg what to check and how to reach the registries
     * @param registry a registry client to use instead of one built from the configuration (tests), or null
     * @param onResult called after each check (it asks for a reconcile)
     * @param checker the thread the checks run on, one after the other (shut down by {@link #close()})
     */
    public ImagePreflight(KubernetesClient client, TimeSource time, PreflightSettings cfg, RegistryClient registry,
            Runnable onResult, ExecutorService checker) {
        this.client = client;
        this.time = time;
        this.cfg = cfg;
        this.registryOverride = registry;
        this.onResult = onResult;
        this.checker = checker;
        this.whiteListReader = new ImageWhiteListReader(client);
        WhiteListState.Status first = cfg.imageWhiteListCheck() ? WhiteListState.Status.NOT_CHECKED
                : WhiteListState.Status.DISABLED;
        this.whiteList = new CachedWhiteList(WhiteListState.of(first, cfg.imageWhiteListNamespace(),
                cfg.imageWhiteListName(), "", ""), Long.MIN_VALUE);
    }

    /** @return what is known of the ImageWhiteList ({@code DISABLED} with {@code imageWhiteListCheck=false}) */
    public WhiteListState whiteList() {
        return whiteList.state();
    }

    /**
     * @return the answers so far by image reference (absent = not checked yet); with {@code registryCheck=false} a
     *         map that answers present for every image
     */
    public Map<String, ImageStatus> results() {
        if (!cfg.registryCheck()) {
            return new AllPresent();
        }
        Map<String, ImageStatus> m = new HashMap<>();
        images.forEach((k, v) -> m.put(k, v.status()));
        return m;
    }

    /**
     * Starts a check of each image not checked yet or whose answer is older than its TTL, unless one is running.
     *
     * @param needed the images the plan needs
     * @param mono the monotonic clock now (TimeSource.monotonicNanos())
     */
    public void request(Collection<String> needed, long mono) {
        requestWhiteList(needed, mono);
        if (!cfg.registryCheck()) {
            return;
        }
        for (String img : needed) {
            Cached c = images.get(img);
            long ttl = (c != null && c.status().present() ? OK_TTL : BAD_TTL).toNanos();
            if ((c == null || mono - c.atNanos() > ttl) && checking.add(img)) {
                checker.execute(() -> checkImage(img));
            }
        }
    }

    private void requestWhiteList(Collection<String> needed, long mono) {
        if (!cfg.imageWhiteListCheck() || needed.isEmpty()) {
            return;
        }
        Set<String> tags = WhiteListState.tagsOf(needed);
        CachedWhiteList c = whiteList;
        WhiteListState s = c.state();
        boolean settled = s.status() == WhiteListState.Status.NOT_SERVED
                || s.status() == WhiteListState.Status.LISTED && s.tags().containsAll(tags);
        long ttl = (settled ? OK_TTL : BAD_TTL).toNanos();
        boolean stale = c.atNanos() == Long.MIN_VALUE || mono - c.atNanos() > ttl;
        boolean newTags = s.status() == WhiteListState.Status.LISTED && !s.asked().containsAll(tags);
        if ((stale || newTags) && readingWhiteList.compareAndSet(false, true)) {
            checker.execute(() -> readWhiteList(tags));
        }
    }

    private void readWhiteList(Set<String> tags) {
        String ns = cfg.imageWhiteListNamespace();
        String name = cfg.imageWhiteListName();
        WhiteListState s;
        try {
            long mono = time.monotonicNanos();
            if (discovery == null || mono - discoveredAt > DISCOVERY_TTL.toNanos()) {
                discovery = whiteListReader.discover();
                discoveredAt = mono;
                if (!discovery.skipped().isEmpty()) {
                    LOG.log(Level.WARNING, "preflight: API discovery skipped " + discovery.skipped());
                }
            }
            if (discovery.found() == null) {
                s = WhiteListState.of(WhiteListState.Status.NOT_SERVED, ns, name, "", discovery.skipped().isEmpty() ? ""
                        : "discovery failed for " + String.join("; ", discovery.skipped()));
            } else {
                s = whiteListReader.read(discovery.found(), ns, name, tags);
                if (s.status() == WhiteListState.Status.NOT_FOUND) {
                    discovery = null; // the object, or the kind itself, is gone: discover again next time
                }
            }
        } catch (RuntimeException e) {
            discovery = null;
            s = WhiteListState.of(WhiteListState.Status.FAILED, ns, name, "",
                    "API discovery or the read failed: " + e.getMessage());
        }
        try {
            WhiteListState.Verdict v = s.verdictOnTags(List.copyOf(tags));
            if (!v.ok()) {
                LOG.log(Level.WARNING, "preflight: " + v.message());
            }
            whiteList = new CachedWhiteList(s, time.monotonicNanos());
        } finally {
            readingWhiteList.set(false);
            onResult.run();
        }
    }

    /** The map used when the registry preflight is disabled: every image is present. */
    private static final class AllPresent extends HashMap<String, ImageStatus> {
        private static final long serialVersionUID = 1L;

        @Override
        public ImageStatus get(Object key) {
            return ImageStatus.PRESENT;
        }
    }

    private void checkImage(String img) {
        try {
            RegistryClient rc = registryOverride != null ? registryOverride : registryFromSecret();
            ImageStatus s = rc.check(img);
            images.put(img, new Cached(s, time.monotonicNanos()));
            if (!s.present()) {
                LOG.log(Level.WARNING, "preflight: driver image " + img + " " + (s.missing() ? "is missing" : s.detail()));
            }
        } catch (RuntimeException e) {
            images.put(img, new Cached(new ImageStatus(false, false, e.getMessage()), time.monotonicNanos()));
        } finally {
            checking.remove(img);
            onResult.run();
        }
    }

    /**
     * @return a registry client with the credentials of the pull secret, anonymous when none is configured, and the
     *         TLS context of {@link RegistrySettings#sslContext()}
     * @throws IllegalArgumentException when the secret is missing or has no {@code .dockerconfigjson}, or
     *         {@code registryCaBundle} cannot be read or holds no certificate
     */
    private RegistryClient registryFromSecret() {
        Map<String, String> auth = Map.of();
        if (!cfg.pullSecret().isBlank()) {
            Secret s = client.secrets().inNamespace(cfg.namespace()).withName(cfg.pullSecret()).get();
            if (s == null || s.getData() == null || s.getData().get(".dockerconfigjson") == null) {
                throw new IllegalArgumentException("pull secret " + cfg.namespace() + "/" + cfg.pullSecret()
                        + " missing or without .dockerconfigjson");
            }
            auth = RegistryClient.parseDockerConfig(new String(Base64.getDecoder().decode(s.getData().get(".dockerconfigjson")),
                    StandardCharsets.UTF_8));
        }
        RegistrySettings settings = cfg.registry();
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if ("https".equals(cfg.registryScheme())) {
            javax.net.ssl.SSLContext tls = settings.sslContext(); // throws naming registryCaBundle when unusable
            if (tls != null) {
                http.sslContext(tls);
            }
            if (settings.insecure()) {
                LOG.log(Level.WARNING, "preflight: registryInsecure=true: the registry's TLS certificate is not"
                        + " verified (neither its CA nor its name)");
            }
        }
        return new RegistryClient(http.build(), cfg.registryScheme(), auth, Duration.ofSeconds(10), settings);
    }

    /** Stops the checks (a running one is interrupted). */
    @Override
    public void close() {
        checker.shutdownNow();
    }
}
