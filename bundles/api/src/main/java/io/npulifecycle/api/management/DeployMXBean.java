package io.npulifecycle.api.management;

import java.util.List;

/** Management interface of {@code io.npulifecycle:type=Deploy}: bundle files FileInstall will not install. */
@Description("The hot-deploy folders (io.npulifecycle:type=Deploy): jars that were refused, with the reason.")
public interface DeployMXBean {

    /** @return the watched folders ({@code felix.fileinstall.dir}) */
    @Description("The watched folders (felix.fileinstall.dir).")
    List<String> getFolders();

    /**
     * @return each jar in a watched folder that is not a valid bundle, as {@code path: reason}, e.g.
     *         {@code /home/deploy/x.jar: truncated or corrupt (zip END header not found)}
     */
    @Description("Each jar in a watched folder that is not a valid bundle, as path: reason, e.g. /home/deploy/x.jar: "
            + "truncated or corrupt (zip END header not found).")
    List<String> getRejectedFiles();

    /** Scans the folders now. */
    @Description("Scans the watched folders now for jars that are not valid bundles; RejectedFiles shows the result.")
    void scan();
}
