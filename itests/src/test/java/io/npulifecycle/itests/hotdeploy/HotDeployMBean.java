package io.npulifecycle.itests.hotdeploy;

/** Management interface of the small bundle that the hot-deploy test drops into {@code deploy/}. */
public interface HotDeployMBean {

    /** @return the Bundle-Version of the bundle that registered this MBean */
    String getBundleVersion();
}
