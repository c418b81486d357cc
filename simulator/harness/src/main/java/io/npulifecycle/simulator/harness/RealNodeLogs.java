package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reading the logs the real node's kubelet writes (CRI format: {@code <time> <stream> <F|P> <text>} a line). */
final class RealNodeLogs {

    private RealNodeLogs() {
    }

    /**
     * @param file a container log of the kubelet
     * @param lines how many lines
     * @return its last lines, the CRI prefix (time, stream, tag) removed
     */
    static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            StringBuilder b = new StringBuilder();
            for (String l : all.subList(Math.max(0, all.size() - lines), all.size())) {
                String[] f = l.split(" ", 4);
                b.append(b.length() == 0 ? "" : "\n").append(f.length == 4 ? f[3] : l);
            }
            return b.toString();
        } catch (IOException e) {
            return "(" + file + ": " + e.getMessage() + ")";
        }
    }
}
