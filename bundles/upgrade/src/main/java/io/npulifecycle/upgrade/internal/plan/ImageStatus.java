package io.npulifecycle.upgrade.internal.plan;

/**
 * Result of a registry check of one image ({@code HEAD} of its manifest), as the preflight hands it to the planner.
 *
 * @param present the registry answered 200 for the manifest
 * @param missing the registry answered 404 (manifest unknown): the image is not there
 * @param detail {@code present}, or why the image is missing or not confirmed (the registry's answer or the error)
 */
public record ImageStatus(boolean present, boolean missing, String detail) {
    /** The answer for an image the registry has. */
    public static final ImageStatus PRESENT = new ImageStatus(true, false, "present");
}
