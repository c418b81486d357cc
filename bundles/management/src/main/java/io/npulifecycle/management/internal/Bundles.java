package io.npulifecycle.management.internal;

import io.npulifecycle.api.management.BundleInfo;

import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.startlevel.BundleStartLevel;

/** Helpers for describing bundles. */
final class Bundles {
    private Bundles() {
    }

    /**
     * @param state a {@link Bundle#getState()} value
     * @return its name, e.g. {@code ACTIVE}
     */
    static String stateName(int state) {
        switch (state) {
            case Bundle.UNINSTALLED: return "UNINSTALLED";
            case Bundle.INSTALLED: return "INSTALLED";
            case Bundle.RESOLVED: return "RESOLVED";
            case Bundle.STARTING: return "STARTING";
            case Bundle.STOPPING: return "STOPPING";
            case Bundle.ACTIVE: return "ACTIVE";
            default: return "UNKNOWN(" + state + ")";
        }
    }

    /** @return {@code true} if the bundle is a fragment, which never becomes ACTIVE */
    static boolean isFragment(Bundle b) {
        return b.getHeaders("").get(Constants.FRAGMENT_HOST) != null;
    }

    static int startLevel(Bundle b) {
        BundleStartLevel sl = b.adapt(BundleStartLevel.class);
        return sl == null ? 0 : sl.getStartLevel();
    }

    static BundleInfo describe(Bundle b) {
        return new BundleInfo(b.getBundleId(), String.valueOf(b.getSymbolicName()), b.getVersion().toString(),
                stateName(b.getState()), startLevel(b));
    }
}
