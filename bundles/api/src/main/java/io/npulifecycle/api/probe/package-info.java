/**
 * Chip health probing: chip identities, probe results and their classification, the probe SPI
 * ({@link io.npulifecycle.api.probe.ChipProbe}, implemented by the npu-smi and DCMI probes and by the simulator), the
 * health-watch events and its MXBeans.
 */
@Version("1.0.0")
@Export
package io.npulifecycle.api.probe;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
