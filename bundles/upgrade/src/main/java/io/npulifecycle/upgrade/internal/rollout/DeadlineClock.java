package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.upgrade.internal.plan.Progress;

import io.npulifecycle.api.upgrade.spec.UpgradeState;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * How long each node has been in the state of its {@code driver-upgrade-progress} annotation, immune to steps of the
 * wall clock while this controller watches (an NTP correction, a VM resumed, an operator setting the date): the
 * deadlines of the in-flight states (docs/upgrade.md) must not fire because the control plane's clock jumped
 * forward, nor stretch because it jumped back.
 * <p>
 * At the first sight of a (node, state, since) the age is the wall-clock age {@code now - since} (never negative: a
 * {@code since} in the future, written by a replica whose clock was ahead, counts from the first sight); from then on
 * it grows with the monotonic clock only. A restarted or new leader has only the wall clock to go by at its first
 * sight (the annotation is the only memory that survives it), except for {@code cordon-required} and
 * {@code pod-restart-required}, whose next step is the control plane's own (cordoning, deleting the driver pod): their
 * deadline starts at the new leader's first sight.
 * Why: aged by the wall clock alone, the control plane's clock jumping +1 h while a node reboots would fail that node
 * at once ("missed the rebooting deadline of 1800s"); scenario itests/scenarios/reliability/clock.yaml.
 * <p>
 * Not thread-safe: used by the controller's single reconcile thread.
 */
public final class DeadlineClock {

    private record Seen(UpgradeState state, Instant since, Duration ageAtFirstSight, long monoAtFirstSight) {
    }

    private final Map<String, Seen> seen = new HashMap<>();

    /**
     * @param node the node name
     * @param progress the node's parsed progress annotation
     * @param wallNow the wall clock now (TimeSource.now())
     * @param monoNow the monotonic clock now, in nanoseconds of the same (simulated) time scale as the deadlines
     *        (TimeSource.monotonicNanos())
     * @return the time the node has spent in {@code progress.state()}, never negative
     */
    public Duration age(String node, Progress progress, Instant wallNow, long monoNow) {
        Seen s = seen.get(node);
        if (s == null || s.state() != progress.state() || !s.since().equals(progress.since())) {
            Duration wallAge = Duration.between(progress.since(), wallNow);
            if (wallAge.isNegative() || progress.state() == UpgradeState.POD_RESTART_REQUIRED
                    || progress.state() == UpgradeState.CORDON_REQUIRED) {
                // pod-restart-required waits for the control plane's own step (deleting the driver pod): time in
                // which no leader ran (both replicas down) is not the node's fault, so a new leader starts this
                // deadline at its first sight instead of failing the node at once (scenario
                // itests/scenarios/reliability/control-plane-replicas.yaml: both replicas killed between the grant
                // and the pod deletion)
                wallAge = Duration.ZERO;
            }
            s = new Seen(progress.state(), progress.since(), wallAge, monoNow);
            seen.put(node, s);
        }
        return s.ageAtFirstSight().plusNanos(Math.max(0, monoNow - s.monoAtFirstSight()));
    }

    /** Forgets the nodes that are gone or carry no progress annotation. @param nodes the ones to keep */
    public void retain(Set<String> nodes) {
        seen.keySet().retainAll(nodes);
    }
}
