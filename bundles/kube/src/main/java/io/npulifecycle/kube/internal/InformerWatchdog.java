package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.npulifecycle.api.time.TimeSource;

/**
 * Keeps the {@link NodeInformers} alive. fabric8 informers can stop silently after an API-server restart, a 503 or a
 * 410 Gone ({@code DESIGN.md} "Known traps"), so every health tick ({@code interval} of TimeSource time) checks both:
 * an informer that is stopped, or not watching for two ticks in a row, makes it close and re-create both (a relist,
 * which rebuilds the node's state from the objects). One tick of not watching is tolerated: fabric8 reconnects a
 * dropped watch by itself. An informer whose start (its first list) is still in progress is not watching yet and
 * has not stopped either: its ticks are not counted as not watching, since re-creating it would cancel that list
 * and start another one that needs as long (on a loaded node, or a compressed clock where a tick is half a wall
 * second, the first list can take longer than two ticks, and the node sync, which writes once it has seen the
 * Node, would write nothing for as long as the re-creations go on). Only a start still in progress after
 * {@value #STARTING_TICKS} ticks makes the watchdog re-create both. After the check, each tick runs
 * {@code afterCheck} (the node sync writes its desired state), whatever the check found.
 */
final class InformerWatchdog {

    private static final System.Logger LOG = System.getLogger(InformerWatchdog.class.getName());
    /** Ticks in a row an informer may run without watching before it is re-created. */
    static final int NOT_WATCHING_TICKS = 2;
    /**
     * Ticks in a row an informer's start (its first list) may be in progress before both are re-created; the
     * client's request timeout normally fails a list that gets no answer well before.
     */
    static final int STARTING_TICKS = 20;

    private final NodeInformers informers;
    private final TimeSource time;
    private final Duration interval;
    private final Runnable afterCheck;
    private final AtomicLong relists = new AtomicLong();
    private final AtomicLong reconnects = new AtomicLong();
    private int nodeNotWatchingTicks;
    private int policyNotWatchingTicks;
    private int nodeStartingTicks;
    private int policyStartingTicks;
    private boolean wasWatching;
    private volatile TimeSource.Scheduled tick;
    private volatile boolean stopped;

    /**
     * @param informers the informers to watch over
     * @param time the TimeSource that schedules the ticks
     * @param interval time between two ticks (TimeSource time)
     * @param afterCheck run at the end of every tick
     */
    InformerWatchdog(NodeInformers informers, TimeSource time, Duration interval, Runnable afterCheck) {
        this.informers = Objects.requireNonNull(informers, "informers");
        this.time = Objects.requireNonNull(time, "time");
        this.interval = Objects.requireNonNull(interval, "interval");
        this.afterCheck = Objects.requireNonNull(afterCheck, "afterCheck");
    }

    /** Schedules the first tick. */
    void start() {
        schedule();
    }

    /** Cancels the next tick; no further tick is scheduled. */
    void stop() {
        stopped = true;
        TimeSource.Scheduled t = tick;
        if (t != null) {
            t.cancel();
        }
    }

    private void schedule() {
        if (stopped) {
            return;
        }
        try {
            tick = time.schedule(this::tick, interval);
        } catch (IllegalStateException e) {
            LOG.log(Level.DEBUG, "time source shut down: no more health ticks");
        }
    }

    /** One tick: {@link #check()}, then {@code afterCheck}, then the next tick is scheduled. */
    void tick() {
        try {
            check();
            afterCheck.run();
        } finally {
            schedule();
        }
    }

    /** Checks both informers and re-creates them when one is stopped or has not watched for two ticks. */
    synchronized void check() {
        if (stopped || informers.stopped()) {
            return;
        }
        SharedIndexInformer<?> ni = informers.nodeInformer();
        SharedIndexInformer<?> ci = informers.policyInformer();
        boolean nodeOk = ni != null && ni.isRunning() && ni.isWatching();
        boolean policyOk = ci != null && ci.isRunning() && ci.isWatching();
        boolean nodeStarting = informers.nodeStarting();
        boolean policyStarting = informers.policyStarting();
        nodeNotWatchingTicks = nodeOk || nodeStarting ? 0 : nodeNotWatchingTicks + 1;
        policyNotWatchingTicks = policyOk || policyStarting ? 0 : policyNotWatchingTicks + 1;
        nodeStartingTicks = nodeStarting ? nodeStartingTicks + 1 : 0;
        policyStartingTicks = policyStarting ? policyStartingTicks + 1 : 0;
        boolean stoppedInformer = ni == null || ci == null || !ni.isRunning() || !ci.isRunning();
        if (stoppedInformer || nodeNotWatchingTicks >= NOT_WATCHING_TICKS || policyNotWatchingTicks >= NOT_WATCHING_TICKS
                || nodeStartingTicks >= STARTING_TICKS || policyStartingTicks >= STARTING_TICKS) {
            LOG.log(Level.WARNING, "informer health: node informer " + state(ni, nodeStarting, nodeStartingTicks)
                    + ", NPUOperatorCtl informer " + state(ci, policyStarting, policyStartingTicks)
                    + ": re-creating both informers (relist; the node's state is rebuilt from the objects)");
            relists.incrementAndGet();
            informers.restart();
            nodeNotWatchingTicks = 0;
            policyNotWatchingTicks = 0;
            nodeStartingTicks = 0;
            policyStartingTicks = 0;
        }
        boolean watching = nodeOk && policyOk;
        if (watching && !wasWatching) {
            reconnects.incrementAndGet();
        }
        wasWatching = watching;
    }

    /**
     * Re-creates both informers now (the MBean operation). Logged.
     *
     * @return what was done
     */
    synchronized String relist() {
        LOG.log(Level.INFO, "relist requested through the NodeSync MBean");
        relists.incrementAndGet();
        informers.restart();
        nodeNotWatchingTicks = 0;
        policyNotWatchingTicks = 0;
        nodeStartingTicks = 0;
        policyStartingTicks = 0;
        return "informers re-created";
    }

    /** @return how many times the informers were re-created (by a tick or {@link #relist()}) */
    long relists() {
        return relists.get();
    }

    /**
     * @return how many ticks found both informers watching after a tick that did not (the first tick that finds them
     *         watching counts too)
     */
    long reconnects() {
        return reconnects.get();
    }

    private static String state(SharedIndexInformer<?> i, boolean starting, int startingTicks) {
        if (i == null) {
            return "absent";
        }
        return (i.isRunning() ? "running" : "stopped") + (i.isWatching() ? "+watching" : "+not watching")
                + (starting ? "+first list in progress for " + startingTicks + " ticks" : "");
    }
}
