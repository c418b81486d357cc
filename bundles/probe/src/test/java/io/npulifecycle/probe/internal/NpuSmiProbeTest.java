package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/** The npu-smi runner against real processes. */
@Timeout(60)
class NpuSmiProbeTest {

    @TempDir
    Path dir;

    private static NpuSmiProbe probe(ProbeOptions o, String... cmd) {
        return new NpuSmiProbe(List.of(cmd), Map.of(), NpuSmiParser.DEFAULT_MAX_BYTES, o);
    }

    @Test
    void readsAFixtureThroughARealProcessWithEnvironment() {
        NpuSmiProbe p = new NpuSmiProbe(List.of("sh", "-c", "test \"$LD_LIBRARY_PATH\" = /x:/y && cat \"$0\"",
                Fixtures.file("310p3_npu-smi-25.2.0_healthy.txt").toString()), Map.of("LD_LIBRARY_PATH", "/x:/y"),
                NpuSmiParser.DEFAULT_MAX_BYTES, ProbeOptions.DEFAULTS);
        ProbeResult r = p.probe(Duration.ofSeconds(20));
        assertNull(r.outcome(), r.error());
        assertEquals("25.2.0", r.driverVersion());
        assertEquals(2, r.chips().size());
    }

    @Test
    void hangIsKilledAtTheTimeoutAndIsAStrikeByDefault() throws Exception {
        Path pidFile = dir.resolve("child.pid");
        // a process tree: sh -> sleep 30 (background) ; the whole tree must die
        NpuSmiProbe p = probe(ProbeOptions.DEFAULTS, "sh", "-c", "sleep 30 & echo $! > " + pidFile + "; wait");
        long t0 = System.nanoTime();
        ProbeResult r = p.probe(Duration.ofMillis(700));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(Classification.FAILED, r.outcome(), r.error());
        assertTrue(r.error().contains("did not answer within 700 ms"), r.error());
        assertTrue(tookMs < 10_000, "returned after " + tookMs + " ms");
        long childPid = Long.parseLong(Files.readString(pidFile).trim());
        Optional<ProcessHandle> child = ProcessHandle.of(childPid);
        if (child.isPresent()) {
            child.get().onExit().get(10, TimeUnit.SECONDS); // wait on the condition with a deadline
        }
        assertFalse(ProcessHandle.of(childPid).map(ProcessHandle::isAlive).orElse(false), "grandchild killed");
    }

    @Test
    void hangIsAProbeErrorWhenTimeoutIsNotFailure() {
        ProbeResult r = probe(new ProbeOptions(false, false), "sleep", "30").probe(Duration.ofMillis(300));
        assertEquals(Classification.PROBE_ERROR, r.outcome());
    }

    @Test
    void stdinIsClosedSoAPromptDoesNotHang() {
        // 'read' waits for a line on stdin: with stdin closed it gets EOF at once
        ProbeResult r = probe(ProbeOptions.DEFAULTS, "sh", "-c", "echo 'Continue? [y/n]'; read answer; echo got:$answer")
                .probe(Duration.ofSeconds(20));
        assertEquals(Classification.PROBE_ERROR, r.outcome());
        assertTrue(r.error().contains("no npu-smi chip table"), r.error());
    }

    @Test
    void missingOrNotExecutableBinaryIsAProbeError() throws Exception {
        ProbeResult missing = probe(ProbeOptions.DEFAULTS, "/nonexistent/npu-smi", "info").probe(Duration.ofSeconds(5));
        assertEquals(Classification.PROBE_ERROR, missing.outcome());
        assertTrue(missing.error().contains("/nonexistent/npu-smi"), missing.error());
        for (int code : new int[] {126, 127}) {
            ProbeResult r = probe(ProbeOptions.DEFAULTS, "sh", "-c", "exit " + code).probe(Duration.ofSeconds(5));
            assertEquals(Classification.PROBE_ERROR, r.outcome());
            assertTrue(r.error().contains("exit " + code), r.error());
        }
        Path notExec = Files.writeString(dir.resolve("npu-smi"), "#!/bin/sh\necho hi\n");
        assertEquals(Classification.PROBE_ERROR, probe(ProbeOptions.DEFAULTS, notExec.toString()).probe(Duration.ofSeconds(5)).outcome());
    }

    @Test
    void hugeOutputIsCappedAndAProbeError() {
        ProbeResult r = new NpuSmiProbe(List.of("sh", "-c", "head -c 5242880 /dev/zero | tr '\\0' '|'"), Map.of(),
                64 * 1024, ProbeOptions.DEFAULTS).probe(Duration.ofSeconds(20));
        assertEquals(Classification.PROBE_ERROR, r.outcome());
        assertTrue(r.error().contains("exceeds 65536 bytes"), r.error());
        assertTrue(r.rawOutput().length() <= NpuSmiParser.RAW_KEEP_CHARS);
    }

    @Test
    void errorFixtureThroughAProcess() {
        ProbeResult r = probe(ProbeOptions.DEFAULTS, "sh", "-c", "cat \"$0\"; exit 1",
                Fixtures.file("error_ret-8020_device-occupied.txt").toString()).probe(Duration.ofSeconds(5));
        assertEquals(Classification.PROBE_ERROR, r.outcome());
        assertTrue(r.error().contains("-8020"));
    }
}
