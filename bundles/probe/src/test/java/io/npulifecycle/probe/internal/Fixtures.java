package io.npulifecycle.probe.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The shared npu-smi fixtures, read from {@code npu.fixtures.dir} (set by surefire); fails loudly when missing. */
public final class Fixtures {
    private Fixtures() {
    }

    public static Path dir() {
        String d = System.getProperty("npu.fixtures.dir");
        if (d == null || d.isBlank()) {
            throw new IllegalStateException("system property npu.fixtures.dir is not set (surefire sets it to "
                    + "${maven.multiModuleProjectDirectory}/../shared/fixtures)");
        }
        Path p = Path.of(d, "npu-smi");
        if (!Files.isDirectory(p)) {
            throw new IllegalStateException("npu-smi fixtures folder missing: " + p.toAbsolutePath());
        }
        return p;
    }

    public static Path file(String name) {
        Path p = dir().resolve(name);
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException("fixture missing: " + p.toAbsolutePath());
        }
        return p;
    }

    public static String text(String name) {
        try {
            return Files.readString(file(name));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read fixture " + name, e);
        }
    }
}
