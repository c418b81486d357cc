/**
 * The node agent's view of its own Kubernetes Node and of the {@code NPUOperatorCtl} policy, offered by the node-side
 * Kubernetes bundle ({@code io.npulifecycle.kube}) to the rebooter and the driver bundles: the current policy
 * ({@link io.npulifecycle.api.node.PolicySource}), the node's reboot approval and its exactly-once consumption
 * ({@link io.npulifecycle.api.node.ApprovalService}) and the node agent's labels, annotations and Events
 * ({@link io.npulifecycle.api.node.NodeWriter}). Names are in {@link io.npulifecycle.api.node.NodeKeys} (the contract
 * table at the end of {@code docs/architecture.md}).
 */
@Version("1.5.0")
@Export
package io.npulifecycle.api.node;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
