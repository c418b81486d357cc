package io.npulifecycle.api.management;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** A configuration of the metatype defaults alone. */
class ConfigDefaultsTest {

    @interface Sample {
        int interval() default 30;

        String recovery_window() default "24h";

        String[] modules() default {"a", "b"};
    }

    @interface NoDefault {
        int interval();
    }

    @Test
    void everyMethodAnswersItsDefault() {
        Sample s = ConfigDefaults.of(Sample.class);
        assertEquals(30, s.interval());
        assertEquals("24h", s.recovery_window());
        assertArrayEquals(new String[] {"a", "b"}, s.modules());
        assertNotSame(s.modules(), s.modules(), "an array is copied: a caller cannot change the defaults");
        assertEquals(Sample.class, ((java.lang.annotation.Annotation) s).annotationType());
    }

    @Test
    void aMethodWithoutDefaultOrATypeThatIsNoAnnotationIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> ConfigDefaults.of(NoDefault.class));
        assertThrows(IllegalArgumentException.class, () -> ConfigDefaults.of(Runnable.class));
    }
}
