package io.npulifecycle.upgrade.api.model;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;

/** The {@code NPUOperatorCtl} custom resource (DESIGN.md): desired driver, upgrade and recovery policy; status. */
@Group("npu.openfuyao.com")
@Version("v1")
@Kind("NPUOperatorCtl")
@Plural("npuoperatorctls")
public class NpuOperatorCtl extends CustomResource<NpuOperatorCtlSpec, NpuOperatorCtlStatus> implements Namespaced {
    private static final long serialVersionUID = 1L;
}
