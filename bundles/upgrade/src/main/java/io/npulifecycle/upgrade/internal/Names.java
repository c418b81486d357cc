package io.npulifecycle.upgrade.internal;

import java.util.List;

/**
 * Names shared with the node agent and the users: the node agent ↔ control plane contract of
 * {@code docs/architecture.md} (node labels and annotations) and DESIGN.md (the custom resource, driver pods).
 * The {@code driver-upgrade-*} keys are written by this bundle only.
 */
public final class Names {
    private Names() {
    }

    public static final String P = "npu.openfuyao.com/";
    /** Label on every NPU node (DESIGN.md). */
    public static final String NPU_PRESENT = "openfuyao.com/npu.present";
    /** Label: chip family {@code 910b}, {@code 310p} (architecture.md table). */
    public static final String CHIP = P + "chip";
    /** Annotation: {@code true} = one reboot approved (DESIGN.md). */
    public static final String APPROVE_REBOOT = P + "approve-reboot";
    /** Label written by the node agent: {@code true} while a reboot is pending. */
    public static final String REBOOT_REQUIRED = P + "reboot-required";
    /** Annotation written by the node agent: {@code recovery} or {@code upgrade}. */
    public static final String REBOOT_REASON = P + "reboot-reason";
    /** Annotation written by the node agent: the current boot id. */
    public static final String BOOT_ID = P + "boot-id";
    /** Annotation written by the node agent right before rebooting: the boot id being left. */
    public static final String REBOOTING_FROM_BOOT_ID = P + "rebooting-from-boot-id";
    /** Label written by the node agent: the loaded driver version. */
    public static final String DRIVER_VERSION = P + "driver-version";
    /** Annotation written by the node agent: {@code <version>@<boot-id>} after a successful validation. */
    public static final String DRIVER_VALIDATED = P + "driver-validated";
    /** Label written by the node agent: health-watch verdict. */
    public static final String NPU_HEALTH = P + "npu-health";

    /** Label written here: the node's upgrade state; absent = done (DESIGN.md). */
    public static final String UPGRADE_STATE = P + "driver-upgrade-state";
    /** Annotation written here: why the node is {@code upgrade-failed}. */
    public static final String UPGRADE_FAILURE = P + "driver-upgrade-failure";
    /**
     * Annotation written here together with every state change (same patch, no extra write):
     * {@code state=<state>,since=<RFC 3339 instant>,target=<version>,fromBootId=<boot id>}. Gives the deadlines
     * their start and tells whether the node rebooted since it got its slot, so a new leader carries on.
     */
    public static final String UPGRADE_PROGRESS = P + "driver-upgrade-progress";
    /**
     * Label written here on every NPU node: its (chip, kernel, OS) combination, {@code <chip>-<10 hex digits>}; the
     * driver DaemonSet of that combination selects on it.
     */
    public static final String COMBINATION = P + "driver-combination";
    /** Annotation on the NPUOperatorCtl: {@code true} = rollout paused (set by the MBean's pause()). */
    public static final String PAUSED = P + "paused";

    /** Namespace of the driver pods (DESIGN.md). */
    public static final String DRIVER_NAMESPACE = "npu-operator";
    /** Label key and value of the driver pods (DESIGN.md). */
    public static final String DRIVER_APP_KEY = "app";
    public static final String DRIVER_APP = "npu-driver-daemonset";

    /** Custom resource coordinates (DESIGN.md). */
    public static final String GROUP = "npu.openfuyao.com";
    public static final String VERSION = "v1";
    public static final String KIND = "NPUOperatorCtl";
    public static final String PLURAL = "npuoperatorctls";

    /** NPU extended resources: a pod requesting one of these (prefix match) is an NPU workload. */
    public static final List<String> NPU_RESOURCE_PREFIXES = List.of("huawei.com/Ascend910", "huawei.com/Ascend310P");

    /** Reason value written by the node agent for upgrade reboots. */
    public static final String REASON_UPGRADE = "upgrade";
}
