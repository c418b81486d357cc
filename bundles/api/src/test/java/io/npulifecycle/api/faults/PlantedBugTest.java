package io.npulifecycle.api.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.ResourceBundle;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

class PlantedBugTest {

    /** Records what is logged, level and message. */
    static final class RecordingLogger implements System.Logger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + format);
        }

        @Override
        public void log(Level level, Supplier<String> msgSupplier) {
            lines.add(level + " " + msgSupplier.get());
        }
    }

    @Test
    void everyBugHasItsOwnNameAndInvariantAndIsFoundByName() {
        Set<String> names = new HashSet<>();
        Set<String> invariants = new HashSet<>();
        for (PlantedBug b : PlantedBug.values()) {
            assertTrue(names.add(b.bugName()), b.bugName());
            assertTrue(invariants.add(b.invariant()), b.invariant());
            assertTrue(b.bugName().matches("[a-z]+(-[a-z]+)*"), b.bugName());
            assertSame(b, PlantedBug.of(b.bugName()));
        }
        assertEquals(8, invariants.size(), "one bug per invariant of the checker");
        assertEquals("reboot-unannounced, reboot-unauthorised, approval-reused, admin-cordon-lifted, module-reloaded, "
                + "window-ignored, drain-skipped, memory-leak", PlantedBug.names());
    }

    @Test
    void anUnknownNameIsRefusedNamingItAndTheValidOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PlantedBug.of("MEMORY_LEAK"));
        assertEquals("'MEMORY_LEAK' is no planted bug (one of " + PlantedBug.names() + ")", e.getMessage());
    }

    @Test
    void aComponentPlantsOnlyItsOwnBugSaysSoAtWarningAndRefusesAnUnknownNameAtError() {
        RecordingLogger log = new RecordingLogger();
        Set<PlantedBug> rebooter = EnumSet.of(PlantedBug.REBOOT_UNANNOUNCED, PlantedBug.REBOOT_UNAUTHORISED);
        assertNull(PlantedBug.plantedIn(null, "rebooter", rebooter, log));
        assertNull(PlantedBug.plantedIn("  ", "rebooter", rebooter, log));
        assertEquals(List.of(), log.lines, "nothing said without the property");

        assertNull(PlantedBug.plantedIn("memory-leak", "rebooter", rebooter, log));
        assertEquals(List.of(), log.lines, "another component's bug is not this one's to announce");

        assertSame(PlantedBug.REBOOT_UNAUTHORISED, PlantedBug.plantedIn(" reboot-unauthorised ", "rebooter", rebooter,
                log));
        assertEquals(List.of("WARNING planted bug reboot-unauthorised active (rebooter): this runtime breaks invariant "
                + "every-reboot-authorised on purpose (npu.lifecycle.plantedBug, testing the chaos checker only)"),
                log.lines);

        log.lines.clear();
        assertNull(PlantedBug.plantedIn("reboot-unauthorized", "rebooter", rebooter, log));
        assertEquals(List.of("ERROR npu.lifecycle.plantedBug=reboot-unauthorized: 'reboot-unauthorized' is no planted "
                + "bug (one of " + PlantedBug.names() + "): no bug planted in the rebooter"), log.lines);
    }
}
