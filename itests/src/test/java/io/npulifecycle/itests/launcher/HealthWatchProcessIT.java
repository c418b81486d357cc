package io.npulifecycle.itests.launcher;

import static io.npulifecycle.itests.launcher.RuntimeProcess.PASSWORD;
import static io.npulifecycle.itests.launcher.RuntimeProcess.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import io.npulifecycle.simulator.common.LoopbackPorts;


/**
 * A node agent started by {@code bin/npu-lifecycle node} with a fake npu-smi that prints a real fixture, then starts
 * failing (DCMI -8005), then answers again: the health-watch writes the recovery marker and removes driver-ready at
 * the third failure, and clears its marker and restores driver-ready when the chips answer again before any reboot
 * (false-positive suppression).
 */
class HealthWatchProcessIT {

    static final String BOOT_ID = "bbbbbbbb-1111-2222-3333-444444444444";

    @TempDir
    Path tmp;

    static Properties read(Path file) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException e) {
            return null;
        }
        return p;
    }

    @Test
    void fakeNpuSmiFailingThenRecoveringWritesAndClearsTheMarkers() throws Exception {
        NodeHomes.FakeNpuSmiNode node = NodeHomes.withFakeNpuSmi(tmp, BOOT_ID);
        Path markers = node.markers();
        Path home = node.home();
        // the driver was validated in this boot before the test starts
        Files.writeString(markers.resolve("driver-ready"), "bootId=" + BOOT_ID
                + "\nwrittenAt=2026-11-30T00:00:00Z\nwriter=itest\nversion=25.2.0\n");

        int port = LoopbackPorts.shared().allocate();
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port,
                RuntimeProcess.operatorEnv(port, 0),
                "node", "--no-shell", "--home", home.toString())) {
            rt.await("a healthy verdict through Jolokia", Duration.ofSeconds(90), () -> rt.get(
                    "/jolokia/read/io.npulifecycle:type=HealthWatch/LastVerdict", USER, PASSWORD).body
                    .contains("\"value\":\"healthy\""));
            RuntimeProcess.Answer chips = rt.get("/jolokia/read/io.npulifecycle:type=HealthWatch/ExpectedChips",
                    USER, PASSWORD);
            assertTrue(chips.body.contains("0:0,1:0"), chips.body);
            assertFalse(Files.exists(markers.resolve("reboot-required")));

            node.npuSmi().mode("dcmi-8005");
            Path rebootRequired = markers.resolve("reboot-required");
            rt.await("reboot-required written", Duration.ofSeconds(60), () -> Files.exists(rebootRequired));
            Properties rr = read(rebootRequired);
            assertEquals("recovery", rr.getProperty("reason"), rr.toString());
            assertEquals("0:0,1:0", rr.getProperty("chips"), rr.toString());
            assertEquals(BOOT_ID, rr.getProperty("bootId"), rr.toString());
            assertFalse(Files.exists(markers.resolve("driver-ready")), "driver-ready removed on a wedge");
            RuntimeProcess.Answer chip = rt.get("/jolokia/read/io.npulifecycle:type=Chip,name=npu0-chip0", USER,
                    PASSWORD);
            assertTrue(chip.body.contains("\"Wedged\":true"), chip.body);
            assertTrue(chip.body.contains("\"ConsecutiveFailures\":3")
                    || chip.body.matches("(?s).*\"ConsecutiveFailures\":[3-9].*"), chip.body);

            node.npuSmi().mode("ok");
            rt.await("recovery marker cleared (false-positive suppression)", Duration.ofSeconds(60),
                    () -> !Files.exists(rebootRequired) && Files.exists(markers.resolve("driver-ready")));
            Properties ready = read(markers.resolve("driver-ready"));
            assertEquals(BOOT_ID, ready.getProperty("bootId"), ready.toString());
            assertTrue(rt.alive(), "the runtime stays up");
        }
    }
}
