/**
 * Replaceable actions of the node reboot path: the {@link io.npulifecycle.api.reboot.RebootExecutor} (the call that
 * reboots the host) and the {@link io.npulifecycle.api.reboot.DriverLoader} (loads the NPU kernel modules of one
 * version from a fresh boot). The product ships implementations (libc, command); the simulator and tests register
 * their own. Neither interface can unload a driver: Ascend chips do not survive {@code rmmod} of a running driver
 * ({@code DESIGN.md}).
 */
@Version("1.1.0")
@Export
package io.npulifecycle.api.reboot;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
