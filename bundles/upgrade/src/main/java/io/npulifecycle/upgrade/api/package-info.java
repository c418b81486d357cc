/**
 * Management interface of the upgrade orchestrator: the {@code io.npulifecycle:type=UpgradeOrchestrator} MXBean.
 */
@Export
@Version("1.0.0")
package io.npulifecycle.upgrade.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
