package io.npulifecycle.simulator.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The offline host: rendered through the public API only, as the benchmark uses it. */
class EmulatedHostsTest {

    @TempDir
    Path tmp;

    @Test
    void rendersAHostWhoseNpuSmiListsEveryChipHealthyAndTheDcmiShim() throws Exception {
        Path dir = tmp.resolve("host-16");
        boolean shim = EmulatedHosts.class.getResource("/native/libdcmi-sim.so") != null;
        if (!shim) {
            assertThrows(java.io.IOException.class, () -> EmulatedHosts.create(dir, "310p", 8, 2),
                    "without the shim in the jar the host is incomplete");
            return;
        }
        assertEquals(dir, EmulatedHosts.create(dir, "310p", 8, 2));
        Process p = new ProcessBuilder(dir.resolve("bin/npu-smi").toString(), "info").redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("310P") && out.contains(EmulatedHosts.DRIVER_VERSION), out);
        assertEquals(16, out.lines().filter(l -> l.contains(" OK ")).count(), out);
        assertTrue(Files.size(dir.resolve("lib/libdcmi.so")) > 0);
        assertTrue(Files.exists(dir.resolve("lib/dcmi.state")));
        // again: the stored host is re-rendered, not replaced
        String boot = Files.readString(dir.resolve("boot_id"));
        EmulatedHosts.create(dir, "310p", 8, 2);
        assertEquals(boot, Files.readString(dir.resolve("boot_id")));
    }

    @Test
    void badShapesAreRefusedNamingThem() {
        IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                () -> EmulatedHosts.create(tmp.resolve("h"), "910", 8, 1));
        assertEquals("chipType '910': expected 910b or 310p", type.getMessage());
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                () -> EmulatedHosts.create(tmp.resolve("h"), "910b", 0, 1));
        assertTrue(count.getMessage().startsWith("npus 0, chipsPerNpu 1"), count.getMessage());
        assertTrue(!Files.exists(tmp.resolve("h")), "nothing written");
    }
}
