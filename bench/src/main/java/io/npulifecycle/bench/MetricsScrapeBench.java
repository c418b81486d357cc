package io.npulifecycle.bench;

import java.nio.file.Path;

/**
 * The "Metrics scrape" benchmark of docs/benchmarks.md alone ({@link MetricsSection}; {@code bench/run} runs it
 * with the others and writes the section into that file).
 *
 * <p>Usage: {@code java -cp "bench/target/io.npulifecycle.bench-*.jar:bench/target/lib/*"
 * io.npulifecycle.bench.MetricsScrapeBench [<installation> [<work folder>]] [--quick] [--java-opts OPTS]}; prints the
 * section's Markdown. {@code --java-opts}: both runtimes' JVM options instead of the launcher's (a candidate).
 */
public final class MetricsScrapeBench {

    private MetricsScrapeBench() {
    }

    /**
     * @param args installation folder (default {@code distribution/target/npu-lifecycle}), work folder (default
     *        {@code bench/target/metrics-bench}), {@code --quick}: one pair instead of three, {@code --java-opts OPTS}
     * @throws Exception when a runtime does not start or a scrape fails
     */
    public static void main(String[] args) throws Exception {
        boolean quick = false;
        String javaOpts = null;
        java.util.List<String> paths = new java.util.ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--quick")) {
                quick = true;
            } else if (a.equals("--java-opts") && i + 1 < args.length) {
                javaOpts = args[++i];
            } else if (a.startsWith("--")) {
                System.err.println("MetricsScrapeBench: unknown option " + a + "; expected [<installation> [<work "
                        + "folder>]] [--quick] [--java-opts OPTS]");
                System.exit(2);
            } else {
                paths.add(a);
            }
        }
        Path install = Path.of(paths.size() > 0 ? paths.get(0) : "distribution/target/npu-lifecycle").toAbsolutePath();
        Path work = Path.of(paths.size() > 1 ? paths.get(1) : "bench/target/metrics-bench").toAbsolutePath();
        System.out.print(new MetricsSection(install, work, quick).javaOptions(javaOpts).run());
        System.out.println("machine: " + Proc.machine());
        System.exit(0);
    }
}
