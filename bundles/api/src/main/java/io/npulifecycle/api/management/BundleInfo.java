package io.npulifecycle.api.management;

import java.beans.ConstructorProperties;

/**
 * One bundle as the Runtime MBean reports it (an MXBean composite: Jolokia renders it as a JSON object).
 */
public final class BundleInfo {
    private final long id;
    private final String symbolicName;
    private final String version;
    private final String state;
    private final int startLevel;

    /**
     * @param id bundle id
     * @param symbolicName Bundle-SymbolicName
     * @param version Bundle-Version
     * @param state {@code INSTALLED}, {@code RESOLVED}, {@code STARTING}, {@code ACTIVE}, {@code STOPPING} or
     *        {@code UNINSTALLED}
     * @param startLevel the bundle's start level
     */
    @ConstructorProperties({"id", "symbolicName", "version", "state", "startLevel"})
    public BundleInfo(long id, String symbolicName, String version, String state, int startLevel) {
        this.id = id;
        this.symbolicName = symbolicName;
        this.version = version;
        this.state = state;
        this.startLevel = startLevel;
    }

    public long getId() {
        return id;
    }

    public String getSymbolicName() {
        return symbolicName;
    }

    public String getVersion() {
        return version;
    }

    public String getState() {
        return state;
    }

    public int getStartLevel() {
        return startLevel;
    }
}
