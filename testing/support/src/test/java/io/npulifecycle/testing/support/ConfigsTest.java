package io.npulifecycle.testing.support;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** A Config built by the OSGi converter: defaults for absent keys, the DS key mapping, DS's conversions. */
class ConfigsTest {

    @interface Sample {
        int pollIntervalSeconds() default 30;

        String recovery_window() default "24h";

        String[] modules() default {"a", "b"};

        boolean dryRun() default false;

        double interval() default 60;
    }

    @Test
    void absentKeysGiveTheAnnotationDefaults() {
        Sample s = Configs.defaults(Sample.class);
        assertEquals(30, s.pollIntervalSeconds());
        assertEquals("24h", s.recovery_window());
        assertArrayEquals(new String[] {"a", "b"}, s.modules());
        assertEquals(false, s.dryRun());
        assertEquals(60.0, s.interval());
    }

    @Test
    void keysAreMappedAndValuesConvertedAsDsDoes() {
        Sample s = Configs.of(Sample.class, Map.of("recovery.window", "forever", "pollIntervalSeconds", "5",
                "modules", "one", "dryRun", "true", "interval", 90));
        assertEquals("forever", s.recovery_window());
        assertEquals(5, s.pollIntervalSeconds());
        assertArrayEquals(new String[] {"one"}, s.modules());
        assertEquals(true, s.dryRun());
        assertEquals(90.0, s.interval());
    }
}
