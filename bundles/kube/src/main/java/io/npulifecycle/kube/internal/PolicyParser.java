package io.npulifecycle.kube.internal;

import java.time.Duration;
import java.util.Map;

import io.npulifecycle.api.node.NodePolicy;
import io.npulifecycle.api.upgrade.spec.RecoverySettings;
import io.npulifecycle.api.upgrade.spec.SpecReader;

/**
 * The node agent's view of the {@code NPUOperatorCtl} custom resource ({@code DESIGN.md}), read by the same reader as
 * the control plane's ({@link SpecReader}), so that both reach the same verdict on every resource:
 * {@code spec.driver.version}, {@code spec.driver.upgradePolicy.autoUpgrade},
 * {@code spec.driver.recoveryPolicy.autoRecover}, {@code .maxReboots}, {@code .window} (any unit order:
 * {@code 30m1h} is 90 minutes) and {@code .drain.enable} (absent = {@code true}: a recovery reboot waits for the
 * control plane's drain and grant). A spec the reader refuses gives an unknown policy (which authorises nothing) with
 * a message naming the resource and every refused field with what was expected.
 */
public final class PolicyParser {

    private PolicyParser() {
    }

    /**
     * @param what names the resource in messages, e.g. {@code npu-operator/npuoperatorctl-sample}
     * @param spec the resource's {@code spec} (any JSON value), or {@code null} when the resource has none
     * @param resourceVersion the resource's {@code metadata.resourceVersion}
     * @return the policy; {@link NodePolicy#known()} is {@code false} when the reader refuses the spec.
     *         {@code maxReboots} and {@code window} are null when the resource leaves them out (the rebooter's own
     *         configuration then applies; an API server with the CRD fills in its defaults, 3 and 24h)
     */
    public static NodePolicy parse(String what, Object spec, String resourceVersion) {
        SpecReader.Result r = SpecReader.parse(spec);
        if (!r.valid()) {
            return NodePolicy.unknown("NPUOperatorCtl " + what + ": " + String.join("; ", r.problems())
                    + ": the policy is unknown and authorises no automatic reboot");
        }
        RecoverySettings recovery = r.recovery();
        Map<?, ?> raw = recoveryPolicy(spec);
        Integer maxReboots = raw.get("maxReboots") == null ? null : recovery.maxReboots();
        Duration window = raw.get("window") == null ? null : recovery.stormWindow();
        return new NodePolicy(true, r.policy().version(), r.policy().autoUpgrade(), recovery.autoRecover(), maxReboots,
                window, null, resourceVersion, recovery.drain().enable());
    }

    /** @return {@code spec.driver.recoveryPolicy} of a spec the reader accepted, empty when absent */
    private static Map<?, ?> recoveryPolicy(Object spec) {
        Object driver = ((Map<?, ?>) spec).get("driver");
        Object rp = ((Map<?, ?>) driver).get("recoveryPolicy");
        return rp instanceof Map<?, ?> m ? m : Map.of();
    }
}
