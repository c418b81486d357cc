package io.npulifecycle.api.node;

/**
 * Labels, annotations and Event reasons of the node agent ↔ control plane contract (table "Node labels and
 * annotations" at the end of {@code docs/architecture.md}; the user-facing ones come from {@code DESIGN.md}): the one
 * definition that both runtimes, the simulator and the tests use. The custom resource's coordinates are in
 * {@link io.npulifecycle.api.upgrade.NpuOperatorCtlType}.
 */
public final class NodeKeys {

    /** Prefix of every key the node agent reads or writes. */
    public static final String PREFIX = "npu.openfuyao.com/";
    /** Label on every NPU node (DESIGN.md); its value is not read. */
    public static final String NPU_PRESENT = "openfuyao.com/npu.present";
    /** Label: chip family, e.g. {@code 910b}, {@code 310p}. */
    public static final String CHIP = PREFIX + "chip";
    /** Annotation set by a person: {@code true} (exactly) approves one reboot. Consumed by the node agent. */
    public static final String APPROVE_REBOOT = PREFIX + "approve-reboot";
    /** The only annotation value that is an approval. */
    public static final String APPROVE_VALUE = "true";
    /** Label {@code true} while a valid {@code reboot-required} marker exists. */
    public static final String REBOOT_REQUIRED = PREFIX + "reboot-required";
    /**
     * Annotation {@code recovery|upgrade} ({@link io.npulifecycle.api.markers.Markers#REASON_RECOVERY},
     * {@link io.npulifecycle.api.markers.Markers#REASON_UPGRADE}) while {@link #REBOOT_REQUIRED} is set.
     */
    public static final String REBOOT_REASON = PREFIX + "reboot-reason";
    /** Annotation: the node's current boot id. */
    public static final String BOOT_ID = PREFIX + "boot-id";
    /** Annotation: the boot id being left by a reboot (written with the approval consumption, or right before an automatic reboot). */
    public static final String REBOOTING_FROM_BOOT_ID = PREFIX + "rebooting-from-boot-id";
    /** Label: the driver version loaded in the running kernel. */
    public static final String DRIVER_VERSION = PREFIX + "driver-version";
    /** Annotation {@code <version>@<boot-id>}: validation passed in that boot. */
    public static final String DRIVER_VALIDATED = PREFIX + "driver-validated";
    /** Label {@code healthy|degraded|wedged|unknown}: the health-watch verdict. */
    public static final String NPU_HEALTH = PREFIX + "npu-health";
    /** Label {@code true} when the recovery reboot limit is reached: a person is needed. */
    public static final String RECOVERY_BLOCKED = PREFIX + "recovery-blocked";
    /** Annotation: why recovery is blocked. */
    public static final String RECOVERY_FAILURE = PREFIX + "recovery-failure";
    /** Label written by the control plane only (the node agent never writes it). */
    public static final String DRIVER_UPGRADE_STATE = PREFIX + "driver-upgrade-state";
    /**
     * Value of {@link #DRIVER_UPGRADE_STATE} of a node that gave its rollout slot to an approved node (manual mode,
     * docs/upgrade.md "Slots"): the node agent uses no approval while its Node carries it.
     */
    public static final String UPGRADE_STATE_REBOOT_DEFERRED = "reboot-deferred";
    /** Value of {@link #DRIVER_UPGRADE_STATE} while the control plane cordons the node for its upgrade drain. */
    public static final String UPGRADE_STATE_CORDON_REQUIRED = "cordon-required";
    /** Value of {@link #DRIVER_UPGRADE_STATE} while the control plane evicts the node's pods (docs/upgrade.md "Drain"). */
    public static final String UPGRADE_STATE_DRAIN_REQUIRED = "drain-required";

    /**
     * Whether the node agent must leave an approval unused while its Node's {@link #DRIVER_UPGRADE_STATE} is
     * {@code state}: the node gave its slot up ({@code reboot-deferred}), or it is being cordoned or drained and a
     * reboot now would take down the pods the drain has not evicted yet.
     *
     * @param state the label's value, or null
     * @return true for {@code reboot-deferred}, {@code cordon-required} and {@code drain-required}
     */
    public static boolean approvalOnHold(String state) {
        return UPGRADE_STATE_REBOOT_DEFERRED.equals(state) || UPGRADE_STATE_CORDON_REQUIRED.equals(state)
                || UPGRADE_STATE_DRAIN_REQUIRED.equals(state);
    }
    /** Annotation written by the control plane only: why the node is {@code upgrade-failed}. */
    public static final String DRIVER_UPGRADE_FAILURE = PREFIX + "driver-upgrade-failure";
    /**
     * Annotation written by the control plane only, in the same patch as every state change:
     * {@code state=<state>,since=<RFC 3339 instant>,target=<version>,fromBootId=<boot id>}. Gives the deadlines their
     * start and tells whether the node rebooted since it got its slot, so a new leader carries on.
     */
    public static final String DRIVER_UPGRADE_PROGRESS = PREFIX + "driver-upgrade-progress";
    /**
     * Label written by the control plane only, on every NPU node: its (chip, kernel, OS) combination,
     * {@code <chip>-<10 hex digits>}; the driver DaemonSet of that combination selects on it.
     */
    public static final String DRIVER_COMBINATION = PREFIX + "driver-combination";

