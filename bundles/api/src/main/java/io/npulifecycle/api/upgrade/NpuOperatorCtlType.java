package io.npulifecycle.api.upgrade;

import java.util.List;

/**
 * Coordinates and names of the {@code NPUOperatorCtl} custom resource (DESIGN.md "The user-facing contract"; the
 * schema is {@code charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml}). The one definition that the control plane, the node
 * agent, the simulator and the tests use.
 */
public final class NpuOperatorCtlType {

    /** API group. */
    public static final String GROUP = "npu.openfuyao.com";
    /** API version. */
    public static final String VERSION = "v1";
    /** {@code apiVersion} of the objects: {@value}. */
    public static final String API_VERSION = GROUP + "/" + VERSION;
    /** Kind. */
    public static final String KIND = "NPUOperatorCtl";
    /** Plural resource name (URL path segment). */
    public static final String PLURAL = "npuoperatorctls";
    /** Singular resource name. */
    public static final String SINGULAR = "npuoperatorctl";
    /** Short names kubectl accepts. */
    public static final List<String> SHORT_NAMES = List.of("npuctl");
    /** Whether the resource is namespaced. */
    public static final boolean NAMESPACED = true;
    /** Namespace of the default instance, of the driver pods and of the product's workloads. */
    public static final String DEFAULT_NAMESPACE = "npu-operator";
    /** Name of the default instance. */
    public static final String DEFAULT_NAME = "npuoperatorctl-sample";

    /** Annotation on the resource: {@code true} = rollout paused (set by the orchestrator MBean's {@code pause()}). */
    public static final String PAUSED_ANNOTATION = GROUP + "/paused";

    /** Event reason on the resource (Normal): a rollout to a new {@code spec.driver.version} started. */
    public static final String EVENT_ROLLOUT_STARTED = "RolloutStarted";
    /** Event reason on the resource (Normal): every NPU node runs the desired version. */
    public static final String EVENT_ROLLOUT_COMPLETE = "RolloutComplete";
    /** Event reason on the resource (Warning): a node went to {@code upgrade-failed}. */
    public static final String EVENT_NODE_UPGRADE_FAILED = "NodeUpgradeFailed";

    private NpuOperatorCtlType() {
    }
}
