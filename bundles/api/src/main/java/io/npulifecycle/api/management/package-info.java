/**
 * Management conventions shared by every bundle: the MBean domain, the object names of the runtime's MBeans, the
 * service property that bridges an MBean registered as an OSGi service into the platform MBeanServer (and so into
 * Jolokia), and {@link io.npulifecycle.api.management.MBeanRegistrations}, which registers an MXBean that way;
 * {@link io.npulifecycle.api.management.ConfigurationRefusals}, where a component reports the configuration values
 * it refused, {@link io.npulifecycle.api.management.RefusalReporter}, how a component holds that service and reports
 * to it, and {@link io.npulifecycle.api.management.ConfigDefaults}, a configuration of the metatype defaults alone
 * (both added in 1.6).
 */
@Version("1.6.0")
@Export
package io.npulifecycle.api.management;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
