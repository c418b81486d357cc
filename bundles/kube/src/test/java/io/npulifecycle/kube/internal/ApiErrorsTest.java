package io.npulifecycle.kube.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClientException;

class ApiErrorsTest {

    @Test
    void aRequestWithoutAnHttpAnswerIsNamedByItsInnermostCause() {
        KubernetesClientException e = new KubernetesClientException("An error has occurred.",
                new RuntimeException("wrapped", new IOException("/127.0.0.1:6443: GOAWAY received")));
        assertEquals("An error has occurred. (java.io.IOException: /127.0.0.1:6443: GOAWAY received)",
                ApiErrors.describe(e));
    }

    @Test
    void anHttpAnswerKeepsFabric8sMessageWhichNamesTheCodeAndTheServersReason() {
        KubernetesClientException e = new KubernetesClientException("Failure executing: GET. Message: Forbidden.", 403,
                null);
        assertEquals("Failure executing: GET. Message: Forbidden.", ApiErrors.describe(e));
        assertEquals("no cause", ApiErrors.describe(new KubernetesClientException("no cause")));
    }
}
