package io.npulifecycle.upgrade.internal.rollout;

import io.npulifecycle.api.upgrade.spec.MaintenanceWindow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The window rule ({@link MaintenanceWindow}): days, wrap past midnight, time zones, DST, and its parser's errors. */
class MaintenanceWindowTest {

    static final String F = "spec.driver.upgradePolicy.maintenanceWindow";

    static MaintenanceWindow window(String days, String start, String end, String zone) {
        Map<String, Object> m = new HashMap<>();
        if (days != null) {
            m.put("days", days);
        }
        m.put("startTime", start);
        m.put("endTime", end);
        if (zone != null) {
            m.put("timeZone", zone);
        }
        List<String> p = new ArrayList<>();
        MaintenanceWindow w = MaintenanceWindow.parse(m, F, p);
        assertTrue(p.isEmpty(), p.toString());
        return w;
    }

    static List<String> problems(Object raw) {
        List<String> p = new ArrayList<>();
        assertNull(MaintenanceWindow.parse(raw, F, p));
        assertFalse(p.isEmpty());
        return p;
    }

    static Instant at(String t) {
        return Instant.parse(t);
    }

    @Test
    void aSameDayWindowIsOpenFromItsStartInclusiveToItsEndExclusiveInUtcByDefault() {
        MaintenanceWindow w = window(null, "01:00", "05:00", null);
        assertFalse(w.isOpen(at("2026-12-01T00:59:59Z")));
        assertTrue(w.isOpen(at("2026-12-01T01:00:00Z")));
        assertEquals(at("2026-12-01T05:00:00Z"), w.closesAt(at("2026-12-01T04:59:59Z")));
        assertFalse(w.isOpen(at("2026-12-01T05:00:00Z")));
        assertEquals(at("2026-12-02T01:00:00Z"), w.nextOpening(at("2026-12-01T05:00:00Z")));
        assertEquals("every day 01:00-05:00 UTC", w.describe());
    }

    @Test
    void aWindowThatWrapsPastMidnightBelongsToTheDayItOpens() {
        // 2026-12-04 is a Friday
        MaintenanceWindow w = window("fr", "22:00", "04:00", "UTC");
        assertTrue(w.isOpen(at("2026-12-04T22:00:00Z")), "Friday 22:00");
        assertTrue(w.isOpen(at("2026-12-05T03:59:00Z")), "Saturday 03:59, the Friday window");
        assertEquals(at("2026-12-05T04:00:00Z"), w.closesAt(at("2026-12-04T23:00:00Z")));
        assertFalse(w.isOpen(at("2026-12-05T22:30:00Z")), "Saturday evening: not a day of the window");
        assertFalse(w.isOpen(at("2026-12-04T03:00:00Z")), "Friday 03:00 belongs to a Thursday window");
        assertEquals(at("2026-12-11T22:00:00Z"), w.nextOpening(at("2026-12-05T04:00:00Z")));
    }

    @Test
    void daysAndTheTimeZoneAreTheLocalOnes() {
        // Asia/Shanghai is UTC+8, no DST: Monday 02:00-06:00 local = Sunday 18:00-22:00 UTC
        MaintenanceWindow w = window("mo,we", "02:00", "06:00", "Asia/Shanghai");
        assertTrue(w.isOpen(at("2026-11-29T18:30:00Z")), "Sunday 18:30 UTC = Monday 02:30 in Shanghai");
        assertFalse(w.isOpen(at("2026-11-30T18:30:00Z")), "Monday 18:30 UTC = Tuesday 02:30 in Shanghai");
        assertEquals(at("2026-12-01T18:00:00Z"), w.nextOpening(at("2026-11-30T00:00:00Z")));
        assertEquals("mo,we 02:00-06:00 Asia/Shanghai", w.describe());
    }

    @Test
    void daylightSavingTimeChangesShortenOrLengthenTheWindowButNeverSkipIt() {
        MaintenanceWindow w = window(null, "01:00", "05:00", "Europe/Berlin");
        // spring forward on 2026-03-29: 02:00 CET -> 03:00 CEST; 01:00 CET = 00:00Z, 05:00 CEST = 03:00Z (3 h)
        assertTrue(w.isOpen(at("2026-03-29T00:00:00Z")));
        assertEquals(at("2026-03-29T03:00:00Z"), w.closesAt(at("2026-03-29T00:30:00Z")));
        // fall back on 2026-10-25: 03:00 CEST -> 02:00 CET; 01:00 CEST = 23:00Z the day before, 05:00 CET = 04:00Z (5 h)
        assertEquals(at("2026-10-24T23:00:00Z"), w.nextOpening(at("2026-10-24T12:00:00Z")));
        assertEquals(at("2026-10-25T04:00:00Z"), w.closesAt(at("2026-10-25T03:30:00Z")));
        // a start in the gap (02:30 does not exist on 2026-03-29) moves forward by the gap: 03:30 CEST = 01:30Z
        MaintenanceWindow gap = window(null, "02:30", "04:00", "Europe/Berlin");
        assertEquals(at("2026-03-29T01:30:00Z"), gap.nextOpening(at("2026-03-28T12:00:00Z")));
        assertTrue(gap.isOpen(at("2026-03-29T01:45:00Z")));
        // a start in the overlap (02:30 happens twice on 2026-10-25) is the earlier one, 02:30 CEST = 00:30Z
        assertEquals(at("2026-10-25T00:30:00Z"), gap.nextOpening(at("2026-10-24T12:00:00Z")));
    }

    @Test
    void aWrappingWindowAcrossADaylightSavingChange() {
        // America/New_York falls back on 2026-11-01 at 02:00 EDT -> 01:00 EST: Saturday 23:00 EDT (03:00Z) to
        // Sunday 03:00 EST (08:00Z), five hours
        MaintenanceWindow w = window("sa", "23:00", "03:00", "America/New_York");
        assertEquals(at("2026-11-01T03:00:00Z"), w.nextOpening(at("2026-10-31T12:00:00Z")));
        assertEquals(at("2026-11-01T08:00:00Z"), w.closesAt(at("2026-11-01T07:59:00Z")));
    }

    @Test
    void badInputNamesTheFieldAndWhatWasExpected() {
        assertTrue(problems(Map.of("startTime", "01:00", "endTime", "05:00", "timeZone", "Mars/Olympus")).get(0)
                .startsWith(F + ".timeZone: 'Mars/Olympus' is not a known time zone"));
        assertTrue(problems(Map.of("startTime", "03:00", "endTime", "03:00")).get(0)
                .startsWith(F + ": startTime and endTime are both 03:00"));
        assertTrue(problems(Map.of("days", "mo,xx", "startTime", "01:00", "endTime", "05:00")).get(0)
                .startsWith(F + ".days: 'xx' is not a day"));
        assertTrue(problems(Map.of("days", "", "startTime", "01:00", "endTime", "05:00")).get(0)
                .startsWith(F + ".days: '' is not a list of days"));
        assertTrue(problems(Map.of("startTime", "24:00", "endTime", "05:00")).get(0)
                .startsWith(F + ".startTime: '24:00' is not a time (expected HH:MM"));
        assertTrue(problems(Map.of("endTime", "05:00")).get(0).startsWith(F + ".startTime: missing"));
        assertTrue(problems("always").get(0).startsWith(F + ": 'always' is not an object"));
        List<String> all = problems(Map.of("days", "monday", "startTime", "1:00", "endTime", 5, "timeZone", ""));
        assertEquals(4, all.size(), "every field is reported: " + all);
    }
}
