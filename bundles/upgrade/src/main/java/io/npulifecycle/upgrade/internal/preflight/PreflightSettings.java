package io.npulifecycle.upgrade.internal.preflight;

/**
 * The part of the orchestrator's configuration (PID {@code io.npulifecycle.upgrade}) that the preflight reads, each
 * value as validated there ({@code cluster.ControllerConfig#preflight()}).
 *
 * @param namespace the namespace of the pull secret (the NPUOperatorCtl's)
 * @param registryCheck run the registry check (key {@code registryCheck}); false = every image counts as present
 * @param registryScheme {@code https} or {@code http}
 * @param pullSecret name of a dockerconfigjson secret in {@code namespace}, "" = anonymous
 * @param registry how the registries are reached: CA file, mirror, insecure
 * @param imageWhiteListCheck check the platform's ImageWhiteList when the cluster serves the kind
 * @param imageWhiteListNamespace namespace of the ImageWhiteList
 * @param imageWhiteListName name of the ImageWhiteList
 */
public record PreflightSettings(String namespace, boolean registryCheck, String registryScheme, String pullSecret,
        RegistrySettings registry, boolean imageWhiteListCheck, String imageWhiteListNamespace,
        String imageWhiteListName) {
}
