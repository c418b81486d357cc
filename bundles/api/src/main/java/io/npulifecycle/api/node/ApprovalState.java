package io.npulifecycle.api.node;

/**
 * The {@value NodeKeys#APPROVE_REBOOT} annotation of this node as last seen by the informer.
 *
 * @param known whether the Node has been seen (informer synced at least once)
 * @param present whether the annotation exists
 * @param value its raw value, or {@code null} when absent
 * @param resourceVersion the Node's {@code metadata.resourceVersion} it was read from, or {@code null}
 */
public record ApprovalState(boolean known, boolean present, String value, String resourceVersion) {

    /** @return whether this is an approval: the value is exactly {@code true} (not {@code TRUE}, {@code yes}, empty) */
    public boolean approved() {
        return known && present && NodeKeys.APPROVE_VALUE.equals(value);
    }

    /** @return whether the annotation exists with a value that is not an approval */
    public boolean invalid() {
        return known && present && !NodeKeys.APPROVE_VALUE.equals(value);
    }
}
