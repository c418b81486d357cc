package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.util.Objects;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.npulifecycle.api.node.NodePolicy;

/**
 * The node's policy as read from the {@code NPUOperatorCtl} ({@link PolicyParser}): unknown until the informer
 * delivers the object, unknown (with the reason) while it is absent or malformed. A change of policy (other than of
 * the object's resourceVersion alone) is logged and announced with {@code "policy"}; each new problem is logged once.
 * Thread-safe.
 */
final class PolicyTracker {

    private static final System.Logger LOG = System.getLogger(PolicyTracker.class.getName());

    private final String what;
    private final Consumer<String> changes;
    private volatile NodePolicy policy = NodePolicy.unknown("the NPUOperatorCtl has not been read yet");
    private String lastProblem;

    /**
     * @param what the resource in messages, {@code namespace/name}
     * @param changes called with {@code "policy"} when the policy changed
     */
    PolicyTracker(String what, Consumer<String> changes) {
        this.what = Objects.requireNonNull(what, "what");
        this.changes = Objects.requireNonNull(changes, "changes");
    }

    /** @return the policy as last read; never {@code null} */
    NodePolicy policy() {
        return policy;
    }

    /**
     * Takes the object as the informer delivered it.
     *
     * @param cr the {@code NPUOperatorCtl}, or {@code null} when it was deleted
     */
    synchronized void update(GenericKubernetesResource cr) {
        NodePolicy p = cr == null ? NodePolicy.unknown("NPUOperatorCtl " + what + " does not exist")
                : PolicyParser.parse(what, cr.getAdditionalProperties().get("spec"),
                        cr.getMetadata() == null ? null : cr.getMetadata().getResourceVersion());
        if (p.problem() != null && !p.problem().equals(lastProblem)) {
            LOG.log(Level.ERROR, p.problem());
        }
        lastProblem = p.problem();
        NodePolicy old = policy;
        policy = p;
        if (!Objects.equals(withoutResourceVersion(old), withoutResourceVersion(p))) {
            LOG.log(Level.INFO, "policy from NPUOperatorCtl " + what + ": " + describe(p));
            changes.accept("policy");
        }
    }

    private static NodePolicy withoutResourceVersion(NodePolicy p) {
        return new NodePolicy(p.known(), p.desiredVersion(), p.autoUpgrade(), p.autoRecover(), p.maxReboots(),
                p.window(), p.problem(), null);
    }

    /**
     * @param p a policy
     * @return one line for logs and the MBean: {@code version=... autoUpgrade=... ...} or {@code unknown (why)}
     */
    static String describe(NodePolicy p) {
        if (!p.known()) {
            return "unknown (" + p.problem() + ")";
        }
        return "version=" + p.desiredVersion() + " autoUpgrade=" + p.autoUpgrade() + " autoRecover=" + p.autoRecover()
                + " maxReboots=" + p.maxReboots() + " window=" + p.window();
    }
}
