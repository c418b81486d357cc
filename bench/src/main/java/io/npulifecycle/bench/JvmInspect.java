package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.exec;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code jcmd} says about a running JVM, parsed for the footprint tables: native memory by category, classes per
 * class loader (each loader named by the packages of its classes, as OSGi bundle loaders carry no name) and threads
 * grouped by name. Every method runs the {@code jcmd} of the benchmark's own JDK.
 */
final class JvmInspect {

    private JvmInspect() {
    }

    /**
     * @param pid a JVM started with {@code -XX:NativeMemoryTracking=summary}
     * @return committed KiB per NMT category, {@code "Total (NMT)"} first, in jcmd's order
     * @throws IllegalStateException when jcmd fails (e.g. NMT is off)
     */
    static Map<String, Long> nmtSummary(long pid) throws IOException, InterruptedException {
        String out = jcmd(pid, "VM.native_memory", "summary");
        Map<String, Long> m = new LinkedHashMap<>();
        Matcher total = Pattern.compile("Total: reserved=\\d+KB, committed=(\\d+)KB").matcher(out);
        if (total.find()) {
            m.put("Total (NMT)", Long.parseLong(total.group(1)));
        }
        Matcher x = Pattern.compile("-\\s+([A-Za-z][A-Za-z ]*?) \\(reserved=\\d+KB, committed=(\\d+)KB\\)").matcher(out);
        while (x.find()) {
            m.put(x.group(1).trim(), Long.parseLong(x.group(2)));
        }
        return m;
    }

    /** One class loader: a label from the packages it loaded, its class count and its two largest packages. */
    record Loader(String label, int classes, String packages) {
    }

    /**
     * Classes per class loader from {@code jcmd <pid> VM.classloaders show-classes}, largest first. A loader is
     * labelled by its name when it has one ({@code "app"}, {@code "platform"}, {@code <bootstrap>}), else by the
     * package of the first class it defined (an OSGi bundle's activator or first class), e.g. {@code bundle
     * io.npulifecycle.kubeclient}. Array classes are not counted; hidden classes are.
     *
     * @param pid a running JVM
     * @return the loaders with at least one class, most classes first
     */
    static List<Loader> classLoaders(long pid) throws IOException, InterruptedException {
        String out = jcmd(pid, "VM.classloaders", "show-classes");
        List<Loader> loaders = new ArrayList<>();
        String name = null;
        List<String> classes = new ArrayList<>();
        Pattern header = Pattern.compile("\\+-- (.*)$");
        Pattern cls = Pattern.compile("(?:Hidden )?(?:Classes: )?([A-Za-z_$][\\w.$/]*)$");
        for (String line : out.split("\n")) {
            Matcher h = header.matcher(line);
            if (h.find()) {
                add(loaders, name, classes);
                name = h.group(1).trim();
                classes = new ArrayList<>();
                continue;
            }
            String t = line.replace("|", " ").trim();
            Matcher c = cls.matcher(t);
            if (name != null && !t.isEmpty() && c.matches() && t.contains(".")) {
                classes.add(c.group(1));
            }
        }
        add(loaders, name, classes);
        loaders.sort((a, b) -> Integer.compare(b.classes(), a.classes()));
        return loaders;
    }

    private static void add(List<Loader> loaders, String name, List<String> classes) {
        if (name == null || classes.isEmpty()) {
            return;
        }
        Map<String, Integer> byPackage = new TreeMap<>();
        for (String c : classes) {
            byPackage.merge(prefix(c, 2), 1, Integer::sum);
        }
        List<Map.Entry<String, Integer>> top = new ArrayList<>(byPackage.entrySet());
        top.sort((a, b) -> Integer.compare(b.getValue(), a.getValue()));
        StringBuilder pk = new StringBuilder();
        for (int i = 0; i < Math.min(3, top.size()); i++) {
            pk.append(i == 0 ? "" : ", ").append(top.get(i).getKey()).append(".* ").append(top.get(i).getValue());
        }
        String label;
        if (name.startsWith("\"")) {
            label = name.substring(1, name.indexOf('"', 1));
        } else if (name.startsWith("<")) {
            label = name;
        } else {
            label = "bundle " + prefix(classes.get(0), 3);
        }
        loaders.add(new Loader(label, classes.size(), pk.toString()));
    }

    private static String prefix(String className, int segments) {
        String[] s = className.split("[./]");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(segments, s.length - 1); i++) {
            sb.append(i == 0 ? "" : ".").append(s[i]);
        }
        return sb.toString();
    }

    /**
     * The threads of a JVM grouped by name, digits replaced by {@code N} (so the 10 threads {@code EventAdminAsyncThread
     * #12}... form one group), largest group first.
     *
     * @param pid a running JVM
     * @return name pattern to count
     */
    static Map<String, Integer> threads(long pid) throws IOException, InterruptedException {
        String out = jcmd(pid, "Thread.print");
        Map<String, Integer> m = new LinkedHashMap<>();
        Matcher x = Pattern.compile("(?m)^\"(.*?)\" ").matcher(out);
        while (x.find()) {
            String n = x.group(1).replaceAll("\\d+", "N").replaceAll("\\{.*", "{...}");
            m.merge(n, 1, Integer::sum);
        }
        List<Map.Entry<String, Integer>> l = new ArrayList<>(m.entrySet());
        l.sort((a, b) -> Integer.compare(b.getValue(), a.getValue()));
        Map<String, Integer> sorted = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> e : l) {
            sorted.put(e.getKey(), e.getValue());
        }
        return sorted;
    }

    /**
     * The live heap: {@code GC.heap_info} right after the full collection that {@code GC.class_histogram} forces.
     *
     * @param pid a running JVM with the serial collector
     * @return used KiB of the old generation after a full GC, or -1 when not found
     */
    static long liveHeapKib(long pid) throws IOException, InterruptedException {
        jcmd(pid, "GC.run");
        String out = jcmd(pid, "GC.heap_info");
        long used = 0;
        Matcher x = Pattern.compile("(?:new|tenured) generation\\s+total \\d+K, used (\\d+)K").matcher(out);
        boolean found = false;
        while (x.find()) {
            used += Long.parseLong(x.group(1));
            found = true;
        }
        return found ? used : -1;
    }

    private static String jcmd(long pid, String... command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
        cmd.add(Long.toString(pid));
        cmd.addAll(List.of(command));
        return exec(cmd, "jcmd " + String.join(" ", command));
    }
}
