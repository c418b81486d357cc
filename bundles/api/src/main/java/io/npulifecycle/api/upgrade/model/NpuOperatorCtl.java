package io.npulifecycle.api.upgrade.model;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

/** The {@code NPUOperatorCtl} custom resource (DESIGN.md): desired driver, upgrade and recovery policy; status. */
@Group(NpuOperatorCtlType.GROUP)
@Version(NpuOperatorCtlType.VERSION)
@Kind(NpuOperatorCtlType.KIND)
@Plural(NpuOperatorCtlType.PLURAL)
public class NpuOperatorCtl extends CustomResource<NpuOperatorCtlSpec, NpuOperatorCtlStatus> implements Namespaced {
    private static final long serialVersionUID = 1L;
}
