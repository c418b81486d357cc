package io.npulifecycle.api.management;

import java.util.List;

/** Management interface of {@code io.npulifecycle:type=Configuration}. */
@Description("Configuration problems (io.npulifecycle:type=Configuration): invalid or unknown keys of the current "
        + "etc/*.cfg files and values a component refused, rejected with the previous value kept.")
public interface ConfigurationMXBean {

    /**
     * @return the problems of the current configurations, by PID: the keys the metatype refused or does not know, and
     *         the values a component refused ({@link ConfigurationRefusals}), at most 100, each naming the PID, the
     *         file, the key, the value and what was expected, e.g.
     *         {@code io.npulifecycle.probe (file:/opt/x/etc/io.npulifecycle.probe.cfg): key interval='abc' is not a
     *         valid Integer; keeping the previous value 60}; a configuration fixed or deleted has none
     */
    @Description("The problems of the current configurations, by PID (at most 100): keys the metatype refused or does "
            + "not know and values a component refused, each naming the PID, the file, the key, the value and what was "
            + "expected, e.g. io.npulifecycle.probe (file:/opt/x/etc/io.npulifecycle.probe.cfg): key interval='abc' is "
            + "not a valid Integer; keeping the previous value 60. A fixed or deleted configuration has none.")
    List<String> getProblems();

    /** @return how many invalid, unknown or refused keys were rejected since start (a count, never reset) */
    @Description("How many invalid, unknown or refused configuration keys were rejected since start (a count).")
    long getRejectedKeys();
}
