package io.npulifecycle.api.management;

import java.util.List;

/** Management interface of {@code io.npulifecycle:type=Deploy}: bundle files FileInstall will not install. */
public interface DeployMXBean {

    /** @return the watched folders ({@code felix.fileinstall.dir}) */
    List<String> getFolders();

    /**
     * @return each jar in a watched folder that is not a valid bundle, as {@code path: reason}, e.g.
     *         {@code /home/deploy/x.jar: truncated or corrupt (zip END header not found)}
     */
    List<String> getRejectedFiles();

    /** Scans the folders now. */
    void scan();
}
