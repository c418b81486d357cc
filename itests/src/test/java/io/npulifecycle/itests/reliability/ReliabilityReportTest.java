package io.npulifecycle.itests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The generator of docs/reliability.md, on hand-made surefire reports. */
class ReliabilityReportTest {

    @TempDir
    Path root;

    static final String XML = """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuite name="x.y.FooReliabilityTest" tests="5" failures="1" skipped="1">
              <testcase name="cases() npu-smi | 5 MiB | probe error, no strike" classname="x.y.FooReliabilityTest" time="0.5"/>
              <testcase name="par(String) annotation | yes | no reboot" classname="x.y.FooReliabilityTest" time="0.1"/>
              <testcase name="clock | jump forward 1 h | no reboot" classname="x.y.FooReliabilityTest" time="2">
                <failure message="rebooted twice" type="AssertionError">trace</failure>
              </testcase>
              <testcase name="marker folder | read-only | named error" classname="x.y.FooReliabilityTest" time="0">
                <skipped message="needs non-root"/>
              </testcase>
              <testcase name="someOldTest" classname="x.y.FooReliabilityTest" time="0"/>
            </testsuite>
            """;

    Path module() throws Exception {
        Path m = root.resolve("bundles/foo");
        Files.createDirectories(m.resolve("target/surefire-reports"));
        Files.writeString(m.resolve("target/surefire-reports/TEST-x.y.FooReliabilityTest.xml"), XML);
        Files.writeString(m.resolve("target/surefire-reports/TEST-x.y.OtherTest.xml"), XML.replace("Foo", "Other"));
        Files.createDirectories(m.resolve("src/test/java/x/y"));
        Files.writeString(m.resolve("src/test/java/x/y/FooReliabilityTest.java"), """
                class FooReliabilityTest {
                    @Test
                    @DisplayName("clock | jump forward 1 h | no reboot")
                    void clockJumpsForward() { }
                }
                """);
        return m;
    }

    @Test
    void readsCategoriesMethodsAndResultsOfMatrixClassesOnly() throws Exception {
        module();
        List<ReliabilityReport.Case> cases = ReliabilityReport.collect(root, Instant.EPOCH);
        assertEquals(5, cases.size(), cases.toString());
        assertEquals(new ReliabilityReport.Case("npu-smi", "5 MiB", "probe error, no strike", ReliabilityReport.Result.PASS,
                "FooReliabilityTest#cases", "", 0.5), cases.get(0));
        assertEquals("FooReliabilityTest#par", cases.get(1).test());
        assertEquals("FooReliabilityTest#clockJumpsForward", cases.get(2).test(), "method found through @DisplayName");
        assertEquals(ReliabilityReport.Result.FAIL, cases.get(2).result());
        assertEquals("rebooted twice", cases.get(2).detail());
        assertEquals(ReliabilityReport.Result.SKIPPED, cases.get(3).result());
        assertEquals("unclassified", cases.get(4).category());

        String md = ReliabilityReport.render(cases, "mvn -B -Preliability verify", Instant.parse("2026-12-01T00:00:00Z"), "test machine");
        assertTrue(md.contains("| 5 MiB | probe error, no strike | PASS | `FooReliabilityTest#cases` |"), md);
        assertTrue(md.contains("## custom resource\n\nSKIPPED: no test of this category ran"), "absent categories are shown: " + md);
        assertTrue(md.contains("- **Totals**: 5 cases: 3 PASS, 1 FAIL, 1 SKIPPED"), md);
        assertTrue(md.contains("## Failures"), md);
    }

    @Test
    void staleReportsAreIgnoredAndAFailureFailsTheBuildAfterWriting() throws Exception {
        Path m = module();
        Files.setLastModifiedTime(m.resolve("target/surefire-reports/TEST-x.y.FooReliabilityTest.xml"),
                FileTime.from(Instant.parse("2020-01-01T00:00:00Z")));
        assertTrue(ReliabilityReport.collect(root, Instant.parse("2021-01-01T00:00:00Z")).isEmpty());
        Path out = root.resolve("docs/reliability.md");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ReliabilityReport.main(new String[] {
            "--root", root.toString(), "--out", out.toString(), "--since", "0", "--fail-on-failure"}));
        assertTrue(e.getMessage().contains("1 reliability case(s) failed"), e.getMessage());
        assertTrue(Files.readString(out).contains("# Reliability test matrix"));
    }
}
