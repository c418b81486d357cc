package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line of {@code demo} and {@code scenario}: {@code --api}. */
class HarnessMainTest {

    @TempDir
    Path install;

    private String previous;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void install() {
        previous = System.setProperty("npu.lifecycle.install", install.toString());
    }

    @AfterEach
    void restore() {
        if (previous == null) {
            System.clearProperty("npu.lifecycle.install");
        } else {
            System.setProperty("npu.lifecycle.install", previous);
        }
    }

    private int run(String... args) {
        return HarnessMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void anUnknownApiKindIsRefusedNamingTheOptionAndTheChoices() {
        assertEquals(2, run("demo", "--api", "kind", "--work", install.resolve("w").toString()));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle demo: --api 'kind': expected embedded or real"), text);
    }

    @Test
    void apiWithoutAValueIsRefused() {
        assertEquals(2, run("scenario", "x.yaml", "--api"));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle scenario: --api needs embedded or real"), text);
    }
}