    /**
     * Annotation written by the control plane only, in the same patch that cordons a schedulable node for its upgrade
     * drain: the record that it cordoned the node. Only a node carrying it is uncordoned by the control plane (a node
     * an administrator cordoned stays cordoned).
     */
    public static final String CORDONED_BY = PREFIX + "cordoned-by";
    /** The value of {@link #CORDONED_BY}. */
    public static final String CORDONED_BY_VALUE = "npu-lifecycle";
    /**
     * Annotation written by the control plane only, on a node that holds a rollout slot before its upgrade reboot
     * while {@code upgradePolicy.maintenanceWindow} is set: the RFC 3339 instant the open window closes. The node
     * agent makes no upgrade reboot at or after it ({@link #upgradeRebootRefusal}); absent = no window.
     */
    public static final String UPGRADE_REBOOT_BEFORE = PREFIX + "upgrade-reboot-before";

    /**
     * Taint key the control plane puts on a node as soon as its node agent declares a wedge (label
     * {@link #REBOOT_REQUIRED} with {@link #REBOOT_REASON} {@code recovery}), effect {@value #NPU_UNHEALTHY_EFFECT},
     * value {@value #NPU_UNHEALTHY_VALUE}: no new pod lands on a node about to reboot. Removed once the fresh boot
     * validates, or when the request goes away without a reboot (false-positive suppression).
     */
    public static final String NPU_UNHEALTHY_TAINT = PREFIX + "npu-unhealthy";
    /** The value of the {@link #NPU_UNHEALTHY_TAINT} taint. */
    public static final String NPU_UNHEALTHY_VALUE = "true";
    /** The effect of the {@link #NPU_UNHEALTHY_TAINT} taint. */
    public static final String NPU_UNHEALTHY_EFFECT = "NoSchedule";
    /**
     * Annotation written by the control plane only: the recovery reboot of the node is granted, its value the boot id
     * the reboot leaves ({@link #BOOT_ID} when granted). Written once the node is cordoned and drained for its
     * recovery ({@code spec.driver.recoveryPolicy.drain}); the node agent reboots for recovery, with the drain
     * enabled, only while it names the current boot, read again from the API server right before the reboot.
     * Removed after the fresh boot validates, or when the request goes away without a reboot.
     */
    public static final String RECOVERY_REBOOT_GRANTED = PREFIX + "recovery-reboot-granted";
    /**
     * Annotation written by the control plane: the recovery drain of the node timed out with
     * {@code recoveryPolicy.drain.onTimeout: fail}, value {@code <boot id>: <reason>} (the boot whose recovery it
     * stopped, the pods left and what blocked them). While it names the current boot the node is not cordoned,
     * drained or granted again (its cordon given back, the taint kept while the request stands); removed with the
     * taint once the node validates with no request left. Removing it by hand starts the drain again.
     */
    public static final String RECOVERY_DRAIN_FAILED = PREFIX + "recovery-drain-failed";
    /**
     * Annotation written by the node agent while it declares a recovery request: the wedged chips of the request
     * (the marker's {@code chips}, e.g. {@code 0,3}), so the control plane names them in its Events.
     */
    public static final String REBOOT_CHIPS = PREFIX + "reboot-chips";
    /**
     * NodeCondition type on {@code status.conditions} of an NPU Node, written by its node agent (nodes/status patch of
     * its own Node; the node-problem-detector convention, so NodeHealthCheck, autoscalers and dashboards that read
     * conditions see a wedge): {@code False} with reason {@value #CONDITION_REASON_CHIP_WEDGED} and the chips in the
     * message while a chip is wedged, {@code True} with reason {@value #CONDITION_REASON_CHIPS_HEALTHY} once the driver
     * validated in the current boot. Removed by the uninstall cleanup.
     */
    public static final String CONDITION_NPU_HEALTHY = "NpuHealthy";
    /** Reason of {@link #CONDITION_NPU_HEALTHY} {@code False}: a chip is wedged; the message names the chips. */
    public static final String CONDITION_REASON_CHIP_WEDGED = "ChipWedged";
    /** Reason of {@link #CONDITION_NPU_HEALTHY} {@code True}: the driver validated, every expected chip healthy. */
    public static final String CONDITION_REASON_CHIPS_HEALTHY = "ChipsHealthy";
    /**
     * Finalizer the control plane puts on the {@code NPUOperatorCtl} it reconciles: on the resource's deletion it
     * runs the uninstall cleanup (driver DaemonSets, its node labels, annotations, taint, condition and cordons) and
     * then removes the finalizer.
     */
    public static final String FINALIZER_CLEANUP = PREFIX + "cleanup";

