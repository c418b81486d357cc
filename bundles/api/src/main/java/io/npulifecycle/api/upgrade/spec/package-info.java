/**
 * The one reader of the {@code NPUOperatorCtl} custom resource's {@code spec} ({@code npu.openfuyao.com/v1}; DESIGN.md
 * "The user-facing contract"), used by the control plane and the node agent alike: {@link
 * io.npulifecycle.api.upgrade.spec.SpecReader} turns the spec, read as an untyped map (so that a malformed resource
 * never breaks an informer), into typed, validated records ({@link io.npulifecycle.api.upgrade.spec.Policy}, {@link
 * io.npulifecycle.api.upgrade.spec.RecoverySettings}, {@link io.npulifecycle.api.upgrade.spec.DrainSettings}, ...) or
 * into problems that each name the field and what was expected. One version grammar, one duration grammar and one
 * set of bounds ({@link io.npulifecycle.api.upgrade.spec.SpecGrammar}), the same as the CRD's schema
 * ({@code charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml}); a new field of the resource is added in the CRD and
 * here.
 */
@Export
@Version("1.1.0")
package io.npulifecycle.api.upgrade.spec;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
