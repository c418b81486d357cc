package io.npulifecycle.manifests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;

/**
 * The checks of the Pod Security Standard {@code restricted} (kubernetes.io/docs/concepts/security/pod-security-standards)
 * that a pod spec can fail: no host namespaces or host paths, no privileged container, no privilege escalation, all
 * capabilities dropped (none added but NET_BIND_SERVICE), non-root, RuntimeDefault or Localhost seccomp.
 */
final class RestrictedPodSecurity {

    private RestrictedPodSecurity() {
    }

    static void check(String what, PodSpec pod) {
        assertFalse(Boolean.TRUE.equals(pod.getHostPID()) || Boolean.TRUE.equals(pod.getHostNetwork())
                || Boolean.TRUE.equals(pod.getHostIPC()), what + ": host namespaces");
        assertTrue(pod.getVolumes() == null || pod.getVolumes().stream().allMatch(v -> v.getHostPath() == null), what + ": hostPath");
        boolean podNonRoot = pod.getSecurityContext() != null && Boolean.TRUE.equals(pod.getSecurityContext().getRunAsNonRoot());
        String podSeccomp = pod.getSecurityContext() == null || pod.getSecurityContext().getSeccompProfile() == null ? null
                : pod.getSecurityContext().getSeccompProfile().getType();
        List<Container> all = new java.util.ArrayList<>(pod.getContainers());
        if (pod.getInitContainers() != null) {
            all.addAll(pod.getInitContainers());
        }
        for (Container c : all) {
            String n = what + " container " + c.getName();
            assertNotNull(c.getSecurityContext(), n + ": securityContext");
            assertFalse(Boolean.TRUE.equals(c.getSecurityContext().getPrivileged()), n + ": privileged");
            assertEquals(Boolean.FALSE, c.getSecurityContext().getAllowPrivilegeEscalation(), n + ": allowPrivilegeEscalation false");
            assertEquals(List.of("ALL"), c.getSecurityContext().getCapabilities().getDrop(), n + ": drop ALL");
            List<String> add = c.getSecurityContext().getCapabilities().getAdd();
            assertTrue(add == null || add.stream().allMatch("NET_BIND_SERVICE"::equals), n + ": capabilities added " + add);
            assertTrue(podNonRoot || Boolean.TRUE.equals(c.getSecurityContext().getRunAsNonRoot()), n + ": runAsNonRoot");
            assertFalse(c.getSecurityContext().getRunAsUser() != null && c.getSecurityContext().getRunAsUser() == 0, n + ": uid 0");
            String seccomp = c.getSecurityContext().getSeccompProfile() != null ? c.getSecurityContext().getSeccompProfile().getType() : podSeccomp;
            assertTrue("RuntimeDefault".equals(seccomp) || "Localhost".equals(seccomp), n + ": seccomp " + seccomp);
        }
    }
}
