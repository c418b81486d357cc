/**
 * The planted bugs of the chaos checker's own tests ({@link io.npulifecycle.api.faults.PlantedBug}): a fault switch
 * that makes a runtime break one named invariant on purpose, so that a test can show {@code npu-lifecycle chaos} and
 * {@code scenario} catching it. Read from the framework property {@value
 * io.npulifecycle.api.faults.PlantedBug#PROPERTY}; the product's launcher, chart and images never set it.
 */
@Version("1.0.0")
@Export
package io.npulifecycle.api.faults;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
