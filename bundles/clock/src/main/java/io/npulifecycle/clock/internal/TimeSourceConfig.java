package io.npulifecycle.clock.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of the runtime clock, PID {@code io.npulifecycle.time}. */
@ObjectClassDefinition(name = "npu-lifecycle clock",
        description = "The time every npu-lifecycle component reads and schedules with. Production keeps scale=1.")
public @interface TimeSourceConfig {

    @AttributeDefinition(name = "Scale", min = "0.001", max = "100000",
            description = "Simulated seconds per wall-clock second. 1 in production; the simulator compresses time "
                    + "(e.g. 100 runs a 60 s probe period every 0.6 s).")
    double scale() default 1.0;

    @AttributeDefinition(name = "Anchor (epoch milliseconds)", min = "0",
            description = "Wall-clock instant, in milliseconds since the epoch, at which simulated and real time "
                    + "coincide. Runtimes that share an anchor and a scale agree on the simulated time. 0 = the "
                    + "instant the clock starts.")
    long anchorEpochMillis() default 0L;

    @AttributeDefinition(name = "Wall-clock offset (milliseconds)", min = "-3153600000000", max = "3153600000000",
            description = "Added to the wall-clock time (now()) only: a simulated wall-clock jump (NTP step, an "
                    + "operator fixing the clock), applied in place without restarting anything. Monotonic time and "
                    + "scheduled delays are not affected. 0 in production; the reliability scenarios set it.")
    long wallOffsetMillis() default 0L;
}
