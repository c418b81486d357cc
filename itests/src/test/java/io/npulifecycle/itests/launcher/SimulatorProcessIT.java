package io.npulifecycle.itests.launcher;

import static io.npulifecycle.itests.launcher.RuntimeProcess.PASSWORD;
import static io.npulifecycle.itests.launcher.RuntimeProcess.USER;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * A node agent with the simulator instead of NPUs, driven through Jolokia as a CI pipeline would: a wedge injected
 * over Jolokia is detected by the unchanged npu-smi probe, a recovery before any reboot is suppressed, and a
 * simulated reboot gives a new boot id, clears the markers and restarts the runtime in the same JVM.
 */
class SimulatorProcessIT {

    static final String SIM = "/jolokia/exec/io.npulifecycle:type=Simulator/";

    @TempDir
    Path tmp;

    @Test
    void wedgeInjectedThroughJolokiaIsDetectedSuppressedAndARebootRestartsTheAgent() throws Exception {
        NodeHomes.SimulatedNode node = NodeHomes.withSimulator(tmp);
        Path markers = node.markers();
        Path home = node.home();

        int port = LoopbackPorts.shared().allocate();
        try (RuntimeProcess rt = RuntimeProcess.start(tmp.resolve("out.txt"), port,
                RuntimeProcess.operatorEnv(port, 0),
                "node", "--no-shell", "--home", home.toString())) {
            rt.await("8 healthy emulated chips", Duration.ofSeconds(90), () -> rt.get(
                    "/jolokia/read/io.npulifecycle:type=HealthWatch/ExpectedChips", USER, PASSWORD).body
                    .contains("0:0,1:0,2:0,3:0,4:0,5:0,6:0,7:0"));
            String bootBefore = rt.get("/jolokia/read/io.npulifecycle:type=Simulator/BootId", USER, PASSWORD).body;
            String bundles = rt.get("/jolokia/read/io.npulifecycle:type=Runtime/Bundles", USER, PASSWORD).body;
            assertTrue(bundles.contains("\"symbolicName\":\"io.npulifecycle.simulator\""),
                    "etc/io.npulifecycle.simulator.cfg makes the launcher install the simulator: " + bundles);

            RuntimeProcess.Answer wedged = rt.get(SIM + "wedge/4/0", USER, PASSWORD);
            assertTrue(wedged.body.contains("4:0 wedged"), wedged.body);
            Path rr = markers.resolve("reboot-required");
            rt.await("the wedge detected", Duration.ofSeconds(60), () -> Files.exists(rr));
            String marker = Files.readString(rr);
            assertTrue(marker.contains("reason=recovery") && marker.contains("chips=4:0"), marker);

            rt.get(SIM + "recover/4/0", USER, PASSWORD);
            rt.await("the recovery marker cleared before any reboot", Duration.ofSeconds(60),
                    () -> !Files.exists(rr));

            RuntimeProcess.Answer bad = rt.get(SIM + "setChip/4/0/melted", USER, PASSWORD);
            assertTrue(bad.body.contains("melted") && bad.body.contains("\"status\":"), bad.body);
            assertFalse(bad.body.contains("\"status\":200"), bad.body);

            rt.get(SIM + "wedge/2/0", USER, PASSWORD);
            rt.await("the second wedge detected", Duration.ofSeconds(60), () -> Files.exists(rr));
            RuntimeProcess.Answer reboot = rt.get(SIM + "reboot", USER, PASSWORD);
            assertTrue(reboot.body.contains("\"status\":200"), reboot.body);
            rt.await("the agent back after the simulated reboot, with a new boot id", Duration.ofSeconds(90), () -> {
                String now = rt.get("/jolokia/read/io.npulifecycle:type=Simulator/BootId", USER, PASSWORD).body;
                return now.contains("\"status\":200") && !now.equals(bootBefore)
                        && rt.output().contains("The framework is running again");
            });
            assertFalse(Files.exists(rr), "a reboot clears /run");
            RuntimeProcess.Answer chips = rt.get("/jolokia/read/io.npulifecycle:type=Simulator/Chips", USER,
                    PASSWORD);
            assertTrue(chips.body.contains("2:0 healthy"), "a transient wedge ends with the reboot: " + chips.body);
            RuntimeProcess.Answer violations = rt.get("/jolokia/read/io.npulifecycle:type=Simulator/Violations",
                    USER, PASSWORD);
            assertTrue(violations.body.contains("\"value\":[]"), violations.body);
            assertTrue(rt.alive());
        }
    }
}
