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
    void hugeOutputIsCappedAtTheConfiguredDefaultAndAProbeError() {
        ProbeResult r = probe(ProbeOptions.DEFAULTS, "sh", "-c", "head -c 5242880 /dev/zero | tr '\\0' '|'")
                .probe(Duration.ofSeconds(20));
        assertEquals(Classification.PROBE_ERROR, r.outcome());
        assertTrue(r.error().contains("npu-smi printed more than 1048576 bytes"), r.error());
        assertTrue(r.rawOutput().length() <= NpuSmiParser.RAW_KEEP_CHARS);
    }

    /** QA: {@code yes} ran to the timeout and was a strike; it must be cut at the cap at once, a probe error. */
    @Test
    void endlessOutputIsCutAtTheCapAtOnceNeverAStrike() throws Exception {
        Path pidFile = dir.resolve("yes.pid");
        NpuSmiProbe p = new NpuSmiProbe(List.of("sh", "-c", "echo $$ > " + pidFile + "; exec yes"), Map.of(),
                64 * 1024, ProbeOptions.DEFAULTS);
        long t0 = System.nanoTime();
        ProbeResult r = p.probe(Duration.ofSeconds(15));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(Classification.PROBE_ERROR, r.outcome(), r.error());
        assertTrue(r.error().contains("npu-smi printed more than 65536 bytes"), r.error());
        assertTrue(tookMs < 5_000, "cut after " + tookMs + " ms, not at the cap");
        assertGone(Long.parseLong(Files.readString(pidFile).trim()));
    }

    /**
     * QA: a background child holding stdout made the probe answer after 4,010 ms with a 3,000 ms timeout and leaked.
     * The probe must answer within the timeout, from the printed fixture, and the child must be killed.
     */
    @Test
    void backgroundChildHoldingStdoutIsKilledAndTheTimeoutHolds() throws Exception {
        Path setsid = Path.of("/usr/bin/setsid");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(setsid), "no setsid");
        assertBackgroundChildKilled(setsid);
    }

    /** The same without setsid: the descendants seen while npu-smi was alive are killed. */
    @Test
    void backgroundChildIsKilledWithoutSetsidToo() throws Exception {
        assertBackgroundChildKilled(null);
    }

    private void assertBackgroundChildKilled(Path setsid) throws Exception {
        Path pidFile = dir.resolve("bg.pid");
        Path script = dir.resolve("npu-smi");
        Files.writeString(script, "#!/bin/sh\nsleep 30 &\necho $! > " + pidFile + "\nsleep 0.3\ncat '"
                + Fixtures.file("310p3_npu-smi-25.2.0_healthy.txt") + "'\nexit 0\n");
        script.toFile().setExecutable(true);
        NpuSmiProbe p = new NpuSmiProbe(List.of(script.toString()), Map.of(), NpuSmiParser.DEFAULT_MAX_BYTES,
                ProbeOptions.DEFAULTS, setsid);
        long t0 = System.nanoTime();
        ProbeResult r = p.probe(Duration.ofMillis(3000));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(tookMs < 3000, "answered after " + tookMs + " ms with a 3000 ms timeout");
        assertNull(r.outcome(), r.error());
        assertEquals(2, r.chips().size());
        assertGone(Long.parseLong(Files.readString(pidFile).trim()));
    }

    /**
     * Seen by the benchmark on a loaded machine (docs/benchmarks.md): the runner killed the already exited npu-smi
     * through its {@code Process}, which also closes the output stream, and the output not yet handed to the reader was
     * lost ("npu-smi printed nothing", a probe error). Killing the leftovers must leave the output readable.
     */
    @Test
    void killingTheLeftoversOfAnExitedNpuSmiKeepsItsOutputReadable() throws Exception {
        NpuSmiProbe probe = probe(ProbeOptions.DEFAULTS, "npu-smi", "info");
        Process p = new ProcessBuilder("sh", "-c", "printf 'the npu-smi table'").start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        probe.killLeftovers(p, java.util.concurrent.ConcurrentHashMap.newKeySet());
        assertEquals("the npu-smi table", new String(p.getInputStream().readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8));
    }

    /** QA: npu-smi inherited the runtime's environment (NPU_LIFECYCLE_JOLOKIA_PASSWORD); it gets a minimal one. */
    @Test
    void npuSmiRunsWithAMinimalEnvironment() throws Exception {
        assertFalse(System.getenv().isEmpty());
        Path script = dir.resolve("npu-smi");
        Files.writeString(script, "#!/bin/sh\nenv\n");
        script.toFile().setExecutable(true);
        ProbeResult r = new NpuSmiProbe(List.of(script.toString()), Map.of("LD_LIBRARY_PATH", "/x:/y"),
                NpuSmiParser.DEFAULT_MAX_BYTES, ProbeOptions.DEFAULTS).probe(Duration.ofSeconds(10));
        java.util.Set<String> vars = new java.util.TreeSet<>();
        for (String line : r.rawOutput().strip().split("\n")) {
            String name = line.substring(0, Math.max(0, line.indexOf('=')));
            if (!List.of("PWD", "OLDPWD", "SHLVL", "_").contains(name)) { // set by the shell itself
                vars.add(line);
            }
        }
        assertEquals(new java.util.TreeSet<>(List.of("LANG=C", "LD_LIBRARY_PATH=/x:/y",
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")), vars, r.rawOutput());
    }

    private static void assertGone(long pid) throws Exception {
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        if (h.isPresent()) {
            h.get().onExit().get(10, TimeUnit.SECONDS); // wait on the condition with a deadline
        }
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "process " + pid + " killed");
    }

    @Test
    void errorFixtureThroughAProcess() {
        ProbeResult r = probe(ProbeOptions.DEFAULTS, "sh", "-c", "cat \"$0\"; exit 1",
                Fixtures.file("error_ret-8020_device-occupied.txt").toString()).probe(Duration.ofSeconds(5));
        assertEquals(Classification.PROBE_ERROR, r.outcome());
        assertTrue(r.error().contains("-8020"));
    }
}
