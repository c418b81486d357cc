package io.npulifecycle.upgrade.internal.plan;

import io.npulifecycle.api.node.NodeKeys;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Node;

/**
 * The (chip, kernel, OS) combination of an NPU node, which selects its driver image and DaemonSet.
 * <ul>
 * <li>chip: node label {@code npu.openfuyao.com/chip} ({@code 910b}, {@code 310p}; architecture.md table);</li>
 * <li>kernel: {@code status.nodeInfo.kernelVersion} without a trailing {@code .<os tag>} and architecture, e.g.
 * {@code 6.6.0-145.0.4.135.oe2403sp3.aarch64} → {@code 6.6.0-145.0.4.135};</li>
 * <li>os: {@code status.nodeInfo.osImage} shortened: {@code openEuler 24.03 (LTS-SP3)} → {@code oe2403sp3},
 * {@code Ubuntu 22.04.4 LTS} → {@code ubuntu2204}, otherwise the lower-case letters and digits.</li>
 * </ul>
 *
 * @param chip chip family
 * @param kernel kernel part of the image tag
 * @param os OS part of the image tag
 */
public record Combination(String chip, String kernel, String os) {

    private static final Pattern OE = Pattern.compile("(?i)openeuler\\s+(\\d+)\\.(\\d+)(?:\\s*\\(LTS(?:-SP(\\d+))?\\))?.*");
    private static final Pattern UBUNTU = Pattern.compile("(?i)ubuntu\\s+(\\d+)\\.(\\d+).*");
    private static final Pattern KERNEL_SUFFIX = Pattern.compile("(\\.(oe|el|ky|ctl)[0-9a-z]*)?(\\.(x86_64|aarch64|arm64|amd64))?$");
    private static final Pattern TAG_PART = Pattern.compile("^[A-Za-z0-9_.-]{1,60}$");
    private static final int MEMO_MAX = 4096;
    /** Parsed combinations by chip, kernelVersion and osImage (valid ones only: an error names its node). */
    private static final Map<String, Combination> PARSED = new ConcurrentHashMap<>();
    private static final Map<Combination, String> KEYS = new ConcurrentHashMap<>();

    /**
     * @param n an NPU node
     * @return its combination
     * @throws IllegalArgumentException naming the node and the missing or malformed field
     */
    public static Combination of(Node n) {
        String name = n.getMetadata().getName();
        String chip = n.getMetadata().getLabels() == null ? null : n.getMetadata().getLabels().get(NodeKeys.CHIP);
        var nodeInfo = n.getStatus() == null ? null : n.getStatus().getNodeInfo();
        // a reconcile derives every node's combination: the same few (chip, kernel, OS) triples, so the parsed
        // result is memoized (JFR, 5,000 nodes: parsing each node is a third of Reconciler.plan's samples)
        String memoKey = chip == null || nodeInfo == null ? null
                : chip + '\0' + nodeInfo.getKernelVersion() + '\0' + nodeInfo.getOsImage();
        Combination known = memoKey == null ? null : PARSED.get(memoKey);
        if (known != null) {
            return known;
        }
        Combination c = parse(n, name, chip);
        if (memoKey != null) {
            if (PARSED.size() > MEMO_MAX) {
                PARSED.clear();
            }
            PARSED.put(memoKey, c);
        }
        return c;
    }

    private static Combination parse(Node n, String name, String chip) {
        if (chip == null || !chip.matches("^[a-z0-9]{1,16}$")) {
            throw new IllegalArgumentException("node " + name + ": label " + NodeKeys.CHIP + " is "
                    + (chip == null ? "missing" : "'" + chip + "'") + " (expected a chip family like 910b or 310p)");
        }
        var info = n.getStatus() == null ? null : n.getStatus().getNodeInfo();
        String kernel = info == null ? null : info.getKernelVersion();
        String osImage = info == null ? null : info.getOsImage();
        if (kernel == null || kernel.isBlank() || osImage == null || osImage.isBlank()) {
            throw new IllegalArgumentException("node " + name
                    + ": status.nodeInfo.kernelVersion/osImage missing (expected the kubelet's node info)");
        }
        String k = KERNEL_SUFFIX.matcher(kernel.trim()).replaceFirst("");
        String os = os(osImage);
        if (!TAG_PART.matcher(k).matches() || !TAG_PART.matcher(os).matches()) {
            throw new IllegalArgumentException("node " + name + ": kernel '" + kernel + "' / OS '" + osImage
                    + "' do not give an image tag part (expected [A-Za-z0-9_.-])");
        }
        return new Combination(chip, k, os);
    }

    static String os(String osImage) {
        Matcher m = OE.matcher(osImage.trim());
        if (m.matches()) {
            return "oe" + m.group(1) + m.group(2) + (m.group(3) == null ? "" : "sp" + m.group(3));
        }
        m = UBUNTU.matcher(osImage.trim());
        if (m.matches()) {
            return "ubuntu" + m.group(1) + m.group(2);
        }
        return osImage.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
    }

    /** @return the value of node label {@code npu.openfuyao.com/driver-combination}: {@code <chip>-<10 hex>} */
    public String key() {
        String k = KEYS.get(this);
        if (k == null) {
            if (KEYS.size() > MEMO_MAX) {
                KEYS.clear();
            }
            k = hashKey();
            KEYS.put(this, k);
        }
        return k;
    }

    private String hashKey() {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest((chip + "|" + kernel + "|" + os).getBytes(StandardCharsets.UTF_8));
            return chip + "-" + HexFormat.of().formatHex(h).substring(0, 10);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return DaemonSet name {@code npu-driver-<key>} */
    public String daemonSetName() {
        return "npu-driver-" + key();
    }

    @Override
    public String toString() {
        return chip + "-" + kernel + "-" + os;
    }

    /**
     * @param policy the validated spec (its registry and version)
     * @return the driver image of this combination: {@code <registry>/mlops/ascend-driver:<version>-<chip>-<kernel>-<os>}
     *         (DESIGN.md)
     */
    public String image(io.npulifecycle.api.upgrade.spec.Policy policy) {
        return policy.registry() + "/mlops/ascend-driver:" + policy.version() + "-" + chip + "-" + kernel + "-" + os;
    }
}
