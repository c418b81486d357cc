package io.npulifecycle.kube.internal;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * How the node agent names a failed request in its log and health: fabric8's message alone says "An error has
 * occurred." or "Operation: [get] ... failed." when no HTTP answer came (a reset or closed connection, a timeout, an
 * HTTP/2 GOAWAY such as kube-apiserver sends for a token it rejects), which tells an operator nothing.
 */
final class ApiErrors {

    private ApiErrors() {
    }

    /**
     * @param e a failed request
     * @return its message, followed by the innermost cause ({@code class: message}) when the request got no HTTP
     *         answer (code 0), e.g. {@code "An error has occurred. (java.io.IOException: /127.0.0.1:6443: GOAWAY
     *         received)"}
     */
    static String describe(KubernetesClientException e) {
        String message = String.valueOf(e.getMessage());
        if (e.getCode() > 0) {
            return message;
        }
        Throwable root = e;
        for (int i = 0; i < 20 && root.getCause() != null && root.getCause() != root; i++) {
            root = root.getCause();
        }
        return root == e ? message : message + " (" + root.getClass().getName() + ": " + root.getMessage() + ")";
    }
}
