package io.npulifecycle.probe.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.probe.internal.Assessment;
import io.npulifecycle.probe.internal.NpuSmiParser;
import io.npulifecycle.probe.internal.ProbeOptions;

/**
 * Parse-and-classify of each npu-smi fixture (the live probe's code path minus the process). Run with
 * {@code mvn -B -pl bundles/probe -Pbench verify}; never part of a normal build.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ParseAndClassifyBenchmark {

    @Param({"910b4-1_npu-smi-25.2.0_healthy.txt", "910b2_npu-smi-24.1.0.3_healthy.txt",
        "310p3_npu-smi-25.2.0_healthy.txt", "a3-two-dies-per-npu_healthy.txt", "910a_npu-smi-23.0.rc3_warning.txt",
        "error_ret-8020_device-occupied.txt", "error_ret-8005_dcmi-internal.txt"})
    public String fixture;

    private String text;
    private int exit;
    private final Set<ChipId> expected = ChipId.parseList("0:0,1:0");

    @Setup
    public void load() throws IOException {
        String dir = System.getProperty("npu.fixtures.dir");
        if (dir == null) {
            throw new IllegalStateException("-Dnpu.fixtures.dir is not set");
        }
        text = Files.readString(Path.of(dir, "npu-smi", fixture));
        exit = fixture.startsWith("error") ? 1 : 0;
    }

    @Benchmark
    public Assessment parseAndClassify() {
        return Assessment.of(NpuSmiParser.parse(text, exit, ProbeOptions.DEFAULTS), expected);
    }
}
