/**
 * Emulated NPU hosts outside an OSGi runtime: {@link io.npulifecycle.simulator.host.EmulatedHosts} renders the
 * interfaces a node agent with the simulator sees, for tools that run the production probes against them directly.
 */
@Version("1.0.0")
@Export
package io.npulifecycle.simulator.host;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
