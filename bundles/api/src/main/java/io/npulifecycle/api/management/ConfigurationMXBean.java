package io.npulifecycle.api.management;

import java.util.List;

/** Management interface of {@code io.npulifecycle:type=Configuration}. */
@Description("Configuration problems (io.npulifecycle:type=Configuration): invalid or unknown keys of etc/*.cfg files, "
        + "rejected with the previous value kept.")
public interface ConfigurationMXBean {

    /**
     * @return the configuration problems found since start, newest last (at most 100), each naming the PID, the
     *         file, the key and what was expected, e.g.
     *         {@code io.npulifecycle.probe (file:/opt/x/etc/io.npulifecycle.probe.cfg): key interval='abc' is not a
     *         valid Integer; keeping the previous value 60}
     */
    @Description("The configuration problems found since start, newest last (at most 100), each naming the PID, the file, "
            + "the key and what was expected, e.g. io.npulifecycle.probe (file:/opt/x/etc/io.npulifecycle.probe.cfg): "
            + "key interval='abc' is not a valid Integer; keeping the previous value 60.")
    List<String> getProblems();

    /** @return how many invalid or unknown keys were rejected since start */
    @Description("How many invalid or unknown configuration keys were rejected since start (a count).")
    long getRejectedKeys();
}
