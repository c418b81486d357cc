package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line of {@code demo} and {@code scenario}: {@code --api}, {@code --junit}, {@code --work}. */
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
    void kubeletNeedsTheRealApiServerOneScenarioAtATimeAndIsNoClusterlessOption() throws Exception {
        assertEquals(2, run("demo", "--kubelet", "--work", install.resolve("w").toString()));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle demo: --kubelet needs --api real"), text);
        assertEquals(2, run("scenario", "x.yaml", "--kubelet"));
        text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle scenario: --kubelet needs --api real"), text);
        assertEquals(2, run("scenario", "x.yaml", "--kubelet", "--api", "real", "--parallel", "2"));
        text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle scenario: --kubelet runs one scenario at a time (--parallel 1)"), text);
        assertEquals(0, run("scenario", "--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("[--keep] [--kubelet]"));
    }

    @Test
    void aScenarioTheRealNodeCannotRunIsRefusedBeforeAnythingRunsNamingEachLine() throws Exception {
        Path f = install.resolve("faults.yaml");
        java.nio.file.Files.writeString(f, String.join("\n",
                "name: faults a real node cannot take",
                "cluster: {nodes: 2}",
                "steps:",
                "  - at: 0s",
                "    apiOutage: {duration: 30s}",
                "  - at: 1s",
                "    clockJump: {node: node-0, by: 1h}",
                "  - at: 2s",
                "    killControlPlane: {replica: leader, restart: false}",
                "  - at: 3s",
                "    pod: {node: node-0, name: job, controller: DaemonSet}",
                "  - at: 4s",
                "    markersFull: {node: node-0, on: true}",
                "  - at: 5s",
                "    wedge: {node: node-0, npu: 0, chip: 0}",
                ""));
        Path work = install.resolve("w");
        assertEquals(2, run("scenario", f.toString(), "--kubelet", "--api", "real", "--work", work.toString()));
        String text = err.toString(StandardCharsets.UTF_8);
        String file = f.toString();
        for (String line : java.util.List.of(
                file + ": cluster.nodes 2: --kubelet runs scenarios of one node (node-0)",
                file + ":line 4: apiOutage cannot run on the real node (--kubelet): the pods reach kube-apiserver",
                file + ":line 6: clockJump cannot run on the real node (--kubelet)",
                file + ":line 8: killControlPlane cannot run on the real node (--kubelet): restart: false",
                file + ":line 10: pod cannot run on the real node (--kubelet): controller DaemonSet",
                file + ":line 12: markersFull cannot run on the real node (--kubelet)",
                "npu-lifecycle scenario --kubelet: nothing was run")) {
            assertTrue(text.contains(line), "missing '" + line + "' in:\n" + text);
        }
        assertTrue(!text.contains("line 14"), "wedge runs on the real node: " + text);
        assertTrue(!java.nio.file.Files.exists(work.resolve("scenario-0")), "nothing was started");
        // --list checks the same (a run would be refused)
        err.reset();
        assertEquals(2, run("scenario", "--list", f.toString(), "--kubelet", "--api", "real"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains(file + ":line 6: clockJump cannot run on the real "
                + "node (--kubelet)"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aWorkFolderTheRealNodeCannotUseIsRefusedBeforeAnythingIsCreated() throws Exception {
        Path f = install.resolve("ok.yaml");
        java.nio.file.Files.writeString(f, "steps:\n  - at: 0s\n    wedge: {node: node-0, npu: 0, chip: 0}\n");
        Path spaced = install.resolve("with space");
        assertEquals(2, run("scenario", f.toString(), "--kubelet", "--api", "real", "--work", spaced.toString()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("the real node's host paths may hold letters, digits"),
                err.toString(StandardCharsets.UTF_8));
        assertTrue(!java.nio.file.Files.exists(spaced), "nothing created for a refused folder");
        Path longer = install.resolve("a".repeat(90));
        err.reset();
        assertEquals(2, run("demo", "--kubelet", "--api", "real", "--work", longer.toString()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("too long for the real node: containerd's socket"),
                err.toString(StandardCharsets.UTF_8));
        assertTrue(!java.nio.file.Files.exists(longer), "nothing created for a refused folder");
    }

    @Test
    void aJunitReportThatCannotBeWrittenIsRefusedBeforeTheRun() {
        assertEquals(2, run("scenario", "x.yaml", "--junit", "/proc/npu-lifecycle-report.xml"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--junit /proc/npu-lifecycle-report.xml: cannot be "
                + "written"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void apiWithoutAValueIsRefused() {
        assertEquals(2, run("scenario", "x.yaml", "--api"));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle scenario: --api needs embedded or real"), text);
    }

    @Test
    void junitNeedsAFileAndIsAScenarioOption() {
        assertEquals(2, run("scenario", "x.yaml", "--junit"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle scenario: --junit needs a file (the "
                + "JUnit XML report)"), err.toString(StandardCharsets.UTF_8));
        assertEquals(2, run("scenario", "x.yaml", "--junit", install.toString()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--junit " + install + " is a folder: give a file"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals(2, run("demo", "--junit", "r.xml"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle demo: unknown option '--junit' for "
                + "demo"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void parallelTakesOneToEightFilesAtATimeAndIsAScenarioOption() {
        assertEquals(2, run("scenario", "x.yaml", "--parallel", "0"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle scenario: --parallel 0 is outside "
                + "1..8"), err.toString(StandardCharsets.UTF_8));
        assertEquals(2, run("scenario", "x.yaml", "--parallel", "two"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle scenario: --parallel 'two' is not a "
                + "whole number"), err.toString(StandardCharsets.UTF_8));
        assertEquals(2, run("scenario", "x.yaml", "--parallel", "99999999999"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle scenario: --parallel 99999999999 is "
                + "outside 1..8"), err.toString(StandardCharsets.UTF_8));
        assertEquals(2, run("scenario", "x.yaml", "--parallel"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle scenario: --parallel needs a number"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals(2, run("demo", "--parallel", "2"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle demo: unknown option '--parallel' "
                + "for demo"), err.toString(StandardCharsets.UTF_8));
        assertEquals(0, run("scenario", "--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("--parallel N   run up to N files at a time"),
                out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aJunitFileThatCouldNotBeWrittenIsRefusedBeforeAnyScenarioRuns() throws Exception {
        Path plain = Files.writeString(install.resolve("plain"), "a file, not a folder");
        assertEquals(2, run("scenario", "x.yaml", "--junit", plain.resolve("r.xml").toString()));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("--junit " + plain.resolve("r.xml") + ": its folder " + plain + " cannot be created"),
                text);
        assertTrue(!text.contains("x.yaml"), "refused before the files are read: " + text);
        assertEquals(2, run("scenario", "--list", "x.yaml", "--junit", "r.xml"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--junit writes the report of a run; --list runs "
                + "nothing"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void workMustBeNewEmptyOrAnEarlierWorkFolder() throws Exception {
        Path mine = Files.createDirectories(install.resolve("home/me"));
        Files.writeString(mine.resolve("thesis.tex"), "years of work");
        assertEquals(2, run("scenario", "missing.yaml", "--work", mine.toString()));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("npu-lifecycle scenario: --work " + mine + " is a folder with other files in it "
                + "(thesis.tex) and is not a work folder of an earlier demo or scenario (no .npu-lifecycle-work): "
                + "give a new or empty folder"), text);
        assertEquals(List.of("thesis.tex"), names(mine), "nothing written into it");

        Path file = Files.writeString(install.resolve("file"), "x");
        assertEquals(2, run("demo", "--work", file.toString()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("npu-lifecycle demo: --work " + file
                + " is not a folder"), err.toString(StandardCharsets.UTF_8));

        Path fresh = install.resolve("new/work");
        assertEquals(fresh, WorkFolder.prepare(fresh, "scenario"));
        Files.createDirectories(fresh.resolve("scenario-0/node-0"));
        assertEquals(fresh, WorkFolder.prepare(fresh, "scenario"), "an earlier work folder is reused");
        Path empty = Files.createDirectories(install.resolve("empty"));
        assertEquals(empty, WorkFolder.prepare(empty, "demo"));
        assertEquals(List.of(WorkFolder.MARKER), names(empty));
    }

    private static List<String> names(Path dir) throws Exception {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void helpPrintsTheUsageOfDemoAndScenarioAndExits0() {
        assertEquals(0, run("scenario", "--help"));
        String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("Usage: npu-lifecycle scenario FILE..."), text);
        assertTrue(text.contains("--keep"), text);
        assertEquals("", err.toString(StandardCharsets.UTF_8));
        out.reset();
        assertEquals(0, run("demo", "-h"));
        text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("Usage: npu-lifecycle demo"), text);
        assertTrue(text.contains("deleted when the run passes, kept (its path printed) when it fails"), text);
        out.reset();
        assertEquals(0, run("scenario", "a.yaml", "--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("Usage: npu-lifecycle scenario"));
    }

    @Test
    void keepIsAnOptionOfDemoAndScenario() throws Exception {
        Path f = Files.writeString(install.resolve("bad.yaml"), "name: x\n");
        assertEquals(2, run("scenario", f.toString(), "--keep", "--list"));
        assertTrue(!err.toString(StandardCharsets.UTF_8).contains("unknown option"), err.toString());
    }
}
