package io.npulifecycle.itests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A fake {@code npu-smi} for integration tests: a shell script that prints a real fixture from
 * {@code ../shared/fixtures/npu-smi/} according to a mode file the test switches: {@code ok} prints the healthy
 * 910B4 table (chips 0:0 and 1:0, driver 25.2.0) and exits 0; {@code dcmi-8005} prints the DCMI -8005 error and
 * exits 1 (a strike for every expected chip on the host); {@code occupied} prints -8020 and exits 1 (a probe error).
 */
public final class FakeNpuSmi {

    private final Path script;
    private final Path mode;

    private FakeNpuSmi(Path script, Path mode) {
        this.script = script;
        this.mode = mode;
    }

    /** @return the fixtures folder (system property {@code npu.fixtures.dir}) */
    public static Path fixtures() {
        Path dir = Path.of(System.getProperty("npu.fixtures.dir", "../../shared/fixtures")).toAbsolutePath()
                .normalize();
        if (!Files.isDirectory(dir.resolve("npu-smi"))) {
            throw new IllegalStateException("fixtures not found at " + dir + " (set npu.fixtures.dir)");
        }
        return dir;
    }

    /**
     * Writes the script and its mode file (initially {@code ok}) into {@code dir}.
     *
     * @return the fake
     */
    public static FakeNpuSmi create(Path dir) throws IOException {
        Path f = fixtures().resolve("npu-smi");
        Path mode = dir.resolve("npu-smi.mode");
        Path script = dir.resolve("npu-smi");
        String body = "#!/bin/sh\n"
                + "# fake npu-smi for npu-lifecycle integration tests\n"
                + "case \"$(cat '" + mode + "' 2>/dev/null)\" in\n"
                + "  ok) cat '" + f.resolve("910b4-1_npu-smi-25.2.0_healthy.txt") + "'; exit 0 ;;\n"
                + "  dcmi-8005) cat '" + f.resolve("error_ret-8005_dcmi-internal.txt") + "'; exit 1 ;;\n"
                + "  occupied) cat '" + f.resolve("error_ret-8020_device-occupied.txt") + "'; exit 1 ;;\n"
                + "  *) echo \"unknown mode\" >&2; exit 3 ;;\n"
                + "esac\n";
        Files.writeString(script, body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        FakeNpuSmi fake = new FakeNpuSmi(script, mode);
        fake.mode("ok");
        return fake;
    }

    /**
     * @param modeFile the mode file of a fake created earlier (possibly in another class loader)
     * @return a handle that switches its mode
     */
    public static FakeNpuSmi attach(Path modeFile) {
        return new FakeNpuSmi(modeFile.resolveSibling("npu-smi"), modeFile);
    }

    /** @return the script path */
    public Path script() {
        return script;
    }

    /** @return the mode file */
    public Path modeFile() {
        return mode;
    }

    /** Switches the mode atomically. */
    public void mode(String m) throws IOException {
        Path tmp = mode.resolveSibling(mode.getFileName() + ".tmp");
        Files.writeString(tmp, m, StandardCharsets.UTF_8);
        Files.move(tmp, mode, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
