package io.npulifecycle.simulator.harness;

import java.util.List;

/**
 * The verdict of one scenario file, for the console summary and the JUnit report ({@link JUnitReport}).
 *
 * @param name the scenario's {@code name}
 * @param file the file as given on the command line
 * @param seconds wall-clock seconds the scenario took, the cluster's start included
 * @param failure what failed, or null when every expectation held
 * @param cases the verdict of each reliability case, in file order (empty for a steps-only file)
 * @param timeline what happened, per node ({@link Timeline#render}), or "" when nothing was recorded
 */
record ScenarioResult(String name, String file, double seconds, String failure, List<CaseResult> cases,
        String timeline) {

    /**
     * One reliability case's verdict.
     *
     * @param id the case's id, unique in its file
     * @param category its category
     * @param name what it does
     * @param outcome what must be true
     * @param seconds wall-clock seconds from the first step to its verdict
     * @param failure what failed, or null when it passed
     */
    record CaseResult(String id, String category, String name, String outcome, double seconds, String failure) {
    }

    /** @return whether the scenario passed */
    boolean passed() {
        return failure == null;
    }
}