    /** Condition type on the custom resource's status: wedged nodes wait because too many are unavailable. */
    public static final String CONDITION_RECOVERY_STORM = "RecoveryStorm";

    /** Namespace of the driver pods (DESIGN.md). */
    public static final String DRIVER_NAMESPACE = "npu-operator";
    /** Label key of the driver pods (DESIGN.md). */
    public static final String DRIVER_APP_LABEL = "app";
    /** Label value of the driver pods (DESIGN.md). */
    public static final String DRIVER_APP = "npu-driver-daemonset";
    /** NPU extended resources: a pod requesting one of these (prefix match) is an NPU workload. */
    public static final java.util.List<String> NPU_RESOURCE_PREFIXES =
            java.util.List.of("huawei.com/Ascend910", "huawei.com/Ascend310P");

    /** Event reason (Normal): a reboot is requested; message contains {@code reason=recovery} or {@code reason=upgrade}. */
    public static final String EVENT_REBOOT_REQUIRED = "RebootRequired";
    /** Event reason (Warning): the approval annotation has a value other than {@code true}; the message names it. */
    public static final String EVENT_APPROVAL_INVALID = "ApprovalInvalid";
    /** Event reason (Normal): the node is being rebooted now. */
    public static final String EVENT_REBOOTING = "Rebooting";
    /** Event reason (Warning): the recovery reboot limit is reached. */
    public static final String EVENT_RECOVERY_FAILED = "RecoveryFailed";
    /** Event reason (Warning): driver validation failed. */
    public static final String EVENT_DRIVER_VALIDATION_FAILED = "DriverValidationFailed";
    /** Event reason (Normal): driver validation passed. */
    public static final String EVENT_DRIVER_VALIDATED = "DriverValidated";
    /** Event reason (Warning), written by the control plane: the node went to {@code upgrade-failed}; the message says why. */
    public static final String EVENT_DRIVER_UPGRADE_FAILED = "DriverUpgradeFailed";

    /** Event reason (Normal), written by the control plane: it cordoned the node for its drain. */
    public static final String EVENT_CORDONED = "Cordoned";
    /** Event reason (Normal), written by the control plane: the drain of the node started; the message names the pods. */
    public static final String EVENT_DRAIN_STARTED = "DrainStarted";
    /**
     * Event reason (Warning), written by the control plane: an eviction was refused; the message names the pod and
     * the PodDisruptionBudget (or why else the pod cannot go).
     */
    public static final String EVENT_DRAIN_BLOCKED = "DrainBlocked";
    /** Event reason (Warning), written by the control plane: the drain did not finish in time; the message says why. */
    public static final String EVENT_DRAIN_FAILED = "DrainFailed";
    /** Event reason (Normal), written by the control plane: it uncordoned the node it had cordoned. */
    public static final String EVENT_UNCORDONED = "Uncordoned";
    /**
     * Event reason (Warning), written by the control plane: the maintenance window closed before the node's upgrade
     * reboot started; its slot is released and it goes again at the next opening (the message says when).
     */
    public static final String EVENT_OUTSIDE_MAINTENANCE_WINDOW = "OutsideMaintenanceWindow";
    /** Event reason (Warning), written by the control plane: it tainted a wedged node; the message names the chips. */
    public static final String EVENT_NPU_UNHEALTHY = "NpuUnhealthy";
    /** Event reason (Normal), written by the control plane: it removed the {@link #NPU_UNHEALTHY_TAINT} taint. */
    public static final String EVENT_NPU_HEALTHY = "NpuHealthy";
    /** Event reason (Normal), written by the control plane: the node is drained and its recovery reboot granted. */
    public static final String EVENT_RECOVERY_REBOOT_GRANTED = "RecoveryRebootGranted";
    /**
     * Event reason (Warning), written by the control plane: a wedged node waits for its drain and reboot because
     * {@code recoveryPolicy.maxUnavailable} NPU nodes are unavailable (also a condition on the custom resource).
     */
    public static final String EVENT_RECOVERY_STORM = "RecoveryStorm";

