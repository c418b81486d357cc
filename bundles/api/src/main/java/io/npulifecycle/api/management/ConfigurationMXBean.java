package io.npulifecycle.api.management;

import java.util.List;

/** Management interface of {@code io.npulifecycle:type=Configuration}. */
public interface ConfigurationMXBean {

    /**
     * @return the configuration problems found since start, newest last (at most 100), each naming the PID, the
     *         file, the key and what was expected, e.g.
     *         {@code io.npulifecycle.probe (file:/opt/x/etc/io.npulifecycle.probe.cfg): key interval='abc' is not a
     *         valid Integer; keeping the previous value 60}
     */
    List<String> getProblems();

    /** @return how many invalid or unknown keys were rejected since start */
    long getRejectedKeys();
}
