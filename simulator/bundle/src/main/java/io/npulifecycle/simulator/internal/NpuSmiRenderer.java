package io.npulifecycle.simulator.internal;

import java.util.List;
import java.util.Map;

import io.npulifecycle.api.probe.ChipId;

/**
 * Renders what {@code npu-smi info} prints for a state, in the table layout of the real outputs in
 * {@code shared/fixtures/npu-smi/} (910B: one chip per NPU id, 310P: two chips per NPU id sharing a Bus-Id), or the
 * real error texts and exit codes ({@code ret is -8005}, {@code -8020}).
 */
final class NpuSmiRenderer {

    /** Rendered output and exit code. */
    record Output(String text, int exitCode, boolean hang) {
    }

    static final String ERR_8005 = "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"
            + "dcmi module initialize failed. ret is -8005\n";
    static final String ERR_8020 = "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"
            + "dcmi model initialized failed, because the device is used. ret is -8020\n";
    static final String GARBLED = "\u0000\u0013npu-smi: \uFFFD\uFFFD |||| +--+ Health ?? 0x7f\n| 3 | ?%$ |\n";

    private NpuSmiRenderer() {
    }

    /**
     * @param chipType {@code 910b} or {@code 310p}
     * @param loadedVersion the loaded driver version, {@code null} when no driver is loaded
     * @param chips every chip of the node and its state, in id order
     * @return what npu-smi prints
     */
    static Output render(String chipType, String loadedVersion, Map<ChipId, ChipState> chips) {
        if (loadedVersion == null) {
            return new Output(ERR_8005, 1, false);
        }
        if (chips.containsValue(ChipState.HANGING)) {
            return new Output("", 0, true);
        }
        if (chips.containsValue(ChipState.OCCUPIED)) {
            return new Output(ERR_8020, 1, false);
        }
        if (chips.containsValue(ChipState.GARBLED)) {
            return new Output(GARBLED, 0, false);
        }
        boolean anyAnswers = chips.values().stream()
                .anyMatch(s -> s == ChipState.HEALTHY || s == ChipState.WARNING);
        if (!anyAnswers) {
            return new Output(ERR_8005, 1, false); // dev_num=0: the driver enumerates nothing
        }
        return new Output("310p".equals(chipType) ? table310p(loadedVersion, chips) : table910b(loadedVersion, chips),
                0, false);
    }

    private static String table910b(String version, Map<ChipId, ChipState> chips) {
        String border = "+---------------------------+---------------+----------------------------------------------------+\n";
        String thick = "+===========================+===============+====================================================+\n";
        StringBuilder sb = new StringBuilder();
        sb.append("+------------------------------------------------------------------------------------------------+\n");
        sb.append(String.format("| npu-smi %-24s Version: %-53s|%n", version, version));
        sb.append(border);
        sb.append("| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n");
        sb.append("| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n");
        sb.append(thick);
        for (Map.Entry<ChipId, ChipState> e : chips.entrySet()) {
            ChipState s = e.getValue();
            if (s != ChipState.HEALTHY && s != ChipState.WARNING) {
                continue;
            }
            ChipId id = e.getKey();
            sb.append(String.format("| %-5d %-19s | %-13s | %-11s %-17s %-4s / %-13s |%n", id.npu(), "910B4",
                    s == ChipState.WARNING ? "Warning" : "OK", "90.1", "33", "0", "0"));
            sb.append(String.format("| %-25d | %-13s | %-11s %-4s / %-10s %-4s / %-13s |%n", id.chip(),
                    String.format("0000:%02X:00.0", 0xC1 + id.npu()), "0", "0", "0", "3197", "65536"));
            sb.append(thick);
        }
        return sb.toString();
    }

    private static String table310p(String version, Map<ChipId, ChipState> chips) {
        String border = "+-------------------------------+-----------------+------------------------------------------------------+\n";
        String thick = "+===============================+=================+======================================================+\n";
        StringBuilder sb = new StringBuilder();
        sb.append("+--------------------------------------------------------------------------------------------------------+\n");
        sb.append(String.format("| npu-smi %-40s Version: %-45s|%n", version, version));
        sb.append(border);
        sb.append("| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |\n");
        sb.append("| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |\n");
        sb.append(thick);
        int device = 0;
        List<Map.Entry<ChipId, ChipState>> entries = List.copyOf(chips.entrySet());
        for (Map.Entry<ChipId, ChipState> e : entries) {
            ChipState s = e.getValue();
            ChipId id = e.getKey();
            int dev = device++;
            if (s != ChipState.HEALTHY && s != ChipState.WARNING) {
                continue;
            }
            sb.append(String.format("| %-7d %-21s | %-15s | %-12s %-17s %-5s / %-7s |%n", id.npu(), "310P3",
                    s == ChipState.WARNING ? "Warning" : "OK", "NA", "45", "0", "0"));
            sb.append(String.format("| %-7d %-21d | %-15s | %-12s %-4s / %-32s |%n", id.chip(), dev,
                    String.format("0000:%02X:00.0", 1 + id.npu()), "0", "1529", "44280"));
            sb.append(border);
        }
        return sb.toString();
    }

    /**
     * The DCMI shim's state file (see {@code src/main/c/dcmi_sim.c}).
     *
     * @return the file content
     */
    static String dcmiState(String loadedVersion, Map<ChipId, ChipState> chips) {
        StringBuilder sb = new StringBuilder();
        boolean anyAnswers = chips.values().stream()
                .anyMatch(s -> s == ChipState.HEALTHY || s == ChipState.WARNING);
        if (loadedVersion == null) {
            return "init -8005\n";
        }
        if (chips.containsValue(ChipState.OCCUPIED)) {
            return "init -8020\n";
        }
        if (!anyAnswers) {
            return "init -8005\n";
        }
        sb.append("init 0\n");
        if (chips.containsValue(ChipState.HANGING)) {
            sb.append("hang 3600\n");
        }
        Map<Integer, Integer> perCard = new java.util.TreeMap<>();
        for (Map.Entry<ChipId, ChipState> e : chips.entrySet()) {
            if (e.getValue() != ChipState.ABSENT) {
                perCard.merge(e.getKey().npu(), 1, Integer::sum);
            }
        }
        for (Map.Entry<Integer, Integer> c : perCard.entrySet()) {
            sb.append("card ").append(c.getKey()).append(' ').append(c.getValue()).append(" 0\n");
        }
        for (Map.Entry<ChipId, ChipState> e : chips.entrySet()) {
            ChipId id = e.getKey();
            switch (e.getValue()) {
                case HEALTHY: sb.append("health ").append(id.npu()).append(' ').append(id.chip()).append(" 0 0\n"); break;
                case WARNING: sb.append("health ").append(id.npu()).append(' ').append(id.chip()).append(" 0 1\n"); break;
                case WEDGED: sb.append("health ").append(id.npu()).append(' ').append(id.chip()).append(" -8005 0\n"); break;
                case GARBLED: sb.append("health ").append(id.npu()).append(' ').append(id.chip()).append(" 0 77\n"); break;
                default: break; // absent: not enumerated; hanging: the hang line
            }
        }
        return sb.toString();
    }
}