    /** Event type Normal. */
    public static final String NORMAL = "Normal";
    /** Event type Warning. */
    public static final String WARNING = "Warning";

    /** OSGi EventAdmin topic posted by the Kubernetes bundle when the node's approval annotation or the policy changes. */
    public static final String TOPIC_NODE_CHANGED = "io/npulifecycle/node/CHANGED";

    private NodeKeys() {
    }

    /**
     * Whether a Node's {@link #DRIVER_UPGRADE_STATE} grants its upgrade reboot: the node holds a rollout slot and the
     * control plane has cordoned and drained it (drain enabled) and had its driver pod replaced: {@code
     * pod-restart-required}, {@code reboot-required} (the agent asked for the reboot) and {@code rebooting} (the reboot
     * started; served again after an agent restart). Every other state, and none, grants nothing: a driver staged
     * outside the rollout (a Node deleted and registered again by its kubelet, a driver pod deleted by hand and
     * recreated by its DaemonSet from a template already at the target, the NPUOperatorCtl deleted) waits until the
     * control plane gives the node its slot and drains it, so no upgrade reboot ever skips the drain or the
     * {@code maxParallelUpgrades} and {@code maxUnavailable} limits (docs/upgrade.md "States and transitions").
     *
     * @param state the label's value, or null when absent
     * @return true for {@code pod-restart-required}, {@code reboot-required} and {@code rebooting}
     * @since 1.5
     */
    public static boolean upgradeRebootGranted(String state) {
        return "pod-restart-required".equals(state) || "reboot-required".equals(state) || "rebooting".equals(state);
    }

    /**
     * The node agent's check right before an upgrade reboot (the control plane's part: docs/upgrade.md "States and
     * transitions" and "Maintenance window"): none unless the Node's {@link #DRIVER_UPGRADE_STATE} grants it
     * ({@link #upgradeRebootGranted}; this covers the states that put approvals on hold, {@link #approvalOnHold}), and
     * none at or after {@link #UPGRADE_REBOOT_BEFORE}. A value that is not an RFC 3339 instant refuses too (never a
     * reboot on input that cannot be read).
     *
     * @param state the Node's {@link #DRIVER_UPGRADE_STATE} label, or null
     * @param rebootBefore the Node's {@link #UPGRADE_REBOOT_BEFORE} annotation, or null
     * @param now the node agent's clock
     * @return why no upgrade reboot may start now, or null when it may
     */
    public static String upgradeRebootRefusal(String state, String rebootBefore, java.time.Instant now) {
        if (state == null) {
            return DRIVER_UPGRADE_STATE + " is absent: the node holds no rollout slot (the control plane grants the "
                    + "upgrade reboot once it has given the node a slot, cordoned and drained it)";
        }
        if (!upgradeRebootGranted(state)) {
            return DRIVER_UPGRADE_STATE + "=" + state + " (the node holds no rollout slot, or is being cordoned or "
                    + "drained, or its upgrade failed: the reboot waits for pod-restart-required, reboot-required or "
                    + "rebooting)";
        }
        if (rebootBefore == null) {
            return null;
        }
        java.time.Instant until;
        try {
            until = java.time.Instant.parse(rebootBefore);
        } catch (java.time.format.DateTimeParseException e) {
            return UPGRADE_REBOOT_BEFORE + "='" + rebootBefore + "' is not an RFC 3339 instant";
        }
        return now.isBefore(until) ? null : "outside the maintenance window: " + UPGRADE_REBOOT_BEFORE + "="
                + rebootBefore + " has passed (now " + now + ")";
    }

    /**
     * @param key a label or annotation key
     * @return whether the node agent may write it through {@link NodeWriter}: under {@link #PREFIX}, and neither the
     *         person's {@link #APPROVE_REBOOT} nor a control-plane key
     */
    public static boolean writableByNodeAgent(String key) {
        return key != null && key.startsWith(PREFIX) && !key.equals(APPROVE_REBOOT)
                && !key.equals(DRIVER_UPGRADE_STATE) && !key.equals(DRIVER_UPGRADE_FAILURE) && !key.equals(CORDONED_BY)
                && !key.equals(UPGRADE_REBOOT_BEFORE)
                && !key.equals(RECOVERY_REBOOT_GRANTED) && key.length() > PREFIX.length();
    }
}
