package io.npulifecycle.rebooter.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigDefaults;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.testing.support.Configs;
import io.npulifecycle.testing.support.RecordedRefusals;

/** The rebooter's configuration refusals reach the Configuration MBean, every refused key of them. */
class RebooterComponentConfigTest {

    /** A Config as DS builds it: the metatype defaults and some values. */
    static RebooterComponent.Config config(Map<String, Object> values) {
        return Configs.of(RebooterComponent.Config.class, values);
    }

    @Test
    void everyRefusedValueIsReportedAndAGoodConfigurationEndsTheRefusal() throws Exception {
        RecordedRefusals reported = new RecordedRefusals();
        RebooterComponent c = new RebooterComponent(null, null);
        c.bindRefusals(reported);
        assertNull(c.reported(config(Map.of("stateDir", "relative/dir", "pollIntervalSeconds", 0,
                "recovery.window", "forever"))));
        assertEquals(List.of(
                "io.npulifecycle.rebooter stateDir=relative/dir: 'relative/dir' must be an absolute path",
                "io.npulifecycle.rebooter pollIntervalSeconds=0: 0 must be at least 1",
                "io.npulifecycle.rebooter recovery.window=forever: 'forever' is not a duration like 24h, 1h30m or 90s"),
                reported.lines());
        reported.clear();
        assertNotNull(c.reported(config(Map.of("stateDir", "/var/lib/npu-operator/"))));
        assertEquals(List.of("io.npulifecycle.rebooter accepted"), reported.lines());
    }

    @Test
    void theMetatypeDefaultsAreTheBuildersDefaultsAndTheFallbackAtActivation() {
        List<ConfigurationRefusals.Refusal> refused = new ArrayList<>();
        RebootEngine.Settings fromMetatype = RebooterComponent.settings(config(Map.of()), refused);
        assertEquals(List.of(), refused);
        assertEquals(RebootEngine.Settings.builder().build(), fromMetatype);
        assertEquals(fromMetatype, RebooterComponent.settings(ConfigDefaults.of(RebooterComponent.Config.class),
                refused), "the defaults the component falls back on are the ones DS gives for an empty configuration");
        assertEquals(new RebootEngine.Settings(Path.of("/var/lib/npu-operator/"), 3, Duration.ofHours(24), false, 5000),
                fromMetatype);
    }

    @Test
    void theBuilderKeepsTheDefaultsOfWhatIsNotSet() {
        RebootEngine.Settings s = RebootEngine.Settings.builder().stateDir(Path.of("/x")).maxReboots(1)
                .window(Duration.ofMinutes(90)).dryRun(true).flushTimeoutMillis(300).build();
        assertEquals(new RebootEngine.Settings(Path.of("/x"), 1, Duration.ofMinutes(90), true, 300), s);
        assertEquals(5000, RebootEngine.Settings.builder().stateDir(Path.of("/x")).build().flushTimeoutMillis());
    }
}
