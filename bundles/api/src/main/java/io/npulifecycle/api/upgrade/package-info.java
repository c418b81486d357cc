/**
 * The control plane's API: the coordinates of the {@code NPUOperatorCtl} custom resource
 * ({@link io.npulifecycle.api.upgrade.NpuOperatorCtlType}) and the management interface of the upgrade orchestrator,
 * the {@code io.npulifecycle:type=UpgradeOrchestrator} MXBean. The typed model of the resource is in
 * {@code io.npulifecycle.api.upgrade.model}.
 */
@Export
@Version("2.0.0")
package io.npulifecycle.api.upgrade;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
