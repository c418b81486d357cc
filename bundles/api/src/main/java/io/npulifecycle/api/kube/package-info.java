/**
 * Management interface of the Kubernetes client bundle ({@code io.npulifecycle.kubeclient}): the
 * {@code io.npulifecycle:type=KubernetesClient} MXBean (master URL, where the configuration came from, connection
 * state, request and failure counts).
 */
@Export
@Version("1.0.0")
package io.npulifecycle.api.kube;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
