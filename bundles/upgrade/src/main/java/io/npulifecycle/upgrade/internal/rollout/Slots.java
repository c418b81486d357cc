package io.npulifecycle.upgrade.internal.rollout;

import java.time.Instant;

/**
 * The slot counts after the grants.
 *
 * @param inFlight nodes in an in-flight state
 * @param unavailable nodes in flight, {@code upgrade-failed}, cordoned or not Ready
 * @param maxUnavailable the limit of {@code unavailable} ({@code maxUnavailable}, a percentage rounded up)
 * @param wake the earliest deadline of a node granted now, or null
 */
record Slots(int inFlight, int unavailable, int maxUnavailable, Instant wake) {
}
