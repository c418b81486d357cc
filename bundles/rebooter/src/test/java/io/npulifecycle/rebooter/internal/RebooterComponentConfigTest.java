package io.npulifecycle.rebooter.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.management.ConfigurationRefusals;

/** The rebooter's configuration refusals reach the Configuration MBean, every refused key of them. */
class RebooterComponentConfigTest {

    /** A Config with the metatype defaults and some overrides. */
    static RebooterComponent.Config config(Map<String, Object> overrides) {
        return (RebooterComponent.Config) Proxy.newProxyInstance(RebooterComponentConfigTest.class.getClassLoader(),
                new Class<?>[] {RebooterComponent.Config.class}, (proxy, m, args) -> {
                    if (overrides.containsKey(m.getName())) {
                        return overrides.get(m.getName());
                    }
                    if (m.getDefaultValue() != null) {
                        return m.getDefaultValue();
                    }
                    if (m.getName().equals("annotationType")) {
                        return RebooterComponent.Config.class;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    @Test
    void everyRefusedValueIsReportedAndAGoodConfigurationEndsTheRefusal() throws Exception {
        List<String> reported = new CopyOnWriteArrayList<>();
        RebooterComponent c = new RebooterComponent(null, null);
        java.lang.reflect.Field f = RebooterComponent.class.getDeclaredField("refusals");
        f.setAccessible(true);
        f.set(c, new ConfigurationRefusals() {
            @Override
            public void refused(String pid, Object file, List<Refusal> refused) {
                refused.forEach(r -> reported.add(pid + " " + r.key() + "=" + r.value() + ": " + r.reason()));
            }

            @Override
            public void accepted(String pid) {
                reported.add(pid + " accepted");
            }
        });
        assertNull(c.reported(config(Map.of("stateDir", "relative/dir", "pollIntervalSeconds", 0,
                "recovery_window", "forever"))));
        assertEquals(List.of(
                "io.npulifecycle.rebooter stateDir=relative/dir: 'relative/dir' must be an absolute path",
                "io.npulifecycle.rebooter pollIntervalSeconds=0: 0 must be at least 1",
                "io.npulifecycle.rebooter recovery.window=forever: 'forever' is not a duration like 24h, 1h30m or 90s"),
                reported);
        reported.clear();
        assertNotNull(c.reported(config(Map.of("stateDir", "/var/lib/npu-operator/"))));
        assertEquals(List.of("io.npulifecycle.rebooter accepted"), reported);
    }
}
