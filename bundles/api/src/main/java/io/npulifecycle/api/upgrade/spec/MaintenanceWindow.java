package io.npulifecycle.api.upgrade.spec;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A weekly maintenance window ({@code upgradePolicy.maintenanceWindow}, {@code recoveryPolicy.maintenanceWindow};
 * docs/upgrade.md "Maintenance window"): on each of {@code days}, open from {@code start} to {@code end} local time
 * of {@code zone}. An {@code end} at or before {@code start} wraps past midnight: {@code fr 22:00-04:00} is open from
 * Friday 22:00 to Saturday 04:00, and the day named is the day the window opens. Pure: every answer is computed from
 * the instant passed in (the injected clock's), never from the system clock.
 *
 * <p>Daylight saving time: the local times are those of the wall clock on that date. A start or end that falls in a
 * gap (spring forward) moves forward by the gap's length, as {@link ZonedDateTime#of} resolves it; one that falls in
 * an overlap (fall back) is its earlier instant. So a window may be an hour shorter or longer on the two days of a
 * change, and is never skipped.
 *
 * @param days the days the window opens on (never empty)
 * @param start local time it opens
 * @param end local time it closes; at or before {@code start}: on the next day
 * @param zone the time zone of {@code start} and {@code end}
 */
public record MaintenanceWindow(Set<DayOfWeek> days, LocalTime start, LocalTime end, ZoneId zone) {

    /** The fields of {@code maintenanceWindow} this class reads (a caller may know more, e.g. {@code enforce}). */
    public static final List<String> FIELDS = List.of("days", "startTime", "endTime", "timeZone");

    /** {@code HH:MM}, 00:00..23:59 (the CRD's pattern). */
    public static final Pattern TIME = Pattern.compile("^([01][0-9]|2[0-3]):[0-5][0-9]$");

    /** The day abbreviations of {@code days}, in order, Monday first. */
    private static final List<String> DAY_NAMES = List.of("mo", "tu", "we", "th", "fr", "sa", "su");

    private static final DateTimeFormatter HH_MM = DateTimeFormatter.ofPattern("HH:mm");

    /** The longest a search for the next opening looks ahead: a week and a day covers every set of days. */
    private static final int SEARCH_DAYS = 8;

    public MaintenanceWindow {
        if (days.isEmpty() || start.equals(end)) {
            throw new IllegalArgumentException("a maintenance window needs at least one day and startTime != endTime");
        }
        days = java.util.Collections.unmodifiableSet(EnumSet.copyOf(days));
    }

    /**
     * Parses a {@code maintenanceWindow} object. Every field is checked; each problem names its field and what was
     * expected, and any problem means no window (the caller refuses the whole spec, never a half-applied policy).
     * Unknown fields are the caller's to report (it may know more fields than {@link #FIELDS}).
     *
     * @param raw the object as read from the resource (a map)
     * @param field the object's path, e.g. {@code spec.driver.upgradePolicy.maintenanceWindow}
     * @param problems where the problems are added
     * @return the window, or null when there was a problem (then at least one was added)
     */
    public static MaintenanceWindow parse(Object raw, String field, List<String> problems) {
        if (!(raw instanceof Map<?, ?> m)) {
            problems.add(field + ": " + show(raw) + " is not an object (expected an object with startTime and endTime)");
            return null;
        }
        int before = problems.size();
        Set<DayOfWeek> days = days(m.get("days"), field + ".days", problems);
        LocalTime start = time(m.get("startTime"), field + ".startTime", problems);
        LocalTime end = time(m.get("endTime"), field + ".endTime", problems);
        ZoneId zone = ZoneId.of("UTC");
        Object tz = m.get("timeZone");
        if (tz != null) {
            ZoneId z = SpecGrammar.timeZone(tz);
            if (z == null) {
                problems.add(field + ".timeZone: " + show(tz) + " is not a known time zone (expected an IANA name "
                        + "like Europe/Berlin or UTC, at most " + SpecGrammar.TIME_ZONE_MAX_LENGTH + " characters)");
            } else {
                zone = z;
            }
        }
        if (start != null && start.equals(end)) {
            problems.add(field + ": startTime and endTime are both " + HH_MM.format(start) + " (a window of no length; "
                    + "leave maintenanceWindow out for no window)");
        }
        if (problems.size() > before) {
            return null;
        }
        return new MaintenanceWindow(days, start, end, zone);
    }

    private static Set<DayOfWeek> days(Object raw, String field, List<String> problems) {
        if (raw == null) {
            return EnumSet.allOf(DayOfWeek.class);
        }
        Set<DayOfWeek> out = EnumSet.noneOf(DayOfWeek.class);
        String expected = " (expected days among " + String.join(",", DAY_NAMES) + " separated by commas, e.g. "
                + "mo,tu,we)";
        if (!(raw instanceof String s) || s.isBlank()) {
            problems.add(field + ": " + show(raw) + " is not a list of days" + expected);
            return out;
        }
        for (String d : s.split(",", -1)) {
            int i = DAY_NAMES.indexOf(d.trim().toLowerCase(Locale.ROOT));
            if (i < 0) {
                problems.add(field + ": '" + d.trim() + "' is not a day" + expected);
            } else {
                out.add(DayOfWeek.of(i + 1));
            }
        }
        return out;
    }

    private static LocalTime time(Object raw, String field, List<String> problems) {
        if (raw == null) {
            problems.add(field + ": missing (expected HH:MM, 00:00..23:59)");
            return null;
        }
        if (!(raw instanceof String s) || !TIME.matcher(s).matches()) {
            problems.add(field + ": " + show(raw) + " is not a time (expected HH:MM, 00:00..23:59)");
            return null;
        }
        return LocalTime.parse(s, HH_MM);
    }

    private static String show(Object o) {
        if (o == null) {
            return "missing";
        }
        String s = o instanceof String ? "'" + o + "'" : String.valueOf(o);
        return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }

    /** @return whether the window wraps past midnight (closes on the day after it opens) */
    public boolean wraps() {
        return !end.isAfter(start);
    }

    /**
     * @param t an instant
     * @return whether the window is open at {@code t} (from its opening, inclusive, to its closing, exclusive)
     */
    public boolean isOpen(Instant t) {
        return closesAt(t) != null;
    }

    /**
     * @param t an instant
     * @return when the opening that contains {@code t} closes, or null when the window is closed at {@code t}
     */
    public Instant closesAt(Instant t) {
        LocalDate today = t.atZone(zone).toLocalDate();
        // an opening that contains t started today or, when it wraps, yesterday
        for (LocalDate d : List.of(today.minusDays(1), today)) {
            if (!days.contains(d.getDayOfWeek())) {
                continue;
            }
            Instant open = opens(d);
            Instant close = closes(d);
            if (!t.isBefore(open) && t.isBefore(close)) {
                return close;
            }
        }
        return null;
    }

    /**
     * @param t an instant
     * @return the first opening strictly after {@code t} (never null: every window opens once a week at least)
     */
    public Instant nextOpening(Instant t) {
        LocalDate d = t.atZone(zone).toLocalDate();
        for (int i = 0; i <= SEARCH_DAYS; i++, d = d.plusDays(1)) {
            if (days.contains(d.getDayOfWeek())) {
                Instant open = opens(d);
                if (open.isAfter(t)) {
                    return open;
                }
            }
        }
        throw new IllegalStateException("no opening within " + SEARCH_DAYS + " days of " + t + " for " + this);
    }

    /**
     * @param t an instant
     * @return the next instant after {@code t} at which the window opens or closes (when a plan must look again)
     */
    public Instant nextChange(Instant t) {
        Instant close = closesAt(t);
        return close != null ? close : nextOpening(t);
    }

    private Instant opens(LocalDate d) {
        return ZonedDateTime.of(d, start, zone).toInstant();
    }

    private Instant closes(LocalDate d) {
        return ZonedDateTime.of(wraps() ? d.plusDays(1) : d, end, zone).toInstant();
    }

    /** @return e.g. {@code mo,tu,we 22:00-04:00 Europe/Berlin}, or {@code every day 01:00-05:00 UTC} */
    public String describe() {
        String ds = days.size() == 7 ? "every day"
                : days.stream().map(d -> DAY_NAMES.get(d.getValue() - 1)).collect(Collectors.joining(","));
        return ds + " " + HH_MM.format(start) + "-" + HH_MM.format(end) + " " + zone.getId();
    }

}
