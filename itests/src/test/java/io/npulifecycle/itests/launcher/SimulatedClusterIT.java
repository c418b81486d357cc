package io.npulifecycle.itests.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's main job and the CI scenario suite, run exactly as a user runs them: {@code bin/npu-lifecycle demo}
 * and {@code bin/npu-lifecycle scenario itests/scenarios/*.yaml} on simulated clusters of real runtimes.
 */
class SimulatedClusterIT {

    @TempDir
    Path tmp;

    static Path scenarios() {
        return Path.of(System.getProperty("npu.scenarios.dir", "scenarios")).toAbsolutePath();
    }

    @Test
    void theDemoWalksTheRunbookToPass() throws Exception {
        Path out = tmp.resolve("demo.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 600, "demo", "--work", tmp.resolve("work").toString());
        String text = Files.readString(out);
        System.out.println(text);
        assertEquals(0, rc, text);
        assertTrue(text.contains("PASS 3 upgrade to 25.5.0"), text);
        assertTrue(text.contains("PASS 7 false-positive suppression"), text);
        assertTrue(text.lines().anyMatch(l -> l.startsWith("PASS in ")), text);
    }

    @Test
    void theScenarioSuitePasses() throws Exception {
        List<String> args = new ArrayList<>(List.of("scenario"));
        try (Stream<Path> s = Files.list(scenarios())) {
            s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(p -> args.add(p.toString()));
        }
        assertTrue(args.size() > 8, "scenario files in " + scenarios());
        args.add("--work");
        args.add(tmp.resolve("work").toString());
        Path out = tmp.resolve("scenarios.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 1500, args.toArray(new String[0]));
        String text = Files.readString(out);
        System.out.println(text);
        assertEquals(0, rc, text);
        assertFalse(text.contains("   FAIL "), text);
    }

    @Test
    void aMalformedScenarioIsRejectedWithItsLineAndNothingRuns() throws Exception {
        Path bad = Files.writeString(tmp.resolve("bad.yaml"), String.join("\n",
                "name: typo",
                "cluster: {nodes: 1}",
                "steps:",
                "  - at: 0s",
                "    wedgee: {node: node-0, npu: 0, chip: 0}",
                ""));
        Path out = tmp.resolve("out.txt");
        int rc = RuntimeProcess.runToExit(out, Map.of(), 120, "scenario", bad.toString(), "--work",
                tmp.resolve("work").toString());
        String text = Files.readString(out);
        assertEquals(2, rc, text);
        assertTrue(text.contains("bad.yaml:line 5") && text.contains("wedgee"), text);
        assertTrue(text.contains("nothing was run"), text);
        assertFalse(Files.exists(tmp.resolve("work/scenario-0")), "no cluster was started");
    }
}
