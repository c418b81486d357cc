package io.npulifecycle.itests.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Writes {@code docs/reliability.md}, the table of the reliability test matrix (issue #7, part 3), from the
 * surefire and failsafe XML reports of the build that just ran.
 *
 * <p>What it reads: every {@code **}{@code /target/surefire-reports/TEST-*.xml} and
 * {@code **}{@code /target/failsafe-reports/TEST-*.xml} under the repository root whose test class's simple name ends
 * in {@code ReliabilityTest} or {@code ReliabilityIT}. Each test case's display name has the form
 * {@code <category> | <case> | <expected outcome>} (the root pom makes surefire/failsafe write display names); a
 * dynamic or parameterized test's name is prefixed by its factory method, e.g. {@code cases() npu-smi | ...}, which
 * gives the method; for a plain {@code @Test} the method is found through its {@code @DisplayName} in the test source.
 * Reports older than the build ({@code --since}, default: the start of this JVM, i.e. the Maven run when executed
 * through {@code exec:java}) are ignored, so a stale report of an earlier run never shows up as a result.
 *
 * <p>What it writes: per category a table {@code | case | expected | result | test |}, totals, the machine, the date
 * and the command. Categories of the matrix without any case in this build are listed as not run, never dropped.
 *
 * <p>Usage: {@code ReliabilityReport --root DIR --out FILE [--command TEXT] [--since EPOCH_MS] [--fail-on-failure]}.
 * With {@code --fail-on-failure} it throws (failing the Maven build) after writing the report when any case failed
 * or when no case ran at all.
 */
public final class ReliabilityReport {

    /** The categories of the matrix, in report order (the convention of issue #7). */
    public static final List<String> CATEGORIES = List.of("npu-smi", "custom resource", "annotation", "configuration",
            "marker file", "state file", "deploy jar", "Jolokia request", "agent killed", "control plane killed",
            "API outage", "clock", "marker folder");

    private static final Pattern METHOD_PREFIX = Pattern.compile("^([A-Za-z_$][\\w$]*)\\([^)]*\\)(?:\\[\\d+\\])?\\s+(.*)$",
            Pattern.DOTALL);
    private static final Pattern DISPLAY_NAME = Pattern.compile(
            "@DisplayName\\(\\s*\"((?:[^\"\\\\]|\\\\.)*)\"\\s*\\)[^;{]*?\\s([A-Za-z_$][\\w$]*)\\s*\\(", Pattern.DOTALL);

    /** Outcome of one case. */
    public enum Result {
        /** passed */
        PASS,
        /** failed or errored */
        FAIL,
        /** skipped (disabled, assumption not met) */
        SKIPPED
    }

    /**
     * One case of the matrix.
     *
     * @param category e.g. {@code npu-smi}
     * @param input the case
     * @param expected the expected outcome
     * @param result the outcome
     * @param test {@code SimpleClass#method}
     * @param detail failure or skip message (one line), or empty
     * @param seconds duration
     */
    public record Case(String category, String input, String expected, Result result, String test, String detail,
            double seconds) {
    }

    private ReliabilityReport() {
    }

    /**
     * Entry point (exec-maven-plugin {@code java} goal in the {@code reliability} profile of {@code itests}).
     *
     * @param args see the class description
     * @throws Exception when the report cannot be written, or with {@code --fail-on-failure} when a case failed
     */
    public static void main(String[] args) throws Exception {
        Path root = null;
        Path out = null;
        String command = "mvn -B -Preliability verify";
        Instant since = ProcessHandle.current().info().startInstant().orElse(Instant.EPOCH);
        boolean failOnFailure = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--root" -> root = Path.of(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--command" -> command = args[++i];
                case "--since" -> since = Instant.ofEpochMilli(Long.parseLong(args[++i]));
                case "--fail-on-failure" -> failOnFailure = true;
                default -> throw new IllegalArgumentException("unknown argument '" + args[i]
                        + "' (expected --root DIR --out FILE [--command TEXT] [--since EPOCH_MS] [--fail-on-failure])");
            }
        }
        if (root == null || out == null) {
            throw new IllegalArgumentException("--root and --out are required");
        }
        out = out.toAbsolutePath().normalize();
        List<Case> cases = collect(root.toAbsolutePath().normalize(), since);
        String md = render(cases, command, Instant.now(), machine());
        Files.createDirectories(out.getParent());
        Files.writeString(out, md, StandardCharsets.UTF_8);
        long failed = cases.stream().filter(c -> c.result() == Result.FAIL).count();
        System.out.println("[reliability] " + cases.size() + " cases, " + failed + " failed: written " + out);
        if (failOnFailure && (failed > 0 || cases.isEmpty())) {
            throw new IllegalStateException(cases.isEmpty() ? "no reliability case ran in this build"
                    : failed + " reliability case(s) failed; see " + out);
        }
    }

    /**
     * Reads the reports of the matrix classes under {@code root}.
     *
     * @param root the repository root
     * @param since reports last modified before this instant are ignored (stale)
     * @return the cases, in report-file order
     * @throws IOException when the tree cannot be walked
     */
    public static List<Case> collect(Path root, Instant since) throws IOException {
        List<Path> reports;
        try (Stream<Path> s = Files.walk(root)) {
            reports = s.filter(p -> {
                String f = p.getFileName().toString();
                Path parent = p.getParent();
                return f.startsWith("TEST-") && f.endsWith(".xml") && parent != null
                        && (parent.getFileName().toString().equals("surefire-reports")
                                || parent.getFileName().toString().equals("failsafe-reports"))
                        && parent.getParent() != null && parent.getParent().getFileName().toString().equals("target");
            }).filter(p -> {
                String cls = p.getFileName().toString().replaceFirst("^TEST-", "").replaceFirst("\\.xml$", "");
                String simple = cls.substring(cls.lastIndexOf('.') + 1);
                return simple.endsWith("ReliabilityTest") || simple.endsWith("ReliabilityIT");
            }).filter(p -> {
                try {
                    return !Files.getLastModifiedTime(p).toInstant().isBefore(since);
                } catch (IOException e) {
                    return false;
                }
            }).sorted().toList();
        }
        List<Case> cases = new ArrayList<>();
        for (Path r : reports) {
            cases.addAll(read(r));
        }
        return cases;
    }

    /**
     * Reads one surefire/failsafe XML report.
     *
     * @param report {@code <module>/target/(surefire|failsafe)-reports/TEST-<class>.xml}
     * @return its cases
     */
    static List<Case> read(Path report) {
        Document doc;
        try (InputStream in = Files.newInputStream(report)) {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setExpandEntityReferences(false);
            DocumentBuilder b = f.newDocumentBuilder();
            doc = b.parse(in);
        } catch (Exception e) {
            return List.of(new Case("unreadable report", report.getFileName().toString(), "a surefire XML report",
                    Result.FAIL, report.toString(), e.toString(), 0));
        }
        Path module = report.getParent().getParent().getParent();
        Map<String, Map<String, String>> methodsByClass = new HashMap<>();
        List<Case> out = new ArrayList<>();
        NodeList tcs = doc.getElementsByTagName("testcase");
        for (int i = 0; i < tcs.getLength(); i++) {
            Element tc = (Element) tcs.item(i);
            String name = tc.getAttribute("name");
            String cls = tc.getAttribute("classname");
            String simple = cls.substring(cls.lastIndexOf('.') + 1);
            Result result = Result.PASS;
            String detail = "";
            for (String tag : List.of("failure", "error", "skipped")) {
                NodeList l = tc.getElementsByTagName(tag);
                if (l.getLength() > 0) {
                    result = tag.equals("skipped") ? Result.SKIPPED : Result.FAIL;
                    Element e = (Element) l.item(0);
                    detail = e.getAttribute("message");
                    if (detail.isEmpty() && !tag.equals("skipped")) {
                        detail = e.getAttribute("type");
                    }
                    break;
                }
            }
            // surefire's rerunFailingTestsCount: a flaky pass is a pass, reported with its earlier failure
            if (result == Result.PASS && tc.getElementsByTagName("flakyFailure").getLength() > 0) {
                detail = "passed on a re-run (flaky)";
            }
            double seconds = 0;
            try {
                seconds = Double.parseDouble(tc.getAttribute("time").replace(",", ""));
            } catch (NumberFormatException e) {
                // no time: 0
            }
            String method = null;
            Matcher m = METHOD_PREFIX.matcher(name);
            String label = name;
            if (m.matches()) {
                method = m.group(1);
                label = m.group(2);
            }
            String[] parts = label.split(" \\| ", -1);
            if (method == null) {
                method = methodsByClass.computeIfAbsent(cls, c -> displayNames(module, c)).get(name);
            }
            String test = simple.replace('$', '.') + "#" + (method != null ? method : "?");
            if (parts.length < 3) {
                out.add(new Case("unclassified", name, "(display name is not '<category> | <case> | <expected>')",
                        result, test, oneLine(detail), seconds));
                continue;
            }
            String category = category(parts[0].trim());
            String expected = String.join(" | ", java.util.Arrays.copyOfRange(parts, 2, parts.length)).trim();
            out.add(new Case(category, parts[1].trim(), expected, result, test, oneLine(detail), seconds));
        }
        return out;
    }

    /** The category: a known one the text ends with (dynamic containers prefix their names), else the text. */
    static String category(String text) {
        String best = null;
        for (String c : CATEGORIES) {
            if ((text.equals(c) || text.endsWith(" " + c)) && (best == null || c.length() > best.length())) {
                best = c;
            }
        }
        return best != null ? best : text;
    }

    /** Display name to method name, from {@code @DisplayName} annotations in the test source of {@code cls}. */
    static Map<String, String> displayNames(Path module, String cls) {
        String outer = cls.contains("$") ? cls.substring(0, cls.indexOf('$')) : cls;
        Path src = module.resolve("src/test/java").resolve(outer.replace('.', '/') + ".java");
        Map<String, String> map = new HashMap<>();
        try {
            Matcher m = DISPLAY_NAME.matcher(Files.readString(src, StandardCharsets.UTF_8));
            while (m.find()) {
                map.putIfAbsent(unescape(m.group(1)), m.group(2));
            }
        } catch (IOException e) {
            // no source: the method column shows '?'
        }
        return map;
    }

    private static String unescape(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                switch (n) {
                    case 'n' -> sb.append('\n');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (i + 4 < s.length()) {
                            sb.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                            i += 4;
                        }
                    }
                    default -> sb.append(n);
                }
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    private static String oneLine(String s) {
        String t = s == null ? "" : s.replaceAll("\\s+", " ").trim();
        return t.length() > 300 ? t.substring(0, 300) + "..." : t;
    }

    /** @return a one-line description of this machine: OS, cores, memory, Java */
    static String machine() {
        long mem = 0;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            mem = os.getTotalMemorySize();
        }
        return System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch") + ", " + Runtime.getRuntime().availableProcessors() + " cores, "
                + (mem > 0 ? String.format(Locale.ROOT, "%.1f GiB RAM", mem / (1024.0 * 1024 * 1024)) + ", " : "")
                + "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")";
    }

    /**
     * Renders the Markdown page.
     *
     * @param cases the cases
     * @param command the command that ran the matrix
     * @param when the date
     * @param machine the machine description
     * @return the page
     */
    public static String render(List<Case> cases, String command, Instant when, String machine) {
        Map<String, List<Case>> byCat = new LinkedHashMap<>();
        CATEGORIES.forEach(c -> byCat.put(c, new ArrayList<>()));
        for (Case c : cases) {
            byCat.computeIfAbsent(c.category(), k -> new ArrayList<>()).add(c);
        }
        long pass = count(cases, Result.PASS);
        long fail = count(cases, Result.FAIL);
        long skip = count(cases, Result.SKIPPED);
        double secs = cases.stream().mapToDouble(Case::seconds).sum();
        StringBuilder sb = new StringBuilder();
        sb.append("# Reliability test matrix\n\n");
        sb.append("<!-- Generated by io.npulifecycle.itests.reliability.ReliabilityReport: do not edit by hand, run the command below. -->\n\n");
        sb.append("- **Command**: `").append(command).append("` (from the repository root)\n");
        sb.append("- **Date**: ").append(DateTimeFormatter.ISO_INSTANT.format(when.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)))
                .append("\n");
        sb.append("- **Machine**: ").append(machine).append("\n");
        sb.append("- **Totals**: ").append(cases.size()).append(" cases: ").append(pass).append(" PASS, ").append(fail)
                .append(" FAIL, ").append(skip).append(" SKIPPED (")
                .append(String.format(Locale.ROOT, "%.0f", secs)).append(" s of test time)\n\n");
        sb.append("The matrix is every JUnit 5 test of a class named `*ReliabilityTest` (any module, surefire) or "
                + "`*ReliabilityIT` (`itests`, failsafe) whose display name is `<category> | <case> | <expected outcome>`. "
                + "The `reliability` profile runs exactly those, including the ones tagged `long` that the default "
                + "`mvn -B verify` leaves out, then writes this page from the surefire/failsafe XML reports and fails "
                + "the build if a case failed. A category without any case in the build is listed as not run.\n\n");
        sb.append("## Summary\n\n| category | cases | PASS | FAIL | SKIPPED |\n|---|---:|---:|---:|---:|\n");
        for (var e : byCat.entrySet()) {
            List<Case> l = e.getValue();
            sb.append("| [").append(cell(e.getKey())).append("](#").append(anchor(e.getKey())).append(") | ");
            if (l.isEmpty()) {
                sb.append("0 | - | - | - (not run in this build) |\n");
            } else {
                sb.append(l.size()).append(" | ").append(count(l, Result.PASS)).append(" | ")
                        .append(count(l, Result.FAIL)).append(" | ").append(count(l, Result.SKIPPED)).append(" |\n");
            }
        }
        sb.append("| **total** | **").append(cases.size()).append("** | **").append(pass).append("** | **")
                .append(fail).append("** | **").append(skip).append("** |\n");
        for (var e : byCat.entrySet()) {
            sb.append("\n## ").append(e.getKey()).append("\n\n");
            List<Case> l = e.getValue();
            if (l.isEmpty()) {
                sb.append("SKIPPED: no test of this category ran in this build (absent, or its module was not "
                        + "built).\n");
                continue;
            }
            sb.append("| case | expected | result | test |\n|---|---|---|---|\n");
            for (Case c : l) {
                String res = c.result().name();
                if (!c.detail().isEmpty()) {
                    res += ": " + c.detail();
                }
                sb.append("| ").append(cell(c.input())).append(" | ").append(cell(c.expected())).append(" | ")
                        .append(cell(res)).append(" | `").append(c.test().replace("`", "'")).append("` |\n");
            }
        }
        List<Case> failed = cases.stream().filter(c -> c.result() == Result.FAIL)
                .sorted(Comparator.comparing(Case::category)).toList();
        if (!failed.isEmpty()) {
            sb.append("\n## Failures\n\n");
            for (Case c : failed) {
                sb.append("- ").append(c.category()).append(" | ").append(c.input()).append(": `").append(c.test())
                        .append("`: ").append(c.detail()).append("\n");
            }
        }
        return sb.toString();
    }

    private static long count(List<Case> l, Result r) {
        return l.stream().filter(c -> c.result() == r).count();
    }

    private static String cell(String s) {
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ");
    }

    private static String anchor(String heading) {
        return heading.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 -]", "").replace(' ', '-');
    }
}
