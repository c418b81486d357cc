package io.npulifecycle.upgrade.internal;

import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigurationRefusals.Refusal;

/**
 * The ImageWhiteList settings of PID {@code io.npulifecycle.upgrade} (metatype): defaults {@code cpaas-system} /
 * {@code ascend-driver}, check on; other names taken; a name that is not a Kubernetes name rejected (the previous
 * configuration is kept).
 */
class ImageWhiteListConfigTest {

    /**
     * @return the metatype configuration with {@code values} over the annotation's defaults, converted as
     *         Declarative Services converts a configuration ({@link io.npulifecycle.testing.support.Configs})
     */
    static UpgradeOrchestratorComponent.Config config(Map<String, Object> values) {
        return io.npulifecycle.testing.support.Configs.of(UpgradeOrchestratorComponent.Config.class, values);
    }

    /** @return the component's check of {@code c}: the validated configuration, or null when a value is refused */
    static ControllerConfig validate(UpgradeOrchestratorComponent.Config c) {
        return UpgradeOrchestratorComponent.validate(c, new java.util.ArrayList<>());
    }

    @Test
    void defaultsAreTheRunbooksWhitelist() {
        ControllerConfig c = ImageWhiteListConfigTest.validate(config(Map.of()));
        assertEquals(true, c.imageWhiteListCheck());
        assertEquals("cpaas-system", c.imageWhiteListNamespace());
        assertEquals("ascend-driver", c.imageWhiteListName());
        assertEquals(c, ControllerConfig.defaults(), "the record's defaults are the metatype's");
    }

    @Test
    void namespaceNameAndTheSwitchAreConfigurable() {
        ControllerConfig c = ImageWhiteListConfigTest.validate(config(Map.of("imageWhiteListNamespace", "platform",
                "imageWhiteListName", "npu-drivers", "imageWhiteListCheck", false)));
        assertEquals(false, c.imageWhiteListCheck());
        assertEquals("platform", c.imageWhiteListNamespace());
        assertEquals("npu-drivers", c.imageWhiteListName());
    }

    @Test
    void badNamesAreRejected() {
        assertNull(ImageWhiteListConfigTest.validate(config(Map.of("imageWhiteListNamespace", "Cpaas_System"))));
        assertNull(ImageWhiteListConfigTest.validate(config(Map.of("imageWhiteListName", "ascend driver"))));
        assertNull(ImageWhiteListConfigTest.validate(config(Map.of("imageWhiteListName", ""))));
    }

    @Test
    void aRefusalNamesTheKeyAndWhatIsWrongForTheConfigurationMBean() {
        List<Refusal> why = new java.util.ArrayList<>();
        assertNull(UpgradeOrchestratorComponent.validate(config(Map.of("imageWhiteListNamespace", "Cpaas_System")),
                why));
        assertEquals(java.util.List.of("imageWhiteListNamespace: 'Cpaas_System' is not a namespace name"), text(why));
    }

    @Test
    void aRefusalNamesEveryBadKeyInOrder() {
        List<Refusal> why = new java.util.ArrayList<>();
        assertNull(UpgradeOrchestratorComponent.validate(config(Map.of("namespace", "Bad_NS",
                "imageWhiteListName", "ascend driver", "registryScheme", "ftp")), why));
        assertEquals(java.util.List.of("namespace: 'Bad_NS' is not a namespace name",
                "imageWhiteListName: 'ascend driver' is not a resource name",
                "registryScheme: 'ftp' (expected https or http)"), text(why));
    }

    /** @return each refusal as {@code <key>: <reason>} */
    private static List<String> text(List<Refusal> r) {
        return r.stream().map(x -> x.key() + ": " + x.reason()).toList();
    }
}
