package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * {@code npu-lifecycle scenario --junit FILE}: the results as a JUnit XML report (the Ant/Surefire format that CI
 * systems read), written with the JDK's StAX writer:
 *
 * <pre>
 * &lt;testsuites name="npu-lifecycle scenario" tests="3" failures="1" time="95.2"&gt;
 *   &lt;testsuite name="02-recovery-approval.yaml" tests="1" failures="0" time="41.0"&gt;
 *     &lt;testcase classname="scenario.02-recovery-approval" name="(scenario name)" time="41.0"&gt;
 *       &lt;failure message="step 3 ...: expected ..." type="ScenarioFailure"&gt;(the failure)&lt;/failure&gt;
 *       &lt;system-out&gt;(the timeline)&lt;/system-out&gt;
 *     &lt;/testcase&gt;
 *     &lt;testcase classname="scenario.02-recovery-approval" name="case-id: case name" time="..."/&gt;
 *   &lt;/testsuite&gt;
 * &lt;/testsuites&gt;
 * </pre>
 *
 * <p>One test suite per scenario file; in it one test case for the scenario and one per reliability case. Times are
 * wall-clock seconds.
 */
final class JUnitReport {

    private JUnitReport() {
    }

    /**
     * @param file where to write (replaced; its folder is created)
     * @param results the scenarios' verdicts
     * @throws IOException when the file cannot be written
     */
    static void write(Path file, List<ScenarioResult> results) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream os = Files.newOutputStream(file)) {
            XMLStreamWriter w = XMLOutputFactory.newFactory().createXMLStreamWriter(os, "UTF-8");
            try {
                write(w, results);
            } finally {
                w.close();
            }
        } catch (XMLStreamException e) {
            throw new IOException("cannot write the JUnit report " + file + ": " + e.getMessage(), e);
        }
    }

    private static void write(XMLStreamWriter w, List<ScenarioResult> results) throws XMLStreamException {
        int tests = 0;
        int failures = 0;
        double time = 0;
        for (ScenarioResult r : results) {
            tests += 1 + r.cases().size();
            failures += (r.passed() ? 0 : 1) + (int) r.cases().stream().filter(c -> c.failure() != null).count();
            time += r.seconds();
        }
        w.writeStartDocument("UTF-8", "1.0");
        w.writeCharacters("\n");
        w.writeStartElement("testsuites");
        w.writeAttribute("name", "npu-lifecycle scenario");
        w.writeAttribute("tests", String.valueOf(tests));
        w.writeAttribute("failures", String.valueOf(failures));
        w.writeAttribute("errors", "0");
        w.writeAttribute("time", seconds(time));
        for (ScenarioResult r : results) {
            String fileName = Path.of(r.file()).getFileName().toString();
            String className = "scenario." + fileName.replaceFirst("\\.ya?ml$", "");
            int caseFailures = (int) r.cases().stream().filter(c -> c.failure() != null).count();
            w.writeCharacters("\n  ");
            w.writeStartElement("testsuite");
            w.writeAttribute("name", fileName);
            w.writeAttribute("tests", String.valueOf(1 + r.cases().size()));
            w.writeAttribute("failures", String.valueOf((r.passed() ? 0 : 1) + caseFailures));
            w.writeAttribute("errors", "0");
            w.writeAttribute("skipped", "0");
            w.writeAttribute("time", seconds(r.seconds()));
            w.writeAttribute("file", r.file());
            testCase(w, className, r.name(), r.seconds(), r.failure(), r.timeline());
            for (ScenarioResult.CaseResult c : r.cases()) {
                testCase(w, className, c.id() + ": " + c.name(), c.seconds(), c.failure(),
                        c.category() + " | " + c.outcome() + "\n");
            }
            w.writeCharacters("\n  ");
            w.writeEndElement();
        }
        w.writeCharacters("\n");
        w.writeEndElement();
        w.writeCharacters("\n");
        w.writeEndDocument();
    }

    private static void testCase(XMLStreamWriter w, String className, String name, double secs, String failure,
            String out) throws XMLStreamException {
        w.writeCharacters("\n    ");
        w.writeStartElement("testcase");
        w.writeAttribute("classname", className);
        w.writeAttribute("name", xml(name));
        w.writeAttribute("time", seconds(secs));
        if (failure != null) {
            w.writeCharacters("\n      ");
            w.writeStartElement("failure");
            w.writeAttribute("message", xml(failure));
            w.writeAttribute("type", "ScenarioFailure");
            w.writeCharacters(xml(failure));
            w.writeEndElement();
        }
        if (out != null && !out.isEmpty()) {
            w.writeCharacters("\n      ");
            w.writeStartElement("system-out");
            w.writeCharacters(xml(out));
            w.writeEndElement();
        }
        w.writeCharacters("\n    ");
        w.writeEndElement();
    }

    /**
     * @return the text with each character that XML 1.0 cannot carry (control characters other than tab, line feed
     *         and carriage return, e.g. a terminal escape in a runtime's message) replaced by {@code ?}
     */
    static String xml(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        text.codePoints().forEach(c -> sb.appendCodePoint(c == 0x9 || c == 0xA || c == 0xD
                || c >= 0x20 && c <= 0xD7FF || c >= 0xE000 && c <= 0xFFFD || c >= 0x10000 && c <= 0x10FFFF ? c : '?'));
        return sb.toString();
    }

    private static String seconds(double s) {
        return String.format(Locale.ROOT, "%.3f", s);
    }
}
