/**
 * The typed fabric8 model of the {@code NPUOperatorCtl} custom resource ({@code npu.openfuyao.com/v1}, namespaced,
 * plural {@code npuoperatorctls}; DESIGN.md "The user-facing contract"). The schema that validates it is
 * {@code charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml}.
 */
@Export
@Version("1.3.0")
package io.npulifecycle.api.upgrade.model;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
