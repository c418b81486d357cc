/**
 * Injected time. Every npu-lifecycle component reads the time and schedules work through a
 * {@link io.npulifecycle.api.time.TimeSource} service, never through {@code System.currentTimeMillis()} or
 * {@code Thread.sleep}, so tests can drive hours of behaviour in milliseconds and the simulator can compress time.
 */
@Version("1.1.0")
@Export
package io.npulifecycle.api.time;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
