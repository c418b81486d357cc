package io.npulifecycle.api.node;

import org.osgi.annotation.versioning.ProviderType;

/** The current {@link NodePolicy}, from the informer on the {@code NPUOperatorCtl} (an OSGi service). */
@ProviderType
public interface PolicySource {

    /** @return the policy as last seen by the informer; never {@code null} ({@link NodePolicy#unknown} when unknown) */
    NodePolicy policy();
}
