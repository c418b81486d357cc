package io.npulifecycle.upgrade.internal.plan;

/**
 * Create or update one driver DaemonSet.
 *
 * @param combination the (chip, kernel, OS) it serves
 * @param name its name ({@link Combination#daemonSetName()})
 * @param image the driver image of its pods
 * @param version the driver version, its containers' {@code DRIVER_VERSION}
 */
public record DaemonSetApply(Combination combination, String name, String image, String version) {
}
