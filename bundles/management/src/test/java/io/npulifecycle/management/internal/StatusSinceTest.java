package io.npulifecycle.management.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

class StatusSinceTest {

    @Test
    void sinceIsWhenTheCurrentStatusWasFirstSeen() {
        StatusSince s = new StatusSince();
        Instant t0 = Instant.parse("2026-12-01T20:00:00Z");
        assertEquals(Map.of("a", t0, "b", t0), s.update(Map.of("a", "OK", "b", "OK"), t0));
        Instant t1 = t0.plusSeconds(10);
        assertEquals(Map.of("a", t0, "b", t1), s.update(Map.of("a", "OK", "b", "CRITICAL"), t1));
        Instant t2 = t1.plusSeconds(10);
        assertEquals(Map.of("a", t0, "b", t1), s.update(Map.of("a", "OK", "b", "CRITICAL"), t2));
        Instant t3 = t2.plusSeconds(10);
        assertEquals(Map.of("b", t3), s.update(Map.of("b", "OK"), t3));
        assertEquals(Map.of("a", t3, "b", t3), s.update(Map.of("a", "OK", "b", "OK"), t3), "a forgotten check is new");
    }
}
