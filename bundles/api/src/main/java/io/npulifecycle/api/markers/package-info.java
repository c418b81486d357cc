/**
 * Host marker files shared by the node-agent bundles (health-watch, driver, rebooter) and by processes outside the
 * runtime (validator, device plugin): {@code driver-ready} and {@code reboot-required}, plus per-boot state files that
 * survive a bundle update or a runtime restart but not a reboot. See {@link io.npulifecycle.api.markers.MarkerStore}.
 */
@Version("1.0.0")
@Export
package io.npulifecycle.api.markers;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
