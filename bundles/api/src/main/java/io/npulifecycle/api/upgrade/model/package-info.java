/**
 * The typed status of the {@code NPUOperatorCtl} custom resource ({@code npu.openfuyao.com/v1}, namespaced, plural
 * {@code npuoperatorctls}; DESIGN.md "The user-facing contract"), which the control plane writes. Its spec is read by
 * one reader only, {@code io.npulifecycle.api.upgrade.spec.SpecReader}; the schema that validates both is
 * {@code charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml}.
 */
@Export
@Version("2.0.0")
package io.npulifecycle.api.upgrade.model;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
