package io.npulifecycle.markers.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import javax.management.openmbean.CompositeData;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.markers.MarkerChange;
import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.MarkerStatus;
import io.npulifecycle.api.markers.MarkerStoreException;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.markers.MarkersMXBean;

class FileMarkerStoreTest {

    private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    private static final String BOOT = "8f1c2b7e-0000-4000-8000-000000000001";

    @TempDir
    Path dir;

    private final List<MarkerChange> changes = new CopyOnWriteArrayList<>();

    private FileMarkerStore store(Path folder, String boot) {
        return new FileMarkerStore(folder, boot, () -> T0, changes::add);
    }

    private static Map<String, String> recovery(String chips) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(Markers.KEY_REASON, Markers.REASON_RECOVERY);
        m.put(Markers.KEY_CHIPS, chips);
        m.put(Markers.KEY_SINCE, T0.toString());
        return m;
    }

    @Test
    void writesDeterministicKeyValueFileAndReadsItBack() throws Exception {
        FileMarkerStore s = store(dir, BOOT);
        s.write(Markers.REBOOT_REQUIRED, recovery("0:0,4:0"), "health-watch");
        String text = Files.readString(dir.resolve("reboot-required"));
        assertEquals("bootId=" + BOOT + "\nwrittenAt=2026-11-30T10:00:00Z\nwriter=health-watch\n"
                + "reason=recovery\nchips=0:0,4:0\nsince=2026-11-30T10:00:00Z\n", text);
        MarkerRead r = s.read(Markers.REBOOT_REQUIRED);
        assertTrue(r.present());
        assertEquals("recovery", r.marker().reason());
        assertEquals("0:0,4:0", r.marker().content().get("chips"));
        assertEquals(List.of("reason", "chips", "since"), new ArrayList<>(r.marker().content().keySet()));
        assertEquals(1, s.changeCount());
        assertEquals(new MarkerChange("reboot-required", true, "recovery", "health-watch", 1), changes.get(0));
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary file left behind");
        }
    }

    @Test
    void anUnreadableBootIdIsRetriedUntilTheFileAppears() throws Exception {
        Path bootFile = dir.resolve("boot_id");
        FileMarkerStore s = store(Files.createDirectories(dir.resolve("m")), FileMarkerStore.UNKNOWN_BOOT_ID);
        s.retryBootIdFrom(bootFile);
        org.junit.jupiter.api.Assertions.assertEquals(FileMarkerStore.UNKNOWN_BOOT_ID, s.bootId());
        Files.writeString(bootFile, "0f0f0f0f-1111-2222-3333-444444444444\n");
        org.junit.jupiter.api.Assertions.assertEquals("0f0f0f0f-1111-2222-3333-444444444444", s.bootId());
        s.write("driver-ready", java.util.Map.of("version", "25.2.0"), "test");
        org.junit.jupiter.api.Assertions.assertTrue(s.read("driver-ready").present(),
                "markers are stamped with the boot id read late");
    }

    @Test
    void removePublishesAndAbsentReadsAbsent() throws Exception {
        FileMarkerStore s = store(dir, BOOT);
        assertEquals(MarkerStatus.ABSENT, s.read(Markers.DRIVER_READY).status());
        assertFalse(s.remove(Markers.DRIVER_READY, "t"), "nothing to remove");
        assertEquals(0, s.changeCount());
        s.write(Markers.DRIVER_READY, Map.of(), "driver");
        AtomicReference<MarkerChange> seen = new AtomicReference<>();
        s.addListener(seen::set);
        assertTrue(s.remove(Markers.DRIVER_READY, "health-watch"));
        assertEquals(new MarkerChange("driver-ready", false, null, "health-watch", 2), seen.get());
        assertFalse(Files.exists(dir.resolve("driver-ready")));
    }

    @Test
    void markerFromAnotherBootIsStaleAndReadsAbsent() throws Exception {
        store(dir, "old-boot").write(Markers.REBOOT_REQUIRED, recovery("1:0"), "health-watch");
        FileMarkerStore s = store(dir, BOOT);
        MarkerRead r = s.read(Markers.REBOOT_REQUIRED);
        assertEquals(MarkerStatus.STALE, r.status());
        assertFalse(r.present());
        assertTrue(r.error().contains("old-boot"));
        assertEquals(MarkerStatus.STALE, s.read(Markers.REBOOT_REQUIRED).status(), "stable on re-read (logged once)");
    }

    @Test
    void corruptedFilesAreInvalidNeverPresent() throws Exception {
        FileMarkerStore s = store(dir, BOOT);
        String[] bad = {
            "garbage without equals\n",
            "bootId=" + BOOT + "\nwrittenAt=yesterday\nreason=recovery\n",
            "writtenAt=2026-11-30T10:00:00Z\nreason=recovery\n",
            "bootId=" + BOOT + "\nbootId=" + BOOT + "\nwrittenAt=2026-11-30T10:00:00Z\n",
            "bootId=" + BOOT + "\nwrittenAt=2026-11-30T10:00:00Z\nreason=recov",  // cut, but parseable: valid
        };
        for (int i = 0; i < 4; i++) {
            Files.writeString(dir.resolve("reboot-required"), bad[i]);
            MarkerRead r = s.read(Markers.REBOOT_REQUIRED);
            assertEquals(MarkerStatus.INVALID, r.status(), bad[i]);
            assertNull(r.marker());
            assertNotNull(r.error());
        }
        Files.write(dir.resolve("reboot-required"), new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, 2});
        assertEquals(MarkerStatus.INVALID, s.read(Markers.REBOOT_REQUIRED).status());
        MarkersMBean mbean = new MarkersMBean(s);
        MarkersMXBean.MarkerView v = mbean.getMarkers().get(0);
        assertEquals("INVALID", v.getStatus());
        assertFalse(v.isValid());
        assertEquals(dir.resolve("reboot-required").toString(), v.getPath());
    }

    @Test
    void notWritableFolderGivesClearErrorWithPathVisibleInMbean() throws Exception {
        // running as root: chmod would not stop us, so use a folder below a regular FILE
        Path file = Files.writeString(dir.resolve("a-regular-file"), "x");
        Path folder = file.resolve("npu-operator");
        FileMarkerStore s = store(folder, BOOT);
        MarkerStoreException e = assertThrows(MarkerStoreException.class,
                () -> s.write(Markers.REBOOT_REQUIRED, recovery("0:0"), "health-watch"));
        assertEquals(folder.resolve("reboot-required"), e.path());
        assertTrue(e.getMessage().contains(folder.toString()), e.getMessage());
        assertThrows(MarkerStoreException.class, () -> s.writeState("health-watch", Map.of("a", "b")));
        assertEquals(0, s.changeCount());
        assertTrue(changes.isEmpty());
        assertEquals(MarkerStatus.ABSENT, s.read(Markers.REBOOT_REQUIRED).status(), "reads keep working");
        assertEquals(Map.of(), s.readState("health-watch"));

        MarkersMBean mbean = new MarkersMBean(s);
        assertFalse(mbean.isWritable());
        assertTrue(mbean.getLastError().contains(folder.toString()));
        // the MXBean is compliant and renders through a real MBeanServer
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName(MarkersMXBean.OBJECT_NAME + ",test=notWritable");
        server.registerMBean(new StandardMBean(mbean, MarkersMXBean.class, true), name);
        try {
            assertEquals(false, server.getAttribute(name, "Writable"));
            assertTrue(((String) server.getAttribute(name, "LastError")).contains(folder.toString()));
        } finally {
            server.unregisterMBean(name);
        }
    }

    @Test
    void mbeanListsMarkersAsCompositeData() throws Exception {
        FileMarkerStore s = store(dir, BOOT);
        s.write(Markers.REBOOT_REQUIRED, recovery("0:0"), "health-watch");
        s.writeState("health-watch", Map.of("x", "1"));
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName(MarkersMXBean.OBJECT_NAME + ",test=list");
        server.registerMBean(new StandardMBean(new MarkersMBean(s), MarkersMXBean.class, true), name);
        try {
            CompositeData[] list = (CompositeData[]) server.getAttribute(name, "Markers");
            assertEquals(1, list.length, "state files are not markers");
            assertEquals("reboot-required", list[0].get("name"));
            assertEquals("PRESENT", list[0].get("status"));
            assertTrue(((String) list[0].get("content")).contains("reason=recovery"));
            assertEquals(true, server.getAttribute(name, "Writable"));
        } finally {
            server.unregisterMBean(name);
        }
    }

    @Test
    void stateFileIsKeyedByBootId() throws Exception {
        FileMarkerStore s = store(dir, BOOT);
        Map<String, String> state = new LinkedHashMap<>();
        state.put("chip.0:0.failures", "2");
        state.put("expectedChips", "0:0,1:0");
        s.writeState("health-watch", state);
        assertEquals(state, store(dir, BOOT).readState("health-watch"), "survives a new store (bundle update)");
        assertEquals(Map.of(), store(dir, "next-boot").readState("health-watch"), "not across a reboot");
        assertEquals(0, s.changeCount(), "state writes are not marker changes");
        assertTrue(s.readAll().isEmpty());
    }

    @Test
    void rejectsBadNamesAndValues() {
        FileMarkerStore s = store(dir, BOOT);
        assertThrows(IllegalArgumentException.class, () -> s.read("../etc/passwd"));
        assertThrows(IllegalArgumentException.class, () -> s.read(".hidden"));
        assertThrows(IllegalArgumentException.class, () -> s.write("x", Map.of("reason", "a\nbootId=evil"), "t"));
        assertThrows(IllegalArgumentException.class, () -> s.write("x", Map.of("bootId", "other"), "t"));
    }

    @Test
    void concurrentReadersNeverSeeAPartialFile() throws Exception {
        FileMarkerStore s = store(dir, BOOT);
        s.write(Markers.REBOOT_REQUIRED, recovery("0:0"), "health-watch");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger reads = new AtomicInteger();
        List<String> problems = new CopyOnWriteArrayList<>();
        List<Thread> readers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread t = new Thread(() -> {
                FileMarkerStore reader = store(dir, BOOT);
                while (!stop.get()) {
                    MarkerRead r = reader.read(Markers.REBOOT_REQUIRED);
                    if (!r.present()) {
                        problems.add(r.status() + ": " + r.error());
                    } else if (!r.marker().content().get("chips").matches("(\\d+:0,)*\\d+:0")
                            || r.marker().content().size() != 3) {
                        problems.add("partial content " + r.marker().content());
                    }
                    reads.incrementAndGet();
                }
            });
            t.start();
            readers.add(t);
        }
        // writes of varying length; readers must always see one whole version
        for (int i = 0; i < 400; i++) {
            StringBuilder chips = new StringBuilder();
            for (int c = 0; c <= i % 40; c++) {
                chips.append(c == 0 ? "" : ",").append(c).append(":0");
            }
            s.write(Markers.REBOOT_REQUIRED, recovery(chips.toString()), "health-watch");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (reads.get() < 200 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        stop.set(true);
        for (Thread t : readers) {
            t.join(Duration.ofSeconds(10).toMillis());
        }
        assertTrue(reads.get() >= 200, "readers ran: " + reads.get());
        assertTrue(problems.isEmpty(), problems.size() + " bad reads, first: " + (problems.isEmpty() ? "" : problems.get(0)));
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary file left behind");
        }
    }

    @Test
    void readsBootIdFile() throws Exception {
        Path f = Files.writeString(dir.resolve("boot_id"), BOOT + "\n", StandardCharsets.UTF_8);
        assertEquals(BOOT, FileMarkerStore.readBootId(f));
        Files.writeString(f, "  \n");
        assertThrows(java.io.IOException.class, () -> FileMarkerStore.readBootId(f));
    }
}
