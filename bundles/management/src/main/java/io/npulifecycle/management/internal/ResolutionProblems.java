package io.npulifecycle.management.internal;

import java.util.ArrayList;
import java.util.List;

import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRequirement;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.resource.Namespace;

/**
 * Why a bundle is not resolved, in the resolver's words: each mandatory requirement (effective at resolve time) that
 * no capability of an installed bundle satisfies ({@code missing requirement <namespace>; <filter>}, as Felix's
 * resolution error names it), or that only bundles which are not resolved themselves provide. Computed from the
 * bundles' declared requirements and capabilities, without resolving or starting anything.
 */
final class ResolutionProblems {

    private ResolutionProblems() {
    }

    /**
     * @param bundle a bundle in state INSTALLED
     * @param all the framework's bundles
     * @return why it does not resolve; a generic sentence when every requirement has a provider (a uses-constraint
     *         conflict or a singleton clash, which Felix logs)
     */
    static String why(Bundle bundle, Bundle[] all) {
        BundleRevision rev = bundle.adapt(BundleRevision.class);
        if (rev == null) {
            return "no revision (the bundle is being uninstalled)";
        }
        List<String> problems = new ArrayList<>();
        for (BundleRequirement req : rev.getDeclaredRequirements(null)) {
            String effective = req.getDirectives().get(Namespace.REQUIREMENT_EFFECTIVE_DIRECTIVE);
            String resolution = req.getDirectives().get(Namespace.REQUIREMENT_RESOLUTION_DIRECTIVE);
            if ((effective != null && !Namespace.EFFECTIVE_RESOLVE.equals(effective))
                    || Namespace.RESOLUTION_OPTIONAL.equals(resolution)) {
                continue;
            }
            List<String> unresolvedProviders = new ArrayList<>();
            boolean satisfied = false;
            for (Bundle other : all) {
                if (other.getState() == Bundle.UNINSTALLED || other.getBundleId() == bundle.getBundleId()) {
                    continue;
                }
                BundleRevision o = other.adapt(BundleRevision.class);
                if (o == null) {
                    continue;
                }
                for (BundleCapability cap : o.getDeclaredCapabilities(req.getNamespace())) {
                    if (req.matches(cap)) {
                        if (other.getState() == Bundle.INSTALLED) {
                            unresolvedProviders.add(other.getSymbolicName() + " (id " + other.getBundleId() + ")");
                        } else {
                            satisfied = true;
                        }
                    }
                }
            }
            if (!satisfied) {
                String filter = req.getDirectives().get(Namespace.REQUIREMENT_FILTER_DIRECTIVE);
                String what = req.getNamespace() + "; " + (filter == null ? "(any)" : filter);
                problems.add(unresolvedProviders.isEmpty() ? "missing requirement " + what
                        : "requirement " + what + " is provided only by bundles that are not resolved: "
                                + String.join(", ", unresolvedProviders));
            }
        }
        if (problems.isEmpty()) {
            return "not resolved although every requirement has a provider (a uses-constraint conflict or a "
                    + Constants.SINGLETON_DIRECTIVE + " clash): see the runtime's log";
        }
        return String.join("; ", problems);
    }
}
