/**
 * Management conventions shared by every bundle: the MBean domain, the object names of the runtime's MBeans, the
 * service property that bridges an MBean registered as an OSGi service into the platform MBeanServer (and so into
 * Jolokia), and {@link io.npulifecycle.api.management.MBeanRegistrations}, which registers an MXBean that way.
 */
@Version("1.5.0")
@Export
package io.npulifecycle.api.management;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
