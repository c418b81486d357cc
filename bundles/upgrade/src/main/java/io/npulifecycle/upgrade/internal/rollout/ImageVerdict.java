package io.npulifecycle.upgrade.internal.rollout;

import java.util.List;
import java.util.Set;

import io.npulifecycle.upgrade.internal.plan.WhiteListState;

/**
 * The preflight's verdict on the images the rollout needs.
 *
 * @param needed the image of every combination of a node that is not on the target yet, in node order
 * @param missing the needed images the registry answered 404 for
 * @param errors the needed images not confirmed: not checked yet, or the check failed (with its detail)
 * @param whiteList the ImageWhiteList's verdict on the tags of the needed images
 */
record ImageVerdict(Set<String> needed, List<String> missing, List<String> errors, WhiteListState.Verdict whiteList) {
    /**
     * @return whether every needed image is present and listed (or the whitelist does not apply): only then is a
     *         node without a label touched
     */
    boolean ok() {
        return registryOk() && whiteList.ok();
    }

    /** @return whether the registry confirmed every needed image */
    boolean registryOk() {
        return missing.isEmpty() && errors.isEmpty();
    }
}
