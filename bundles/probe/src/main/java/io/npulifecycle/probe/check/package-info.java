/**
 * Offline check of an {@code npu-smi info} output, runnable outside OSGi:
 * {@link io.npulifecycle.probe.check.CheckNpuSmi}.
 */
@Version("1.0.0")
@Export
package io.npulifecycle.probe.check;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
