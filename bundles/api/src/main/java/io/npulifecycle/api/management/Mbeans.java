package io.npulifecycle.api.management;

/**
 * Names used to publish MBeans.
 *
 * <p>A bundle publishes an MBean by registering an object implementing {@code javax.management.DynamicMBean} (for
 * example a {@code javax.management.StandardMBean} wrapping an MXBean interface) as an OSGi service with the service
 * property {@value #OBJECT_NAME_PROPERTY} set to its object name. The management bundle's JMX whiteboard registers it
 * in the platform MBeanServer while the service exists, so the MBean disappears when its bundle stops and is
 * re-registered when a new version of the bundle starts. {@link MBeanRegistrations#register} does this for an MXBean.
 */
public final class Mbeans {

    /** The JMX domain of every npu-lifecycle MBean. */
    public static final String DOMAIN = "io.npulifecycle";

    /** Service property carrying the MBean's object name (Aries JMX whiteboard convention). */
    public static final String OBJECT_NAME_PROPERTY = "jmx.objectname";

    /** Object name of the runtime MBean (role, product version, uptime, bundles). */
    public static final String RUNTIME = DOMAIN + ":type=Runtime";

    /**
     * Framework property naming the runtime's role: {@value #ROLE_NODE} or {@value #ROLE_CONTROL_PLANE}. Set by the
     * launcher.
     */
    public static final String ROLE_PROPERTY = "npu.lifecycle.role";

    /** Framework property carrying the product version. Set by the launcher. */
    public static final String VERSION_PROPERTY = "npu.lifecycle.version";

    /** Framework property carrying the runtime home folder. Set by the launcher. */
    public static final String HOME_PROPERTY = "npu.lifecycle.home";

    /** Role of a runtime on an NPU node. */
    public static final String ROLE_NODE = "node";

    /** Role of a control-plane runtime. */
    public static final String ROLE_CONTROL_PLANE = "control-plane";

    private Mbeans() {
    }

    /**
     * The object name of one chip's MBean: {@code io.npulifecycle:type=Chip,name=npu<npu>-chip<chip>}, one
     * {@code name} key so that consoles show the chips as one folder {@code Chip} with a leaf per chip
     * ({@code npu4-chip0}), as npu-smi numbers them.
     *
     * @param npu the NPU id
     * @param chip the chip id on that NPU
     * @return e.g. {@code io.npulifecycle:type=Chip,name=npu4-chip0}
     */
    public static String chipObjectName(int npu, int chip) {
        return objectName("Chip", "name", "npu" + npu + "-chip" + chip);
    }

    /**
     * Builds an object name string in the product's domain.
     *
     * @param type the {@code type} key, e.g. {@code "Chip"}
     * @param keyValues further key/value pairs in order, e.g. {@code "name", "npu0-chip1"}
     * @return e.g. {@code io.npulifecycle:type=Chip,name=npu0-chip1}
     * @throws IllegalArgumentException if {@code keyValues} has an odd length
     */
    public static String objectName(String type, String... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("keyValues must be pairs, got " + keyValues.length + " elements");
        }
        StringBuilder sb = new StringBuilder(DOMAIN).append(":type=").append(type);
        for (int i = 0; i < keyValues.length; i += 2) {
            sb.append(',').append(keyValues[i]).append('=').append(keyValues[i + 1]);
        }
        return sb.toString();
    }
}
